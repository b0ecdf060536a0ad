"""The fuzz loop: plan a generation of draws, measure them, keep the ones that made a pass do something new.

Work goes in *generations* of :data:`GENERATION` draws. A generation is
planned from the state the previous ones left (a ``random.Random`` seeded
with the run's seed and the generation number), measured (in forked
children, ``-j`` at a time), and decided in planned order. So the sequence
of draws, and which of them are kept, depends on the seed alone: not on
``-j``, not on the machine's speed. A time budget only decides after how
many generations the run stops; ``max_draws`` stops after an exact number.

A draw is *kept* for a target when it reaches an arc of the target's own
source no earlier draw of this run reached, or brings a change atom the
target never showed (:mod:`harness.fuzz.measure`). Keeping is judged
against this run's draws, not against the baseline graphs: a branch the
built-in graphs reach but a random graph reaches too still gets its first
random graph checked (it may fail there on an int32 or a dynamic batch).
The baseline is what the closing table's "before" column measures.

Steering, beyond keeping: after the first :data:`FRESH_FIRST` draws, about
half of each generation are mutants of kept graphs (:mod:`harness.fuzz.draws`),
chosen with weight ``(1 + what it brought) / (1 + mutants made of it)``, the
"explore around inputs that reached new code" of AFL and HypoFuzz; the other
half stay fresh draws, so the run never narrows onto one family of graphs.
The first draws are all fresh, as HypoFuzz generates before it mutates: at
the start everything is new, so the first graphs are kept for having run
at all, and mutating them would spend draws around whatever came first.

Passes for quantized graphs get quantized draws: with quantization flows
(``flows``), fresh draws take turns (float, then each flow), a mutant goes
through its parent's flow, so what a quantized target keeps is mutated as a
quantized program too.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Callable, Optional

from harness.core.config import RunConfig
from harness.fuzz.draws import Draw, fresh, mutant, quantized
from harness.fuzz.measure import Observation, failed, observe
from harness.fuzz.targets import BranchCounter, Target
from harness.fuzz.workers import evaluate

__all__ = ["GENERATION", "MUTATE_SHARE", "FRESH_FIRST", "Kept", "DrawCounts", "Fuzzer"]

GENERATION = 4  # draws planned at once: fixed, so -j never changes which graphs are drawn
MUTATE_SHARE = 0.5  # share of a generation that mutates kept graphs, once there are some
FRESH_FIRST = 12  # draws before the first mutant


@dataclass
class Kept:
    """A draw kept, and why: per target the arcs it reached first and the change atoms it brought."""

    draw: Draw
    number: int  # its draw number in the run (1-based)
    reasons: dict  # target name -> {"arcs": n, "atoms": [...]} (or {"crashed": why})
    observation: Observation
    children: int = 0  # mutants made of it so far

    @property
    def name(self) -> str:
        return self.draw.name

    @property
    def weight(self) -> float:
        brought = sum(r.get("arcs", 0) + len(r.get("atoms", ())) for r in self.reasons.values())
        return (1.0 + brought) / (1.0 + self.children)


@dataclass
class DrawCounts:
    """What a fuzz session drew: generations, draws (of them mutants), and the draws not measured or that crashed."""

    generations: int = 0
    draws: int = 0
    mutants: int = 0
    duplicates: int = 0  # planned draws whose program an earlier draw already had: not measured
    not_lowered: int = 0
    crashed: int = 0


@dataclass
class Fuzzer:
    targets: list[Target]
    seed: int = 0
    config: RunConfig = field(default_factory=RunConfig)
    workers: int = 1
    isolate: bool = True
    mutate: bool = True
    limit: float = 900.0  # seconds one draw's measuring may take before its child is killed
    note: Callable[[str], None] = lambda message: None
    # quantization flows fresh draws go through in turn (harness.graphs.quantizers), after a float draw when a
    # target runs on float graphs: fresh draw i is float, or quantized by one flow, by i alone (same seed, same draws)
    flows: tuple[str, ...] = ()

    def __post_init__(self):
        names = [t.name for t in self.targets]
        self.arcs: dict[str, set] = {n: set() for n in names}  # what this run's draws reached
        self.atoms: dict[str, set] = {n: set() for n in names}
        self.base_arcs: dict[str, set] = {n: set() for n in names}  # what the baseline graphs reached
        self.base_atoms: dict[str, set] = {n: set() for n in names}
        self.kept: list[Kept] = []
        self.counts = DrawCounts()
        self._next_fresh = 0
        self._seen: set[str] = set()
        self._branches = BranchCounter()
        from harness.graphs.random.generate import random_probes

        # "" a float draw: its turn only when a target runs on float random graphs (else every draw is quantized)
        floats = any(t.applies(p) for t in self.targets for p in random_probes(quantized=False))
        self._turns = ([""] if floats or not self.flows else []) + list(self.flows)

    # ------------------------------------------------------------------ measuring
    def _measure(self, items: list, name_of: Callable, observe_one: Callable) -> list[Observation]:
        return evaluate(items, observe_one, lambda x, why: failed(name_of(x), why), self.workers, self.isolate,
                        self.limit)

    def measure_baseline(self, specs: list) -> list[Observation]:
        """Measure the baseline graphs (from the case cache): the "before" of every target."""
        from harness.graphs.cases import load_case

        def one(spec) -> Observation:
            return observe(spec.name, spec, self.targets, self.config, case=load_case(spec))

        observations = self._measure(list(specs), lambda s: s.name, one)
        for obs in observations:
            for name, arcs in obs.arcs.items():
                self.base_arcs[name] |= arcs
                self.base_atoms[name] |= obs.atoms[name]
            if not obs.ok:
                self.note(f"baseline graph {obs.name} not measured: {obs.error}")
        return observations

    def measure_draws(self, draws: list[Draw]) -> list[Observation]:
        from harness.graphs.random.generate import spec_of

        def one(d: Draw) -> Observation:
            return observe(d.name, spec_of(d.program), self.targets, self.config)

        return self._measure(draws, lambda d: d.name, one)

    # ------------------------------------------------------------------ one generation
    def step(self, room: Optional[int] = None) -> list[Kept]:
        """Plan, measure and decide one generation of at most ``room`` draws; the draws kept."""
        draws = self._plan(self.counts.generations, GENERATION if room is None else min(room, GENERATION))
        kept = []
        for d, obs in zip(draws, self.measure_draws(draws)):
            k = self._decide(d, obs)
            if k is not None:
                kept.append(k)
        self.counts.generations += 1
        return kept

    def _plan(self, generation: int, size: int) -> list[Draw]:
        rng = random.Random(f"passgate:fuzz:{self.seed}:{generation}")
        out: list[Draw] = []
        for _ in range(4 * size):  # duplicates and overruns are skipped, a bounded number of times
            if len(out) >= size:
                break
            mutating = self.mutate and self.counts.draws + len(out) >= FRESH_FIRST
            parents = [k for k in self.kept if k.draw.choices] if mutating else []
            if parents and rng.random() < MUTATE_SHARE:
                parent = rng.choices(parents, weights=[k.weight for k in parents])[0]
                d = mutant(parent.draw, parent.children)
                parent.children += 1
            else:
                d = self._fresh(self._next_fresh)
                self._next_fresh += 1
            if d is None:
                continue
            digest = hashlib.sha256(d.code.encode()).hexdigest()
            if digest in self._seen:
                self.counts.duplicates += 1
                continue
            self._seen.add(digest)
            out.append(d)
        return out

    def _fresh(self, index: int) -> Draw:
        """Fresh draw ``index``, through the flow whose turn it is."""
        d = fresh(self.seed, index)
        flow = self._turns[index % len(self._turns)]
        return quantized(d, flow) if flow else d

    def _decide(self, d: Draw, obs: Observation) -> Optional[Kept]:
        self.counts.draws += 1
        self.counts.mutants += bool(d.parent)
        if not obs.ok:
            if obs.error.startswith("does not lower"):
                self.counts.not_lowered += 1
                return None
            # the measuring child died: a pass crashed the process; its checks (isolated) say which
            self.counts.crashed += 1
            self.note(f"{d.name}: {obs.error}")
            reasons = {t.name: {"crashed": obs.error} for t in self.targets if t.applies(_spec_of(d))}
            return self._keep(d, reasons, obs)
        reasons = {}
        for t in self.targets:
            if t.name not in obs.arcs:
                continue
            new_arcs = obs.arcs[t.name] - self.arcs[t.name]
            new_atoms = obs.atoms[t.name] - self.atoms[t.name]
            self.arcs[t.name] |= obs.arcs[t.name]
            self.atoms[t.name] |= obs.atoms[t.name]
            if new_arcs or new_atoms:
                reasons[t.name] = {"arcs": len(new_arcs), "atoms": sorted(new_atoms)}
        return self._keep(d, reasons, obs) if reasons else None

    def _keep(self, d: Draw, reasons: dict, obs: Observation) -> Kept:
        k = Kept(d, self.counts.draws, reasons, obs)
        self.kept.append(k)
        return k

    # ------------------------------------------------------------------ reporting
    def coverage_rows(self) -> list[dict]:
        """Per target: branches of its files, taken by the baseline graphs (before) and with this run's draws
        (after: every arc a draw reached is in a kept graph), graphs kept for it."""
        rows = []
        for t in self.targets:
            before, total = self._branches.totals(t.files, self.base_arcs[t.name])
            after, _ = self._branches.totals(t.files, self.base_arcs[t.name] | self.arcs[t.name])
            rows.append({"name": t.name, "catalog": t.catalog, "files": list(t.files), "branches": total,
                         "before": before, "after": after,
                         "kept": sum(1 for k in self.kept if t.name in k.reasons)})
        return rows

    def progress(self) -> str:
        rows = self.coverage_rows()
        total = sum(r["branches"] for r in rows)
        before, after = sum(r["before"] for r in rows), sum(r["after"] for r in rows)
        c = self.counts
        return (f"{c.draws} draws ({c.mutants} mutants, {c.not_lowered} not lowered, {c.duplicates} duplicates"
                f"{f', {c.crashed} crashed' if c.crashed else ''}), {len(self.kept)} kept, branch coverage "
                f"{_percent(before, total)} -> {_percent(after, total)} ({after}/{total})")


def _spec_of(d: Draw):
    from harness.graphs.random.generate import spec_of

    return spec_of(d.program)


def _percent(part: int, total: int) -> str:
    return f"{100.0 * part / total:.1f}%" if total else "-"
