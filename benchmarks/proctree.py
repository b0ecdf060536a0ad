"""Peak RSS and CPU time of every process in a tree, sampled from /proc while it runs (Linux).

Each sample reads ``VmHWM`` (the kernel's own high-water mark of the
process's resident set) of the root and all its descendants, so a process
seen at least once reports its true peak up to that sample. Forked workers
share the parent's pages copy-on-write and their RSS counts those shared
pages in full: the figures are upper bounds of what each process adds.
A process's CPU time is its own (``utime + stime`` of ``/proc/<pid>/stat``,
without its children's) at its last sample, so a process that lives less
than one sampling interval is missed: :meth:`TreeRSS.cpu_by_depth` says how
much of a known total the samples account for.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from typing import Optional


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                text = f.read()
        except OSError:
            continue
        ppid = int(text.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_s(pid: int) -> Optional[float]:
    """The process's own user + system seconds so far (its children's not included)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime: fields 14 and 15 of stat(5)


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
        kids = _children_map()
        frontier = [(self.root, 0)]
        while frontier:
            pid, depth = frontier.pop()
            hwm = _hwm_kib(pid)
            if hwm is not None:
                self.peak[pid] = max(self.peak.get(pid, 0), hwm)
                self.depth.setdefault(pid, depth)
                cpu = _cpu_s(pid)
                if cpu is not None:
                    self.cpu[pid] = max(self.cpu.get(pid, 0.0), cpu)
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


    def cpu_by_depth(self, total: Optional[float] = None) -> dict:
        """{depth: own CPU seconds of its processes}, and with ``total`` (the tree's measured CPU) the part no
        sample saw (processes shorter than one interval)."""
        out: dict = {}
        for pid, d in self.depth.items():
            out[d] = out.get(d, 0.0) + self.cpu.get(pid, 0.0)
        out = {d: round(v, 1) for d, v in sorted(out.items())}
        if total is not None:
            out["unsampled"] = round(total - sum(out.values()), 1)
        return out


def run_sampled(cmd: list, env: dict, cwd: Optional[str] = None, timeout: float = 3600) -> tuple[
        subprocess.CompletedProcess, float, TreeRSS]:
    """Run ``cmd``, timing its wall clock and sampling its process tree's peak RSS."""
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
