"""Isolation: passes that raise, hang, abort, segfault or exit are verdicts, and the run goes on.

The misbehaving passes live in ``tests/data/misbehaving_passes.py``; each
pair runs in a forked worker (harness/run/isolation.py), so the worst a pass can
do is lose its own pair.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.check.loading import load_pass
from harness.core.config import RunConfig
from harness.core.results import Status
from harness.run.scheduler import Tally, check_all

DATA = Path(__file__).resolve().parent / "data"
BAD = f"{DATA}/misbehaving_passes.py"
RELU = "passes.reference:ReplaceInPlaceReluWithOutOfPlaceReluPass"

# pass -> what the runs message must say
EXPECTED_RUNS = {
    "raises": "the pass raised: RuntimeError: this pass is broken on purpose",
    "sleeps": "the pass timed out: the pass did not return within 1 s",
    "spins_in_c": "did not answer the in-process deadline (stuck in native code or holding the GIL)",
    "aborts": "the interpreter died while running the pass: killed by SIGABRT (Aborted)",
    "segfaults": "the interpreter died while running the pass: killed by SIGSEGV (Segmentation fault)",
    "exits": "the pass raised: SystemExit: 3",
    "hard_exits": "the interpreter died while running the pass: exited with status 7",
}
# the faulthandler stack names the pass's own frame for deaths the parent saw
STACK_NAMES = {"spins_in_c", "aborts", "segfaults"}


def by_pair(results):
    cells: dict = {}
    for r in results:
        cells.setdefault((r.pass_name, r.graph), []).append(r)
    return cells


@pytest.fixture(scope="module")
def cases(builtin_cases):
    return [builtin_cases["mlp"], builtin_cases["conv_bn_relu"]]


def test_hang_abort_raise_among_correct_passes(cases):
    """Two workers, so a crash in one leaves the other's pair intact; every verdict in the normal order."""
    names = ["identity", "raises", "sleeps", "spins_in_c", "aborts", "segfaults", "exits", "hard_exits"]
    passes = [load_pass(RELU, stage="edge")] + [load_pass(f"{BAD}:{n}") for n in names]
    seen = []
    results = check_all(passes, cases, RunConfig(timeout=1.0, isolate=True, workers=2),
                        Tally(lambda e: seen.append((e.done, e.total, e.pass_name, e.graph))))

    order = [(p.name, c.name) for p in passes for c in cases]
    assert [(p, g) for _, _, p, g in seen] == order  # delivered in order despite two workers
    assert [d for d, *_ in seen] == list(range(1, len(order) + 1))
    cells = by_pair(results)
    assert list(cells) == order
    for (p, g), rs in cells.items():
        checks = {r.check: r for r in rs}
        assert len(checks) == 16, (p, g)
        failing = {r.check for r in rs if r.status in (Status.FAIL, Status.ERROR)}
        if p in EXPECTED_RUNS:
            runs = checks["runs"]
            assert failing == {"runs"}, (p, g, failing)
            assert EXPECTED_RUNS[p] in runs.message, (p, runs.message)
            assert all(r.status is Status.SKIP for r in rs if r.check != "runs")
            if p in STACK_NAMES:
                assert f"in {p}" in runs.details["traceback"], runs.details
        else:
            assert failing == set(), (p, g, [(r.check, r.message) for r in rs if r.check in failing])


def test_isolated_verdicts_and_messages_equal_in_process(builtin_cases):
    """For passes that behave (well or badly, but in Python), isolation changes nothing but timings."""
    specs = [RELU, "passes.reference:ReplaceAddWithMulSub", "passes.reference:replace_add_mul_with_sub",
             f"{DATA.parent}/broken_passes.py:MoveIntoSubmodule", f"{DATA.parent}/broken_passes.py:EditsInputReturnsCopy",
             f"{BAD}:raises"]
    passes = [load_pass(s) for s in specs]
    cases = [builtin_cases[n] for n in ("mlp", "inplace_views")]

    def strip(rs):
        return [(r.pass_name, r.graph, r.check, r.status, r.message) for r in rs]

    in_process = check_all(passes, cases, RunConfig(timeout=20))
    isolated = check_all(passes, cases, RunConfig(timeout=20, isolate=True))
    assert strip(isolated) == strip(in_process)
    assert any(r.status is Status.FAIL for r in isolated)  # the comparison covers failures too


def test_check_isolates_by_default_and_no_isolation_runs_in_process(tmp_path, capsys):
    """`passgate check` survives os.abort(); --no-isolation is the in-process mode for a debugger."""
    from harness.cli.main import main

    status = main(["check", "--pass", f"{BAD}:aborts", "--pass", f"{BAD}:identity", "--graphs", "mlp",
                   "--report", str(tmp_path), "-q"])
    assert status == 1
    import json

    doc = json.loads((tmp_path / "results.json").read_text())
    runs = {r["pass_name"]: r for r in doc["results"] if r["check"] == "runs"}
    assert runs["aborts"]["status"] == "fail" and "SIGABRT" in runs["aborts"]["message"]
    assert runs["aborts"]["details"]["signal"] == "SIGABRT"
    assert runs["identity"]["status"] == "pass"
    assert doc["complete"] is True

    pid = os.getpid()
    status = main(["check", "--pass", f"{BAD}:raises", "--graphs", "mlp", "--report", str(tmp_path), "-q",
                   "--no-isolation"])
    assert status == 1 and os.getpid() == pid
    doc = json.loads((tmp_path / "results.json").read_text())
    runs = next(r for r in doc["results"] if r["check"] == "runs")
    assert runs["message"].startswith("the pass raised: RuntimeError")


def test_worker_memos_reach_the_parent(builtin_cases):
    """Reference outputs a worker computed are kept, so the next worker forked does not redo them."""
    from harness.graphs.memos import MEMOS

    case = builtin_cases["conv_bn_relu"]
    MEMOS.forget([case])
    assert not any(id(case) in k for k in MEMOS.references)
    check_all([load_pass(f"{BAD}:identity")], [case], RunConfig(isolate=True))
    assert any(id(case) in k for k in MEMOS.references)
    assert (id(case), "edge") in MEMOS.fingerprints
