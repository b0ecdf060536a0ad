"""The warm server of the edit loop: ``passgate serve`` (its client side is :mod:`harness.serve.client`).

Importing torch and ``executorch.exir`` costs seconds before any graph is
touched, so a pass author who reruns ``passgate check`` after every edit waits
mostly for imports. Like dmypy or the Bazel server, a warm process keeps the
imports done and the graph cases lowered and memoized, and ``passgate check``
hands its work to it when one is running:

- the client sends its argv, cwd, umask and environment, and its stdin /
  stdout / stderr file descriptors (``SCM_RIGHTS``, :func:`socket.send_fds`)
  over a Unix socket;
- the server forks a child per request, which takes the client's fds as
  0/1/2, chdir's, sets the environment and runs the command line it was
  handed (:func:`harness.cli.main.main`, by ``python -m harness.cli.serve``,
  which is the server's process: the server never imports the CLI). The child inherits the warm imports and the
  memoized cases; it writes straight into the client's terminal or pipes, so
  the output is the one a local run prints, and the server sends back the
  child's exit status, which the client exits with;
- a user's pass file (``path/to/file.py:Name``) or cwd package is never
  imported by the server, so each child imports it fresh and an edit is
  picked up. Project modules the server imported (``passes``, ``fixtures``,
  ``vulkan`` ...) are checked against their files before each request and
  re-imported when they changed; a changed ``harness`` module makes the
  server restart itself (that one request runs without it).

Fork safety: the server sets ``torch.set_num_threads(1)`` before it touches
a tensor, so it never starts the OpenMP thread pool (GNU OpenMP is not
fork-safe once its pool exists; see :mod:`harness.run.isolation`), and it starts
no threads; each child restores torch's default thread count.

Security and the wire protocol: see :mod:`harness.serve.protocol`.

Fallbacks: no socket, a stale socket nobody answers, a server that is not
ours or does not answer in time, or ``--no-server`` / ``PASSGATE_NO_SERVER=1``:
``passgate check`` runs in its own process, silently. A server that dies in
the middle of a request makes the client say so in one line and run locally.

This module imports only the standard library and stdlib-only passgate modules at the top; torch comes
in :meth:`Server.warm`.
"""

from __future__ import annotations

import gc
import os
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

from harness.core.quiet import silence_third_party
from harness.graphs import cache
from harness.graphs.memos import MEMOS
from harness.run.forking import die_with_parent
from harness.serve import client as serve_client
from harness.serve import warmup
from harness.serve.client import NO_SERVER_ENV
from harness.serve.protocol import PROTOCOL, connect, peer_uid, recv_msg, secure_dir, send_msg, socket_path

__all__ = ["Server", "main"]

