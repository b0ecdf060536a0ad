"""Verify-each: run one pass on one graph case and judge every IR check.

The flow for one (pass, case), after MLIR's verify-each:

    copy the case ─> seed metadata ─> run the pass ─> checks on the result
                                       (deadline)      (one recorded execution
                                                        shared by runnable,
                                                        val_matches_execution
                                                        and numerics)

then the pass runs twice more, on a copy of its result (``idempotent``) and
on a second fresh copy of the input (``deterministic``), or once when the
first run left the program an exact replica of its input: that one run is
a run on a copy of the result too, and serves both (``_judge_reruns``). The reference
outputs of the pre-pass program are computed once per case and reused by
every pass.

A check can only flag what a graph makes the pass do, so the ``runs`` record
also says whether the pass changed the program and how (``details.changed``:
op counts, structure, metadata only; ``details.change_signature``): the
pass-level ``exercised`` check (:mod:`harness.check.exercised`) and the
fuzzer, which keeps graphs that make a pass change the program in a new way,
read it. Every fingerprint behind it is computed once per pair and shared
with the checks that compare the same forms.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch

from harness.check import crossrun, fingerprint, spares, verifiers
from harness.check.changes import (
    HandedForms,
    ResultForms,
    changed,
    changes_text,
    handed_forms,
    op_counts,
    op_diff,
)
from harness.check.execution import execute, input_draws
from harness.check.exercised import change_signature
from harness.check.invoke import PassRun, run_pass
from harness.check.loading import LoadedPass
from harness.check.metadata import META_CHECKS, seed_metadata
from harness.check.numerics import compare_outputs
from harness.check.runtime import judge_result, runtime_skipped
from harness.core.config import RunConfig
from harness.core.kinds import Outcome, Semantics
from harness.core.results import IR_CHECK_IDS, CheckResult, Status, result
from harness.graphs.cases import GraphCase
from harness.graphs.memos import MEMOS

__all__ = ["reference_outputs", "prepare_case", "check_pass_on_case", "HandedForms", "handed_forms",
           "IDEMPOTENT_BY_DETERMINISM", "op_counts",
           "op_diff", "changes_text"]


@dataclass
class _Reference:
    draws: list
    outputs: list  # per draw: list of tensors, or None when the pre-pass program fails on it




def reference_outputs(case: GraphCase, stage: str, seed: int, count: int) -> _Reference:
    # the thread count is part of the key: multi-threaded kernels may round differently, and a warm
    # server computes references under one thread for the (one-threaded) isolation workers it forks
    key = (case.spec.key, id(case), stage, seed, count, torch.get_num_threads())
    if key not in MEMOS.references:
        # read-only: execute() clones state and inputs
        MEMOS.references[key] = _reference(case.shared(stage), input_draws(case.sample_inputs(), count, seed))
    return MEMOS.references[key]


def _reference(program, draws: list) -> _Reference:
    """``program``'s outputs on each draw (None where it raises)."""
    outs = []
    for _, inputs in draws:
        ex = execute(program, inputs)
        outs.append(ex.outputs if ex.ok else None)
    return _Reference(draws, outs)


def _recorded_fingerprint(case: GraphCase, stage: str) -> str:
    """The shared case's fingerprint as first seen in this process: what ``input_unchanged`` compares against."""
    key = (id(case), stage)
    if key not in MEMOS.fingerprints:
        MEMOS.fingerprints[key] = fingerprint.of_shared(case, stage)
    return MEMOS.fingerprints[key]


def _input_forms(case: GraphCase, stage: str, handed=None) -> HandedForms:
    """The forms (op counts, canonical, metadata) of the program every pass on ``case`` is handed, once per process.

    What ``changed`` compares a result to.
    Every fresh input is the same copy of the shared case with the same
    seeded metadata, so the first one handed to a pass (before it runs) stands
    for all; ``handed`` None: a fresh copy is made (a warm server preparing).
    """
    key = (id(case), stage)
    if key not in MEMOS.canonical_forms:
        ep = handed if handed is not None else _fresh_input(case, stage)
        MEMOS.canonical_forms[key] = handed_forms(ep)
    return MEMOS.canonical_forms[key]


