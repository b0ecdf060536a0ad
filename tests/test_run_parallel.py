"""``passgate run -j N``: the same report, in the same order, as ``-j 1``; a lost unit and a Ctrl-C too.

Real runs of a small vendor catalog (two reference passes on three built-in
graphs, with the runtime unit of each case: batched pairs and units of their
own), half of its verdicts reused from the cache, at ``-j 1`` and ``-j 2``.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import ClassVar

import pytest
from run_helpers import BAD, load, pairs, strip_timings

from harness.check.loading import load_pass
from harness.cli.main import main
from harness.core.config import RunConfig
from harness.core.errors import ChildFailed
from harness.core.results import CheckResult, Status
from harness.run import forking, parallel
from harness.run.isolation import Pool
from harness.run.plan import Unit
from harness.run.tasks import PairTask

GRAPHS = ["mlp", "conv_bn_relu", "inplace_views"]
CATALOG = ("from harness.catalog import Catalog, entry\n"
           "CATALOG = Catalog('vendor', (), (\n"
           "    entry('vendor', 'passes.reference:RemoveDetachPass', stage='export', contract='removes detach'),\n"
           "    entry('vendor', 'passes.reference:ReplaceInPlaceReluWithOutOfPlaceReluPass', stage='export',\n"
           "          contract='relu_ -> relu'),\n"
           "))\n")


def _run(catalog, cache, report, jobs: int, *extra: str) -> int:
    return main(["run", "--catalog", f"{catalog}:CATALOG", "--graphs", *GRAPHS, "--runtime", "--cache-dir", str(cache),
                 "--report", str(report), "-j", str(jobs), *extra])


def test_j2_writes_the_j1_report_with_reused_verdicts_in_their_place(tmp_path, capsys):
    catalog = tmp_path / "vendor_catalog.py"
    catalog.write_text(CATALOG)
    cache = tmp_path / "cache"
    shutil.copytree(os.environ["PASSGATE_CACHE_DIR"], cache, ignore=shutil.ignore_patterns("verdicts"))
    # one entry's verdicts and the runtime units recorded first: the runs below reuse them, run the other entry
    assert _run(catalog, cache, tmp_path / "first", 1, "--only", "vendor.RemoveDetachPass", "-q") == 0
    shutil.copytree(cache, tmp_path / "cache2")
    capsys.readouterr()
    statuses = [_run(catalog, cache, tmp_path / "j1", 1), _run(catalog, tmp_path / "cache2", tmp_path / "j2", 2)]
    err = capsys.readouterr().err
    one, two = load(tmp_path / "j1"), load(tmp_path / "j2")
    assert statuses[0] == statuses[1] == one["exit_status"]
    assert [strip_timings(r) for r in two["results"]] == [strip_timings(r) for r in one["results"]]
    assert pairs(two) == pairs(one) and len(pairs(one)) == 2 * 3 + 3 + 2  # entries, runtime units, exercised
    assert sum(1 for r in two["results"] if (r["details"] or {}).get("reused")) > 0
    counts = ("units", "ran", "reused", "recorded")
    assert [two["incremental"][k] for k in counts] == [one["incremental"][k] for k in counts] == [9, 3, 6, 3]
    # each run's progress counts up one by one, whatever worker finished first
    for run in err.split("incremental:")[:2]:
        numbers = [int(line.split("[", 1)[1].split("/", 1)[0]) for line in run.splitlines()
                   if line.startswith("passgate: [")]
        assert numbers == list(range(1, 10)), numbers
    assert main(["report", "diff", str(tmp_path / "j1"), str(tmp_path / "j2")]) == 0
    assert "0 regression(s), 0 fixed" in capsys.readouterr().out


@dataclass(frozen=True)
class _Aborts(Unit):
    """A unit whose judging kills its process (as a native abort in a backend's lowering does)."""

    kind: ClassVar[str] = "test-aborts"
    needs_case: ClassVar[bool] = False

    def items(self) -> list:
        return [(self.name, "runs")]

    def judge(self, case, config) -> list:
        os.abort()


@dataclass(frozen=True)
class _Answers(Unit):
    """A unit that judges itself without a case: one pass verdict, with the pid of the process that judged it."""

    kind: ClassVar[str] = "test-answers"
    needs_case: ClassVar[bool] = False

    def items(self) -> list:
        return [(self.name, "runs")]

    def judge(self, case, config) -> list:
        return [(self.graph, self.name, [CheckResult(self.name, self.graph, "runs", Status.PASS, str(os.getpid()))])]


def test_a_lost_unit_says_what_j1_says_and_the_others_are_judged_in_fresh_forks():
    config = RunConfig(isolate=True, workers=2)
    units = [_Answers("first", "g"), _Aborts("aborts", "g"), _Answers("after", "g")]
    done, lost = [], []
    out = parallel.judge([[u] for u in units], {}, config, done=lambda u, rs: done.append(u.name),
                         on_lost=lambda u, cause: lost.append((u.name, cause)) or [])
    with pytest.raises(ChildFailed) as at_j1:  # what -j 1 judges it with: one forked call
        forking.call(partial(units[1].judge, None, config))
    assert lost == [("aborts", str(at_j1.value))] and "SIGABRT" in str(at_j1.value)
    assert done == ["first", "after"] and [r.pass_name for r in out] == ["first", "after"]
    pids = {int(r.message) for r in out}
    assert len(pids) == 2 and os.getpid() not in pids  # each unit in a fork of its own


class _Watched(Pool):
    """The real pool, counting the tasks that came back (to interrupt it at a known moment)."""

    back: list

    def _poll(self, w):
        got = super()._poll(w)
        if got is not None:
            self.back.append(w)
        return got


def test_ctrl_c_hands_on_what_finished_behind_a_running_task(builtin_cases):
    sleeps, relu = load_pass(f"{BAD}:sleeps"), load_pass("passes.reference:ReplaceInPlaceReluWithOutOfPlaceReluPass")
    config = RunConfig(isolate=True, workers=2, timeout=900.0)  # the sleeper outlives the others however loaded the machine
    cases = [builtin_cases[g] for g in GRAPHS]
    pool = _Watched([PairTask(sleeps, cases[0], config)] + [PairTask(relu, c, config) for c in cases[1:]], 2,
                    timeout=config.timeout)
    pool.back = []
    delivered = []

    def interrupt_when_two_are_back():
        deadline = time.monotonic() + 300
        while len(pool.back) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    # Ctrl-C must raise here even when this process inherited SIGINT ignored (a shell starts background jobs so,
    # and a CI job launched that way runs its workers with it): the pool's answer to KeyboardInterrupt is the subject
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt_when_two_are_back, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            try:
                pool.run(lambda i, rs: delivered.append((i, {r.check for r in rs})))
            finally:
                pool.close()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert [i for i, _ in delivered] == [1, 2]  # the sleeping pair 0 never finished; 1 and 2 are not lost
    assert all("runs" in checks and "numerics" in checks for _, checks in delivered)
