"""One fault of the chaos campaign: set up a fresh cache and report folder, strike the run, judge, rerun, judge.

A trial runs a tiny slice of the quick profile (one or two catalog entries
on two built-in graphs), so hundreds fit in minutes; each slice's
uninterrupted reference run is computed once (:func:`reference`). The fault
kinds are those of issue 36: SIGKILL / SIGTERM of the run or of one of its
worker processes at a seeded moment, a kill / ENOSPC / EIO in the middle of
writing a report, a lowered case, a verdict record or the baseline (through
the fault layer of :mod:`harness.core.io`), a read-only cache folder, two
runs sharing one cache, and a cache restored from a killed run.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from benchmarks import chaos_check as check
from benchmarks.chaos_proc import kill_later, spawn, wait

__all__ = ["Slice", "Reference", "Outcome", "SLICES", "FAULTS", "fault_env", "reference", "run_trial", "strike"]


@dataclass(frozen=True)
class Slice:
    """A workload small enough for hundreds of faults: ``argv`` without its report and cache folders."""

    name: str
    argv: tuple
    graphs: tuple


SLICES = (
    Slice("cse", ("run", "--profile", "quick", "--only", "exir.CSEPass", "--graphs", "mlp", "inplace_views"),
          ("mlp", "inplace_views")),
    # DimOrderOpsRevertPass x inplace_views is a known violation: a wrong cache hit would show as a status change
    Slice("dim_order", ("run", "--profile", "quick", "--only", "exir.DimOrderOpsRevertPass",
                        "exir.dead_code_elimination_pass", "--graphs", "mlp", "inplace_views"),
          ("mlp", "inplace_views")),
)

# where an I/O fault strikes -> the glob under the trial's folder, and whether the cache must start cold
TARGETS = {
    "results.json": ("report/results.json", "warm"),
    "summary.md": ("report/summary.md", "warm"),
    "junit.xml": ("report/junit.xml", "warm"),
    "report.html": ("report/report.html", "warm"),
    "cache entry": ("cache/*.case", "no cases"),
    "verdict record": ("cache/verdicts/units/*", "cold"),
    "case note": ("cache/verdicts/cases/*", "cold"),
    "baseline": ("baseline.json", "cold"),
}
# (kind, where) drawn by the campaign, with their weights
FAULTS = (
    [(("sigkill", "parent"), 3), (("sigterm", "parent"), 3), (("sigkill", "worker"), 2), (("sigterm", "worker"), 2)]
    + [((kind, where), 1) for kind in ("kill", "enospc", "eio") for where in TARGETS if where != "baseline"]
    + [(("readonly", "cache"), 1), (("shared", "cache"), 1), (("restored", "cache"), 1)]
    + [((kind, "baseline"), 1) for kind in ("kill", "enospc", "eio")]
)


@dataclass
class Reference:
    """A slice's uninterrupted run: its results, exit status, duration, and the caches it starts trials from."""

    slice: Slice
    doc: dict
    status: int
    seconds: float
    no_cases: Path  # an empty cache folder
    cold: Path  # the slice's lowered cases, no verdicts
    warm: Path  # cases and the verdicts of the reference run
    baseline_old: Optional[bytes] = None
    baseline_new: Optional[dict] = None

    @property
    def name(self) -> str:
        return self.slice.name

    def killed_caches(self, scratch: Path) -> list:
        """Cache folders as killed runs of this slice left them (snapshots renamed into place whole)."""
        return sorted(scratch.glob(f"t*/killed-cache-{self.slice.name}"))


def _argv(s: Slice, folder: Path, cache: Path) -> list:
    return [*s.argv, "--report", str(folder / "report"), "--cache-dir", str(cache), "-q"]


def reference(s: Slice, shared_cache: Path, scratch: Path) -> Reference:
    """Run the slice once uninterrupted (cold verdicts), then warm, which must agree with it."""
    root = scratch / f"ref-{s.name}"
    no_cases, cold = root / "no-cases", root / "cold"
    no_cases.mkdir(parents=True, exist_ok=True)
    cold.mkdir(parents=True, exist_ok=True)
    for g in s.graphs:
        for entry in shared_cache.glob(f"{g}-*.case"):
            shutil.copy2(entry, cold / entry.name)
    warm = root / "warm"
    shutil.copytree(cold, warm)
    first = wait(spawn(_argv(s, root / "first", warm), root / "first"))
    doc = check.load(root / "first" / "report" / "results.json")
    if doc is None or check.has_traceback(first.stderr()):
        raise RuntimeError(f"the reference run of slice {s.name} failed: {first.stderr()[-2000:]}")
    again = wait(spawn(_argv(s, root / "again", warm), root / "again"))
    same = check.compare(doc, check.load(root / "again" / "report" / "results.json"))
    if not same.identical or again.status != first.status:
        raise RuntimeError(f"slice {s.name}: a warm rerun does not repeat the reference run ({same})")
    ref = Reference(s, doc, first.status, first.seconds, no_cases, cold, warm)
    _baselines(ref, root)
    return ref


