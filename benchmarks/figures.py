"""Figures a and f, measured in the benchmark process: throughput of verify-each against the per-test style, and
the cost of each verification.

Every figure function of the benchmark (here and in :mod:`benchmarks.served`, :mod:`benchmarks.suite`,
:mod:`benchmarks.incremental`, ...) returns a :func:`benchmarks.context.record`: at least ``value``, ``target``,
``unit``, ``met`` and ``workload``; :mod:`benchmarks.__main__` prints and stores them. The other modules run the
real commands (``passgate check``, ``pytest conformance``) as subprocesses, the way users run them.
"""

from __future__ import annotations

import json
import shutil
import statistics
import time
from dataclasses import replace

from benchmarks.context import Context, record
from harness.run.profiles import suite_passes

__all__ = ["throughput", "verification_cost"]


# ----------------------------------------------------------------------------- workloads


REFERENCE = suite_passes()  # the suite's reference passes: the float workload
PASS_RUN_CHECKS = ("runs", "idempotent", "deterministic")
VULKAN_QUANTIZED = ("vulkan.FoldQDQPass", "vulkan.FuseQuantizedOpsTransform")


def _workloads(ctx: Context) -> list[dict]:
    """[{name, passes: [LoadedPass], specs: [CaseSpec], per_test_passes: int}]."""
    from harness.check.loading import load_pass
    from harness.graphs import sources

    if ctx.tiny:
        return [{"name": "float_tiny", "passes": [load_pass(REFERENCE[2])], "specs": sources.select(["mlp"]),
                 "per_test_passes": 1}]
    from harness import catalog

    entries = {e.name: e for e in catalog.all_entries(catalog.select(["vulkan"]))}
    return [
        {"name": "float: 8 reference passes x 6 built-in graphs", "passes": [load_pass(s) for s in REFERENCE],
         "specs": sources.select(["builtin"]), "per_test_passes": 2},
        {"name": "quantized: 2 Vulkan Q/DQ passes x 6 PT2E int8 graphs",
         "passes": [entries[n].loaded() for n in VULKAN_QUANTIZED], "specs": sources.select(["quantized"]),
         "per_test_passes": 1},
    ]


def _clear_process_memos() -> None:
    from harness.graphs.memos import MEMOS

    MEMOS.clear()


# ----------------------------------------------------------------------------- a. throughput


def _timed_check(config, passes, specs, **changes) -> tuple[float, list]:
    """check_all in forked workers as `passgate check` runs it, the cases loaded first: (seconds, results)."""
    from harness.graphs.cases import load_case
    from harness.run.scheduler import check_all

    _clear_process_memos()
    started = time.perf_counter()
    cases = [load_case(s) for s in specs]
    rs = check_all(passes, cases, replace(config, isolate=True, **changes))
    return time.perf_counter() - started, rs


def _per_test_style(passes, specs, per_graph_pairs: int, config, must_checks) -> tuple[dict, dict, int]:
    """The per-test style on ``per_graph_pairs`` pairs of every graph, in this process, one thread:
    ({graph: [seconds per pair]}, {graph: [seconds of should-level checks per pair]}, checks made)."""
    import torch

    from harness.check.runner import check_pass_on_case
    from harness.graphs.cases import GraphCase, export_and_lower

    per_graph: dict[str, list[float]] = {}
    should_s: dict[str, list[float]] = {}
    measured_checks = 0
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the thread count passgate's workers run with: the same execution costs
    try:
        for gi, spec in enumerate(specs):
            for j in range(per_graph_pairs):
                p = passes[(gi * per_graph_pairs + j) % len(passes)]  # spread the measured pairs over the passes
                _clear_process_memos()
                started = time.perf_counter()
                # each test builds, exports, [quantizes,] lowers its graph, then runs the pass and the checks
                inputs, exported, edge = export_and_lower(spec)
                got = check_pass_on_case(p, GraphCase(spec, inputs, exported, edge), config)
                per_graph.setdefault(spec.name, []).append(time.perf_counter() - started)
                should_s.setdefault(spec.name, []).append(sum(r.duration_s for r in got if r.check not in must_checks))
                measured_checks += len(got)
    finally:
        torch.set_num_threads(threads)
    return per_graph, should_s, measured_checks


