"""Run one call in a forked child and bring its (picklable) result back.

Lowering with a partitioner, a backend's preprocess pipeline or a fusion
pass can change process-wide state: op registrations, decomposition tables,
the edge verifier's view of which ops are allowed. Run in the process that
judges the next pass, they change its verdicts, and in the conformance suite,
where pytest-xdist decides which unit runs after which, the same seed then
gave different verdicts from run to run (measured: ``verifier`` on
AddmmToLinearTransform and ChannelsLastTaggedReshapePass flipped). So
``harness.run.plan`` runs such units here: the child sees the parent's state at
fork time and its changes die with it. Catalog entries already run in
forked workers (:mod:`harness.run.isolation`).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
from typing import Any, Callable, Optional


class ChildFailed(RuntimeError):
    """The child died, timed out or could not send its result back."""


def call(fn: Callable[[], Any], timeout: Optional[float] = None) -> Any:
    """``fn()`` evaluated in a forked child; its exception is re-raised here (as ChildFailed if not picklable)."""
    from harness.run.isolation import describe_exit, die_with_parent

    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read_fd)
        status = 0
        try:
            die_with_parent(parent)
            import torch

            torch.set_num_threads(1)  # GNU OpenMP is not fork-safe (see harness.run.isolation)
            try:
                payload = ("ok", fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the parent
                payload = ("raised", exc)
            try:
                data = pickle.dumps(payload)
            except Exception as exc:  # noqa: BLE001
                data = pickle.dumps(("raised", ChildFailed(f"result not picklable: {type(exc).__name__}: {exc}")))
            with os.fdopen(write_fd, "wb") as out:
                out.write(data)
        except BaseException:  # noqa: BLE001 - never run the parent's code in the child
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    chunks, deadline = [], (time.monotonic() + timeout) if timeout else None
    try:
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([read_fd], [], [], wait)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                raise ChildFailed(f"did not finish within {timeout:g} s")
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        _, wait_status = os.waitpid(pid, 0)
    if not chunks:
        what, _ = describe_exit(os.waitstatus_to_exitcode(wait_status))
        raise ChildFailed(f"the child process died: {what}")
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "raised":
        raise value
    return value