def prepare_case(case: GraphCase, stage: str = "edge", config: Optional[RunConfig] = None) -> None:
    """Compute what every check of ``case`` needs whatever the pass (reference outputs, fingerprints) now.

    A warm server calls it once per preloaded case; the children it forks inherit the memos.
    """
    config = config or RunConfig()
    _recorded_fingerprint(case, stage)
    _input_forms(case, stage)
    reference_outputs(case, stage, config.seed, config.draws)


def _fresh_input(case: GraphCase, stage: str):
    ep = spares.fresh(case, stage)  # made before this process forked, when it was (harness.check.spares)
    seed_metadata(ep.graph_module)
    return ep


def check_pass_on_case(loaded: LoadedPass, case: GraphCase, config: RunConfig = RunConfig(),
                       on_result: Optional[Callable[[Any], None]] = None) -> list[CheckResult]:
    """Every IR check of DESIGN.md for ``loaded`` on ``case``, as CheckResults.

    ``on_result``: called with the program the pass returned, before any check reads it (``passgate mutate``
    fingerprints it to tell a mutant that changed no program on any case, an equivalent one)."""
    stage = config.stage or loaded.stage
    out: list[CheckResult] = []

    def add(check: str, v: verifiers.Verdict, seconds: float = 0.0) -> None:
        if config.wants(check):
            out.append(result(loaded.name, case.name, check, v.status, v.message, v.details, seconds))

    _recorded_fingerprint(case, stage)

    ep = _fresh_input(case, stage)
    handed_fp = fingerprint.exact(ep.graph_module, ep)
    handed = _input_forms(case, stage, ep)  # before the run: a pass may edit ``ep`` in place
    run = run_pass(loaded, ep, config.timeout)

    if run.outcome == Outcome.NOT_APPLICABLE:
        for check in IR_CHECK_IDS:
            add(check, verifiers.Verdict(Status.NOT_APPLICABLE, run.error))
        return out + (runtime_skipped(loaded.name, case.name, run.error, Status.NOT_APPLICABLE)
                      if config.runtime else [])
    if run.outcome != Outcome.OK:
        what = "timed out" if run.outcome == Outcome.TIMEOUT else "raised"
        add("runs", verifiers.Verdict(Status.FAIL, f"the pass {what}: {run.error}",
                                      {"outcome": run.outcome, "traceback": run.traceback}), run.seconds)
        for check in IR_CHECK_IDS:
            if check != "runs":
                add(check, verifiers.Verdict(Status.SKIP, "the pass did not run"))
        return out + (runtime_skipped(loaded.name, case.name, "the pass did not run") if config.runtime else [])

    res = run.program
    if on_result is not None:
        on_result(res)
    forms = ResultForms(res)
    if run.entry_input is not None:  # run after prerequisites: what the entry itself changed, not what they did
        # metadata too (handed.meta_keys): a node a prerequisite made without stack_trace (to_backend's delegate
        # call) is not the entry's loss; the prerequisites answer for it under their own entries
        handed = run.entry_input
    changes = op_diff(handed.ops, op_counts(res.graph_module))
    what = changed(changes, forms, handed)
    details = {"ops_changed": changes, "changed": what, "change_signature": change_signature(changes, what)}
    if (config.semantics or loaded.semantics) == Semantics.OBSERVING:  # exercised does not apply (harness.check.exercised)
        details["observing"] = True
    add("runs", verifiers.Verdict(Status.PASS, changes_text(changes), details), run.seconds)
    replica = _replica_key(case, stage, forms, handed_fp, config) if run.entry_program is None else None
    _judge_structure(add, res, run, handed.meta_keys, replica)
    _judge_execution(add, res, case, stage, config, config.semantics or loaded.semantics, run.entry_program)
    if run.has_ensures:
        add("ensures", verifiers.Verdict(Status.FAIL, f"ensures failed: {run.ensures_error}")
            if run.ensures_error else verifiers.PASS)
    else:
        add("ensures", verifiers.Verdict(Status.NOT_APPLICABLE, "the pass has no ensures hook"))
    _timed(add, "input_unchanged", lambda: _input_unchanged(run, ep, handed_fp, case, stage))
    _judge_reruns(add, loaded, forms, handed_fp, case, stage, config)
    verifiers.attribute_consequences(out)
    if config.runtime:
        out += judge_result(res, case, loaded.name, stage, config.seed)
    return out


