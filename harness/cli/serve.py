"""``passgate serve``: start, query or stop the warm server that ``passgate check`` uses (harness/serve/server.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Optional

from harness.core.errors import UsageError
from harness.core.kinds import ExitCode

__all__ = ["START_TIMEOUT_S", "DAEMON", "add_parser", "run", "daemon"]

START_TIMEOUT_S = 600.0  # a cold cache lowers every preloaded case before the server listens


# The server process is this module run as a script, so that the commands it serves (harness.cli.main) are
# handed to the server from the layer above instead of the server importing the command line it serves.
DAEMON = [sys.executable, "-m", "harness.cli.serve"]

def add_parser(sub) -> None:
    p = sub.add_parser(
        "serve",
        help="keep a warm process (imports done, cases lowered) that `passgate check` runs in",
        description=(
            "Start a background server that has torch and executorch imported and the graph cases of --preload "
            "lowered and memoized, listening on a Unix socket only you can open (never a network port). While "
            "it runs, `passgate check` with the same cache folder runs inside it (a forked child per run, same "
            "output and exit status, pass files imported fresh each time); --no-server or PASSGATE_NO_SERVER=1 "
            "opts out, and a stale socket or dead server falls back to a normal run. Exit status: 0 done "
            "(--status: a server runs), 1 none runs (--status) or it failed to start, 2 bad usage."
        ),
    )
    p.add_argument("--cache-dir", metavar="DIR", help="the lowered-graph cache it serves (default $PASSGATE_CACHE_DIR "
                   "or ~/.cache/passgate); `passgate check` finds the server of its own cache folder")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--stop", action="store_true", help="stop the running server")
    what.add_argument("--status", action="store_true", help="say whether a server runs, and what it holds (JSON)")
    what.add_argument("--foreground", action="store_true", help="run the server in this terminal (Ctrl-C stops it)")
    p.add_argument("--preload", nargs="*", metavar="SOURCE", default=["builtin", "zoo"],
                   help="graph sources to lower and memoize before listening (default: builtin zoo)")
    p.add_argument("--idle-timeout", type=float, default=4 * 3600.0, metavar="S",
                   help="exit after S seconds without a request (default 4 h; 0: never)")
    p.set_defaults(run=run)


def run(args) -> int:
    from harness.serve import client, protocol

    root = protocol.resolve_cache_root(args.cache_dir)
    if args.status:
        info = client.request(root, "status")
        if info is None:
            print(f"passgate: no server runs for cache {root}", file=sys.stderr)
            return ExitCode.VIOLATION
        import json

        print(json.dumps(info, indent=1))
        return ExitCode.OK
    if args.stop:
        reply = client.request(root, "stop")
        path = protocol.socket_path(root)
        if reply is None:
            _remove_stale(path)
            print(f"passgate: no server was running for cache {root}", file=sys.stderr)
            return ExitCode.OK
        # stopped means gone: the socket is removed first, then the process drains its children and exits
        pid = reply.get("stopped")
        deadline = time.monotonic() + 30
        while (path.exists() or _alive(pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        print(f"passgate: server {pid} stopped", file=sys.stderr)
        return ExitCode.OK
    info = client.request(root, "status")
    if info is not None:
        print(f"passgate: a server already runs for cache {root} (pid {info['pid']}, {info['socket']})",
              file=sys.stderr)
        return ExitCode.OK
    from harness.graphs import sources

    for source in args.preload:
        if source not in sources.static_sources():
            raise UsageError(f"--preload {source}: expected one of {', '.join(sources.static_sources())}")
    cmd = [*DAEMON, "--cache-dir", os.fspath(root), "--preload", *args.preload, "--idle-timeout", str(args.idle_timeout)]
    if args.foreground:
        return daemon(cmd[len(DAEMON):])
    if not protocol.secure_dir(protocol.socket_dir(), create=True):
        print(f"passgate: {protocol.socket_dir()} is not a private folder; not starting", file=sys.stderr)
        return ExitCode.VIOLATION
    log = protocol.log_path(root)
    with open(log, "ab") as out:
        os.chmod(log, 0o600)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, close_fds=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            print(f"passgate: the server exited during start-up (status {proc.returncode}); see {log}",
                  file=sys.stderr)
            return ExitCode.VIOLATION
        info = client.request(root, "status", timeout=2.0)
        if info is not None:
            print(f"passgate: server ready (pid {info['pid']}, {info['cases_memoized']} cases memoized) on "
                  f"{info['socket']}; log {log}", file=sys.stderr)
            return ExitCode.OK
        time.sleep(0.2)
    proc.kill()
    print(f"passgate: the server was not ready within {START_TIMEOUT_S:g} s; see {log}", file=sys.stderr)
    return ExitCode.VIOLATION


def _alive(pid) -> bool:
    """Does process ``pid`` still exist? (The server is not our child: signal 0 asks without waiting.)"""
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(path) -> None:
    try:
        if path.is_socket():
            path.unlink()
    except OSError:
        pass


def daemon(argv: Optional[list] = None) -> int:
    """The warm server's process (``python -m harness.cli.serve``), serving ``passgate`` commands."""
    from harness.cli import main as cli
    from harness.serve import server

    return server.main(argv, run_command=cli.main, relaunch=DAEMON)


if __name__ == "__main__":  # pragma: no cover
    # Run as harness.cli.serve, not __main__, so the children share this module's warm state.
    from harness.cli.serve import daemon as _daemon

    sys.exit(_daemon())
