"""The hash-seed worker: a warm process with another ``PYTHONHASHSEED`` that makes ``deterministic``'s second runs.

Started by :mod:`harness.run.hashseed` with ``subprocess`` (a fork would keep
the parent's hash seed) as ``python -m harness.run.hashseed_worker``, it
imports torch and executorch once and then serves runs on a listening socket
its parent bound (an abstract Unix address: no file, and only this user's
processes are answered). A client, the passgate process or any isolation
worker it forked, connects once per run and sends a
:class:`harness.check.crossrun.Request`; the worker asks for the case's
program the first time it sees the case, loads the pass (imports stay warm
here), and forks a child per run: the child makes the run
(:func:`harness.check.crossrun.second_run`) and answers on the connection.
The pool is those children: they run side by side, one per client, and a
pass that crashes, hangs in native code, or changes process-wide state takes
only its child with it. A child that dies or outlives its deadline is
answered for here, with how it ended.

The worker dies with its parent (``PR_SET_PDEATHSIG``), and its children with it.
"""

from __future__ import annotations

import argparse
import os
import pickle
import select
import signal
import socket
import struct
import sys
import time
from typing import Optional

from harness.run.forking import describe_exit, die_with_parent, send
from harness.run.isolation import grace_seconds

__all__ = ["CHILD_MARGIN_S", "main"]

CHILD_MARGIN_S = 60.0  # past the pass's deadline and grace: a child's own work (copy, fingerprint) before it is killed
_READ_WAIT_S = 120.0  # how long a client may take to send its request or its case


def _peer_is_me(sock: socket.socket) -> bool:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1] == os.getuid()


def _recv(conn) -> Optional[object]:
    if not conn.poll(_READ_WAIT_S):
        return None
    return pickle.loads(conn.recv_bytes())


def _child(conn, state, request, worker_pid: int) -> None:
    """In the forked child: one run, its answer on ``conn``, then out without any cleanup of the worker's state."""
    code = 3
    try:
        die_with_parent(worker_pid)
        from harness.check import crossrun

        send(conn, ("answer", crossrun.second_run(state, request)))
        code = 0
    finally:
        os._exit(code)


def _start(conn, state, children: dict) -> None:
    """Read one client's request (and case), fork its run; answer here when there is nothing to run."""
    from harness.check import crossrun

    message = _recv(conn)
    if message is None:
        conn.close()
        return
    request = message[1]
    send(conn, ("accepted", crossrun.hash_seed()))
    try:
        if request.case_key not in state.cases:
            send(conn, ("need_case",))
            shipped = _recv(conn)
            if shipped is None:
                conn.close()
                return
            state.add_case(request.case_key, shipped)
        state.load_pass(request.pass_ref)
    except Exception as exc:  # noqa: BLE001 - the parent makes the run itself and says why
        send(conn, ("answer", crossrun.Answer("unusable", crossrun.hash_seed(), error=f"{type(exc).__name__}: {exc}")))
        conn.close()
        return
    pid = os.fork()
    if pid == 0:
        _child(conn, state, request, os.getppid())
    limit = request.timeout + grace_seconds(request.timeout) + CHILD_MARGIN_S
    children[pid] = (conn, time.monotonic() + limit, limit)


def _reap(children: dict) -> None:
    """Close the connections of finished children; answer for those that died or ran out of time."""
    now = time.monotonic()
    for pid, (conn, deadline, limit) in list(children.items()):
        done, status = os.waitpid(pid, os.WNOHANG)
        message = None
        if done:
            code = os.waitstatus_to_exitcode(status)
            if code != 0:
                message = f"the worker's process running the pass died: {describe_exit(code)[0]}"
        elif now > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            message = f"the worker's process running the pass was killed after {limit:g} s (stuck in native code?)"
        else:
            continue
        if message is not None:
            try:
                send(conn, ("died", message))
            except OSError:
                pass
        conn.close()
        del children[pid]


def serve(listener: socket.socket, state) -> None:
    """Accept runs until killed."""
    from multiprocessing.connection import Connection

    children: dict = {}
    while True:
        ready, _, _ = select.select([listener], [], [], 0.05 if children else 1.0)
        if ready:
            sock, _ = listener.accept()
            if not _peer_is_me(sock):
                sock.close()
                continue
            conn = Connection(sock.detach())
            try:
                _start(conn, state, children)
            except (OSError, EOFError, pickle.UnpicklingError) as exc:
                print(f"passgate hash-seed worker: a client went away: {exc}", file=sys.stderr)
                conn.close()
        _reap(children)


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.run.hashseed_worker")
    parser.add_argument("--fd", type=int, required=True, help="the listening socket, inherited")
    parser.add_argument("--parent", type=int, required=True, help="the passgate process: die with it")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    die_with_parent(args.parent)
    listener = socket.socket(fileno=args.fd)
    import torch

    torch.set_num_threads(1)  # no OpenMP pool before the forks (harness.run.isolation says why); a run sets its own
    import executorch.exir  # noqa: F401 - warm: every run needs it

    from harness.check import crossrun

    serve(listener, crossrun.WorkerState())
    return 0


if __name__ == "__main__":
    sys.exit(main())