def _replica_key(case: GraphCase, stage: str, forms: ResultForms, handed_fp: str, config: RunConfig) -> Optional[tuple]:
    """The memo key of the handed program's verifier verdict when the result is an exact replica of it, else None.

    Asked only when the rerun checks will digest the result anyway (``forms.exact`` is computed once): with
    ``--checks must`` the digest of a large program's state would cost more than the verifier it saves."""
    if not (config.wants("deterministic") or config.wants("idempotent")) or forms.exact != handed_fp:
        return None
    return (id(case), stage, handed_fp)


def _judge_structure(add: Callable, res, run: PassRun, before_meta: dict, replica: Optional[tuple] = None) -> None:
    """The checks that read the result's graph and signature without running it."""
    _timed(add, "no_call_module", lambda: verifiers.no_call_module(res))
    _timed(add, "graph_lint", lambda: verifiers.graph_lint(res))
    _timed(add, "meta_val", lambda: verifiers.meta_val(res))
    for check in META_CHECKS:
        _timed(add, check, lambda check=check: verifiers.meta_key(check, before_meta, res))
    _timed(add, "signature", lambda: verifiers.signature(res, run.signature_error))
    _timed(add, "verifier", lambda: verifiers.dialect_verdict(res, run.entry_program, replica))


def _judge_execution(add: Callable, res, case: GraphCase, stage: str, config: RunConfig, semantics: str,
                     entry_program=None) -> None:
    """One recorded execution of the result, shared by runnable, val_matches_execution and numerics.

    ``entry_program``: what the entry was handed after its prerequisites (None: the case itself). The result
    is judged against that program's execution, as its metadata is: a prerequisite that changes what the
    program computes (QNN's and Samsung's FoldQDQ leave int8 weights feeding float ops, by design) answers
    for it under its own entry, and the entry only for what it changed.
    """
    started = time.perf_counter()
    ref = reference_outputs(case, stage, config.seed, config.draws)
    if entry_program is not None:
        ref = _reference(entry_program, ref.draws)
    sample_run = execute(res, ref.draws[0][1], record=True)
    verdict = verifiers.runnable(sample_run)
    if entry_program is not None and not sample_run.ok and ref.outputs[0] is None:
        verdict = verifiers.Verdict(Status.SKIP, "the program its prerequisites handed it does not run on the sample "
                                    "inputs either (their own entries say why)")
    add("runnable", verdict, time.perf_counter() - started)
    _timed(add, "val_matches_execution", lambda: verifiers.val_matches_execution(res, sample_run))
    if config.wants("numerics"):
        _timed(add, "numerics", lambda: _numerics(res, ref, sample_run, semantics))