def _baselines(ref: Reference, root: Path) -> None:
    """The old baseline (recorded from the slice's first graph) and the new one (from the whole slice)."""
    s = ref.slice
    old_argv = [*s.argv[:-len(s.graphs)], s.graphs[0]]
    for name, argv in (("old", old_argv), ("new", list(s.argv))):
        folder = root / f"baseline-{name}"
        base = folder / "baseline.json"
        if name == "new":
            folder.mkdir(parents=True, exist_ok=True)
            base.write_bytes(ref.baseline_old)
        cmd = ["baseline", "update", "--baseline", str(base), *argv[1:], "--report", str(folder / "report"),
               "--cache-dir", str(ref.warm), "-q"]
        wait(spawn(cmd, folder))
        if name == "old":
            ref.baseline_old = base.read_bytes()
        else:
            ref.baseline_new = _normal(base.read_bytes())


def _normal(data: bytes) -> Optional[dict]:
    """A baseline's content, its timestamp aside (None: not a whole JSON document)."""
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    doc.pop("generated", None)
    return doc


@dataclass
class Outcome:
    """What one trial found (a row of the campaign's JSON)."""

    kind: str
    where: str
    slice: str
    injected: bool = False
    struck: str = ""
    status: Optional[int] = None
    rerun_status: Optional[int] = None
    completed: bool = False  # the rerun (or the run itself) ended with a complete report
    identical: bool = False
    lost: int = 0
    wrong_cache_hits: int = 0
    differences: int = 0
    corrupt: list = field(default_factory=list)
    debris: int = 0
    tracebacks: int = 0
    bad_errors: int = 0
    seconds: float = 0.0
    note: str = ""

    def to_json(self) -> dict:
        return dict(self.__dict__)

    def count(self, v: check.Verdicts) -> None:
        """Add a run's verdicts, as compared with the reference's, to what this trial found."""
        self.lost += v.lost
        self.wrong_cache_hits += v.wrong_cache_hits
        self.differences += v.differences + v.changed


def fault_env(rng: random.Random, kind: str, glob: str, nth, folder: Path) -> dict:
    """The environment that makes the fault layer of :mod:`harness.core.io` strike the ``nth`` write matching
    ``glob`` with ``kind`` (its seed drawn from ``rng``), logging each strike into ``folder``."""
    return {"PASSGATE_FAULTS": f"{rng.randrange(10**6)}:{kind}@{glob}#{nth}",
            "PASSGATE_FAULTS_LOG": str(folder / "struck.log")}


def strike(proc, rng: random.Random, kind: str, seconds: float, worker: bool) -> str:
    """SIGKILL or SIGTERM (``kind``) to ``proc`` or one of its workers at a moment of its ``seconds`` drawn from
    ``rng``; what was struck, "" when the run ended first."""
    sig = signal.SIGKILL if kind == "sigkill" else signal.SIGTERM
    return kill_later(proc, rng.uniform(0.05, 0.95) * seconds, sig, worker) or ""


def run_trial(index: int, seed: int, ref: Reference, kind: str, where: str, scratch: Path) -> Outcome:
    """Set up, strike, judge, rerun, judge (see the module docstring)."""
    rng = random.Random(f"{seed}:{index}")
    folder = scratch / f"t{index:04d}-{kind}-{where.replace(' ', '_')}"
    out = Outcome(kind, where, ref.slice.name)
    if kind == "shared":
        return _shared(out, ref, folder)
    if kind == "restored" and not ref.killed_caches(scratch):
        out.note = "no killed run's cache yet"
        return out
    start = _start_cache(ref, kind, where, rng, scratch)
    cache = folder / "cache"
    shutil.copytree(start, cache)
    env: dict = {}
    if kind in ("kill", "enospc", "eio", "readonly"):
        glob = f"{cache}/*" if kind == "readonly" else str(folder / TARGETS[where][0])
        several = where in ("cache entry", "verdict record", "case note")  # one file per graph or unit
        nth = "*" if kind == "readonly" else str(rng.randint(1, 2) if several else 1)
        env = fault_env(rng, "erofs" if kind == "readonly" else kind, glob, nth, folder)
    argv = _argv(ref.slice, folder, cache)
    if where == "baseline":
        (folder / "baseline.json").write_bytes(ref.baseline_old)
        argv = ["baseline", "update", "--baseline", str(folder / "baseline.json"), *argv[1:]]
    proc = spawn(argv, folder / "faulted", env)
    if kind in ("sigkill", "sigterm"):
        out.struck = strike(proc, rng, kind, ref.seconds, where == "worker")
    wait(proc)
    out.status, out.seconds = proc.status, proc.seconds
    out.injected = bool(out.struck) or (folder / "struck.log").exists() or kind == "restored"
    if kind in ("sigkill", "kill") and out.injected:
        shutil.copytree(cache, folder / "snapshot")  # then renamed: a parallel trial never sees half of it
        os.rename(folder / "snapshot", folder / f"killed-cache-{ref.slice.name}")
    _judge_run(out, proc, folder, cache, ref)
    rerun = [*argv, "--resume"] if where != "worker" else argv
    again = wait(spawn(rerun, folder / "rerun"))
    out.rerun_status, out.seconds = again.status, out.seconds + again.seconds
    out.tracebacks += check.has_traceback(again.stderr())
    out.bad_errors += check.bad_error(again.status, again.stderr())
    _judge_verdicts(out, ref, folder, again.status)
    if where == "baseline":
        _judge_baseline(out, ref, folder, after_rerun=True)
    return out


