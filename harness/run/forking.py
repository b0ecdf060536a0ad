"""Forked children, as passgate uses them: one fork mechanism for the isolation pool and one-off calls.

Two kinds of work run in a forked child of a process that has already
imported torch and lowered its cases (a fork starts in milliseconds and
shares those pages; a spawned process would pay ~10 s of imports): the
isolation pool's workers (:mod:`harness.run.isolation`), and single calls
that change process-wide state (:func:`call`). Both go through the pieces
here: the ``fork`` start method of :mod:`multiprocessing`, a child that dies
with its parent, plain-pickle messages, a deadline, and one wording of how a
child ended.
"""

from __future__ import annotations

import os
import pickle
import signal
from typing import Any, Callable, Optional

from harness.core.errors import ChildFailed

__all__ = ["HARNESS_LIMIT_S", "available", "send", "die_with_parent", "describe_exit", "call"]

# Seconds a child may spend on passgate's own work (one pair outside pass calls: copies, verifiers,
# numerics; or one call()) before the parent decides passgate itself is stuck on it.
HARNESS_LIMIT_S = 900.0


def available() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def send(conn, message) -> None:
    """Plain pickle, not multiprocessing's: torch registers reducers there that pass tensors through
    shared memory and a listener socket in $TMPDIR (files outside the report folder, left behind by a kill)."""
    conn.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def die_with_parent(parent_pid: int) -> None:
    """In a forked child: be killed when ``parent_pid`` dies, and exit now if it already has."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (Linux)
    except Exception:  # noqa: BLE001 - elsewhere the parent's kill on exit and EOF on the pipe do it
        pass
    if os.getppid() != parent_pid:
        os._exit(1)


def describe_exit(exitcode: Optional[int]) -> tuple[str, dict]:
    """'killed by SIGSEGV (Segmentation fault)' / 'exited with status 3', and the details for it."""
    if exitcode is not None and exitcode < 0:
        sig = -exitcode
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return f"killed by {name} ({signal.strsignal(sig) or name})", {"signal": name, "exit_code": exitcode}
    return f"exited with status {exitcode} (os._exit, or exit() in native code)", {"exit_code": exitcode}


def call(fn: Callable[[], Any], timeout: float = HARNESS_LIMIT_S) -> Any:
    """``fn()`` evaluated in a forked child, within ``timeout`` seconds; its exception is re-raised here.

    For units that change process-wide state (lowering with a partitioner, a
    backend's preprocess pipeline, a fusion pass: op registrations,
    decomposition tables, the edge verifier's allowed ops): judged in the
    process that judges the next pass, they changed its verdicts, and under
    pytest-xdist the same seed gave different verdicts from run to run. The
    child sees the parent's state at fork time and its changes die with it.
    :class:`ChildFailed` when
    the child dies, runs out of time, or returns something that does not pickle.
    """
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    parent_conn, child_conn = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_call_main, name="passgate-call", args=(child_conn, fn, os.getpid()))
    proc.start()
    child_conn.close()
    try:
        if not parent_conn.poll(timeout):
            proc.kill()
            raise ChildFailed(f"did not finish within {timeout:g} s")
        try:
            kind, value = pickle.loads(parent_conn.recv_bytes())
        except EOFError:
            proc.join()
            what, _ = describe_exit(proc.exitcode)
            raise ChildFailed(f"the child process died: {what}") from None
    finally:
        parent_conn.close()
        proc.join()
    if kind == "raised":
        raise value
    return value


def _call_main(conn, fn: Callable[[], Any], parent_pid: int) -> None:
    die_with_parent(parent_pid)
    import torch

    torch.set_num_threads(1)  # GNU OpenMP is not fork-safe (see harness.run.isolation)
    try:
        payload = ("ok", fn())
    except BaseException as exc:  # noqa: BLE001 - handed to the parent
        payload = ("raised", exc)
    try:
        send(conn, payload)
    except Exception as exc:  # noqa: BLE001
        send(conn, ("raised", ChildFailed(f"result not picklable: {type(exc).__name__}: {exc}")))
