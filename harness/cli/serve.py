"""``passgate serve``: start, query or stop the warm server that ``passgate check`` uses (harness/serve/server.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from harness.core.errors import UsageError

START_TIMEOUT_S = 600.0  # a cold cache lowers every preloaded case before the server listens


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
    from harness.serve import client  # the server itself runs as python -m harness.serve.server

    root = client.resolve_cache_root(args.cache_dir)
    if args.status:
        info = client.request(root, "status")
        if info is None:
            print(f"passgate: no server runs for cache {root}", file=sys.stderr)
            return 1
        import json

        print(json.dumps(info, indent=1))
        return 0
    if args.stop:
        reply = client.request(root, "stop")
        path = client.socket_path(root)
        if reply is None:
            _remove_stale(path)
            print(f"passgate: no server was running for cache {root}", file=sys.stderr)
            return 0
        deadline = time.monotonic() + 30
        while path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        print(f"passgate: server {reply.get('stopped')} stopped", file=sys.stderr)
        return 0
    info = client.request(root, "status")
    if info is not None:
        print(f"passgate: a server already runs for cache {root} (pid {info['pid']}, {info['socket']})",
              file=sys.stderr)
        return 0
    from harness.graphs import sources

    for source in args.preload:
        if source not in sources.STATIC_SOURCES:
            raise UsageError(f"--preload {source}: expected one of {', '.join(sources.STATIC_SOURCES)}")
    cmd = [sys.executable, "-m", "harness.serve.server", "--cache-dir", os.fspath(root), "--preload", *args.preload,
           "--idle-timeout", str(args.idle_timeout)]
    if args.foreground:
        from harness.serve import server

        return server.main(cmd[3:])
    if not client.secure_dir(client.socket_dir(), create=True):
        print(f"passgate: {client.socket_dir()} is not a private folder; not starting", file=sys.stderr)
        return 1
    log = client.log_path(root)
    with open(log, "ab") as out:
        os.chmod(log, 0o600)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, close_fds=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            print(f"passgate: the server exited during start-up (status {proc.returncode}); see {log}",
                  file=sys.stderr)
            return 1
        info = client.request(root, "status", timeout=2.0)
        if info is not None:
            print(f"passgate: server ready (pid {info['pid']}, {info['cases_memoized']} cases memoized) on "
                  f"{info['socket']}; log {log}", file=sys.stderr)
            return 0
        time.sleep(0.2)
    proc.kill()
    print(f"passgate: the server was not ready within {START_TIMEOUT_S:g} s; see {log}", file=sys.stderr)
    return 1


def _remove_stale(path) -> None:
    try:
        if path.is_socket():
            path.unlink()
    except OSError:
        pass
