"""A workload as a list of units: what ``passgate run`` and the conformance suite both execute.

A *unit* is one thing judged on one graph: a catalog entry (or a pass given
by SPEC), a backend pipeline verified after every step, a backend
partitioner, a case's program through the ExecuTorch runtime, or a unit content plugs in through the ``passgate.units`` entry
point group (the Vulkan Q/DQ fusion cases of ``vulkan/entry/unit.py``). Each kind
of unit knows the ``(pass name, check)`` items it is judged on and how to
judge itself, so the plan has no per-kind branches and the engine imports no
content. ``passgate run`` walks the units of a :class:`RunPlan` in one process;
the conformance suite (``conformance/``) turns each unit's items into pytest
items and lets pytest-xdist spread the units over workers. Both build the
plan here, so "the standard profile" is the same work whichever way it is
run, and the order of units and items is part of the contract: every xdist
worker must collect the same items, and ``passgate run --shard`` cuts the
same list.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable, ClassVar, Optional

from harness.catalog import resolve_catalogs, select_entries
from harness.check.loading import load_pass
from harness.check.runtime import RUNTIME_CHECK_IDS, judge_case, judge_result, runtime_skipped
from harness.core import plugins
from harness.core.config import RunConfig
from harness.core.results import IR_CHECK_IDS
from harness.core.stability import stable
from harness.graphs import sources
from harness.pipelines.partitioners import PARTITIONERS, check_backend_partitioner
from harness.pipelines.pipeline import PIPELINE_CHECKS, resolve_pipeline, verify_each
from harness.run import deps, forking
from harness.run.profiles import RUNTIME_LEGS, available_graphs, profile
from harness.run.scheduler import check_all

__all__ = ["ENTRY", "PASS", "PIPELINE", "PARTITIONER", "RUNTIME", "Unit", "EntryUnit", "PassUnit",
           "PipelineUnit", "PartitionerUnit", "RuntimeUnit", "RunPlan", "step_name", "entry_config", "run_entry",
           "plugged_units", "build"]

ENTRY, PASS, PIPELINE, PARTITIONER, RUNTIME = "entry", "pass", "pipeline", "partitioner", "runtime"


@stable
@dataclass(frozen=True)
class Unit:
    """One thing judged on one graph. Subclasses say what it is judged on (:meth:`items`) and how (:meth:`judge`).

    Two units are equal when their kind, name and graph are: what a unit
    carries to judge itself (an entry, a pipeline, a fusion) is not part of
    its identity, so units of two ``RunPlan.units()`` calls compare equal.
    """

    name: str  # entry, pass, pipeline or partitioner name; for a Vulkan fusion case, the fusion's name
    graph: str

    kind: ClassVar[str] = ""
    batched: ClassVar[bool] = False  # consecutive units of one name are judged together (judge_together)
    needs_case: ClassVar[bool] = True  # judged on the GraphCase of ``graph`` (False: it builds its own)
    heaviness: ClassVar[int] = 0  # seconds-per-unit rank: the conformance suite hands out heavier kinds first

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}@{self.graph}"

    @property
    def pairs(self) -> int:
        """The (pass, graph) pairs judging it reports: what a progress total counts."""
        return 1

    def items(self) -> list[tuple[str, str]]:
        """The (pass name, check) pairs it is judged on, known before it runs, in a stable order."""
        raise NotImplementedError

    def judge(self, case, config) -> list[tuple[str, str, list]]:
        """(graph, pass name, results) per judged pass; ``case`` is None when ``needs_case`` is false."""
        raise NotImplementedError

    def judge_together(self, cases: list, config, tally=None) -> list:
        """Batched kinds: this unit's pass on ``cases`` (the graphs of consecutive units of its name)."""
        raise NotImplementedError

    def checked_as(self, config) -> tuple:
        """Batched kinds: (the LoadedPass, the RunConfig) each of its pairs is checked with, as
        :meth:`judge_together` checks them (``passgate run -j N`` hands the pairs out one by one)."""
        raise NotImplementedError


def _ir_items(name: str) -> list[tuple[str, str]]:
    return [(name, c) for c in IR_CHECK_IDS]


@dataclass(frozen=True)
class EntryUnit(Unit):
    """A catalog entry on one graph."""

    entry: Any = field(default=None, compare=False, repr=False)  # harness.catalog.CatalogEntry

    kind: ClassVar[str] = ENTRY
    batched: ClassVar[bool] = True
    heaviness: ClassVar[int] = 1

    def items(self) -> list[tuple[str, str]]:
        return _ir_items(self.name)

    def judge_together(self, cases: list, config, tally=None) -> list:
        return run_entry(self.entry, cases, config, tally)

    def checked_as(self, config) -> tuple:
        return self.entry.loaded(), entry_config(self.entry, config)


