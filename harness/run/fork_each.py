"""One forked child per item, ``jobs`` at a time: the loop the fuzzer's measuring and ``passgate vulkan`` share.

Why one fork per item rather than long-lived workers: passes, fusions and
quantization flows change process-wide state (op registrations,
decomposition tables, the edge verifier's allowed ops, memoized helpers;
see :func:`harness.run.forking.call`). A long-lived worker would judge an
item in whatever state the items it happened to run before left behind,
so the verdicts would depend on ``-j`` and on timing. A child forked from
the parent starts from the parent's state every time, whichever slot runs
it: ``-j 1`` and ``-j N`` judge every item from the same state. A fork
costs milliseconds and shares the parent's imports and primed memos, small
next to an item (a fuzz draw, a Vulkan case, one op's search).

Why here, in ``run``: it is :mod:`harness.run.forking`'s one-call-in-a-child
made many, with the same pieces (plain-pickle messages, death with the
parent, one torch thread: GNU OpenMP is not fork-safe). ``passgate fuzz``
(:mod:`harness.fuzz.workers`) sits above this layer and the Vulkan content
beside the engine; both hand their items to :func:`run`.

Every child has a deadline. A child that raises, dies (a segfault in a
pass, an ``os._exit``) or overruns is killed if need be and its item gets a
:class:`Failure` saying how it ended; the others go on. Values are
delivered as children finish; callers that need item order put them back
in it, so reports do not depend on which child finished first.

Ctrl-C and SIGTERM are the parent's business, as in the engine's isolation
pool: children ignore SIGINT (a terminal sends it to the whole process
group), die with the parent (``PR_SET_PDEATHSIG``), and the parent kills
the running ones on its way out. Whatever was delivered stays delivered.
"""

from __future__ import annotations

import os
import pickle
import signal
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from harness.run.forking import describe_exit, die_with_parent, send

__all__ = ["RAISED", "DIED", "TIMED_OUT", "Failure", "default_jobs", "run"]

RAISED, DIED, TIMED_OUT = "raised", "died", "timed out"


@dataclass
class Failure:
    """An item that handed back no value: it ``raised``, its child ``died``, or it ``timed out``.

    ``text`` is the exception as ``"Type: message"``, how the child ended,
    or the limit in seconds; :attr:`message` says it of a worker, and a
    caller with its own readers may phrase it otherwise. ``in_child`` is
    False for an exception raised in this process (``isolate=False``).
    """

    how: str
    text: str
    details: dict = field(default_factory=dict)
    in_child: bool = True

    @property
    def message(self) -> str:
        if self.how == DIED:
            return f"the worker process died: {self.text}"
        if self.how == TIMED_OUT:
            return f"the worker did not finish within {self.text} s; killed"
        return f"the worker raised {self.text}" if self.in_child else f"raised {self.text}"


def default_jobs() -> int:
    """The cores this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass
class _Child:
    index: int
    proc: Any
    conn: Any
    limit: float
    deadline: float

    def kill(self) -> None:
        try:
            self.proc.kill()
        except Exception:  # noqa: BLE001 - already gone
            pass
        self.proc.join()
        self.conn.close()


def _child_main(conn, fn: Callable[[], Any], parent_pid: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's handler raises; here, just die
    die_with_parent(parent_pid)
    import torch

    torch.set_num_threads(1)  # GNU OpenMP is not fork-safe (see harness.run.isolation)
    try:
        payload = ("ok", fn())
    except BaseException as exc:  # noqa: BLE001 - handed to the parent as text
        payload = (RAISED, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=20))
    try:
        send(conn, payload)
    except Exception as exc:  # noqa: BLE001 - a value that does not pickle is the item's failure, not a hang
        send(conn, (RAISED, f"its result does not pickle: {type(exc).__name__}: {exc}", ""))


def _collect(child: _Child) -> Any:
    """The child's value, or a Failure saying how it ended."""
    try:
        message = pickle.loads(child.conn.recv_bytes())
    except (EOFError, OSError):
        child.proc.join()
        what, details = describe_exit(child.proc.exitcode)
        child.conn.close()
        return Failure(DIED, what, details)
    child.proc.join()
    child.conn.close()
    if message[0] == "ok":
        return message[1]
    return Failure(RAISED, message[1], {"traceback": message[2]})


def _in_process(count: int, prepare, deliver) -> None:
    """``isolate=False``: one item after the other in this process (for a debugger); no deadline."""
    for i in range(count):
        fn, _ = prepare(i)
        try:
            value = fn()
        except Exception as exc:  # noqa: BLE001 - as a child's exception would be
            value = Failure(RAISED, f"{type(exc).__name__}: {exc}", {"traceback": traceback.format_exc(limit=20)},
                            in_child=False)
        deliver(i, value)


def run(count: int, prepare: Callable[[int], tuple], deliver: Callable[[int, Any], None], jobs: int = 1,
        isolate: bool = True, name: str = "passgate-item") -> None:
    """Items ``0..count-1``, at most ``jobs`` at a time, each in a forked child named ``name-i``.

    ``prepare(i)`` is called in the parent when item ``i`` is started, in
    index order, and returns ``(fn, limit_s)``: the child returns ``fn()``
    within ``limit_s`` seconds. ``deliver(i, value)`` gets that value, or a
    :class:`Failure`, as each child finishes. Started late on purpose, so a
    caller can size an item from the ones already finished (a search's
    budget share).
    """
    if not isolate:
        _in_process(count, prepare, deliver)
        return
    import multiprocessing
    from multiprocessing.connection import wait

    ctx = multiprocessing.get_context("fork")
    todo, running = deque(range(count)), {}
    try:
        while todo or running:
            while todo and len(running) < max(1, jobs):
                i = todo.popleft()
                fn, limit = prepare(i)
                parent_conn, child_conn = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child_main, name=f"{name}-{i}", args=(child_conn, fn, os.getpid()))
                proc.start()
                child_conn.close()
                running[parent_conn] = _Child(i, proc, parent_conn, limit, time.monotonic() + limit)
            soonest = min(c.deadline for c in running.values())
            for conn in wait(list(running), timeout=max(0.0, soonest - time.monotonic())):
                child = running.pop(conn)
                deliver(child.index, _collect(child))
            now = time.monotonic()
            for conn, child in list(running.items()):
                if now >= child.deadline:
                    del running[conn]
                    child.kill()
                    deliver(child.index, Failure(TIMED_OUT, f"{child.limit:g}", {"timeout_s": child.limit}))
    finally:
        for child in running.values():
            child.kill()
