"""``deterministic`` across processes: ``--hash-seed-check`` makes the second run in a worker of another hash seed.

Two runs in one process share its ``PYTHONHASHSEED``, so a pass whose output
follows the iteration order of a set of strings passes the in-process check
(shown here: it does) and changes its output in the next process. With the
switch, the second run happens in :mod:`harness.run.hashseed_worker`, and the
check fails saying so. The worker is a real process started with another
seed; the passes are in ``tests/data/hash_seed_passes.py``.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from harness.check import crossrun
from harness.check.loading import load_pass
from harness.check.runner import check_pass_on_case
from harness.core.config import RunConfig
from harness.core.results import Status
from harness.run import hashseed
from harness.run.scheduler import check_all

DATA = Path(__file__).resolve().parent / "data" / "hash_seed_passes.py"
GRAPHS = ("mlp", "attention_block")


def _pass(name: str):
    return load_pass(f"{DATA}:{name}")


@pytest.fixture(scope="module")
def pool():
    started = hashseed.ensure()
    yield started
    hashseed.close()


@pytest.fixture(scope="module")
def cases(builtin_cases):
    return [builtin_cases[name] for name in GRAPHS]


def _deterministic(results) -> list:
    return [r for r in results if r.check == "deterministic"]


def test_set_order_pass_fails_only_with_the_hash_seed_check(pool, cases):
    broken = _pass("abs_in_set_order")
    # in one process the two runs share a hash seed: the old check cannot see it
    same = _deterministic(check_all([broken], cases, RunConfig(checks=frozenset({"runs", "deterministic"}))))
    assert [r.status for r in same] == [Status.PASS, Status.PASS]
    # isolated: the forked isolation worker reaches the same hash-seed worker
    config = RunConfig(checks=frozenset({"runs", "deterministic"}), hash_seed_check=True, isolate=True)
    crossed = _deterministic(check_all([broken], cases, config))
    assert [r.status for r in crossed] == [Status.FAIL, Status.FAIL], [r.message for r in crossed]
    for r in crossed:
        assert "the output changed with the hash seed" in r.message
        assert "node " in r.message and "abs.default" in r.message  # the first difference, by op
        assert r.details["hash_seeds"] == {"first": crossrun.hash_seed(), "second": pool.seed}
        assert r.details["first_difference"] in r.message


def test_correct_pass_is_flagged_by_nothing(pool, cases):
    results = check_all([_pass("abs_in_sorted_order")], cases, RunConfig(hash_seed_check=True))
    bad = [(r.graph, r.check, r.message) for r in results if r.status in (Status.FAIL, Status.ERROR)]
    assert not bad
    det = _deterministic(results)
    assert len(det) == 2
    for r in det:  # really run in the worker, not in this process
        assert r.status is Status.PASS and r.details["cross_process"] is True
        assert r.details["hash_seeds"]["second"] == pool.seed != crossrun.hash_seed()


def test_worker_process_that_dies_is_an_error_not_a_hang(pool, cases):
    started = time.monotonic()
    det = _deterministic(check_all([_pass("dies_in_hash_seed_worker")], cases[:1], RunConfig(hash_seed_check=True)))
    assert time.monotonic() - started < 60
    assert [r.status for r in det] == [Status.ERROR]
    assert "died" in det[0].message and "exited with status 7" in det[0].message
    # only the run's process died: the worker answers the next run
    again = _deterministic(check_all([_pass("abs_in_sorted_order")], cases[:1], RunConfig(hash_seed_check=True)))
    assert [r.status for r in again] == [Status.PASS]


def _children(pid: int) -> list:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                out.append(int(entry))
    return out


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _gone(pids: list, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(_running(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


def test_killed_worker_is_an_error_not_a_hang(cases):
    # a pool of its own, installed by hand (check_all would install the module's)
    own = hashseed.HashSeedPool().start()
    previous = crossrun.runner()
    crossrun.set_runner(own.ask)
    try:
        config = RunConfig(checks=frozenset({"runs", "deterministic"}), hash_seed_check=True)
        first = _deterministic(check_pass_on_case(_pass("abs_in_sorted_order"), cases[0], config))
        assert [r.status for r in first] == [Status.PASS]
        runners = _children(own.proc.pid)
        assert runners  # the run's process waits for the next case of its pass
        os.kill(own.proc.pid, signal.SIGKILL)
        own.proc.wait(10)
        assert _gone(runners)  # they die with the worker
        started = time.monotonic()
        det = _deterministic(check_pass_on_case(_pass("abs_in_sorted_order"), cases[0], config))
        assert time.monotonic() - started < 30
        assert [r.status for r in det] == [Status.ERROR]
        assert "hash-seed worker" in det[0].message and "is gone" in det[0].message
    finally:
        crossrun.set_runner(previous)
        own.close()


def test_cli_switch_records_the_seeds(pool, tmp_path):
    from run_helpers import load

    from harness.cli.main import main

    argv = ["check", "--pass", f"{DATA}:abs_in_set_order", "--graphs", "mlp", "--hash-seed-check", "--no-server",
            "--report", str(tmp_path), "-q", "--checks", "runs,deterministic"]
    assert main(argv) == 0  # a should-level failure: exit 1 only with --strict
    doc = load(tmp_path)
    assert doc["configuration"]["hash_seed_check"] is True
    det = [r for r in doc["results"] if r["check"] == "deterministic"]
    assert [r["status"] for r in det] == ["fail"]
    assert det[0]["details"]["hash_seeds"]["first"] == crossrun.hash_seed()
    assert det[0]["details"]["hash_seeds"]["second"] == pool.seed == hashseed.worker_seed()
    assert hashseed.current() is pool and pool.alive  # a worker running before the command outlives it


def test_close_leaves_no_process(pool, cases):
    check_all([_pass("abs_in_sorted_order")], cases[:1], RunConfig(hash_seed_check=True))
    runners = _children(pool.proc.pid)
    assert runners
    hashseed.close()
    assert pool.proc.poll() is not None and _gone([pool.proc.pid, *runners])
    assert crossrun.runner() is None and hashseed.current() is None