@dataclass(frozen=True)
class PassUnit(Unit):
    """A pass given by SPEC (the guide's reference passes) on one graph."""

    loaded: Any = field(default=None, compare=False, repr=False)  # harness.check.loading.LoadedPass

    kind: ClassVar[str] = PASS
    batched: ClassVar[bool] = True
    heaviness: ClassVar[int] = 0

    def items(self) -> list[tuple[str, str]]:
        return _ir_items(self.name)

    def judge_together(self, cases: list, config, tally=None) -> list:
        return check_all([self.loaded], cases, config, tally)

    def checked_as(self, config) -> tuple:
        return self.loaded, config


@dataclass(frozen=True)
class PipelineUnit(Unit):
    """A backend pipeline verified after every step on one graph."""

    pipeline: Any = field(default=None, compare=False, repr=False)  # harness.pipelines.pipeline.Pipeline
    runtime: bool = field(default=False, compare=False)  # the pipeline's result through the runtime checks too

    kind: ClassVar[str] = PIPELINE
    heaviness: ClassVar[int] = 2

    @property
    def pairs(self) -> int:
        return len(self.pipeline.steps)

    def items(self) -> list[tuple[str, str]]:
        # in IR_CHECK_IDS order: PIPELINE_CHECKS is a frozenset, whose order changes with the hash seed,
        # and every pytest-xdist worker must collect the same items in the same order
        checks = [c for c in IR_CHECK_IDS if c in PIPELINE_CHECKS]
        p = self.pipeline
        runtime = [(runtime_name(p), c) for c in RUNTIME_CHECK_IDS] if self.runtime else []
        return [(step_name(p, i), c) for i in range(len(p.steps)) for c in checks] + runtime

    def judge(self, case, config) -> list[tuple[str, str, list]]:
        p = self.pipeline
        pconfig = RunConfig(stage=p.stage, timeout=config.timeout, seed=config.seed, checks=PIPELINE_CHECKS)
        finals: list = []
        out = [(self.graph, rep.results[0].pass_name if rep.results else f"{p.name}/{rep.step}", rep.results)
               for rep in verify_each(p, case, pconfig, on_final=finals.append)]
        if self.runtime:
            name = runtime_name(p)
            rs = (judge_result(finals[0], case, name, p.stage, config.seed, missing="skip") if finals else
                  runtime_skipped(name, self.graph, "the pipeline stopped before its last step"))
            out.append((self.graph, name, rs))
        return out


@dataclass(frozen=True)
class RuntimeUnit(Unit):
    """A case's own edge program through ``to_executorch`` and the ExecuTorch runtime (:mod:`harness.check.runtime`)."""

    kind: ClassVar[str] = RUNTIME
    heaviness: ClassVar[int] = 1

    def items(self) -> list[tuple[str, str]]:
        return [(RUNTIME, c) for c in RUNTIME_CHECK_IDS]

    def judge(self, case, config) -> list[tuple[str, str, list]]:
        return [(self.graph, RUNTIME, judge_case(case, RUNTIME, config.seed))]


@dataclass(frozen=True)
class PartitionerUnit(Unit):
    """A backend partitioner (support, convexity, delegate calls) on one graph."""

    kind: ClassVar[str] = PARTITIONER
    heaviness: ClassVar[int] = 4

    runtime: bool = field(default=False, compare=False)  # its lowered program through the runtime checks too

    def items(self) -> list[tuple[str, str]]:
        return [(f"partitioner.{self.name}", c) for c in PARTITIONERS[self.name].checks_with(self.runtime)]

    def judge(self, case, config) -> list[tuple[str, str, list]]:
        return [(self.graph, f"partitioner.{self.name}",
                 check_backend_partitioner(PARTITIONERS[self.name], case, self.runtime).results)]


