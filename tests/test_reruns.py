"""The rerun checks share a pass run only where that cannot weaken a verdict.

``deterministic`` and ``idempotent`` each need a pass run of their own, unless
the first run left the program an exact replica of its input: then the
deterministic check's run (on a fresh copy of the input) is also a run on a
copy of the result, and serves ``idempotent`` too (harness/check/runner.py,
``_judge_reruns``). Each pass here would slip through a looser sharing: a
non-deterministic pass that changes nothing on its first run, passes whose
first run only renames nodes or only adds metadata (equal canonical forms,
yet the second run does something else), a pass that never reaches a fixed
point. The counts of pass calls come from :func:`harness.check.invoke.invocations`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import broken_passes
import pytest
import torch.fx

from harness.check.invoke import invocations
from harness.check.loading import from_object
from harness.check.runner import IDEMPOTENT_BY_DETERMINISM, check_pass_on_case
from harness.core.config import RunConfig
from harness.core.results import Status

ROOT = Path(__file__).resolve().parent.parent


def _add_alias(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A real structural change: one more ``alias_copy`` before the first output."""
    return broken_passes.NeverFixedPoint().call(gm).graph_module


def _by_call(*steps):
    """A pass whose behaviour depends on how many times it was called: non-deterministic as the harness sees it.

    A function, not an instance: the harness deep-copies an instance for every run, which would reset its count.
    """
    calls = [0]

    def by_call(gm):
        step = steps[min(calls[0], len(steps) - 1)]
        calls[0] += 1
        return step(gm)

    return by_call


def _identity(gm):
    return gm


def _raise(gm):
    raise RuntimeError("only the first call works")


def _tag_then_alias(gm):
    """First run: metadata only (every op tagged); a run on its own result sees the tags and adds a node."""
    ops = [n for n in gm.graph.nodes if n.op == "call_function"]
    if any(n.meta.get("passgate_test_seen") for n in ops):
        return _add_alias(gm)
    for n in ops:
        n.meta["passgate_test_seen"] = True
    return gm


def _rename_then_alias(gm):
    """First run: renames the ops only (names are not in the canonical form); a run on its result adds a node."""
    ops = [n for n in gm.graph.nodes if n.op == "call_function"]
    if any(n.name.endswith("_renamed") for n in ops):
        return _add_alias(gm)
    for n in ops:
        n._rename(f"{n.name}_renamed")
    gm.recompile()
    return gm


def _judge(p, case, config: RunConfig = RunConfig()) -> tuple[dict, int]:
    """Results by check id, and how many pass calls judging them took."""
    before = sum(invocations().values())
    results = check_pass_on_case(from_object(p, name=getattr(p, "__name__", None)), case, config)
    return {r.check: r for r in results}, sum(invocations().values()) - before


def test_a_pass_that_changed_nothing_runs_twice_and_both_checks_pass(builtin_cases):
    by, calls = _judge(_identity, builtin_cases["mlp"])
    assert by["deterministic"].status is Status.PASS
    assert (by["idempotent"].status, by["idempotent"].message) == (Status.PASS, IDEMPOTENT_BY_DETERMINISM.message)
    assert calls == 2


def test_a_no_op_first_run_of_a_non_deterministic_pass_is_flagged_by_both(builtin_cases):
    """Its second run, on an exact copy of the unchanged result, adds a node: not deterministic, not idempotent."""
    by, calls = _judge(_by_call(_identity, _add_alias), builtin_cases["mlp"])
    assert by["runs"].details["changed"] == {"ops": False, "structure": False, "metadata": False}
    assert by["deterministic"].status is Status.FAIL and "differ" in by["deterministic"].message
    assert by["idempotent"].status is Status.FAIL and "changed the graph again" in by["idempotent"].message
    assert "deterministic check's second run" in by["idempotent"].message
    assert calls == 2  # the deterministic check's run was a run on a copy of the result: no third


def test_a_no_op_first_run_then_a_raise_is_flagged_by_both(builtin_cases):
    by, calls = _judge(_by_call(_identity, _raise), builtin_cases["mlp"])
    assert by["deterministic"].status is Status.FAIL and "raised" in by["deterministic"].message
    assert by["idempotent"].status is Status.FAIL and "second run: raised" in by["idempotent"].message
    assert calls == 2


def test_a_pass_that_changes_differently_each_run_gets_three_runs(builtin_cases):
    by, calls = _judge(_by_call(_add_alias, lambda gm: _add_alias(_add_alias(gm))), builtin_cases["mlp"])
    assert by["deterministic"].status is Status.FAIL
    assert by["idempotent"].status is Status.FAIL and "deterministic check" not in by["idempotent"].message
    assert calls == 3


def test_a_never_fixed_point_pass_is_not_idempotent_and_is_deterministic(builtin_cases):
    by, calls = _judge(broken_passes.NeverFixedPoint(), builtin_cases["mlp"])
    assert by["idempotent"].status is Status.FAIL and by["deterministic"].status is Status.PASS
    assert calls == 3


@pytest.mark.parametrize("p, changed", [
    (_tag_then_alias, {"ops": False, "structure": False, "metadata": True}),
    (_rename_then_alias, {"ops": False, "structure": False, "metadata": False}),
], ids=["metadata_only", "names_only"])
def test_equal_canonical_forms_do_not_share_the_run(builtin_cases, p, changed):
    """The result has the input's canonical form, but not its names or metadata: the pass sees the difference."""
    by, calls = _judge(p, builtin_cases["mlp"])
    assert by["runs"].details["changed"] == changed
    assert by["deterministic"].status is Status.PASS
    assert by["idempotent"].status is Status.FAIL and "deterministic check" not in by["idempotent"].message
    assert calls == 3


@pytest.mark.parametrize("checks, calls", [({"runs", "idempotent"}, 2), ({"runs", "deterministic"}, 2),
                                           ({"runs"}, 1)])
def test_a_check_selection_runs_only_what_it_judges(builtin_cases, checks, calls):
    """Without ``deterministic`` there is no run to share: ``idempotent`` makes its own."""
    by, made = _judge(_identity, builtin_cases["mlp"], RunConfig(checks=frozenset(checks)))
    assert set(by) == checks and made == calls
    assert all(r.status is Status.PASS for r in by.values())
    if "idempotent" in by:
        assert by["idempotent"].message != IDEMPOTENT_BY_DETERMINISM.message


def test_the_rerun_benchmark_counts_calls_and_sharing(tmp_path):
    """benchmarks/reruns.py works (not how fast anything is): one no-op entry, one graph, two calls."""
    out = tmp_path / "reruns.json"
    r = subprocess.run([sys.executable, "-m", "benchmarks.reruns", "--catalog", "exir", "--graphs", "mlp",
                        "--only", "exir.DebugPass", "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["pairs"] == 1 and doc["outer_calls"] == {"run": 1, "deterministic": 1}
    assert doc["idempotent_served_by_deterministic"] == 1 and doc["nested_calls"] == 0
