"""The hash-seed worker: a warm process with another ``PYTHONHASHSEED`` that makes ``deterministic``'s second runs.

Started by :mod:`harness.run.hashseed` with ``subprocess`` (a fork would keep
the parent's hash seed) as ``python -m harness.run.hashseed_worker``, it
imports torch and executorch once and then serves runs on a listening socket
its parent bound (an abstract Unix address: no file, and only this user's
processes are answered). A client, the passgate process or any isolation
worker it forked, connects once per run and sends a
:class:`harness.check.crossrun.Request`; the worker asks for the case's
program the first time it sees the case and loads the pass (imports stay
warm here).

The runs themselves happen in *runners*: children forked from the worker's
warm state, one per pass (a run pass-major, as every command's is, forks one
per pass and client, not one per pair: a fork and the teardown of a copy of
a torch process cost tens of milliseconds, as much as most runs). The worker
hands a runner the client's connection (``SCM_RIGHTS``) and the runner
answers on it, then waits for the next case of its pass. A pass that crashes,
hangs in native code, or changes process-wide state takes only its runner
with it: one that dies or outlives its deadline is answered for here, with
how it ended. Runners of other passes are retired as new passes arrive.

The worker dies with its parent (``PR_SET_PDEATHSIG``), and its runners with it.
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
from dataclasses import dataclass
from typing import Any, Optional

from harness.run.forking import describe_exit, die_with_parent, send
from harness.run.isolation import grace_seconds

__all__ = ["CHILD_MARGIN_S", "IDLE_RUNNERS", "main"]

CHILD_MARGIN_S = 60.0  # past the pass's deadline and grace: a runner's own work (copy, fingerprint) before it is killed
IDLE_RUNNERS = 4  # runners kept waiting for another case of their pass
_READ_WAIT_S = 120.0  # how long a client may take to send its request or its case


@dataclass
class _Runner:
    pid: int
    control: socket.socket  # the worker's end of a SOCK_SEQPACKET pair
    pass_ref: tuple
    cases: frozenset  # the case keys it was forked with
    modules: frozenset  # and the module lists it had imported
    conn: Any = None  # the client's connection while it runs
    deadline: float = float("inf")
    limit: float = 0.0
    used: float = 0.0


def _peer_is_me(sock: socket.socket) -> bool:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1] == os.getuid()


def _recv(conn) -> Optional[object]:
    if not conn.poll(_READ_WAIT_S):
        return None
    return pickle.loads(conn.recv_bytes())


def _runner_main(control: socket.socket, state) -> None:
    """In a runner: take a (request, client connection) at a time, answer on the connection, report done."""
    from multiprocessing.connection import Connection

    from harness.check import crossrun

    code = 3
    try:
        while True:
            msg, fds, _, _ = socket.recv_fds(control, 1 << 20, 1)
            if not msg or not fds:
                code = 0
                return
            conn = Connection(fds[0])
            try:
                send(conn, ("answer", crossrun.second_run(state, pickle.loads(msg))))
            except OSError:
                pass  # the client went away: nothing to answer
            conn.close()
            control.send(b"done")
    finally:
        os._exit(code)


class Worker:
    """The accept loop, the runners, and the state they are forked from."""

    def __init__(self, listener: socket.socket, state):
        self.listener, self.state = listener, state
        self.runners: list[_Runner] = []

    def serve(self) -> None:
        from multiprocessing.connection import Connection

        while True:
            busy = [r for r in self.runners if r.conn is not None]
            waits = [self.listener] + [r.control for r in self.runners]
            ready, _, _ = select.select(waits, [], [], 0.05 if busy else 1.0)
            for r in [r for r in self.runners if r.control in ready]:
                self._heard(r)
            if self.listener in ready:
                sock, _ = self.listener.accept()
                if not _peer_is_me(sock):
                    sock.close()
                    continue
                conn = Connection(sock.detach())
                try:
                    self._start(conn)
                except (OSError, EOFError, pickle.UnpicklingError) as exc:
                    print(f"passgate hash-seed worker: a client went away: {exc}", file=sys.stderr)
                    conn.close()
            self._overdue()

    def _start(self, conn) -> None:
        """Read one client's request (and case); hand it to a runner, or answer here when nothing can run."""
        from harness.check import crossrun

        message = _recv(conn)
        if message is None:
            conn.close()
            return
        request = message[1]
        send(conn, ("accepted", crossrun.hash_seed()))
        try:
            if request.case_key not in self.state.cases:
                send(conn, ("need_case",))
                shipped = _recv(conn)
                if shipped is None:
                    conn.close()
                    return
                self.state.add_case(request.case_key, shipped)
            if request.modules not in self.state.modules:  # the client's imports, in its order, first
                send(conn, ("need_modules",))
                self.state.import_in_order(request.modules, _recv(conn) or [])
            self.state.load_pass(request.pass_ref)
        except Exception as exc:  # noqa: BLE001 - the parent makes the run itself and says why
            send(conn, ("answer", crossrun.Answer("unusable", crossrun.hash_seed(),
                                                  error=f"{type(exc).__name__}: {exc}")))
            conn.close()
            return
        r = self._runner_for(request, conn)
        r.limit = request.timeout + grace_seconds(request.timeout) + CHILD_MARGIN_S
        r.conn, r.deadline = conn, time.monotonic() + r.limit
        try:
            socket.send_fds(r.control, [pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)], [conn.fileno()])
        except OSError:
            self._lost(r, "the worker's process running the pass was gone before it started")

    def _runner_for(self, request, conn) -> _Runner:
        """An idle runner of the request's pass that holds its case, else a new one; idle ones beyond
        :data:`IDLE_RUNNERS`, and stale ones of this pass, retired."""
        idle = [r for r in self.runners if r.conn is None]
        for r in idle:
            if r.pass_ref == request.pass_ref and request.case_key in r.cases and request.modules in r.modules:
                r.used = time.monotonic()
                return r
        for r in idle:
            if r.pass_ref == request.pass_ref:  # forked before this case (or these imports) arrived
                self._retire(r)
        idle = sorted((r for r in self.runners if r.conn is None), key=lambda r: r.used)
        for r in idle[:max(0, len(idle) - IDLE_RUNNERS + 1)]:
            self._retire(r)
        return self._fork(request.pass_ref, conn)

    def _fork(self, pass_ref: tuple, conn) -> _Runner:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        worker = os.getpid()
        pid = os.fork()
        if pid == 0:
            die_with_parent(worker)
            mine.close()
            self.listener.close()  # the worker's death must refuse new clients, not queue them
            conn.close()  # handed over again with the request: the runner keeps no copy of any client's
            for r in self.runners:
                r.control.close()
                if r.conn is not None:
                    r.conn.close()
            _runner_main(theirs, self.state)
        theirs.close()
        r = _Runner(pid, mine, pass_ref, frozenset(self.state.cases), frozenset(self.state.modules),
                    used=time.monotonic())
        self.runners.append(r)
        return r

    def _heard(self, r: _Runner) -> None:
        """A runner's control socket is readable: it finished a run, or died."""
        try:
            msg = r.control.recv(16)
        except OSError:
            msg = b""
        if msg:
            r.conn.close()
            r.conn, r.deadline = None, float("inf")
            return
        _, status = os.waitpid(r.pid, 0)
        self._lost(r, f"the worker's process running the pass died: {describe_exit(os.waitstatus_to_exitcode(status))[0]}",
                   reaped=True)

    def _overdue(self) -> None:
        now = time.monotonic()
        for r in [r for r in self.runners if r.conn is not None and now > r.deadline]:
            self._lost(r, f"the worker's process running the pass was killed after {r.limit:g} s (stuck in native "
                          f"code?)")

    def _lost(self, r: _Runner, message: str, reaped: bool = False) -> None:
        """Retire a runner that cannot finish; tell its client why."""
        if r.conn is not None:
            try:
                send(r.conn, ("died", message))
            except OSError:
                pass
            r.conn.close()
            r.conn = None
        self._retire(r, reaped)

    def _retire(self, r: _Runner, reaped: bool = False) -> None:
        if r in self.runners:
            self.runners.remove(r)
        r.control.close()
        if not reaped:
            try:
                os.kill(r.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(r.pid, 0)


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

    Worker(listener, crossrun.WorkerState()).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
