"""Shrinking a failing random graph to a minimal one that fails the same check.

A failure on a 15-op random graph is a riddle; the same failure on a one-op
graph is a bug report. Like llvm-reduce and C-Reduce, the reducer edits the
*program* (not the exported graph) and keeps an edit only when the pass
still fails the *same* check id on the result, so the minimal graph stays a
real, exportable model and prints as plain torch code. Edits, biggest first:

- keep one output (or drop one): everything only it needed goes;
- cut a value: its uses read a fresh input of the same type instead, so the
  statements that computed it go (the bug usually sits downstream);
- bypass a statement: its users read one of its arguments of the same type.

One statement can lower to several nodes (``hardswish`` is seven at the edge
stage), so when the minimal program is still more than one node, the same
edits run again over the graph the pass was handed, rewritten as one ATen
call per node (:mod:`harness.graphs.random.from_graph`): the delta-debugging fx's
minifier does, but on a program that still exports. The smaller result (in
call_function nodes) wins.

Each try exports, lowers and runs the pass under the one check (about a
second), so a shrink is bounded in time; the result is what was reached.
Only a failure that reproduces in this process is shrunk (the pass raised or
a check failed, not a crash or a hang that needs a worker to survive).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator, Optional

from harness.check.runner import check_pass_on_case
from harness.core.results import CheckResult, Status
from harness.graphs.cache import roundtrip
from harness.graphs.cases import GraphCase, export_and_lower
from harness.graphs.op_coverage import program_ops
from harness.graphs.quantizers import HAND
from harness.graphs.random.from_graph import from_graph
from harness.graphs.random.generate import program_of, spec_of
from harness.graphs.random.program import Program
from harness.pipelines.pipeline import forget
from harness.reduce.repro import write_repro

__all__ = ["DEFAULT_SECONDS", "TOTAL_SECONDS", "TARGETS", "GOOD_ENOUGH", "Shrunk", "try_program", "candidates",
           "shrink", "shrink_failures"]

DEFAULT_SECONDS = 60.0  # one shrink
TOTAL_SECONDS = 300.0  # every shrink of one run
TARGETS = 3  # failing graphs shrunk per (pass, check): the smallest few, the best result kept
GOOD_ENOUGH = 2  # call_function nodes: no need to shrink another graph


@dataclass
class Shrunk:
    program: Program
    result: CheckResult  # the check's verdict on the minimal graph
    statements_before: int
    nodes: int  # call_function nodes of the minimal graph at the pass's stage
    tries: int
    seconds: float
    graph_code: str = ""  # the minimal graph as the pass saw it (GraphModule code)
    level: str = "program"  # program: the random program's statements; graph: one ATen call per node


def _bad(r: CheckResult) -> bool:
    return r.status in (Status.FAIL, Status.ERROR)


def try_program(loaded, program: Program, check: str, config) -> Optional[tuple[CheckResult, object]]:
    """(the failing ``check`` result, the case) when ``program`` still fails ``check``; else None."""

    if not program.stmts or not program.outputs:
        return None
    spec = spec_of(program, source="shrink")
    try:
        inputs, exported, edge = export_and_lower(spec)
        case = GraphCase(spec, inputs, roundtrip(exported), roundtrip(edge))
    except Exception:  # noqa: BLE001 - an edit that does not export is just not kept
        return None
    try:
        results = check_pass_on_case(loaded, case, replace(config, checks=frozenset({check, "runs"}), isolate=False))
    finally:
        forget([case])
    hit = next((r for r in results if r.check == check and _bad(r)), None)
    return (hit, case) if hit is not None else None


def candidates(p: Program) -> Iterator[Optional[Program]]:
    if len(p.outputs) > 1:
        for o in reversed(p.outputs):
            yield p.keep_outputs([o])
        for o in p.outputs:
            yield p.keep_outputs([x for x in p.outputs if x != o])
    produced = {o for s in p.stmts for o in s.outs}
    for s in reversed(p.stmts):
        for a in dict.fromkeys(s.args):
            if a in produced:
                yield p.cut(a)
    for i, s in enumerate(p.stmts):
        for a in dict.fromkeys(s.args):
            yield p.bypass(i, a)


def _measure(p: Program) -> tuple:
    return (p.size, len(p.decls), len(p.inputs))


def _reduce(loaded, program: Program, check: str, config, deadline: float, first,
            progress: Optional[Callable[[str], None]], tries: int) -> tuple:
    """Greedy reduction of ``program`` (which fails, with ``first`` = (result, case)) until no edit helps."""
    best, (best_result, best_case) = program, first
    seen = {program.code()}
    improved = True
    while improved and time.perf_counter() < deadline:
        improved = False
        for cand in candidates(best):
            if time.perf_counter() >= deadline:
                break
            if cand is None or not cand.stmts or _measure(cand) >= _measure(best):
                continue
            code = cand.code()
            if code in seen:
                continue
            seen.add(code)
            tries += 1
            hit = try_program(loaded, cand, check, config)
            if hit is not None:
                best, (best_result, best_case) = cand, hit
                improved = True
                if progress:
                    progress(f"{best.size} statements ({tries} tries)")
                break
    return best, best_result, best_case, tries


def _nodes(case, stage: str) -> int:

    return sum(program_ops(case.shared(stage)).values())


def shrink(loaded, program: Program, check: str, config, seconds: float = DEFAULT_SECONDS,
           progress: Optional[Callable[[str], None]] = None) -> Optional[Shrunk]:
    """The smallest program reached within ``seconds`` that still fails ``check``; None if it does not reproduce.

    First over the program's statements; then, when the minimal program still
    lowers to more than one node, over the graph the pass was handed rewritten
    as one ATen call per node (:mod:`harness.graphs.random.from_graph`); the one with
    fewer call_function nodes wins.
    """

    started = time.perf_counter()
    deadline = started + seconds
    stage = config.stage or loaded.stage
    first = try_program(loaded, program, check, config)
    if first is None:
        return None
    best, result, case, tries = _reduce(loaded, program, check, config, deadline, first, progress, 1)
    nodes, level = _nodes(case, stage), "program"
    if nodes > 1 and time.perf_counter() < deadline:
        graph = from_graph(case.shared(stage), f"{program.name}_graph", program.seed)
        if graph is not None and program.quantizer:  # the graph calls the Q/DQ ops the flow left: still quantized
            graph = replace(graph, quantizer=HAND)
        hit = try_program(loaded, graph, check, config) if graph is not None else None
        tries += 1
        if hit is not None:
            if progress:
                progress(f"{nodes} nodes; reducing the graph node by node ({graph.size} ATen calls)")
            g_best, g_result, g_case, tries = _reduce(loaded, graph, check, config, deadline, hit, progress, tries)
            if _nodes(g_case, stage) < nodes:
                best, result, case, nodes, level = g_best, g_result, g_case, _nodes(g_case, stage), "graph"
    ep = case.shared(stage)
    return Shrunk(best, result, program.size, nodes, tries, time.perf_counter() - started,
                  graph_code=ep.graph_module.code.strip(), level=level)


def shrink_failures(results: list[CheckResult], passes: list, specs: list, config, report_dir: Path,
                    strict: bool = False, seconds: float = DEFAULT_SECONDS, total: float = TOTAL_SECONDS,
                    note: Callable[[str], None] = lambda m: None) -> list[Shrunk]:
    """Shrink one failing random case per (pass, check) and write its reproducer; annotate the results.

    The smallest failing random graphs of each (pass, check) are shrunk (up to
    :data:`TARGETS`, until one reaches :data:`GOOD_ENOUGH` nodes) and the
    smallest result is kept; its record gets ``shrunk_graph`` (the minimal program), ``shrunk_nodes``,
    ``shrink`` (statements before/after, tries, seconds) and ``repro`` (the
    script); the pair's other failing random graphs get ``repro`` too, with
    ``repro_shrunk_from`` naming the graph it was shrunk from.
    """

    programs = {s.name: program_of(s) for s in specs if program_of(s) is not None}
    by_name = {p.name: p for p in passes}
    groups: dict[tuple[str, str], list[CheckResult]] = {}
    for r in results:
        if r.graph in programs and r.pass_name in by_name and r.is_violation(strict) and _shrinkable(r, results):
            groups.setdefault((r.pass_name, r.check), []).append(r)
    done: list[Shrunk] = []
    started = time.perf_counter()
    for (pass_name, check), rs in groups.items():
        res, target = None, None
        for r in sorted(rs, key=lambda r: (programs[r.graph].size, r.graph))[:TARGETS]:
            left = total - (time.perf_counter() - started)
            if left <= 5:
                note(f"shrinking: time budget of {total:g}s spent; {pass_name} x {r.graph} ({check}) not shrunk")
                break
            program = programs[r.graph]
            label = f"shrinking {pass_name} x {r.graph} ({check}, {program.size} statements)"
            note(f"{label} ...")
            got = shrink(by_name[pass_name], program, check, config, min(seconds, left),
                         progress=lambda msg, label=label: note(f"{label}: {msg}"))
            if got is None:
                note(f"{label}: does not reproduce in-process; not shrunk")
                r.details["shrink"] = {"reproduced": False}
                continue
            note(f"{label}: {got.nodes} call_function node(s), {got.program.size} statement(s)")
            if res is None or (got.nodes, got.program.size) < (res.nodes, res.program.size):
                res, target = got, r
            if res.nodes <= GOOD_ENOUGH:
                break
        if res is None:
            continue
        path = write_repro(report_dir, by_name[pass_name], check, target.graph, res, config)
        target.details["shrunk_graph"] = res.program.code()
        target.details["shrunk_nodes"] = res.nodes
        target.details["shrink"] = {"reproduced": True, "level": res.level, "statements_before": res.statements_before,
                                    "statements_after": res.program.size, "call_function_nodes": res.nodes,
                                    "tries": res.tries, "duration_s": round(res.seconds, 3),
                                    "message": res.result.message}
        if path is not None:  # relative to the report folder, where it lives: same seed, same report
            for r in rs:
                r.details["repro"] = path.name
                if r is not target:
                    r.details["repro_shrunk_from"] = target.graph
        done.append(res)
        note(f"shrunk {pass_name} x {target.graph} ({check}): {res.statements_before} -> {res.program.size} "
             f"statements, {res.nodes} call_function nodes, {res.tries} tries, {res.seconds:.1f}s"
             + (f"; reproducer: {path}" if path else ""))
    return done


def _shrinkable(r: CheckResult, results: list[CheckResult]) -> bool:
    """Failures that reproduce in-process: not a crash, a hang or a timeout (they need the worker)."""
    runs = next((x for x in results if (x.pass_name, x.graph, x.check) == (r.pass_name, r.graph, "runs")), None)
    if runs is not None and runs.status is Status.FAIL:
        return runs.details.get("outcome") == "raised"
    return True