class Server:
    def __init__(self, cache_root: Path, run_command: Callable[[list], int], preload: tuple = ("builtin", "zoo"),
                 idle_timeout: float = 0.0, log=None):
        self.cache_root = Path(os.path.abspath(cache_root))
        # What a request runs: the passgate CLI (harness.cli.main.main), handed in by the layer above so the
        # server does not import the command line it serves.
        self.run_command = run_command
        self.path = socket_path(self.cache_root)
        self.preload = tuple(preload)
        self.idle_timeout = idle_timeout
        self.log = log or sys.stderr
        self.started = time.time()
        self.served = 0
        self.children: dict[int, socket.socket] = {}
        self.listener: Optional[socket.socket] = None
        self.stamps: dict = {}
        self.default_threads = 1
        self.cases = 0
        self.inode = None
        self.wake: tuple = ()  # the loop's wakeup socket pair (SIGCHLD), closed in children

    def say(self, text: str) -> None:
        print(f"passgate serve [{time.strftime('%H:%M:%S')}]: {text}", file=self.log, flush=True)

    # -- warm-up -------------------------------------------------------------

    def warm(self) -> None:
        started = time.perf_counter()
        import torch

        self.default_threads = torch.get_num_threads()
        torch.set_num_threads(1)  # no OpenMP pool in the server: children fork from a clean state

        silence_third_party()
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.fspath(self.cache_root / "torchinductor"))

        cache.configure(self.cache_root)
        # One real in-process check pulls in every lazy import a check needs (executorch.exir, verifiers,
        # reports, the HTML writer); its report goes to a temporary folder that is removed.
        with tempfile.TemporaryDirectory(prefix="passgate-serve-warm-") as tmp:
            self.run_command(["check", "--pass", warmup.WARMUP_PASS, "--graphs", "mlp", "--no-isolation",
                      "-q", "--report", tmp, "--cache-dir", os.fspath(self.cache_root), "--no-server"])
        MEMOS.clear(cases=False)
        self.cases = warmup.preload_cases(self.preload, self.say)
        import gc

        gc.collect()
        gc.freeze()  # keep the warm objects out of the children's collections (less copy-on-write)
        self.stamps = warmup.module_stamps()
        self.say(f"warm in {time.perf_counter() - started:.1f}s: {self.cases} cases memoized "
                 f"(preload: {', '.join(self.preload) or 'none'}), cache {self.cache_root}")

    # -- socket --------------------------------------------------------------

    def bind(self) -> None:
        if not secure_dir(self.path.parent, create=True):
            raise RuntimeError(f"{self.path.parent} is not a private folder (owner {os.getuid()}, mode 0700)")
        if self.path.exists() or self.path.is_symlink():
            probe = connect(self.path, timeout=2.0)
            if probe is not None:
                probe.close()
                raise RuntimeError(f"a server already answers on {self.path}")
            self.path.unlink()  # stale
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(os.fspath(self.path))
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        sock.listen(16)
        self.listener = sock
        self.inode = os.stat(self.path).st_ino
        self.say(f"listening on {self.path} (pid {os.getpid()})")

    def _socket_is_ours(self) -> bool:
        try:
            return os.stat(self.path).st_ino == self.inode
        except OSError:
            return False

    def _stop_listening(self) -> None:
        """Close the listener and remove the socket file, unless another server has taken the path since."""
        if self.listener is None:
            return
        if self._socket_is_ours():
            try:
                self.path.unlink()
            except OSError:
                pass
        self.listener.close()
        self.listener = None

    def close(self) -> None:
        for pid in list(self.children):
            self._kill_child(pid)
        self._stop_listening()

    # -- loop ----------------------------------------------------------------

    def serve_forever(self) -> str:
        """Answer requests until stopped; returns why it stopped ('stop', 'restart', 'idle', 'socket gone')."""
        # A child's exit wakes the loop at once through SIGCHLD and a wakeup socket: its client is waiting
        # for the exit status, which would otherwise wait for the next tick (up to 0.25 s per request).
        wake_r, wake_w = socket.socketpair()
        wake_r.setblocking(False)
        wake_w.setblocking(False)
        old_fd = signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)
        old_handler = signal.signal(signal.SIGCHLD, lambda *_: None)
        self.wake = (wake_r, wake_w)
        try:
            return self._loop(wake_r)
        finally:
            signal.signal(signal.SIGCHLD, old_handler)
            signal.set_wakeup_fd(old_fd)
            self.wake = ()
            wake_r.close()
            wake_w.close()

    def _loop(self, wake: socket.socket) -> str:
        import select

        last = time.monotonic()
        while True:
            conns = list(self.children.values())
            readable, _, _ = select.select([self.listener, wake, *conns], [], [], 0.25)
            self._reap()
            for sock in readable:
                if sock is wake:
                    try:
                        while wake.recv(4096):
                            pass
                    except OSError:  # drained (BlockingIOError)
                        pass
                elif sock is self.listener:
                    try:
                        conn, _ = self.listener.accept()
                    except OSError:
                        continue
                    last = time.monotonic()
                    why = self._handle(conn)
                    if why:
                        return why
                else:  # a client with a running child hung up (killed): the child's output has no reader
                    pid = next((p for p, c in self.children.items() if c is sock), None)
                    if pid is not None:
                        self._kill_child(pid)
            if self.children:
                last = time.monotonic()
            if not self._socket_is_ours():
                return "socket gone"
            if self.idle_timeout and time.monotonic() - last > self.idle_timeout:
                return "idle"

    def drain(self, limit: float) -> None:
        """Stop listening (new clients run locally) and let running children finish, up to ``limit`` seconds."""
        self._stop_listening()
        deadline = time.monotonic() + limit
        while self.children and time.monotonic() < deadline:
            self._reap()
            time.sleep(0.05)

    def _handle(self, conn: socket.socket) -> Optional[str]:
        fds: list = []
        keep = False
        try:
            conn.settimeout(5.0)
            if peer_uid(conn) != os.getuid():
                return None
            msg, fds = recv_msg(conn, max_fds=3)
            op = msg.get("op")
            if msg.get("v") != PROTOCOL:
                send_msg(conn, {"note": "server speaks another protocol version; running without it"})
                return None
            if op == "status":
                send_msg(conn, self.status())
                return None
            if op == "stop":
                send_msg(conn, {"stopped": os.getpid()})
                return "stop"
            if op != "run" or len(fds) != 3:
                send_msg(conn, {"error": f"unknown request {op!r}"})
                return None
            changed = warmup.changed_modules(self.stamps)
            if any(n == "harness" or n.startswith("harness.") for n in changed):
                send_msg(conn, {"note": "passgate's own code changed: the server restarts; this run goes without it"})
                return "restart"
            if changed:
                self._reimport(changed)
            pid = self._fork_child(msg, fds)
            conn.settimeout(None)
            send_msg(conn, {"pid": pid})
            self.children[pid] = conn
            self.served += 1
            keep = True
        except (OSError, EOFError, ValueError) as exc:
            self.say(f"request dropped: {type(exc).__name__}: {exc}")
        finally:
            for fd in fds:
                os.close(fd)  # the child has its own copies; the client's pipes must not stay open here
            if not keep:
                conn.close()
        return None

    def _reimport(self, changed: list) -> None:
        """Drop every module of the packages whose files changed, then import them again (fresh code)."""
        import importlib

        tops = {n.split(".")[0] for n in changed}
        dropped = sorted(n for n in list(sys.modules) if n.split(".")[0] in tops)
        for n in dropped:
            del sys.modules[n]
        importlib.invalidate_caches()
        for n in dropped:
            try:
                importlib.import_module(n)
            except Exception as exc:  # noqa: BLE001 - mid-edit: left out, each child imports it (and reports)
                sys.modules.pop(n, None)
                self.say(f"reimport {n}: {type(exc).__name__}: {exc}")
        self.stamps = warmup.module_stamps()
        self.say(f"reloaded {', '.join(sorted(tops))} ({len(dropped)} modules): their files changed")

    def _fork_child(self, msg: dict, fds: list) -> int:
        sys.stdout.flush()
        sys.stderr.flush()
        # The server's heap (torch, executorch, the memoized cases) is frozen across the fork: the request's
        # child then never scans it in a collection, which would copy every page it touches (gc.freeze's
        # documented use before fork). The server unfreezes at once, so its own garbage is still collected.
        gc.freeze()
        pid = os.fork()
        if pid:
            gc.unfreeze()
            return pid
        status = 1
        try:
            status = self._child(msg, fds)
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # noqa: BLE001 - what an uncaught exception does to a local run
            import traceback

            traceback.print_exc()
            status = 130 if isinstance(sys.exc_info()[1], KeyboardInterrupt) else 1
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except Exception:  # noqa: BLE001
                pass
            os._exit(status)

    def _child(self, msg: dict, fds: list) -> int:
        serve_client.serve_locally()  # its `passgate check` runs here, not through a server again
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        for sock in self.wake:
            sock.close()

        die_with_parent(os.getppid())
        self.listener.close()
        for conn in self.children.values():
            conn.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        fds.clear()
        import io

        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                                      line_buffering=os.isatty(1), write_through=False)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
                                      line_buffering=True)
        os.chdir(msg["cwd"])
        os.umask(int(msg.get("umask", 0o022)))
        os.environ.clear()
        os.environ.update(msg["env"])
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.fspath(self.cache_root / "torchinductor"))
        import torch

        torch.set_num_threads(self.default_threads)
        sys.argv = ["passgate", *msg["argv"]]
        return int(self.run_command(list(msg["argv"])))

    def _reap(self) -> None:
        while self.children:
            try:
                pid, raw = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            code = os.waitstatus_to_exitcode(raw)
            try:
                send_msg(conn, {"exit": code} if code >= 0 else {"signal": -code})
            except OSError:
                pass
            conn.close()

    def _kill_child(self, pid: int) -> None:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (OSError, ChildProcessError):
            pass
        conn = self.children.pop(pid, None)
        if conn is not None:
            conn.close()

    def status(self) -> dict:
        import resource

        return {"pid": os.getpid(), "socket": os.fspath(self.path), "cache_dir": os.fspath(self.cache_root),
                "uptime_s": round(time.time() - self.started, 1), "requests": self.served,
                "running": len(self.children), "cases_memoized": self.cases, "preload": list(self.preload),
                "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}



def main(argv: Optional[list], run_command: Callable[[list], int], relaunch: list) -> int:
    """The server process: serve ``run_command`` until stopped; ``relaunch`` (argv) starts a fresh one.

    ``passgate serve`` starts it in the background as ``python -m harness.cli.serve``.
    """
    import argparse

    ap = argparse.ArgumentParser(prog=" ".join(relaunch[1:]))
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--preload", nargs="*", default=["builtin", "zoo"])
    ap.add_argument("--idle-timeout", type=float, default=0.0)
    args = ap.parse_args(argv)
    server = Server(Path(args.cache_dir), run_command, tuple(args.preload), args.idle_timeout, log=sys.stdout)
    stop = {"why": None}

    def on_term(signum, frame):
        stop["why"] = signal.Signals(signum).name
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    os.environ[NO_SERVER_ENV] = "1"  # the warm-up check runs here, not through a server
    try:
        server.warm()
        del os.environ[NO_SERVER_ENV]
        server.bind()
        why = server.serve_forever()
    except KeyboardInterrupt:
        why = stop["why"] or "interrupted"
    except RuntimeError as exc:
        server.say(str(exc))
        server.close()
        return 2
    server.drain(600.0 if why == "restart" else 10.0)
    server.close()
    server.say(f"stopped ({why})")
    if why == "restart":
        sys.stdout.flush()
        os.execv(relaunch[0], [*relaunch, "--cache-dir", os.fspath(server.cache_root),
                               "--preload", *server.preload, "--idle-timeout", str(args.idle_timeout)])
    return 0

