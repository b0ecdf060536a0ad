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

import os
import signal
import sys
from typing import Optional

from harness.serve.protocol import (
    CONNECT_TIMEOUT_S,
    PROTOCOL,
    connect,
    recv_msg,
    resolve_cache_root,
    send_msg,
    socket_path,
)

__all__ = ["NO_SERVER_ENV", "serve_locally", "request", "wanted", "run_via_server"]

NO_SERVER_ENV = "PASSGATE_NO_SERVER"

_in_server = False  # in a child the server forked: its `passgate check` runs here, not through a server


def serve_locally() -> None:
    """From now on, run every command in this process: called in each child the server forks."""
    global _in_server
    _in_server = True


# ----------------------------------------------------------------------------- client


def request(cache_root: os.PathLike, op: str, timeout: float = CONNECT_TIMEOUT_S) -> Optional[dict]:
    """A control request (``status`` or ``stop``); None when no server answers."""
    sock = connect(socket_path(cache_root), timeout)
    if sock is None:
        return None
    try:
        send_msg(sock, {"v": PROTOCOL, "op": op})
        reply, _ = recv_msg(sock)
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
    return (not _in_server and "--no-server" not in argv
            and os.environ.get(NO_SERVER_ENV, "").strip().lower() not in ("1", "true", "yes", "on"))


def run_via_server(argv: list) -> Optional[int]:
    """Run ``passgate ARGV`` in the warm server; its exit status, or None to run it here instead."""
    if not wanted(argv):
        return None
    try:
        root = resolve_cache_root(_cache_dir_from_argv(argv))
        sock = connect(socket_path(root))
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
        send_msg(sock, {"v": PROTOCOL, "op": "run", "argv": list(argv), "cwd": os.getcwd(),
                         "env": dict(os.environ), "umask": umask}, fds=(0, 1, 2))
        first, _ = recv_msg(sock)
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
            done, _ = recv_msg(sock)
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


