"""Judging a plan's units incrementally: reuse what is recorded and unchanged, run the rest, record it.

One place for what ``passgate run --incremental`` and the conformance suite
do around :meth:`harness.run.plan.RunPlan.run`:

1. the static key of every unit (:func:`harness.run.verdicts.static_key`);
2. with ``changed`` files (``--changed-since`` / ``--affected-by``), the units
   no changed file can reach are left out (:mod:`harness.run.affected`);
3. a unit whose record still hashes the same is *reused*: its recorded
   results are handed on, marked ``details.reused`` with the run they came
   from; no case is loaded for it;
4. the rest run with dependency recording on (:mod:`harness.run.deps`), and
   each unit is recorded as soon as it finishes, so an interrupted run keeps
   what it finished.

``passgate certify`` never comes here: a certification judges everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable, Optional

from harness.check.loading import source_file
from harness.core.errors import ChildFailed
from harness.core.memory import collection_resumed
from harness.core.results import CheckResult, Status
from harness.run import affected, deps, parallel, verdicts

__all__ = ["RAN", "REUSED", "NOT_AFFECTED", "UNRECORDED_SECONDS", "ReuseCounts", "Incremental", "case_key", "unit_record_key",
           "own_files", "lost"]

RAN, REUSED, NOT_AFFECTED = "ran", "reused", "not_affected"
UNRECORDED_SECONDS = 2.0  # a unit never judged under its key: a catalog entry on a corpus graph takes ~0.1-3 s


def case_key(plan, unit) -> str:
    """The fingerprint of the case ``unit`` runs on ("" for units that build their own: their definition holds it)."""
    if not unit.needs_case:
        return ""
    from harness.graphs.cache import FORMAT_VERSION

    spec = plan.specs_by_name.get(unit.graph)
    return f"{spec.key}/{FORMAT_VERSION}" if spec is not None else f"?{unit.graph}"


@dataclass
class ReuseCounts:
    """What an incremental judging did, unit by unit (what the summary and results.json say)."""

    units: int = 0
    ran: int = 0
    reused: int = 0
    not_affected: int = 0
    uncacheable: int = 0
    recorded: int = 0
    corrupt: int = 0

    def to_json(self) -> dict:
        return dict(self.__dict__)

    def text(self) -> str:
        return (f"incremental: {self.ran} units ran, {self.reused} reused, {self.not_affected} not affected"
                + (f", {self.uncacheable} uncacheable" if self.uncacheable else "")
                + (f", {self.corrupt} unreadable cache files ignored" if self.corrupt else ""))


@dataclass
class Incremental:
    """Reuse (``reuse``), record (``cache`` set) and select (``changed`` set) around one plan's units."""

    cache: Optional[verdicts.VerdictCache]
    reuse: bool = True
    changed: Optional[set] = None
    run: dict = field(default_factory=verdicts.new_run)
    counts: ReuseCounts = field(default_factory=ReuseCounts)
    keys: dict = field(default_factory=dict)  # unit key -> static key (None: uncacheable)
    states: dict = field(default_factory=dict)  # unit key -> RAN, REUSED or NOT_AFFECTED
    _hashed: bool = False
    _recorded: dict = field(default_factory=dict)  # id(result) -> (result, its details, its record as recorded)
    _own: dict = field(default_factory=dict)  # (kind, name) -> own_files: the same for all its graphs

    def to_json(self) -> dict:
        """results.json's ``incremental`` section."""
        return {"run": self.run, "reuse": self.reuse, **self.counts.to_json(),
                "changed_files": sorted(self.changed) if self.changed is not None else None,
                "cache": str(self.cache.root) if self.cache is not None else None}

    def selection(self, plan, units: list, config) -> affected.Selection:
        """The static key of every unit of ``units`` (into ``keys``), and which of them a change reaches."""
        memo: dict = {}
        config_text = verdicts.config_key(config)
        roots = self.cache.roots if self.cache is not None else None
        defined: dict = {}  # (kind, name) -> where its pass is defined, as the key names it
        for u in units:
            if (u.kind, u.name) not in defined:
                defined[(u.kind, u.name)] = [verdicts.portable(f, roots) for f in self.own_files(u)]
            where = defined[(u.kind, u.name)]
            self.keys[u.key] = verdicts.static_key(u, case_key(plan, u), config, memo, config_text, where)
        return affected.select(units, self.keys, self.cache, self.changed)

    def _partition(self, plan, units: list, config) -> tuple:
        """(affected.Selection of ``units``, the reusable records of the selected ones by unit key)."""
        sel = self.selection(plan, units, config)
        hits: dict = {}
        if self.reuse and self.cache is not None:
            for u in sel.units:
                rec = self.cache.hit(self.keys[u.key])
                if rec is not None:
                    hits[u.key] = rec
        return sel, hits

    def pending(self, plan, units: list, config) -> list:
        """The units of ``units`` a judging would run now (affected, no record that still holds); counts nothing."""
        sel, hits = self._partition(plan, units, config)
        return [u for u in sel.units if u.key not in hits]

    def estimated_seconds(self, units: list, unknown: float = UNRECORDED_SECONDS) -> float:
        """What judging ``units`` will take, by their last record (stale or not) under the same static key, and
        ``unknown`` seconds for a unit never recorded: what a caller weighs (one process, or several?)."""
        total = 0.0
        for u in units:
            rec = self.cache.read(self.keys.get(u.key)) if (self.cache is not None and self.keys.get(u.key)) else None
            total += sum(float(r.get("duration_s") or 0.0) for r in rec.results) if rec is not None else unknown
        return total

    def select(self, plan, units: list, config) -> tuple[list, dict]:
        """The units to judge (affected ones) and, of those, the reusable records by unit key."""
        sel, hits = self._partition(plan, units, config)
        self.counts.units += len(units)
        self.counts.not_affected += len(sel.not_affected)
        self.counts.uncacheable += sum(1 for u in sel.units if self.keys[u.key] is None)
        for u in sel.not_affected:
            self.states[u.key] = NOT_AFFECTED
        return sel.units, hits

    def reused(self, rec) -> list[CheckResult]:
        checked = rec.checked if rec.checked is not None else [CheckResult.from_json(r) for r in rec.results]
        rec.checked = None  # handed on once: a second reuse of the same record must not share its objects
        out = verdicts.mark_reused(checked, rec.run)
        for r, raw in zip(out, rec.results):
            self._recorded[id(r)] = (r, r.details, raw)
        return out

    def recorded_json(self, result: CheckResult) -> Optional[dict]:
        """The results.json record of a reused ``result``: the recorded one with its ``reused`` mark, or None.

        Why: a warm gate reuses ~230,000 verdicts, and serializing each again (``to_json``) gives back the
        record it was read from, at two seconds a run. None when the result was not reused here, or its
        details were replaced since (a known violation annotated), or the record predates ``level``: then
        the caller serializes it."""
        hit = self._recorded.get(id(result))
        if hit is None or hit[0] is not result or hit[1] is not result.details or "level" not in hit[2]:
            return None
        return {**hit[2], "details": result.details}

    def execute(self, plan, units: list, config, tally=None,
                load_cases: Optional[Callable[[list], list]] = None) -> list[CheckResult]:
        """Judge ``units`` of ``plan``: reuse, run, record. ``load_cases(specs)`` loads the cases misses need."""
        if not self._hashed:  # files may have changed since this process last hashed them (tests, the server)
            deps.forget_hashes()
            deps.clear()
            self._hashed = True
        units, hits = self.select(plan, units, config)
        misses = [u for u in units if u.key not in hits]
        if tally is not None:
            tally.total = sum(u.pairs for u in units)
        graphs = {u.graph for u in misses if u.needs_case}
        specs = [s for s in plan.specs if s.name in graphs]
        with collection_resumed():  # graphs are made from here on (harness/core/memory.py)
            loaded = (load_cases or _load)(specs) if specs else []
        cases = {c.name: c for c in loaded}
        rconfig = replace(config, record_deps=self.cache is not None)
        steps: list = []  # in order: units judged together, or a call handing on reused verdicts
        for group in _groups(units):
            reused = [u for u in group if u.key in hits]
            if reused:
                steps.append(partial(self._hand_on_reused, reused, hits, config, tally))
            todo = [u for u in group if u.key not in hits]
            if todo:
                steps.append(todo)
        if config.workers > 1 and config.isolate:  # -j N: one pool over every step, handed on in this order
            with collection_resumed():
                out = parallel.judge(steps, cases, rconfig, tally, done=self._done, step_done=self._ran,
                                     on_lost=lambda u, cause: self._deliver(lost([u], ChildFailed(cause)), config,
                                                                            tally))
        else:
            out = self._in_turn(plan, steps, cases, rconfig, config, tally)
        if self.cache is not None:
            self.counts.corrupt = self.cache.corrupt
        return out

    def _in_turn(self, plan, steps: list, cases: dict, rconfig, config, tally) -> list[CheckResult]:
        """``-j 1``: each step in turn (a batched pass's graphs in one worker, another unit in a child of its own)."""
        out: list[CheckResult] = []
        for step in steps:
            if callable(step):
                out += step()
                continue
            with collection_resumed():
                try:
                    out += plan.run(step, cases, rconfig, tally, done=self._done)
                except ChildFailed as exc:  # a unit's forked child died (a native abort): the run goes on
                    out += self._deliver(lost(step, exc), config, tally)
            self._ran(step)
        return out

    def _hand_on_reused(self, units: list, hits: dict, config, tally) -> list[CheckResult]:
        out: list[CheckResult] = []
        for u in units:
            out += self._deliver(self.reused(hits[u.key]), config, tally)
            self.counts.reused += 1
            self.states[u.key] = REUSED
        return out

    def _ran(self, units: list) -> None:
        self.counts.ran += len(units)
        self.states.update((u.key, RAN) for u in units)

    def case_notes(self, plan, session) -> None:
        """Keep the report complete without loading cases only reused units ran on.

        Each case this run loaded is noted in the cache (its record and ops);
        each case of a reused unit that was not loaded is reported from its
        note (marked ``reused``), or loaded when there is none.
        """
        if self.cache is None:
            return
        loaded = {c["name"] for c in session.cases}
        for rec in session.cases:
            spec = plan.specs_by_name.get(rec["name"])
            if spec is not None and rec["name"] in session.op_sets:
                ops = session.op_sets[rec["name"]]  # op names and, as op_coverage counts them, op@dtype keys
                self.cache.write_case(spec.key, rec, set(ops) | set(getattr(ops, "dtype_keys", ())))
        wanted = {k.rsplit("@", 1)[1] for k, state in self.states.items() if state == REUSED}
        missing = []
        for spec in plan.specs:
            if spec.name not in wanted or spec.name in loaded:
                continue
            note = self.cache.read_case(spec.key)
            if note is None:
                missing.append(spec)
                continue
            session.cases.append({**note["record"], "reused": True})
            session.op_sets[spec.name] = set(note["ops"])
        if missing:
            session.load_cases(missing)

    def _deliver(self, rs: list, config, tally) -> list:
        """Hand reused results on pair by pair, as a run would (pairs a resumed report holds: counted only)."""
        pairs: dict = {}
        for r in rs:
            pairs.setdefault((r.pass_name, r.graph), []).append(r)
        out = []
        for (p, g), prs in pairs.items():
            if (p, g) in config.skip:
                if tally is not None:
                    tally.skipped(1)
                continue
            out += prs
            if tally is not None:
                tally.add(p, g, prs)
        return out

    def _done(self, unit, results: list) -> None:
        """A unit finished: record its results under its key with what it executed."""
        files = deps.take(unit_record_key(unit))
        key = self.keys.get(unit.key)
        if self.cache is None or key is None or files is None or not verdicts.cacheable(results):
            return
        files = set(files) | self.own_files(unit)
        if self.cache.write(key, unit.key, files, results, self.run):
            self.counts.recorded += 1

    def own_files(self, unit) -> set:
        """:func:`own_files` of ``unit``, computed once per pass of this run (the same for all its graphs)."""
        mine = (unit.kind, unit.name)
        if mine not in self._own:
            self._own[mine] = own_files(unit)
        return self._own[mine]