def _start_cache(ref: Reference, kind: str, where: str, rng: random.Random, scratch: Path) -> Path:
    """The cache a trial starts from: what its target needs written (no cases, no verdicts), a killed run's,
    else (parent blows) cold or warm by the seed, so a blow lands among worker runs or among reused verdicts."""
    if kind == "restored":
        killed = ref.killed_caches(scratch)
        return killed[rng.randrange(len(killed))]
    if where in TARGETS:
        return {"no cases": ref.no_cases, "cold": ref.cold, "warm": ref.warm}[TARGETS[where][1]]
    if where == "parent" and rng.random() < 0.4:
        return ref.warm
    return ref.cold


def _judge_run(out: Outcome, proc, folder: Path, cache: Path, ref: Reference) -> None:
    """The struck run itself: no traceback, a one-line error, whole files, and (readonly) the right verdicts."""
    err = proc.stderr()
    out.tracebacks += check.has_traceback(err)
    out.bad_errors += check.bad_error(proc.status, err)
    out.corrupt += check.corrupt_files(folder / "report", cache)
    out.debris = len(check.debris(folder / "report", cache))
    if out.where == "baseline":
        _judge_baseline(out, ref, folder, after_rerun=False)
    if out.kind == "readonly":  # a read-only cache costs speed, never verdicts
        v = check.compare(ref.doc, check.load(folder / "report" / "results.json"))
        out.wrong_cache_hits += v.wrong_cache_hits
        if not v.identical:
            out.note = f"the read-only-cache run itself differs: {v.to_json()}"
            out.differences += v.differences + v.changed + v.lost
            out.lost += v.lost


def _judge_verdicts(out: Outcome, ref: Reference, folder: Path, status: Optional[int]) -> None:
    v = check.compare(ref.doc, check.load(folder / "report" / "results.json"))
    out.completed = v.identical or bool((check.load(folder / "report" / "results.json") or {}).get("complete"))
    out.identical = v.identical and (status == ref.status or out.where == "baseline") and not out.differences
    out.count(v)
    out.corrupt += check.corrupt_files(folder / "report", folder / "cache")


def _judge_baseline(out: Outcome, ref: Reference, folder: Path, after_rerun: bool) -> None:
    """The baseline is the old file or the new one, never a mix; after the rerun, the new one."""
    now = _normal((folder / "baseline.json").read_bytes())
    allowed = [ref.baseline_new] if after_rerun else [ref.baseline_new, _normal(ref.baseline_old)]
    if now not in allowed:
        out.corrupt.append(f"{folder / 'baseline.json'} ({'not the new baseline' if now else 'torn'})")


def _shared(out: Outcome, ref: Reference, folder: Path) -> Outcome:
    """Two runs at once on one cache folder that starts without verdicts: both must equal the reference."""
    cache = folder / "cache"
    shutil.copytree(ref.cold, cache)
    procs = [spawn(_argv(ref.slice, folder / f"run{i}", cache), folder / f"run{i}") for i in (1, 2)]
    for i, p in enumerate(procs, 1):
        wait(p)
        out.tracebacks += check.has_traceback(p.stderr())
        out.bad_errors += check.bad_error(p.status, p.stderr())
        v = check.compare(ref.doc, check.load(folder / f"run{i}" / "report" / "results.json"))
        out.count(v)
        out.identical = (out.identical or i == 1) and v.identical and p.status == ref.status
        out.corrupt += check.corrupt_files(folder / f"run{i}" / "report")
        out.seconds = max(out.seconds, p.seconds)
    out.corrupt += check.corrupt_files(cache)
    out.injected = out.completed = True
    out.status = out.rerun_status = procs[1].status
    return out
