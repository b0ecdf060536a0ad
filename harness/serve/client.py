"""The client side of the warm server: where its socket lives, the wire protocol, and ``run_via_server``.

``passgate check`` calls :func:`run_via_server` before anything else: when a
``passgate serve`` server (:mod:`harness.serve.server`) answers on the socket of
its cache folder, the client sends its argv, cwd, umask and environment, and
its stdin / stdout / stderr file descriptors (``SCM_RIGHTS``) over the Unix
socket, passes Ctrl-C on to the server's child, and exits with the child's
status. Any doubt (no socket, a stale one, a server that is not ours or does
not answer in time, ``--no-server`` / ``PASSGATE_NO_SERVER=1``) means: run in
this process, silently.

Security: the socket lives in a folder only its user can enter (0700,
``$XDG_RUNTIME_DIR/passgate-UID`` or ``$TMPDIR/passgate-UID``), is itself 0600,
and the server checks each peer's uid (``SO_PEERCRED``). It never listens on
a network port.

Only the standard library is imported: this runs before any torch import.
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
    from harness.graphs.cache import default_cache_root

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


def log_path(cache_root: os.PathLike) -> Path:
    return socket_path(cache_root).with_suffix(".log")
