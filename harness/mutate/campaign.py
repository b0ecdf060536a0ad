"""A mutation campaign: what the suite's graphs would catch of a broken pass, counted.

For each sampled catalog entry, the unmutated pass first runs on every case
it applies to, under coverage.py restricted to the entry's own source files
(:class:`Reference`): per case, the lines it executed, the must-level
verdicts and a fingerprint of the program it returned. Then each sampled
mutant of those files (:mod:`harness.mutate.operators`) is put in place in
a child forked from this warm process (:mod:`harness.mutate.overlay`) and
the entry runs on the cases whose recorded lines reach the mutated line,
in turn, until one kills it:

- ``killed``: the gate fails with the unmutated run as its baseline (a new
  must-level violation, a known one worsened, or a case the unmutated pass
  changed left as handed, ``still_exercised``: :func:`harness.report.baseline.gate`);
- ``timed_out``: no case killed it but a pass call hit its deadline (the
  gate judges a timeout a ``runs`` failure, so it counts as killed);
- ``equivalent``: it changed no returned program on any case it reached
  (listed apart, out of the score: on these cases it cannot be told from
  the original);
- ``survived``: it changed a program and no check noticed;
- ``not_reached``: no case executes its line (a survivor no graph met);
- ``not_applied``: it could not be put in place (out of every count);
- ``unreachable``: no case reaches it and content declares the code no
  program runs, with the reason (the ``passgate.unreachable`` declarations
  the coverage report also leaves out, :class:`harness.run.reachable.Unreachable`:
  dead code, or a branch behind a line that raises on every real program):
  out of the score, listed apart.

Score = (killed + timed_out) / (all - equivalent - not_applied - unreachable), the
standard definition with undetectable mutants left out, and it comes with
its sample: the mutants and entries drawn, the seed, the cases.

Each outcome also says what the *generated* cases alone (the corpus's drawn,
distilled and context graphs, not the hand-written ones) made of the mutant
(:attr:`Outcome.alone`): they are judged first, so the same campaign gives
the generator's own score at no extra cost. A hand-written graph per
survivor teaches the suite that mutant; the generator's figure says whether
it would find the next one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable

from harness.core.config import RunConfig
from harness.core.results import Level, Status, ir_checks_at
from harness.mutate.operators import Mutant
from harness.mutate.overlay import NotApplied, apply
from harness.mutate.sampling import catalog_of, probe_line

__all__ = ["OUTCOMES", "LEFT_OUT", "DETECTED", "INERT", "Settings", "CaseRun", "Reference", "Outcome", "reference",
           "judge", "merged", "score", "group_scores", "failed_outcome"]

OUTCOMES = ("killed", "timed_out", "survived", "equivalent", "not_reached", "not_applied", "unreachable")
LEFT_OUT = ("equivalent", "not_applied", "unreachable")  # out of the score's denominator
DETECTED = ("killed", "timed_out")
MUST = ir_checks_at(Level.MUST)
INERT = "inert: the mutated pass left every reached program as it was handed"
"""A survivor's note when the mutant stopped the pass doing anything. Since the gate judges ``still_exercised``
(a case the unmutated pass changed, left as handed) such a mutant is killed where the unmutated pass changed a
reached case; the note remains for reports judged before, and for survivors on cases the reference left alone."""


@dataclass(frozen=True)
class Settings:
    """What a campaign samples and how it judges (every field is in the report, so a figure names its sample)."""

    sample: int = 600
    """Mutants drawn in all (fewer when the entries have fewer)."""
    entries: int = 48
    """Catalog entries drawn, round-robin over catalogs so each is represented."""
    seed: int = 0
    """Seed of both draws: the same seed gives the same entries and mutants."""
    operators: tuple[str, ...] = ()
    """Mutation operators used (empty: all of :data:`harness.mutate.operators.OPERATORS`)."""
    timeout: float = 10.0
    """Floor of the seconds one pass call may take; each entry gets max(this, 5 x its slowest reference call)."""


@dataclass
class CaseRun:
    """The unmutated entry on one case."""

    graph: str
    lines: dict  # file -> frozenset of executed lines
    results: list  # must-level CheckResults
    signature: str  # exact fingerprint of the returned program ("raised: ..." when none)
    seconds: float = 0.0


@dataclass
class Reference:
    """The unmutated entry on all its cases, and the timeout its mutants get."""

    entry: str
    runs: list = field(default_factory=list)  # CaseRun, in case order
    timeout: float = 10.0
    error: str = ""

    def reaching(self, mutant: Mutant) -> list:
        line = probe_line(mutant.file, mutant.line)
        return [r for r in self.runs if line in r.lines.get(mutant.file, ())]


@dataclass
class Outcome:
    """What became of one mutant."""

    mutant: Mutant
    entry: str
    catalog: str
    status: str
    cases: list = field(default_factory=list)  # graphs that reach its line
    killed_by: dict = field(default_factory=dict)  # graph, check, kind (new | worsened), message
    seconds: float = 0.0
    note: str = ""
    alone: str = ""
    """The status the generated cases alone give it (same vocabulary; "" in a report from before the split)."""
    alone_by: str = ""
    """The generated graph that detected it, when one did (``killed_by`` names the suite's first detector)."""

    def to_json(self) -> dict:
        return {**self.mutant.to_json(), "entry": self.entry, "catalog": self.catalog, "status": self.status,
                "cases": self.cases, "killed_by": self.killed_by, "seconds": round(self.seconds, 3),
                "note": self.note, "alone": self.alone, "alone_by": self.alone_by}


def _narrowed(target, config: RunConfig, timeout: float) -> RunConfig:
    """Must-level checks only (the gate's, non-strict), the entry's own skips, no isolation: the child is it."""
    skips = tuple(target.entry.skipped_checks.items()) if target.entry is not None else ()
    return replace(config, checks=MUST, isolate=False, skip_checks=skips, timeout=timeout, record_deps=False)


def _signature_of(results: list, holder: list) -> str:
    """The returned program's exact fingerprint, or how the pass failed to return one."""
    if holder:
        return holder[0]
    runs = next((r for r in results if r.check == "runs"), None)
    return f"{runs.status.value}: {runs.message.splitlines()[0][:200] if runs and runs.message else ''}"


def _run_once(target, case, config: RunConfig) -> tuple[list, str]:
    from harness.check import fingerprint
    from harness.check.runner import check_pass_on_case

    holder: list = []
    results = check_pass_on_case(target.loaded, case, config,
                                 on_result=lambda ep: holder.append(fingerprint.exact(ep.graph_module, ep)))
    return results, _signature_of(results, holder)


def reference(target, cases: list, config: RunConfig, settings: Settings) -> Reference:
    """The unmutated entry on each case, under coverage.py restricted to its files (run in a forked child)."""
    import warnings

    import coverage

    ref = Reference(target.name)
    slowest = 0.0
    for case in cases:
        cov = coverage.Coverage(data_file=None, include=list(target.files), config_file=False)
        cov.set_option("run:disable_warnings", ["no-data-collected", "module-not-measured", "already-imported"])
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cov.start()
            try:
                results, signature = _run_once(target, case, _narrowed(target, config, 600.0))
            finally:
                cov.stop()
        data = cov.get_data()
        lines = {f: frozenset(data.lines(f) or ()) for f in data.measured_files()}
        seconds = time.perf_counter() - started
        runs = next((r for r in results if r.check == "runs"), None)
        slowest = max(slowest, runs.duration_s if runs else seconds)
        ref.runs.append(CaseRun(case.name, lines, [r for r in results if r.check in MUST], signature, seconds))
    ref.timeout = max(settings.timeout, 5 * slowest)
    return ref


def _known(results: list):
    """The unmutated run on one case as a baseline: its violations, each with its fingerprint (a mutant that fails
    the same check with more or other offending nodes, another exception or a larger error is ``worsened``), and
    whether it changed the program (a mutant that leaves it as handed fails ``still_exercised``)."""
    from harness.report.baseline import Baseline, BaselineEntry, exercised_pairs, fingerprint_of

    return Baseline([BaselineEntry(r.pass_name, r.graph, r.check, "the unmutated pass", message=r.message,
                                   fingerprint=fingerprint_of(r))
                     for r in results if r.is_violation()], exercised=exercised_pairs(results))


def judge(mutant: Mutant, target, ref: Reference, cases: dict, config: RunConfig,
          generated: frozenset = frozenset()) -> Outcome:
    """Put ``mutant`` in place (in this process: call it in a forked child) and run the entry where it is reached,
    the ``generated`` cases first."""
    started = time.perf_counter()
    out = Outcome(mutant, target.name, catalog_of(target), "not_reached", alone="not_reached")
    reached = sorted(ref.reaching(mutant), key=lambda r: r.graph not in generated)  # stable: case order kept
    out.cases = [r.graph for r in reached]
    if not reached:
        return out
    try:
        undo = apply(mutant)
    except NotApplied as exc:
        out.status, out.note = "not_applied", str(exc)
        return out
    try:
        _judge_reached(out, target, reached, cases, _narrowed(target, config, ref.timeout),
                       sum(r.graph in generated for r in reached))
    finally:
        undo()  # a forked child dies with its mutant anyway; in-process (--no-isolation) the next one starts clean
    out.seconds = time.perf_counter() - started
    return out


@dataclass
class _Tally:
    """What the cases judged so far, none of which killed the mutant, say of it."""

    same: bool = True
    timed_out: bool = False
    inert: bool = True
    judged: int = 0

    def add(self, results: list, signature: str, reference: str) -> None:
        runs = next((r for r in results if r.check == "runs"), None)
        self.timed_out |= bool(runs and runs.status is Status.FAIL and "timed out" in runs.message)
        self.same &= signature == reference
        self.inert &= not any((runs.details.get("changed") or {}).values()) if runs else True
        self.judged += 1

    def status(self) -> str:
        if not self.judged:
            return "not_reached"
        return "timed_out" if self.timed_out else ("equivalent" if self.same else "survived")


def _judge_reached(out: Outcome, target, reached: list, cases: dict, config: RunConfig, generated: int = 0) -> None:
    """The entry on each reaching case in turn, each gated against the unmutated run's verdicts there; the first
    ``generated`` cases are the generated ones, whose verdict alone is :attr:`Outcome.alone`."""
    from harness.report.baseline import gate

    tally = _Tally()
    for i, run in enumerate(reached):
        if i == generated:
            out.alone = tally.status()
        results, signature = _run_once(target, cases[run.graph], config)
        verdict = gate([r for r in results if r.check in MUST], _known(run.results))
        failing = verdict.regressions + verdict.worsened
        if failing:
            first = failing[0]
            hung = first["check"] == "runs" and "timed out" in (first.get("message") or "")
            out.status = "timed_out" if hung else "killed"
            out.killed_by = {"graph": run.graph, "check": first["check"],
                             "kind": "worsened" if first in verdict.worsened else "new",
                             "message": (first.get("now") or first.get("message") or "")[:300]}
            if i < generated:
                out.alone, out.alone_by = out.status, run.graph
            return
        tally.add(results, signature, run.signature)
    out.status = tally.status()
    if generated >= len(reached):
        out.alone = out.status
    if out.status == "survived" and tally.inert:
        out.note = INERT


def merged(was: str, now: str) -> str:
    """One mutant's status over two sets of cases, from its status on each: detected on either is detected, a
    changed program on either is a survivor, unchanged on every case that reached it is equivalent."""
    for status in ("killed", "timed_out", "survived", "equivalent"):
        if status in (was, now):
            return status
    return was or now


def score(outcomes: list[Outcome], alone: bool = False) -> dict:
    """Counts per outcome and the score over the mutants it can judge: not equivalent, applied and not declared
    unreachable (``alone``: the generated cases')."""
    counts = {k: 0 for k in OUTCOMES}
    for o in outcomes:
        status = (o.alone or "not_reached") if alone else o.status
        counts[o.status if o.status in ("not_applied", "unreachable") else status] += 1
    judged = len(outcomes) - sum(counts[k] for k in LEFT_OUT)
    detected = counts["killed"] + counts["timed_out"]
    return {"mutants": len(outcomes), **counts, "score": round(100.0 * detected / judged, 1) if judged else None}


def group_scores(outcomes: list[Outcome], key: Callable[[Outcome], str], alone: bool = False) -> dict:
    groups: dict[str, list] = {}
    for o in outcomes:
        groups.setdefault(key(o), []).append(o)
    return {k: score(v, alone) for k, v in sorted(groups.items())}


def failed_outcome(pair: tuple, why: str) -> Outcome:
    """A mutant whose child did not come back: died (the gate calls a dead worker's pair an error: killed),
    outlived its limit (a hang: timed out), or passgate itself raised (not applied, the reason kept)."""
    target, mutant = pair
    status = "timed_out" if "within" in why else ("not_applied" if "raised" in why else "killed")
    killed_by = {"check": "runs", "kind": "new", "message": why[:300]} if status == "killed" else {}
    return Outcome(mutant, target.name, catalog_of(target), status, killed_by=killed_by, note=why[:300])