def unit_record_key(unit) -> tuple:
    """Where :mod:`harness.run.deps` keeps a unit's recording: by pair for batched units, else by unit."""
    return (unit.name, unit.graph) if unit.batched else ("unit", unit.key)


def own_files(unit) -> set:
    """Files a unit depends on whatever it executed: its pass's defining module (module-level code)."""
    out: set = set()
    entry = getattr(unit, "entry", None)
    if entry is not None:
        f = source_file(entry.spec)
        if f:
            out.add(f)
    loaded = getattr(unit, "loaded", None)
    if loaded is not None:
        out |= deps.explicit_files(loaded.obj)
    return out


def lost(units: list, exc: Exception) -> list[CheckResult]:
    """Errors for every item of ``units``, whose judging process died before it said anything.

    An error, not a verdict on the pass: which step of a pipeline (or which part of lowering) died is not known.
    Errors are never recorded in the verdict cache, so the next run judges these units again."""
    message = f"passgate lost this unit: {exc}; which step died is not known (run it alone to see)"
    return [CheckResult(pass_name, u.graph, check, Status.ERROR, message, {"outcome": "crashed", "unit": u.key})
            for u in units for pass_name, check in u.items()]


def _groups(units: list) -> list:
    """Consecutive units judged together (one batched pass's graphs), or one unit each."""
    out: list = []
    for u in units:
        if out and u.batched and out[-1][0].batched and (out[-1][0].kind, out[-1][0].name) == (u.kind, u.name):
            out[-1].append(u)
        else:
            out.append([u])
    return out


def _load(specs: list) -> list:
    from harness.graphs.cases import load_cases

    return load_cases(specs)