def _throughput_part(ctx: Context, wl: dict, config, must_checks) -> dict:
    """One workload, both styles, on the same pairs and checks."""
    from harness.graphs import cache
    from harness.graphs.cases import load_case

    passes, specs = wl["passes"], wl["specs"]
    pairs = len(passes) * len(specs)
    # passgate with a cold cache (lowers each graph once) and with the warm one, as `passgate check` runs it
    cold_dir = ctx.tmp("cold-cache")
    cache.configure(cold_dir)
    pg_cold, _ = _timed_check(config, passes, specs)
    shutil.rmtree(cold_dir, ignore_errors=True)
    cache.configure(ctx.cache_dir)
    for s in specs:  # fill the shared cache, untimed
        load_case(s)
    pg_warm, rs = _timed_check(config, passes, specs)
    checks = len(rs)
    # the pass runs the checks need (runs, and the reruns of idempotent/deterministic with their copies):
    # both styles pay them, so per-test time / their time is the best ratio any harness could reach
    pass_runs_s = sum(r.duration_s for r in rs if r.check in PASS_RUN_CHECKS)
    pg_warm_must, rs_must = _timed_check(config, passes, specs, checks=must_checks)  # what the gate enforces
    pg_warm_j2, _ = _timed_check(config, passes, specs, workers=2)  # the machine's two cores
    per_graph, should_s, measured_checks = _per_test_style(passes, specs, wl["per_test_passes"], config, must_checks)
    measured_pairs = sum(len(v) for v in per_graph.values())
    # extrapolation: every pass on graph g costs what the measured tests on g cost on average
    per_test_total = sum(statistics.mean(per_graph[s.name]) * len(passes) for s in specs)
    per_test_must = per_test_total - sum(statistics.mean(should_s[s.name]) * len(passes) for s in specs)
    part = {
        "workload": wl["name"], "pairs": pairs, "checks": checks,
        "passgate_warm_s": round(pg_warm, 2), "passgate_cold_s": round(pg_cold, 2),
        "passgate_warm_2_workers_s": round(pg_warm_j2, 2),
        "per_test_measured_pairs": measured_pairs, "per_test_measured_checks": measured_checks,
        "per_test_measured_s": round(sum(sum(v) for v in per_graph.values()), 2),
        "per_test_mean_s_per_pair": round(per_test_total / pairs, 3),
        "per_test_extrapolated_s": round(per_test_total, 2),
        "passgate_warm_checks_per_s": round(checks / pg_warm, 1),
        "passgate_cold_checks_per_s": round(checks / pg_cold, 1),
        "per_test_checks_per_s": round(checks / per_test_total, 2),
        "ratio_warm": round(per_test_total / pg_warm, 1),
        "ratio_warm_2_workers": round(per_test_total / pg_warm_j2, 1),
        "ratio_cold": round(per_test_total / pg_cold, 1),
        "pass_runs_s": round(pass_runs_s, 2),
        "ceiling_ratio_given_pass_runs": round(per_test_total / pass_runs_s, 1),
        "must_checks": len(rs_must), "passgate_warm_must_s": round(pg_warm_must, 2),
        "per_test_must_extrapolated_s": round(per_test_must, 2),
        "ratio_warm_must_only": round(per_test_must / pg_warm_must, 1),
    }
    ctx.say(f"throughput {wl['name']}: {json.dumps(part)}")
    return part


def throughput(ctx: Context) -> dict:
    """passgate (lower once, copy per check, isolated workers) vs the per-test style on the same pairs and checks."""
    from harness.core.config import RunConfig
    from harness.core.results import Level, ir_checks_at

    config = RunConfig(seed=ctx.seed)
    must_checks = ir_checks_at(Level.MUST)
    parts = [_throughput_part(ctx, wl, config, must_checks) for wl in _workloads(ctx)]

    def total(key: str) -> float:
        return sum(p[key] for p in parts)

    per_test, warm = total("per_test_extrapolated_s"), total("passgate_warm_s")
    return record(round(per_test / warm, 1), 30, "x checks/s (1 worker, warm cache)", "higher", parts=parts,
                  ratio_cold_cache=round(per_test / total("passgate_cold_s"), 1),
                  ratio_2_workers=round(per_test / total("passgate_warm_2_workers_s"), 1),
                  ceiling_ratio_given_pass_runs=round(per_test / total("pass_runs_s"), 1),
                  ratio_must_checks_only=round(total("per_test_must_extrapolated_s") / total("passgate_warm_must_s"), 1),
                  passgate_checks_per_s=round(total("checks") / warm, 1),
                  per_test_checks_per_s=round(total("checks") / per_test, 2),
                  how="passgate: load the cases from the warm disk cache, then check_all in forked workers "
                      "(as passgate check); per-test: in-process, each pair exports, [quantizes,] lowers its "
                      "graph and runs the same checks, measured on a subset of pairs (every graph, "
                      "per_test_measured_pairs of them) and extrapolated per graph to all pairs",
                  ceiling_note="both styles run the pass once for `runs` and again for `deterministic` and "
                               "(when the pass changed the graph) `idempotent`; ceiling_ratio_given_pass_runs is "
                               "the per-test time over passgate's time in those runs alone: no harness that runs "
                               "the same checks can do better; ratio_must_checks_only leaves out the should-level "
                               "checks on both sides (what the gate enforces without --strict)")


