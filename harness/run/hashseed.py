"""The hash-seed worker pool: where ``deterministic``'s second run goes when ``RunConfig.hash_seed_check`` is on.

A pass that iterates a set of strings gives the same graph twice in one
process and another graph in the next (the hash seed changes per process),
so the second run must happen in a process with another ``PYTHONHASHSEED``.
Such a process cannot be forked from passgate (a fork keeps the seed), and a
started one pays the ~10 s of torch imports, so one is started per run,
early (its imports overlap the lowering of the cases), and kept warm:
:mod:`harness.run.hashseed_worker` forks a child from its warm state for each
second run, as many at once as clients ask.

Clients are this process and the isolation workers it forks
(:mod:`harness.run.isolation`): each connects to the worker's listening
socket (an abstract Unix address, so nothing is written to disk) for one run,
so a client killed mid-run leaves nothing half-read for the next one. The
hook :func:`harness.check.crossrun.set_runner` is what the check calls;
:func:`ensure` starts the worker and installs the hook, :func:`close` stops it.

The worker's seed: this process's ``PYTHONHASHSEED`` plus one when it is set,
else 1 (this process's seed is then random, and another one with near
certainty); the results record both (``details.hash_seeds``).
"""

from __future__ import annotations

import atexit
import os
import pickle
import secrets
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Optional

from harness.check import crossrun
from harness.run.forking import describe_exit, send
from harness.run.hashseed_worker import CHILD_MARGIN_S
from harness.run.isolation import grace_seconds

__all__ = ["STARTUP_LIMIT_S", "LOAD_LIMIT_S", "worker_seed", "HashSeedPool", "ensure", "started", "close", "active",
           "current"]

STARTUP_LIMIT_S = 600.0  # for the worker to take a run: its imports, on a busy machine
LOAD_LIMIT_S = 300.0  # for it to load a case and a pass (first imports of a backend's modules)


def worker_seed(own: Optional[str] = None) -> str:
    """The worker's ``PYTHONHASHSEED``: another than this process's (``own``, default ``$PYTHONHASHSEED``)."""
    own = os.environ.get("PYTHONHASHSEED", "") if own is None else own
    return str((int(own) + 1) % 2**32) if own.isdigit() else "1"


@dataclass
class HashSeedPool:
    """The worker process and how to reach it; usable from any process forked after :meth:`start`."""

    seed: str = field(default_factory=worker_seed)
    address: bytes = b""
    proc: Optional[subprocess.Popen] = None
    owner: int = 0

    def start(self) -> "HashSeedPool":
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.address = f"\0passgate-hashseed-{os.getpid()}-{secrets.token_hex(8)}".encode()
        listener.bind(self.address)
        listener.listen(64)
        env = dict(os.environ, PYTHONHASHSEED=self.seed)
        try:  # the worker holds the only copy of the socket: when it dies, a connect fails at once
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "harness.run.hashseed_worker", "--fd", str(listener.fileno()),
                 "--parent", str(os.getpid())],
                env=env, pass_fds=(listener.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
        finally:
            listener.close()
        self.owner = os.getpid()
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        """Stop the worker (its children die with it); only the process that started it does."""
        if self.proc is None or os.getpid() != self.owner:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5.0)

    def ask(self, request: crossrun.Request, shipment: Callable[[], crossrun.Shipment]) -> crossrun.Answer:
        """One second run in the worker; :class:`CrossRunFailed` when it cannot be reached, dies or never answers."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(self.address)
        except OSError as exc:
            sock.close()
            raise crossrun.CrossRunFailed(self._gone(f"it does not take connections ({exc.strerror or exc})")) from None
        from multiprocessing.connection import Connection

        conn = Connection(sock.detach())
        try:
            send(conn, ("run", request))
            deadline = time.monotonic() + STARTUP_LIMIT_S
            while True:
                kind, *rest = self._recv(conn, deadline)
                if kind == "accepted":
                    deadline = time.monotonic() + LOAD_LIMIT_S + request.timeout + \
                        grace_seconds(request.timeout) + CHILD_MARGIN_S
                elif kind == "need_case":
                    send(conn, shipment())
                elif kind == "need_modules":
                    send(conn, crossrun.imported_modules())
                elif kind == "died":
                    raise crossrun.CrossRunFailed(f"{rest[0]} (PYTHONHASHSEED={self.seed})")
                else:
                    return rest[0]
        except OSError as exc:
            raise crossrun.CrossRunFailed(self._gone(f"the connection broke ({exc})")) from None
        finally:
            conn.close()

    def _recv(self, conn, deadline: float) -> tuple:
        left = deadline - time.monotonic()
        if left <= 0 or not conn.poll(left):
            raise crossrun.CrossRunFailed(f"the hash-seed worker (PYTHONHASHSEED={self.seed}) did not answer "
                                          f"in time; gave up")
        try:
            return pickle.loads(conn.recv_bytes())
        except EOFError:
            raise crossrun.CrossRunFailed(self._gone("it closed the connection without an answer")) from None

    def _gone(self, what: str) -> str:
        how = ""
        if self.proc is not None and os.getpid() == self.owner and self.proc.poll() is not None:
            how = f": the worker process {describe_exit(self.proc.returncode)[0]}"
        return f"the hash-seed worker (PYTHONHASHSEED={self.seed}) is gone, {what}{how}"


_POOL: Optional[HashSeedPool] = None


def current() -> Optional[HashSeedPool]:
    return _POOL


def ensure() -> HashSeedPool:
    """The worker of this run, started now if there is none (or, in the process that started it, if it died),
    and the check's hook installed. A process forked after it started uses the same one."""
    global _POOL
    if _POOL is None or (os.getpid() == _POOL.owner and not _POOL.alive):
        _POOL = HashSeedPool().start()
        atexit.register(_POOL.close)
    crossrun.set_runner(_POOL.ask)
    return _POOL


def close() -> None:
    """Stop the worker and remove the hook."""
    global _POOL
    if _POOL is not None:
        _POOL.close()
        if os.getpid() == _POOL.owner:
            _POOL = None
    crossrun.set_runner(None)


def started(enabled: bool) -> Optional[HashSeedPool]:
    """With ``enabled``, :func:`ensure`; the pool when this call started it (the caller then closes it), else
    None (off, or a worker already running, whose owner closes it)."""
    if not enabled:
        return None
    before = _POOL
    pool = ensure()
    return pool if pool is not before else None


@contextmanager
def active(enabled: bool):
    """With ``enabled``, a worker for the duration of the block (a command's run), stopped after it unless it
    was running before the block (a caller's, e.g. a test's, outlives the command)."""
    pool = started(enabled)
    try:
        yield pool
    finally:
        if pool is not None:
            close()