def _judge_reruns(add: Callable, loaded: LoadedPass, forms: ResultForms, handed_fp: str, case: GraphCase,
                  stage: str, config: RunConfig) -> None:
    """``deterministic`` and ``idempotent``: the pass run again, on a fresh input and on its own result.

    Usually two more runs. One serves both when the first run left the
    program an exact replica of what it was handed (``fingerprint.exact`` of
    the result equals that of the input before the run: names, targets,
    arguments, metadata, state and signature): the deterministic check's run,
    on a fresh copy of that input, is then also a run on a copy of the result,
    which is what ``idempotent`` asks for. See :func:`_idempotence` for why
    each outcome of that run may stand for the idempotence run.

    The exact fingerprint is the equality ``input_unchanged`` already trusts,
    and nothing weaker is used: a canonical form ignores names and metadata a
    pass may read, so a result that only renamed nodes or only changed
    metadata gets its own idempotence run (tests/test_reruns.py holds passes
    only such a run flags). What the premise leaves out: ``exact`` sums up a
    non-scalar metadata value by its type (a dict by its keys) and does not
    read ``GraphModule.meta``, and a pass may keep state outside the program
    (a catalog entry is built afresh for every call; a module global is not).
    A pass whose second run turns on only those could tell a replica from the
    input; ``input_unchanged`` would miss its edit the same way.
    """
    determinism, second = None, []  # second: the deterministic check's PassRun, once it ran
    if config.wants("deterministic"):
        def local() -> verifiers.Verdict:
            return _deterministic(loaded, forms, case, stage, config.timeout, second)
        determinism = _measured(lambda: crossrun.deterministic(  # the second run in another hash seed's process
            loaded, lambda: forms.canonical, case, stage, config.timeout, handed_fp,
            _recorded_fingerprint(case, stage), local) if config.hash_seed_check else local(), "deterministic")
    if config.wants("idempotent"):
        add("idempotent", *_measured(
            lambda: _idempotence(loaded, forms, handed_fp, config.timeout, determinism, second), "idempotent"))
    if determinism is not None:
        add("deterministic", *determinism)


IDEMPOTENT_BY_DETERMINISM = verifiers.Verdict(
    Status.PASS, "the pass changed nothing, so the deterministic check's second run was a run on an exact copy "
                 "of the result, and it gave the same graph")


def _idempotence(loaded: LoadedPass, forms: ResultForms, handed_fp: str, timeout: float,
                 determinism: Optional[tuple], second: list) -> verifiers.Verdict:
    """``idempotent``, from the deterministic check's run when the result replicates the input, else its own run.

    Sound because the only runs reused are runs whose input was an exact copy
    of the result (see :func:`_judge_reruns`), and they are judged exactly as
    an idempotence run is (:func:`_judge_idempotent_run`):

    - the deterministic run gave the result's graph: a run on a copy of the
      result changed nothing, the very observation an own run would make;
    - it ended otherwise (a different graph, raised, timed out): a run on a
      copy of the result did that, a counterexample to idempotence as good as
      an own run's. Only a pass that is not deterministic gets here, flagged
      ``deterministic`` anyway; a third run of such a pass would only be a
      third sample of it, and the one already taken is reported.

    A harness error in the deterministic check (``error``), or a fingerprint
    that cannot be taken after a failed deterministic run, reuses nothing.
    """
    status = determinism[0].status if determinism is not None else None
    if status is Status.PASS and forms.exact == handed_fp:
        return IDEMPOTENT_BY_DETERMINISM
    if status is Status.FAIL and second and _replicates(forms, handed_fp):
        verdict = _judge_idempotent_run(second[0], lambda: forms.canonical)
        return verifiers.Verdict(verdict.status, f"{verdict.message} ({_SHARED_RUN})", verdict.details)
    second.clear()  # not reused: its program need not live on beside the copy of the result
    return _idempotent(loaded, forms, timeout)


_SHARED_RUN = ("the pass changed nothing, so this is the deterministic check's second run, a run on an exact copy "
               "of the result")


def _replicates(forms: ResultForms, handed_fp: str) -> bool:
    """Is the result an exact replica of the input it was run on? (False when it cannot be fingerprinted.)"""
    try:
        return forms.exact == handed_fp
    except Exception:  # noqa: BLE001 - an unreadable result gets its own idempotence run, which says why
        return False


def _timed(add: Callable, check: str, fn: Callable[[], verifiers.Verdict]) -> None:
    add(check, *_measured(fn, check))


def _measured(fn: Callable[[], verifiers.Verdict], check: str) -> tuple[verifiers.Verdict, float]:
    """``fn()``'s verdict and its seconds; a crash is the harness's fault and says so."""
    started = time.perf_counter()
    try:
        verdict = fn()
    except Exception as exc:  # noqa: BLE001
        verdict = verifiers.Verdict(Status.ERROR, f"passgate's {check} check crashed: {type(exc).__name__}: {exc}")
    return verdict, time.perf_counter() - started


