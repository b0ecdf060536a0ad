"""The warm server's wire: where its socket lives, who may connect, and how messages are framed.

Shared by :mod:`harness.serve.client` and :mod:`harness.serve.server`, so
neither reaches into the other's private helpers. A message is a 4-byte
length and a JSON body; file descriptors (the client's stdin / stdout /
stderr) ride on the header with ``SCM_RIGHTS``.

Security: the socket lives in a folder only its user can enter (0700,
``$XDG_RUNTIME_DIR/passgate-UID`` or ``$TMPDIR/passgate-UID``), is itself 0600,
and each side checks the peer's uid (``SO_PEERCRED``). It never listens on
a network port. Only the standard library is imported: the client runs
before any torch import.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import struct
import tempfile
from pathlib import Path
from typing import Optional

__all__ = ["PROTOCOL", "CONNECT_TIMEOUT_S", "socket_dir", "resolve_cache_root", "socket_path", "log_path",
           "secure_dir", "peer_uid", "send_msg", "recv_msg", "connect"]

PROTOCOL = 1
CONNECT_TIMEOUT_S = 5.0  # for the server's first answer (the child's pid)
_HEADER = struct.Struct("!I")


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


def peer_uid(sock: socket.socket) -> Optional[int]:
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[1]
    except (OSError, AttributeError):
        return None


# ----------------------------------------------------------------------------- framing


def send_msg(sock: socket.socket, obj: dict, fds: tuple = ()) -> None:
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


def recv_msg(sock: socket.socket, max_fds: int = 0) -> tuple[dict, list]:
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


def connect(path: Path, timeout: Optional[float] = CONNECT_TIMEOUT_S) -> Optional[socket.socket]:
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
    if peer_uid(sock) != os.getuid():
        sock.close()
        return None
    return sock


def log_path(cache_root: os.PathLike) -> Path:
    return socket_path(cache_root).with_suffix(".log")
