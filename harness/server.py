"""The warm server of the edit loop: ``passgate serve`` and the client side of ``passgate check``.

Importing torch and ``executorch.exir`` costs seconds before any graph is
touched, so a pass author who reruns ``passgate check`` after every edit waits
mostly for imports. Like dmypy or the Bazel server, a warm process keeps the
imports done and the graph cases lowered and memoized, and ``passgate check``
hands its work to it when one is running:

- the client sends its argv, cwd, umask and environment, and its stdin /
  stdout / stderr file descriptors (``SCM_RIGHTS``, :func:`socket.send_fds`)
  over a Unix socket;
- the server forks a child per request, which takes the client's fds as
  0/1/2, chdir's, sets the environment and runs the normal
  :func:`harness.cli.main`. The child inherits the warm imports and the
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
fork-safe once its pool exists; see :mod:`harness.isolation`), and it starts
no threads; each child restores torch's default thread count.

Security: the socket lives in a folder only its user can enter (0700,
``$XDG_RUNTIME_DIR/passgate-UID`` or ``$TMPDIR/passgate-UID``), is itself 0600,
and the server checks each peer's uid (``SO_PEERCRED``). It never listens on
a network port.

Fallbacks: no socket, a stale socket nobody answers, a server that is not
ours or does not answer in time, or ``--no-server`` / ``PASSGATE_NO_SERVER=1``:
``passgate check`` runs in its own process, silently. A server that dies in
the middle of a request makes the client say so in one line and run locally.

This module imports only the standard library at the top: the client side
runs before any torch import.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import stat
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

NO_SERVER_ENV = "PASSGATE_NO_SERVER"
PROTOCOL = 1
CONNECT_TIMEOUT_S = 5.0  # for the server's first answer (the child's pid)
_HEADER = struct.Struct("!I")

# True in a child the server forked: its `passgate check` must run here, not ask the server again.
IN_SERVER = False


# ----------------------------------------------------------------------------- where the socket lives


# A Unix socket path must fit sun_path (108 bytes on Linux, with its NUL); the socket name adds ~40.
_MAX_DIR_LEN = 60


def socket_dir() -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR")
    if not base or not os.path.isdir(base) or len(os.path.abspath(base)) > _MAX_DIR_LEN:
        base = tempfile.gettempdir()  # also when $XDG_RUNTIME_DIR is too deep for a socket path
    return Path(base) / f"passgate-{os.getuid()}"


def resolve_cache_root(cache_dir: Optional[str] = None) -> Path:
    from harness.cache import default_cache_root

    return Path(os.path.abspath(cache_dir if cache_dir else default_cache_root()))


def socket_path(cache_root: os.PathLike) -> Path:
    """One server per cache folder: the socket name is a digest of its absolute path."""
    digest = hashlib.sha256(os.path.abspath(os.fspath(cache_root)).encode()).hexdigest()[:16]
    return socket_dir() / f"{digest}.sock"


def secure_dir(path: Path, create: bool) -> bool:
    """``path`` is a real folder owned by us that nobody else can enter (created 0700 when asked)."""
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not (st.st_mode & 0o077)


def _peer_uid(sock: socket.socket) -> Optional[int]:
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[1]
    except (OSError, AttributeError):
        return None


# ----------------------------------------------------------------------------- framing


def _send_msg(sock: socket.socket, obj: dict, fds: tuple = ()) -> None:
    body = json.dumps(obj).encode()
    head = _HEADER.pack(len(body))
    if fds:  # the fds ride on the first few bytes; the body follows as plain stream data
        socket.send_fds(sock, [head], list(fds))
    else:
        sock.sendall(head)
    sock.sendall(body)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("connection closed")
        buf += chunk
    return buf


def _recv_msg(sock: socket.socket, max_fds: int = 0) -> tuple[dict, list]:
    fds: list = []
    if max_fds:
        head, fds, _flags, _addr = socket.recv_fds(sock, _HEADER.size, max_fds)
        if not head:
            raise EOFError("connection closed")
        if len(head) < _HEADER.size:
            head += _recv_exact(sock, _HEADER.size - len(head))
    else:
        head = _recv_exact(sock, _HEADER.size)
    (length,) = _HEADER.unpack(head)
    try:
        return json.loads(_recv_exact(sock, length)), list(fds)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


# ----------------------------------------------------------------------------- client


def _connect(path: Path, timeout: Optional[float] = CONNECT_TIMEOUT_S) -> Optional[socket.socket]:
    """A connection to the server at ``path``, or None (absent, stale, not ours, not a socket)."""
    if not secure_dir(path.parent, create=False):
        return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(os.fspath(path))
    except OSError:  # ECONNREFUSED: a stale socket left by a server that died
        sock.close()
        return None
    if _peer_uid(sock) != os.getuid():
        sock.close()
        return None
    return sock


def request(cache_root: os.PathLike, op: str, timeout: float = CONNECT_TIMEOUT_S) -> Optional[dict]:
    """A control request (``status`` or ``stop``); None when no server answers."""
    sock = _connect(socket_path(cache_root), timeout)
    if sock is None:
        return None
    try:
        _send_msg(sock, {"v": PROTOCOL, "op": op})
        reply, _ = _recv_msg(sock)
        return reply
    except (OSError, EOFError, ValueError):
        return None
    finally:
        sock.close()


def _cache_dir_from_argv(argv: list) -> Optional[str]:
    for i, arg in enumerate(argv):
        if arg == "--cache-dir" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--cache-dir="):
            return arg.split("=", 1)[1]
    return None


def wanted(argv: list) -> bool:
    return (not IN_SERVER and "--no-server" not in argv
            and os.environ.get(NO_SERVER_ENV, "").strip().lower() not in ("1", "true", "yes", "on"))


def run_via_server(argv: list) -> Optional[int]:
    """Run ``passgate ARGV`` in the warm server; its exit status, or None to run it here instead."""
    if not wanted(argv):
        return None
    try:
        root = resolve_cache_root(_cache_dir_from_argv(argv))
        sock = _connect(socket_path(root))
    except Exception:  # noqa: BLE001 - any doubt about the server: run locally
        return None
    if sock is None:
        return None
    child: dict = {"pid": None, "forwarded": None, "pending": []}
    previous: dict = {}

    def forward(signum, frame):
        child["forwarded"] = signum
        if child["pid"] is None:
            child["pending"].append(signum)  # the child is not known yet: pass it on once it is
            return
        try:
            os.kill(child["pid"], signum)
        except OSError:
            pass

    try:
        # Ctrl-C reaches this process (the terminal's foreground group), not the server's child: pass it on,
        # so the child unwinds as a local run would (report of what finished, exit 130).
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            previous[sig] = signal.signal(sig, forward)
        sys.stdout.flush()
        sys.stderr.flush()
        umask = os.umask(0)
        os.umask(umask)
        _send_msg(sock, {"v": PROTOCOL, "op": "run", "argv": list(argv), "cwd": os.getcwd(),
                         "env": dict(os.environ), "umask": umask}, fds=(0, 1, 2))
        first, _ = _recv_msg(sock)
        if "pid" not in first:  # the server declines (restarting, other protocol): run locally
            if first.get("note"):
                print(f"passgate: {first['note']}", file=sys.stderr)
            if child["pending"]:  # interrupted before anything ran: what a local run says then
                print("passgate: interrupted", file=sys.stderr)
                return 130
            return None
        child["pid"] = first["pid"]
        for signum in child["pending"]:
            forward(signum, None)
        sock.settimeout(None)
        try:
            done, _ = _recv_msg(sock)
        except (EOFError, OSError):
            done = {}
        if "exit" in done:
            return int(done["exit"])
        if "signal" in done and child["forwarded"]:
            return 128 + int(done["signal"])  # it died of the signal we passed on, as this process would have
        print("passgate: the server's worker was lost mid-run; running without the server", file=sys.stderr)
        return None
    except (OSError, EOFError, ValueError):
        if child["pid"]:
            print("passgate: the server stopped answering; running without it", file=sys.stderr)
        return None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()


# ----------------------------------------------------------------------------- server


_INSTALLED: tuple = ()


def _watchable(path: Optional[str]) -> bool:
    """Files of modules that can change under the server: not the standard library or installed packages."""
    global _INSTALLED
    if not path or not path.endswith(".py"):
        return False
    if not _INSTALLED:
        import sysconfig

        paths = sysconfig.get_paths()
        _INSTALLED = tuple(sorted({os.path.realpath(paths[k]) + os.sep
                                   for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}))
    return not os.path.realpath(path).startswith(_INSTALLED)


def _module_stamps() -> dict:
    stamps = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if _watchable(path):
            try:
                st = os.stat(path)
                stamps[name] = (path, st.st_mtime_ns, st.st_size)
            except OSError:
                stamps[name] = (path, None, None)
    return stamps


def _changed(stamps: dict) -> list:
    out = []
    for name, (path, mtime, size) in stamps.items():
        try:
            st = os.stat(path)
            now = (st.st_mtime_ns, st.st_size)
        except OSError:
            now = (None, None)
        if now != (mtime, size):
            out.append(name)
    return sorted(out)


class Server:
    def __init__(self, cache_root: Path, preload: tuple = ("builtin", "zoo"), idle_timeout: float = 0.0,
                 log=None):
        self.cache_root = Path(os.path.abspath(cache_root))
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

    def say(self, text: str) -> None:
        print(f"passgate serve [{time.strftime('%H:%M:%S')}]: {text}", file=self.log, flush=True)

    # -- warm-up -------------------------------------------------------------

    def warm(self) -> None:
        started = time.perf_counter()
        import torch

        self.default_threads = torch.get_num_threads()
        torch.set_num_threads(1)  # no OpenMP pool in the server: children fork from a clean state
        from harness.quiet import silence_third_party

        silence_third_party()
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.fspath(self.cache_root / "torchinductor"))
        from harness import cache, cli, runner

        cache.configure(self.cache_root)
        # One real in-process check pulls in every lazy import a check needs (executorch.exir, verifiers,
        # reports, the HTML writer); its report goes to a temporary folder that is removed.
        with tempfile.TemporaryDirectory(prefix="passgate-serve-warm-") as tmp:
            cli.main(["check", "--pass", "passes.reference:RemoveDetachPass", "--graphs", "mlp", "--no-isolation",
                      "-q", "--report", tmp, "--cache-dir", os.fspath(self.cache_root), "--no-server"])
        runner._REFERENCES.clear()
        runner._SHARED_FPS.clear()
        self.cases = self._preload()
        import gc

        gc.collect()
        gc.freeze()  # keep the warm objects out of the children's collections (less copy-on-write)
        self.stamps = _module_stamps()
        self.say(f"warm in {time.perf_counter() - started:.1f}s: {self.cases} cases memoized "
                 f"(preload: {', '.join(self.preload) or 'none'}), cache {self.cache_root}")

    def _preload(self) -> int:
        from harness import sources
        from harness.cases import _MEMO, load_case

        for source in self.preload:
            try:
                specs = sources.select([source])
            except Exception as exc:  # noqa: BLE001 - a source this build lacks: preload the others
                self.say(f"preload {source}: {exc}")
                continue
            for spec in specs:
                try:
                    case = load_case(spec)
                    if not case.from_cache:  # memoize it as the cache gives it: runs say "cached", as without us
                        _MEMO.pop(next(k for k, v in _MEMO.items() if v is case))
                        load_case(spec)
                except Exception as exc:  # noqa: BLE001 - the check itself will report a case that fails to lower
                    self.say(f"preload {spec.name}: {type(exc).__name__}: {exc}")
        self._prime(list(_MEMO.values()))
        self._precompute(list(_MEMO.values()))
        return len(_MEMO)

    def _precompute(self, cases: list) -> None:
        """What every check of a case needs whatever the pass: its reference outputs and fingerprint.

        Computed once here (one thread, as in the isolation workers) for the default seed and draws at
        the edge stage; every child inherits them, so a rerun spends its time on the pass and its checks.
        """
        from harness import runner

        started = time.perf_counter()
        defaults = runner.RunConfig()
        for case in cases:
            try:
                runner.reference_outputs(case, "edge", defaults.seed, defaults.draws)
                runner._SHARED_FPS[(id(case), "edge")] = runner._shared_fingerprint(case, "edge")
            except Exception:  # noqa: BLE001 - a case that cannot run: its checks will say so
                pass
        self.say(f"computed reference outputs of {len(cases)} cases in {time.perf_counter() - started:.1f}s")

    def _prime(self, cases: list) -> None:
        """Retrace each memoized case once through ExportPass (the base of most ExecuTorch passes).

        torch keeps a process-wide cache of fake-tensor dispatches (op, shapes, dtypes -> result); the first
        retrace of a graph fills it and later ones run ~1.5-2x faster. Filled here, every child inherits it,
        so a pass's first run on a case costs what its reruns cost. Nothing else is kept.
        """
        from executorch.exir.pass_base import ExportPass

        started = time.perf_counter()
        for case in cases:
            try:
                ExportPass()(case.program("edge").graph_module)
            except Exception:  # noqa: BLE001 - a case ExportPass cannot retrace: its checks will say so
                pass
        self.say(f"primed torch's dispatch caches on {len(cases)} cases in {time.perf_counter() - started:.1f}s")

    # -- socket --------------------------------------------------------------

    def bind(self) -> None:
        if not secure_dir(self.path.parent, create=True):
            raise RuntimeError(f"{self.path.parent} is not a private folder (owner {os.getuid()}, mode 0700)")
        if self.path.exists() or self.path.is_symlink():
            probe = _connect(self.path, timeout=2.0)
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
        import select

        last = time.monotonic()
        while True:
            conns = list(self.children.values())
            readable, _, _ = select.select([self.listener, *conns], [], [], 0.25)
            self._reap()
            for sock in readable:
                if sock is self.listener:
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
            if _peer_uid(conn) != os.getuid():
                return None
            msg, fds = _recv_msg(conn, max_fds=3)
            op = msg.get("op")
            if msg.get("v") != PROTOCOL:
                _send_msg(conn, {"note": "server speaks another protocol version; running without it"})
                return None
            if op == "status":
                _send_msg(conn, self.status())
                return None
            if op == "stop":
                _send_msg(conn, {"stopped": os.getpid()})
                return "stop"
            if op != "run" or len(fds) != 3:
                _send_msg(conn, {"error": f"unknown request {op!r}"})
                return None
            changed = _changed(self.stamps)
            if any(n == "harness" or n.startswith("harness.") for n in changed):
                _send_msg(conn, {"note": "passgate's own code changed: the server restarts; this run goes without it"})
                return "restart"
            if changed:
                self._reimport(changed)
            pid = self._fork_child(msg, fds)
            conn.settimeout(None)
            _send_msg(conn, {"pid": pid})
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
        self.stamps = _module_stamps()
        self.say(f"reloaded {', '.join(sorted(tops))} ({len(dropped)} modules): their files changed")

    def _fork_child(self, msg: dict, fds: list) -> int:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid:
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
        global IN_SERVER
        IN_SERVER = True
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        _die_with(os.getppid())
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
        from harness import cli

        sys.argv = ["passgate", *msg["argv"]]
        return int(cli.main(list(msg["argv"])))

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
                _send_msg(conn, {"exit": code} if code >= 0 else {"signal": -code})
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


def _die_with(parent_pid: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001
        pass
    if os.getppid() != parent_pid:
        os._exit(1)


def log_path(cache_root: os.PathLike) -> Path:
    return socket_path(cache_root).with_suffix(".log")


def main(argv: Optional[list] = None) -> int:
    """The server process (``python -m harness.server``); ``passgate serve`` starts it in the background."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m harness.server")
    ap.add_argument("--cache-dir", required=True)
    ap.add_argument("--preload", nargs="*", default=["builtin", "zoo"])
    ap.add_argument("--idle-timeout", type=float, default=0.0)
    args = ap.parse_args(argv)
    server = Server(Path(args.cache_dir), tuple(args.preload), args.idle_timeout, log=sys.stdout)
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
        os.execv(sys.executable, [sys.executable, "-m", "harness.server", "--cache-dir", os.fspath(server.cache_root),
                                  "--preload", *server.preload, "--idle-timeout", str(args.idle_timeout)])
    return 0


if __name__ == "__main__":  # pragma: no cover
    # Run as harness.server, not __main__: the children's `passgate check` imports harness.server and must
    # see IN_SERVER set in that very module.
    from harness.server import main as _main

    sys.exit(_main())
