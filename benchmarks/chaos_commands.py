"""Faults in the two other commands a CI fleet runs under the campaign: ``passgate certify`` and ``passgate vulkan``.

The run slices of :mod:`benchmarks.chaos_trials` cover ``passgate run`` and
``baseline update``. Here the same blows (SIGKILL / SIGTERM of the command or
of one of its workers at a seeded moment; a kill, ENOSPC or EIO in the middle
of writing one of its files, through the fault layer of
:mod:`harness.core.io`) strike

- ``certify --profile quick``: the bundle a struck run leaves is either one
  ``passgate verify`` rejects, or one it accepts whose certificate tells the
  truth (the uninterrupted run's verdicts, or the verdict ``INCOMPLETE``):
  never a bundle verify accepts over a mix. A rerun into the same folder is
  refused in one line with exit 2 when the struck run left anything there; a
  rerun into a new folder gives the reference verdicts in a bundle verify
  accepts.
- a small ``vulkan`` recipe run (one op, ``--count 1``, two workers): its
  rerun, from the fused-program cache the struck run left, must give the
  reference verdicts and exit status, and every cache entry reads back whole.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass
from pathlib import Path

from benchmarks import chaos_check as check
from benchmarks.chaos_proc import spawn, wait
from benchmarks.chaos_trials import Outcome, fault_env, strike

__all__ = ["Command", "CommandReference", "COMMANDS", "COMMAND_FAULTS", "command_of", "command_reference",
           "run_command_trial"]


@dataclass(frozen=True)
class Command:
    """A command struck by the campaign: ``argv`` without its output folder and cache."""

    name: str
    argv: tuple
    out_flag: str  # where the command writes: certify's bundle folder, vulkan's report folder
    graphs: tuple = ()  # lowered cases to seed its cache with (certify); vulkan quantizes and fuses its own
    targets: tuple = ()  # (where, glob under the trial folder) of the files an I/O fault strikes


COMMANDS = (
    Command("certify", ("certify", "--profile", "quick"), "--out",
            graphs=("builtin",),
            targets=(("certify certificate", "out/certificate.json"), ("certify manifest", "out/MANIFEST.json"),
                     ("certify results", "out/results.json"))),
    Command("vulkan", ("vulkan", "--ops", "q8ta_add", "--count", "1", "--seed", "0", "-j", "2"), "--report",
            targets=(("vulkan results", "out/results.json"), ("vulkan cache", "cache/vulkan_*"))),
)
_WEIGHT = 0.25  # a certify or vulkan trial costs about three run-slice trials: fewer of them fill the budget
COMMAND_FAULTS = [((sig, f"{c.name} {who}"), _WEIGHT) for c in COMMANDS for sig in ("sigkill", "sigterm")
                  for who in ("run", "worker")]
COMMAND_FAULTS += [((kind, where), _WEIGHT) for c in COMMANDS for kind in ("kill", "enospc", "eio")
                   for where, _glob in c.targets]


def command_of(where: str):
    """The command a ``where`` of :data:`COMMAND_FAULTS` strikes, or None (a run slice's)."""
    for c in COMMANDS:
        if where.startswith(c.name + " "):
            return c
    return None


@dataclass
class CommandReference:
    """A command's uninterrupted run: its results, exit status and duration, and the cache trials start from."""

    command: Command
    doc: dict
    status: int
    seconds: float
    cases: Path  # the lowered cases it needs and nothing it writes itself
    warm: Path  # what its reference run left in the cache

    @property
    def name(self) -> str:
        return self.command.name


def _argv(c: Command, out: Path, cache: Path) -> list:
    return [*c.argv, c.out_flag, str(out), "--cache-dir", str(cache), "-q"]


def command_reference(c: Command, shared_cache: Path, scratch: Path) -> CommandReference:
    """Run ``c`` once from its cases alone, then again from what that left: both must give the same verdicts."""
    from harness.graphs import sources

    root = scratch / f"ref-{c.name}"
    cases = root / "cases"
    cases.mkdir(parents=True, exist_ok=True)
    for spec in sources.select(list(c.graphs), None, 0) if c.graphs else ():
        for entry in shared_cache.glob(f"{spec.name}-*.case"):
            shutil.copy2(entry, cases / entry.name)
    warm = root / "warm"
    shutil.copytree(cases, warm)
    first = wait(spawn(_argv(c, root / "first" / "out", warm), root / "first"))
    doc = check.load(root / "first" / "out" / "results.json")
    if doc is None or check.has_traceback(first.stderr()):
        raise RuntimeError(f"the reference run of {c.name} failed: {first.stderr()[-2000:]}")
    again = wait(spawn(_argv(c, root / "again" / "out", warm), root / "again"))
    same = check.compare(doc, check.load(root / "again" / "out" / "results.json"))
    if not same.identical or again.status != first.status:
        raise RuntimeError(f"{c.name}: a rerun from its own cache does not repeat the reference run ({same})")
    return CommandReference(c, doc, first.status, first.seconds, cases, warm)


def run_command_trial(index: int, seed: int, ref: CommandReference, kind: str, where: str,
                      scratch: Path) -> Outcome:
    """Set up, strike, judge, rerun, judge (see the module docstring)."""
    rng = random.Random(f"{seed}:{index}")
    c = ref.command
    folder = scratch / f"t{index:04d}-{kind}-{where.replace(' ', '_')}"
    out = Outcome(kind, where, c.name)
    cache = folder / "cache"
    cold = where == "vulkan cache" or rng.random() < 0.6  # a blow among fresh work, or among reused entries
    shutil.copytree(ref.cases if cold else ref.warm, cache)
    env: dict = {}
    if kind in ("kill", "enospc", "eio"):
        nth = rng.randint(1, 3) if where == "vulkan cache" else 1  # several entries per run
        env = fault_env(rng, kind, str(folder / dict(c.targets)[where]), nth, folder)
    proc = spawn(_argv(c, folder / "out", cache), folder / "faulted", env)
    if kind in ("sigkill", "sigterm"):
        out.struck = strike(proc, rng, kind, ref.seconds, where.endswith("worker"))
    wait(proc)
    out.status, out.seconds = proc.status, proc.seconds
    out.injected = bool(out.struck) or (folder / "struck.log").exists()
    out.tracebacks += check.has_traceback(proc.stderr())
    out.bad_errors += check.bad_error(proc.status, proc.stderr())
    out.corrupt += check.corrupt_files(folder / "out", cache)
    out.debris = len(check.debris(folder / "out", cache))
    if c.name == "certify":
        _judge_bundle(out, ref, folder / "out")
        rerun_out = _refused_in_place(out, c, folder, cache)
    else:
        rerun_out = folder / "out"  # vulkan writes its report folder afresh
    again = wait(spawn(_argv(c, rerun_out, cache), folder / "rerun"))
    out.rerun_status, out.seconds = again.status, out.seconds + again.seconds
    out.tracebacks += check.has_traceback(again.stderr())
    out.bad_errors += check.bad_error(again.status, again.stderr())
    v = check.compare(ref.doc, check.load(rerun_out / "results.json"))
    out.completed = v.identical
    out.identical = v.identical and again.status == ref.status
    out.count(v)
    out.corrupt += check.corrupt_files(rerun_out, cache)
    if c.name == "certify" and not _verified(rerun_out).ok:
        out.corrupt.append(f"{rerun_out} (the rerun's bundle fails passgate verify)")
    return out


def _verified(bundle: Path):
    from harness.report import certify

    return certify.verify(bundle, None)


def _judge_bundle(out: Outcome, ref: CommandReference, bundle: Path) -> None:
    """A bundle verify accepts must tell the truth: the reference verdicts, or INCOMPLETE, or (a worker struck)
    a FAIL that names the pair whose worker died: passgate cannot tell a signal from a backend that crashed
    the interpreter, and certifies neither."""
    if not bundle.is_dir():
        return
    v = _verified(bundle)
    if not v.ok or v.certificate.get("verdict") == "INCOMPLETE":
        return
    doc = check.load(bundle / "results.json")
    same = check.compare(ref.doc, doc)
    if same.identical and v.certificate.get("exit_status") == ref.status:
        return
    crashed = any((r.get("details") or {}).get("outcome") in ("crashed", "harness_error")  # while preparing
                  for r in (doc or {}).get("results", ()))
    if out.struck == "worker" and crashed and v.certificate.get("verdict") == "FAIL":
        out.note = "the struck worker's pair is certified as crashed or lost (verdict FAIL)"
        return
    out.corrupt.append(f"{bundle} (passgate verify accepts it, but its verdicts are not the run's: "
                       f"{same.to_json()})")


def _refused_in_place(out: Outcome, c: Command, folder: Path, cache: Path) -> Path:
    """Certify again into the struck run's folder: refused in one line (exit 2) unless it was left empty.
    Returns the new folder the real rerun writes into."""
    left = folder / "out"
    nonempty = left.exists() and any(left.iterdir())
    if nonempty:
        same = wait(spawn(_argv(c, left, cache), folder / "rerun-in-place"))
        out.tracebacks += check.has_traceback(same.stderr())
        out.bad_errors += check.bad_error(same.status, same.stderr())
        if same.status != 2:
            out.note = f"certify into the struck run's non-empty folder exited {same.status}, not 2"
            out.bad_errors += 1
    return folder / "out2"