# ----------------------------------------------------------------------------- f. verification cost


COST_NOTES = {
    "idempotent": "runs the pass a second time on a deep copy of its result and fingerprints both graphs: "
                  "its cost is a pass run plus a copy by construction",
    "deterministic": "runs the pass again on a second fresh copy of the input: a pass run plus a copy by construction",
    "runnable": "the one recorded execution (fx Interpreter, per-node shapes noted) that runnable, "
                "val_matches_execution and numerics share; the first pass on a case also pays the reference "
                "outputs of the pre-pass program for every draw",
    "verifier": "ExecuTorch's dialect verifier walks every node and checks each op's dtype constraints",
    "input_unchanged": "fingerprints the shared case and the handed program (every node, its metadata, every tensor)",
}


def verification_cost(ctx: Context) -> dict:
    """Where the time of one pass x graph goes: copy, pass, each verifier, numerics (in-process, warm cache)."""
    from harness.core.config import RunConfig
    from harness.graphs import cache
    from harness.graphs.cases import GraphCase, load_case
    from harness.run.scheduler import check_all

    wl = _workloads(ctx)[0]
    cache.configure(ctx.cache_dir)
    _clear_process_memos()
    cases = [load_case(s) for s in wl["specs"]]
    copies: list[float] = []
    original = GraphCase.program

    def timed_program(self, stage):
        started = time.perf_counter()
        try:
            return original(self, stage)
        finally:
            copies.append(time.perf_counter() - started)

    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the isolation workers that run every check of `passgate check`
    GraphCase.program = timed_program
    try:
        started = time.perf_counter()
        rs = check_all(wl["passes"], cases, RunConfig(seed=ctx.seed))
        total = time.perf_counter() - started
    finally:
        GraphCase.program = original
        torch.set_num_threads(threads)
    pairs = len(wl["passes"]) * len(cases)
    per_check: dict[str, float] = {}
    for r in rs:
        per_check[r.check] = per_check.get(r.check, 0.0) + r.duration_s
    ms = {k: round(1000 * v / pairs, 2) for k, v in per_check.items()}
    # two copies per pair: the pass's input (outside any check) and the deterministic check's second input
    # (inside that check's time): the first half is the copy's own line
    ms["copy (deep copy of the lowered case for the pass's input)"] = round(1000 * sum(copies) / 2 / pairs, 2)
    accounted = sum(per_check.values()) + sum(copies) / 2
    ms["other (seed metadata, fingerprints of the handed program, op counts)"] = round(
        1000 * (total - accounted) / pairs, 2)
    pass_plus_numerics = ms.get("runs", 0.0) + ms.get("numerics", 0.0)
    over = {k: v for k, v in ms.items() if k in per_check and k not in ("runs", "numerics") and v > pass_plus_numerics}
    notes = {k: COST_NOTES.get(k, "no reason recorded: look into it") for k in over}
    worst_unexplained = [k for k in over if k not in COST_NOTES]
    return record(len(worst_unexplained), 1, "verifiers costing more than pass+numerics without a reason", "lower",
                   workload=wl["name"], pairs=pairs, total_ms_per_pair=round(1000 * total / pairs, 2),
                   ms_per_pair=dict(sorted(ms.items(), key=lambda kv: -kv[1])),
                   pass_plus_numerics_ms=round(pass_plus_numerics, 2), over_pass_plus_numerics=over, notes=notes)

