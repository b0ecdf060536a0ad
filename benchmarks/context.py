"""What every benchmark figure shares: the :class:`Context` (workload seed, cache folder, scratch space, the
warm server), the figure record (:func:`record`), and the subprocess helpers that time a real ``passgate`` command,
directly or through the warm server.

Split from :mod:`benchmarks.figures` so the figure modules (in-process throughput, the served edit loop, the
conformance suite under pytest) each import only this, never each other.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

__all__ = ["ROOT", "PY", "PASSGATE", "Context", "record", "check_cmd", "timed", "through_server", "body_seconds",
           "import_floor", "RESTARTED"]

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
PASSGATE = [PY, "-m", "harness.cli.main"]


@dataclass
class Context:
    """What every figure shares: the workload, the seed, a machine-wide cache folder, scratch space."""

    seed: int = 0
    tiny: bool = False
    cache_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="passgate-bench-cache-")))
    scratch: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="passgate-bench-")))
    log: object = sys.stderr
    # where the conformance suite comes from: "worktree" (this checkout) or a git revision (exported with
    # `git archive`, for measuring a committed suite while the checkout's is being edited)
    conformance_source: str = "worktree"
    conformance_args: tuple = ()  # more pytest arguments for the suite (e.g. --passgate-baseline none)
    parallel_profile: str = "standard"
    conformance_profiles: tuple = ("quick", "standard")
    memory_profile: Optional[str] = None  # also sample a conformance run (-n 2) of this profile for the memory figure
    overhead_slice: Optional[str] = None  # suite_overhead's -k expression ("all": the whole profile); None: its own
    # the warm server the warm_cold and edit_loop figures share: (env, pid, cache folder)
    server: Optional[tuple] = None
    warm_cache: Optional[Path] = None  # the cache folder warm_cold filled

    def say(self, text: str) -> None:
        print(f"bench: {text}", file=self.log, flush=True)

    def ensure_server(self, cache_dir: Path, preload: list[str]) -> dict:
        """The env that reaches a warm server for ``cache_dir`` (started once, stopped by :meth:`stop_server`)."""
        if self.server and self.server[2] == cache_dir:
            return self.server[0]
        self.stop_server()
        env, pid = _start_server(self.env(PASSGATE_CACHE_DIR=cache_dir), preload)
        self.server = (env, pid, cache_dir)
        return env

    def stop_server(self) -> None:
        if self.server:
            _stop_server(self.server[0], self.server[1])
            self.server = None

    def env(self, **extra) -> dict:
        env = {**os.environ, "PASSGATE_CACHE_DIR": str(self.cache_dir), "PYTHONDONTWRITEBYTECODE": "1",
               "XDG_RUNTIME_DIR": str(self.runtime_dir)}
        env.pop("PASSGATE_NO_SERVER", None)
        env.pop("PASSGATE_CACHE_LOG", None)
        env.update({k: str(v) for k, v in extra.items()})
        return env

    @property
    def runtime_dir(self) -> Path:
        path = self.scratch / "xdg"
        path.mkdir(mode=0o700, exist_ok=True)
        return path

    def tmp(self, name: str) -> Path:
        path = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.scratch))
        return path


def record(value, target, unit: str, better: str, **rest) -> dict:
    """One figure's record: its value against its target, whether it is met, and whatever explains it."""
    met = None if value is None else (value >= target if better == "higher" else value < target)
    return {"value": value, "target": target, "unit": unit, "better": better, "met": met, **rest}


def check_cmd(passes: list[str], graphs: list[str], report: Path, *extra) -> list[str]:
    args = [*PASSGATE, "check"]
    for p in passes:
        args += ["--pass", p]
    return [*args, "--graphs", *graphs, "--report", str(report), "-q", *extra]


def timed(cmd: list, env: dict, cwd: Optional[str] = None) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=3600)
    return time.perf_counter() - started, r


RESTARTED = "the server restarts"


def through_server(cmd: list, env: dict, cwd: Optional[str] = None, restarts: Optional[list] = None):
    """``timed`` through the server; when the server restarted for a changed harness file (someone edited
    passgate during the run), wait until it answers again and rerun, noting it in ``restarts``."""
    t, r = timed(cmd, env, cwd)
    if RESTARTED in r.stderr:
        if restarts is not None:
            restarts.append(round(t, 2))
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if subprocess.run([*PASSGATE, "serve", "--status"], env=env, capture_output=True).returncode == 0:
                break
            time.sleep(1)
        t, r = timed(cmd, env, cwd)
    return t, r


def body_seconds(report: Path) -> Optional[float]:
    try:
        return json.loads((report / "results.json").read_text())["duration_s"]
    except (OSError, ValueError, KeyError):
        return None


def import_floor(ctx: Context) -> float:
    """Seconds a bare process needs to import torch, executorch.exir and passgate's CLI."""
    t, _ = timed([PY, "-c", "import harness.cli.main, torch, executorch.exir"], ctx.env())
    return t


def _start_server(env: dict, preload: list[str]) -> tuple[dict, int]:
    r = subprocess.run([*PASSGATE, "serve", "--preload", *preload, "--idle-timeout", "1800"], env=env,
                       capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"passgate serve failed: {r.stderr.strip()}")
    status = json.loads(subprocess.run([*PASSGATE, "serve", "--status"], env=env, capture_output=True, text=True,
                                       timeout=60).stdout)
    return env, status["pid"]


def _stop_server(env: dict, pid: int) -> None:
    subprocess.run([*PASSGATE, "serve", "--stop"], env=env, capture_output=True, timeout=60)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    import signal

    os.kill(pid, signal.SIGKILL)
