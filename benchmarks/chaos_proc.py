"""The chaos campaign's processes: a ``passgate`` command forked from a warm campaign process, and the blows.

A real ``passgate`` process pays ~10 s of torch and executorch imports
before its first graph (far more on a loaded machine), so 300 faults cannot
each start one. Like :mod:`harness.run.isolation` and ``passgate serve``,
the campaign imports once and forks: the child starts a session of its own
(a process group the fault layer and the blows can kill whole), takes its
own stdout / stderr files, sets the fault in its environment and calls
:func:`harness.cli.main.main` with the command line, then leaves through
``os._exit`` as the ``passgate`` executable does. An exception escaping
``main`` is printed as Python prints it: a traceback in stderr is exactly
what the campaign counts.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

__all__ = ["Proc", "warm_imports", "spawn", "children", "wait", "kill_later"]


@dataclass
class Proc:
    """A forked ``passgate`` command: its pid, where its output goes, when it started, how it ended."""

    pid: int
    out: Path
    started: float = field(default_factory=time.monotonic)
    status: Optional[int] = None  # exit status, or -signal
    seconds: float = 0.0

    def stderr(self) -> str:
        try:
            return (self.out / "stderr").read_text(errors="replace")
        except FileNotFoundError:
            return ""


def warm_imports() -> None:
    """What every forked run would otherwise import itself (the imports of a quick-profile run)."""
    import torch

    torch.set_num_threads(1)  # never start OpenMP's pool in a process that forks (harness/run/isolation.py)
    import executorch.exir  # noqa: F401

    import harness.cli.main  # noqa: F401
    import harness.cli.run  # noqa: F401
    import harness.report.writers  # noqa: F401
    import harness.run.incremental  # noqa: F401
    import harness.run.plan  # noqa: F401


def spawn(argv: list, out: Path, env: Optional[dict] = None) -> Proc:
    """``passgate <argv>`` in a forked child with ``env`` added; stdout / stderr into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return Proc(pid, out)
    status = 70
    try:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.environ.update(env or {})
        for fd, name in ((1, "stdout"), (2, "stderr")):
            f = os.open(out / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(f, fd)
            os.close(f)
        from harness.cli.main import main

        status = int(main(argv))
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - what the campaign looks for: printed as the interpreter would
        traceback.print_exc()
        status = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)


def children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (its isolation workers and report writers)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry))
    return sorted(out)


def wait(proc: Proc, timeout: float = 900.0) -> Proc:
    """Reap ``proc``; past ``timeout`` its whole group is killed (a hung run is a finding, not a hang here)."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status = os.waitpid(proc.pid, os.WNOHANG)
        if pid:
            proc.status = os.waitstatus_to_exitcode(status)
            proc.seconds = time.monotonic() - proc.started
            _kill_group(proc.pid)  # writers or workers it left behind
            return proc
        if time.monotonic() > deadline:
            _kill_group(proc.pid)
        time.sleep(0.02)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_later(proc: Proc, at_s: float, sig: int, worker: bool) -> Optional[str]:
    """At ``at_s`` seconds into ``proc`` send ``sig`` to it (or to one of its children, the first that exists
    from then on: an isolation worker, or a forked report writer near the end); what was struck (``parent``,
    ``worker``), or None when the run ended first. Never reaps: an ended child stays a zombie, so its pid is
    not reused before :func:`wait`."""
    while time.monotonic() < proc.started + at_s:
        if not _alive(proc.pid):
            return None
        time.sleep(0.01)
    while _alive(proc.pid):
        targets = children(proc.pid) if worker else [proc.pid]
        if targets:
            try:
                os.kill(targets[0], sig)
                return "worker" if worker else "parent"
            except ProcessLookupError:
                pass
        time.sleep(0.01)
    return None


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
