"""Measuring draws in forked children, ``workers`` at a time, results handed back in the order asked.

Every draw is measured in a child forked from the fuzzing process for that
draw alone. Three reasons:

- a pass that segfaults, aborts or spins in native code ends one child, not
  the fuzz run (the draw is reported with how its child ended);
- determinism: every child starts from the same parent state, so what a
  pass does on draw 40 cannot depend on caches an earlier draw warmed in the
  same process (a memoized helper takes its miss branch on every draw alike),
  and a draw's arcs do not depend on which worker measured it or on ``-j``;
- ``-j N`` runs N children at once, and the results still come back in the
  order the draws were planned, which is the order the fuzzer decides in.

The children use :mod:`harness.run.forking`'s pieces (plain-pickle messages,
death with the parent, one torch thread: GNU OpenMP is not fork-safe).
"""

from __future__ import annotations

import os
import pickle
import signal
import time
from collections import deque
from typing import Any, Callable, Optional

from harness.run.forking import describe_exit, die_with_parent, send

__all__ = ["evaluate"]


def _child(conn, fn: Callable[[Any], Any], item: Any, parent_pid: int) -> None:
    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    import torch

    torch.set_num_threads(1)
    try:
        send(conn, ("ok", fn(item)))
    except BaseException as exc:  # noqa: BLE001 - handed to the parent as a failure of this item
        send(conn, ("raised", f"{type(exc).__name__}: {exc}"))


def evaluate(items: list, fn: Callable[[Any], Any], failed: Callable[[Any, str], Any], workers: int = 1,
             isolate: bool = True, limit: float = 900.0, done: Optional[Callable[[int, Any], None]] = None) -> list:
    """``[fn(x) for x in items]``, each in a forked child (``isolate``), up to ``workers`` at once.

    A child that dies, raises or outlives ``limit`` seconds gives ``failed(x, why)`` instead.
    Without ``isolate`` the calls run here, one after the other (for a debugger).
    ``done(index, result)`` is called as each result arrives (progress, partial reports), in arrival order.
    """
    done = done or (lambda i, value: None)
    if not isolate:
        out = []
        for i, x in enumerate(items):
            try:
                out.append(fn(x))
            except Exception as exc:  # noqa: BLE001
                out.append(failed(x, f"{type(exc).__name__}: {exc}"))
            done(i, out[-1])
        return out
    import multiprocessing
    from multiprocessing.connection import wait

    ctx = multiprocessing.get_context("fork")
    results: list = [None] * len(items)
    pending = deque(enumerate(items))
    running: dict = {}  # connection -> (index, item, process, deadline)
    try:
        while pending or running:
            while pending and len(running) < max(1, workers):
                i, x = pending.popleft()
                reader, writer = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(writer, fn, x, os.getpid()), name="passgate-fuzz")
                proc.start()
                writer.close()
                running[reader] = (i, x, proc, time.monotonic() + limit)
            soonest = min(d for _, _, _, d in running.values())
            for conn in wait(list(running), timeout=max(0.0, soonest - time.monotonic())):
                i, x, proc, _ = running.pop(conn)
                results[i] = _collect(conn, proc, x, failed)
                done(i, results[i])
            now = time.monotonic()
            for conn, (i, x, proc, deadline) in list(running.items()):
                if now >= deadline:
                    proc.kill()
                    proc.join()
                    conn.close()
                    del running[conn]
                    results[i] = failed(x, f"measuring did not finish within {limit:g} s")
                    done(i, results[i])
    finally:
        for conn, (_, _, proc, _) in running.items():
            proc.kill()
            proc.join()
            conn.close()
    return results


def _collect(conn, proc, item: Any, failed: Callable[[Any, str], Any]) -> Any:
    try:
        kind, value = pickle.loads(conn.recv_bytes())
    except EOFError:
        proc.join()
        what, _ = describe_exit(proc.exitcode)
        return failed(item, f"the measuring child process died: {what}")
    finally:
        conn.close()
    proc.join()
    return value if kind == "ok" else failed(item, f"measuring raised {value}")