def _numerics(res, ref: _Reference, sample_run, semantics: str) -> verifiers.Verdict:
    if semantics == "changing":
        return verifiers.Verdict(Status.SKIP, "the pass is declared meaning-changing")
    if not sample_run.ok:
        return verifiers.Verdict(Status.SKIP, "the program did not run (see runnable)")
    worst_abs = worst_rel = 0.0
    compared = 0
    for (name, inputs), expected in zip(ref.draws, ref.outputs):
        if expected is None:
            continue  # the pre-pass program itself fails on this draw
        actual = sample_run if name == "sample" else execute(res, inputs)
        if not actual.ok:
            return verifiers.Verdict(Status.FAIL, f"draw {name}: the program raised {type(actual.error).__name__}: {actual.error}")
        cmp = compare_outputs(expected, actual.outputs)
        compared += 1
        worst_abs, worst_rel = max(worst_abs, cmp.max_abs_err), max(worst_rel, cmp.max_rel_err)
        if not cmp.ok:
            return verifiers.Verdict(Status.FAIL, f"draw {name}: {cmp.message}",
                                     {"draw": name, "max_abs_err": cmp.max_abs_err, "max_rel_err": cmp.max_rel_err})
    return verifiers.Verdict(Status.PASS, f"{compared} draws within tolerance",
                             {"draws": compared, "max_abs_err": worst_abs, "max_rel_err": worst_rel})


def _input_unchanged(run: PassRun, handed, handed_fp: str, case: GraphCase, stage: str) -> verifiers.Verdict:
    if fingerprint.of_shared(case, stage) != _recorded_fingerprint(case, stage):
        return verifiers.Verdict(Status.FAIL, "the pass changed the shared graph case it was never handed")
    if run.returned_input:
        return verifiers.Verdict(Status.PASS, "the pass edits in place and returned what it was handed")
    if fingerprint.exact(handed.graph_module, handed) != handed_fp:
        return verifiers.Verdict(Status.FAIL, "the pass returned a new program but also edited the one it was handed")
    return verifiers.PASS


def _idempotent(loaded: LoadedPass, forms: ResultForms, timeout: float) -> verifiers.Verdict:
    """The pass's own idempotence run, on a deep copy of its result (the result's forms are already taken)."""
    try:
        again = copy.deepcopy(forms.program)
    except Exception as exc:  # noqa: BLE001 - e.g. a node whose args is a list: torch.fx refuses to copy it
        return verifiers.Verdict(Status.SKIP, "the pass's result cannot be copied for a second run (runnable and "
                                 f"verifier say why): {type(exc).__name__}: {exc}")
    return _judge_idempotent_run(run_pass(loaded, again, timeout, label="idempotent"), lambda: forms.canonical)


def _judge_idempotent_run(run: PassRun, result_form: Callable[[], tuple]) -> verifiers.Verdict:
    """``idempotent`` of a run on a copy of the result (``result_form``: its canonical form, read only if it ran)."""
    if run.outcome != Outcome.OK:
        return verifiers.Verdict(Status.FAIL if run.outcome != Outcome.NOT_APPLICABLE else Status.PASS,
                                 f"second run: {run.outcome}: {run.error}")
    first, second = result_form(), fingerprint.canonical(run.program)
    if second != first:
        return verifiers.Verdict(Status.FAIL, f"a second run changed the graph again: {fingerprint.first_difference(first, second)}")
    return verifiers.PASS


def _deterministic(loaded: LoadedPass, forms: ResultForms, case: GraphCase, stage: str, timeout: float,
                   keep: list) -> verifiers.Verdict:
    """``deterministic``: the pass on a second fresh copy of the input; the run is kept in ``keep`` for reuse."""
    run = run_pass(loaded, _fresh_input(case, stage), timeout, label="deterministic")
    keep.append(run)
    if run.outcome != Outcome.OK:
        return verifiers.Verdict(Status.FAIL, f"the run on a second copy ended {run.outcome}: {run.error}")
    a, b = forms.canonical, fingerprint.canonical(run.program)
    if a != b:
        return verifiers.Verdict(Status.FAIL, f"two runs on copies of the same input differ: {fingerprint.first_difference(a, b)}")
    return verifiers.PASS
