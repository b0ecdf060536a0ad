"""Peak RSS and CPU time of every process in a tree, sampled from /proc while it runs (Linux).

Each sample reads ``VmHWM`` (the kernel's own high-water mark of the
process's resident set) of the root and all its descendants, so a process
seen at least once reports its true peak up to that sample. Forked workers
share the parent's pages copy-on-write and their RSS counts those shared
pages in full: the figures are upper bounds of what each process adds.
A process's CPU time is its own (``utime + stime`` of ``/proc/<pid>/stat``,
without its children's) at its last sample, so a process that lives less
than one sampling interval is missed: a caller that knows the tree's total
(``getrusage``) can say how much no sample saw.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from typing import Optional

_TICKS = os.sysconf("SC_CLK_TCK")


def _scan() -> tuple[dict[int, list[int]], dict[int, float]]:
    """Every process's children and own user + system seconds (its children's not included), from one read of
    each ``/proc/<pid>/stat``."""
    kids: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        kids.setdefault(int(fields[1]), []).append(int(name))  # ppid
        cpu[int(name)] = (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime: fields 14 and 15 of stat(5)
    return kids, cpu


def _hwm_kib(pid: int) -> Optional[int]:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class TreeRSS:
    """Sample the tree under ``pid`` every ``interval`` seconds until :meth:`stop`."""

    def __init__(self, pid: int, interval: float = 0.2):
        self.root = pid
        self.interval = interval
        self.peak: dict[int, int] = {}  # pid -> KiB
        self.depth: dict[int, int] = {}
        self.cpu: dict[int, float] = {}  # pid -> own CPU seconds at its last sample
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> "TreeRSS":
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def sample(self) -> None:
        kids, cpu_now = _scan()
        frontier = [(self.root, 0)]
        while frontier:
            pid, depth = frontier.pop()
            hwm = _hwm_kib(pid)
            if hwm is not None:
                self.peak[pid] = max(self.peak.get(pid, 0), hwm)
                self.depth.setdefault(pid, depth)
                self.cpu[pid] = max(self.cpu.get(pid, 0.0), cpu_now.get(pid, 0.0))
            frontier.extend((k, depth + 1) for k in kids.get(pid, ()))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def by_depth(self) -> dict[int, dict]:
        """{depth: {processes, max_mib, median_mib}}."""
        out: dict[int, dict] = {}
        for depth in sorted(set(self.depth.values())):
            vals = sorted(self.peak[p] for p, d in self.depth.items() if d == depth)
            out[depth] = {"processes": len(vals), "max_mib": round(vals[-1] / 1024, 1),
                          "median_mib": round(vals[len(vals) // 2] / 1024, 1)}
        return out

    def cpu_by_depth(self) -> dict[int, float]:
        """{depth: own CPU seconds of its processes at their last samples}."""
        out: dict[int, float] = {}
        for pid, d in self.depth.items():
            out[d] = out.get(d, 0.0) + self.cpu.get(pid, 0.0)
        return {d: round(v, 1) for d, v in sorted(out.items())}


def run_sampled(cmd: list, env: dict, cwd: Optional[str] = None, timeout: float = 3600) -> tuple[
        subprocess.CompletedProcess, float, TreeRSS]:
    """Run ``cmd``, timing its wall clock and sampling its process tree's peak RSS and CPU time."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tree = TreeRSS(proc.pid).start()
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        tree.stop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    seconds = time.perf_counter() - started
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err), seconds, tree