@dataclass
class RunPlan:
    """What one ``passgate run`` judges: the selected catalogs' entries, graphs, pipelines, partitioners and units."""

    profile: object  # harness.run.profiles.Profile
    catalogs: list
    entries: list  # every entry of the selected catalogs, runnable or not
    runnable: list  # the entries this plan runs
    skipped_slow: list
    specs: list  # CaseSpec of every graph
    notes: list[str] = field(default_factory=list)
    passes: list = field(default_factory=list)  # LoadedPass given by SPEC (the guide's reference passes)
    pipelines: list = field(default_factory=list)
    partitioners: list[str] = field(default_factory=list)
    applied: dict = field(default_factory=dict)  # entry or pass name -> graph names it runs on
    # entry point name (``passgate.units``) -> the units it plugged in (``vulkan``: the fusion cases)
    plugged: dict = field(default_factory=dict)
    kept: Optional[frozenset] = None  # unit keys this plan is restricted to (a shard); None: every unit
    runtime: tuple = ()  # the runtime legs (harness.run.profiles.RUNTIME_LEGS): a runtime unit per case ("cases"),
    # each pipeline's result ("pipelines") and partitioner's lowered program ("partitioners") through the runtime checks

    @property
    def specs_by_name(self) -> dict:
        return {s.name: s for s in self.specs}

    def units(self) -> list[Unit]:
        out: list[Unit] = [EntryUnit(e.name, g, e) for e in self.runnable for g in self.applied.get(e.name, ())]
        out += [PassUnit(p.name, g, p) for p in self.passes for g in self.applied.get(p.name, ())]
        legs = self.runtime
        out += [PipelineUnit(p.name, s.name, p, "pipelines" in legs) for p in self.pipelines for s in self.specs]
        out += [PartitionerUnit(n, s.name, "partitioners" in legs) for n in self.partitioners for s in self.specs]
        if "cases" in legs:
            out += [RuntimeUnit(RUNTIME, s.name) for s in self.specs]
        for units in self.plugged.values():
            out += units
        return out if self.kept is None else [u for u in out if u.key in self.kept]

    def needed_specs(self) -> list:
        """The graph cases the units judged on a case run on (plugged Vulkan cases build their own)."""
        graphs = {u.graph for u in self.units() if u.needs_case}
        return [s for s in self.specs if s.name in graphs]

    def items(self, unit: Unit) -> list[tuple[str, str]]:
        """The (pass name, check) pairs ``unit`` is judged on, known before it runs."""
        return unit.items()

    def run(self, units: list[Unit], cases: dict, config, tally=None,
            done: Optional[Callable[[Unit, list], None]] = None) -> list:
        """Judge ``units``; ``cases`` maps graph name -> GraphCase. Returns the results; ``tally`` sees each pair.

        Consecutive units of one entry or pass share one ``check_all`` call,
        so an isolated run forks one worker pool per pass, not per pair.
        ``done(unit, results)`` is called as each unit finishes (the verdict
        cache records it then, so an interrupted run keeps it); with
        ``config.record_deps`` a non-batched unit's executed files are noted
        under ``("unit", unit.key)`` (:mod:`harness.run.deps`).
        """
        results: list = []
        i = 0
        while i < len(units):
            unit = units[i]
            if unit.batched:
                j = i
                while j < len(units) and (units[j].kind, units[j].name) == (unit.kind, unit.name):
                    j += 1
                t = _UnitTally(tally, {u.graph: u for u in units[i:j]}, done) if done else tally
                results += unit.judge_together([cases[u.graph] for u in units[i:j]], config, t)
                i = j
                continue
            judge = partial(unit.judge, cases.get(unit.graph) if unit.needs_case else None, config)
            if config.record_deps:
                judge = deps.recorded(judge)
            if config.isolate:
                # in a forked child: lowering with a partitioner or running a backend pipeline changes
                # process-wide state that would change the verdicts of whatever runs next here

                judged = forking.call(judge)
            else:
                judged = judge()
            if config.record_deps:
                judged, files = judged
                deps.note(("unit", unit.key), files)
            mine: list = []
            for graph, pass_name, rs in judged:
                mine += rs
                if tally is not None:
                    tally.add(pass_name, graph, rs)
            results += mine
            if done is not None:
                done(unit, mine)
            i += 1
        return results

    def keep(self, units: set) -> None:
        """Restrict the plan to ``units`` (a shard).

        Pipeline and partitioner units are made per graph from the plan's
        specs, so keeping their names is not enough: ``kept`` holds the unit
        keys, or every shard holding one graph of a pipeline would run it on
        all of them (and the shards' reports would overlap).
        """
        keys = {u.key for u in units}
        self.kept = frozenset(keys)
        runnable = {e.name for e in self.runnable}
        for name in list(self.applied):
            kind = ENTRY if name in runnable else PASS
            self.applied[name] = [g for g in self.applied[name] if f"{kind}:{name}@{g}" in keys]
        self.pipelines = [p for p in self.pipelines if any(u.kind == PIPELINE and u.name == p.name for u in units)]
        self.partitioners = [n for n in self.partitioners if any(u.kind == PARTITIONER and u.name == n
                                                                 for u in units)]
        self.plugged = {name: [u for u in plugged if u.key in keys] for name, plugged in self.plugged.items()}


