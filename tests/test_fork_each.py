"""The engine's fork-per-item loop: values or how each child ended, and the fuzzer's list-in, list-out on top of it."""

from __future__ import annotations

import os
import threading
import time

import torch  # noqa: F401 - imported once here, as its users have: each child then starts in milliseconds

from harness.fuzz.workers import evaluate
from harness.run import fork_each


def test_each_item_gets_its_value_or_how_its_child_ended():
    got = {}

    def prepare(i):
        fns = [lambda: 7, lambda: 1 / 0, lambda: os._exit(3), lambda: time.sleep(30), lambda: threading.Lock()]
        return fns[i], 2.0 if i == 3 else 60.0

    started = time.monotonic()
    fork_each.run(5, prepare, got.__setitem__, jobs=2)
    assert time.monotonic() - started < 20
    assert got[0] == 7
    assert [got[i].how for i in (1, 2, 3, 4)] == [fork_each.RAISED, fork_each.DIED, fork_each.TIMED_OUT,
                                                  fork_each.RAISED]
    assert "the worker raised ZeroDivisionError" in got[1].message and "Traceback" in got[1].details["traceback"]
    assert "the worker process died" in got[2].message and "exited with status 3" in got[2].message
    assert got[3].message == "the worker did not finish within 2 s; killed" and got[3].details == {"timeout_s": 2.0}
    assert "does not pickle" in got[4].message  # a value that cannot come back is the item's failure, not a hang


def test_without_isolation_items_run_here_in_order():
    got, pid = [], os.getpid()

    def prepare(i):
        return (lambda: os.getpid()) if i == 0 else (lambda: int("x")), 0.0

    fork_each.run(2, prepare, lambda i, v: got.append((i, v)), jobs=4, isolate=False)
    assert got[0] == (0, pid)
    assert got[1][1].how == fork_each.RAISED and not got[1][1].in_child
    assert got[1][1].message.startswith("raised ValueError")


def test_the_fuzzer_gets_results_in_item_order_and_failures_phrased_as_measuring():
    def fn(x):
        if x == 0:
            time.sleep(1.0)  # finishes after item 1: the list still comes back in item order
        if x == 2:
            raise RuntimeError("boom")
        if x == 3:
            os._exit(5)
        if x == 4:
            time.sleep(30)
        return x * 10

    arrived = []
    out = evaluate([0, 1, 2, 3, 4], fn, lambda x, why: ("failed", x, why), workers=2, limit=8.0,
                   done=lambda i, v: arrived.append(i))
    assert out[:2] == [0, 10]
    assert out[2] == ("failed", 2, "measuring raised RuntimeError: boom")
    assert out[3][:2] == ("failed", 3) and out[3][2].startswith("the measuring child process died:")
    assert out[4] == ("failed", 4, "measuring did not finish within 8 s")
    assert sorted(arrived) == [0, 1, 2, 3, 4] and arrived.index(1) < arrived.index(0)
    assert evaluate([2], fn, lambda x, why: why, isolate=False) == ["RuntimeError: boom"]