class _UnitTally:
    """A tally that also tells ``done`` which unit each pair of a batched pass completes (pair = unit)."""

    def __init__(self, inner, by_graph: dict, done: Callable[[Unit, list], None]):
        self.inner, self.by_graph, self.done = inner, by_graph, done
        self._total = None

    @property
    def total(self):
        return self.inner.total if self.inner is not None else self._total

    @total.setter
    def total(self, value) -> None:
        if self.inner is not None:
            self.inner.total = value
        else:
            self._total = value

    def skipped(self, count: int) -> None:
        if self.inner is not None:
            self.inner.skipped(count)

    def add(self, pass_name: str, graph: str, results: list) -> None:
        if self.inner is not None:
            self.inner.add(pass_name, graph, results)
        unit = self.by_graph.get(graph)
        if unit is not None:
            self.done(unit, results)


def runtime_name(pipeline) -> str:
    """The pass name of a pipeline's result judged by the runtime checks."""
    return f"{pipeline.name}/runtime"


def step_name(pipeline, index: int) -> str:
    """The pass name verify-each gives step ``index`` (0-based) of ``pipeline``."""
    return f"{pipeline.name}/{index + 1:02d}:{pipeline.steps[index].name}"


def entry_config(e, config):
    """``config`` for catalog entry ``e``: checks that do not apply to its construction become skips."""
    return replace(config, skip_checks=tuple(e.skipped_checks.items()))


def run_entry(e, cases, config, tally=None) -> list:
    """One catalog entry on its cases; checks that do not apply to its construction become skips."""

    return check_all([e.loaded()], cases, entry_config(e, config), tally)


def plugged_units(prof, seed: int) -> dict[str, list[Unit]]:
    """Entry point name -> the units each ``passgate.units`` provider gives for profile ``prof``, by name.

    A provider is a callable ``(profile, seed) -> list of Unit`` (``vulkan/entry/unit.py``: the fusion cases of
    the profile's ``vulkan_count``).
    """
    out: dict[str, list[Unit]] = {}
    for ep, provider in plugins.load_all(plugins.UNITS, "unit"):
        out[ep.name] = list(provider(prof, seed))
    return out


def build(profile_name: str = "standard", catalogs: Optional[list] = None, only: Optional[list] = None,
          graphs: Optional[list] = None, count: Optional[int] = None, seed: int = 0,
          pipelines: Optional[list] = None, no_pipelines: bool = False,
          partitioners: Optional[list] = None, no_partitioners: bool = False,
          passes: tuple = (), pass_graphs: tuple = ("builtin",), plugged: Optional[bool] = None,
          runtime: Optional[bool] = None) -> RunPlan:
    """The plan of a profile, narrowed the way ``passgate run``'s options narrow it.

    An explicit ``--catalog`` or ``--only`` (or ``--graphs``, for the plugged
    units such as the Vulkan recipes) drops the profile's pipelines,
    partitioners, runtime units and plugged units unless they are asked for too. ``passes``
    are extra SPECs (the conformance suite adds the guide's reference passes)
    run on ``pass_graphs``.
    """

    prof = profile(profile_name)
    cats = resolve_catalogs(catalogs or list(prof.catalogs) or None)
    entries, runnable, skipped_slow = select_entries(cats, only, prof.include_slow)
    if graphs:
        specs, notes = sources.select(graphs, count, seed), []
    else:
        specs, notes = available_graphs(prof.graphs, count or prof.random_count, seed)
    narrowed = bool(catalogs or only)
    pipeline_names = [] if no_pipelines else (pipelines or ([] if narrowed else list(prof.pipelines)))
    partitioner_names = [] if no_partitioners else (partitioners or ([] if narrowed else list(prof.partitioners)))
    applied = {e.name: [s.name for s in specs if e.applies(s)] for e in runnable}
    loaded_passes = [load_pass(spec) for spec in passes]
    if loaded_passes:
        pass_specs = {s.name for s in sources.select(list(pass_graphs))}
        for p in loaded_passes:
            applied[p.name] = [s.name for s in specs if s.name in pass_specs]
    with_plugged = plugged if plugged is not None else not (narrowed or graphs)
    legs = RUNTIME_LEGS if runtime else (() if runtime is not None or narrowed else prof.runtime)
    return RunPlan(prof, cats, entries, runnable, skipped_slow, specs, notes, loaded_passes,
                [resolve_pipeline(n) for n in pipeline_names], partitioner_names, applied,
                plugged_units(prof, seed) if with_plugged else {}, runtime=tuple(legs))
