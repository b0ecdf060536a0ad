"""A workload as a list of units: what ``passgate run`` and the conformance suite both execute.

A *unit* is one thing judged on one graph: a catalog entry (or a pass given
by SPEC), a backend pipeline verified after every step, or a backend
partitioner, or a Vulkan Q/DQ fusion on one of its recipe's cases
(:mod:`vulkan.suite`). ``passgate run`` walks the units of a :class:`Plan` in one
process; the conformance suite (``conformance/``) turns each unit's
``(pass name, check)`` pairs into pytest items and lets pytest-xdist spread
the units over workers. Both build the plan here, so "the standard profile"
is the same work whichever way it is run.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable, Optional

from harness.core.errors import UsageError

ENTRY, PASS, PIPELINE, PARTITIONER, VULKAN = "entry", "pass", "pipeline", "partitioner", "vulkan"


@dataclass(frozen=True)
class Unit:
    kind: str  # entry | pass | pipeline | partitioner | vulkan
    name: str  # entry, pass, pipeline or partitioner name; for vulkan, the fusion's name
    graph: str

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}@{self.graph}"


@dataclass
class Plan:
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
    vulkan: list = field(default_factory=list)  # (vulkan.fusion.Fusion, vulkan.recipes.VulkanCase)

    @property
    def specs_by_name(self) -> dict:
        return {s.name: s for s in self.specs}

    def units(self) -> list[Unit]:
        out = [Unit(ENTRY, e.name, g) for e in self.runnable for g in self.applied.get(e.name, ())]
        out += [Unit(PASS, p.name, g) for p in self.passes for g in self.applied.get(p.name, ())]
        out += [Unit(PIPELINE, p.name, s.name) for p in self.pipelines for s in self.specs]
        out += [Unit(PARTITIONER, n, s.name) for n in self.partitioners for s in self.specs]
        out += [Unit(VULKAN, f.name, vcase.name) for f, vcase in self.vulkan]
        return out

    def needed_specs(self) -> list:
        """The graph cases the non-Vulkan units run on (Vulkan cases are built by :mod:`vulkan.lowering`)."""
        graphs = {u.graph for u in self.units() if u.kind != VULKAN}
        return [s for s in self.specs if s.name in graphs]

    def items(self, unit: Unit) -> list[tuple[str, str]]:
        """The (pass name, check) pairs ``unit`` is judged on, known before it runs."""
        from harness.core.results import IR_CHECK_IDS
        from harness.pipelines.pipeline import PIPELINE_CHECKS

        if unit.kind in (ENTRY, PASS):
            return [(unit.name, c) for c in IR_CHECK_IDS]
        if unit.kind == PIPELINE:
            p = next(p for p in self.pipelines if p.name == unit.name)
            # in IR_CHECK_IDS order: PIPELINE_CHECKS is a frozenset, whose order changes with the hash seed,
            # and every pytest-xdist worker must collect the same items in the same order
            checks = [c for c in IR_CHECK_IDS if c in PIPELINE_CHECKS]
            return [(step_name(p, i), c) for i in range(len(p.steps)) for c in checks]
        if unit.kind == VULKAN:
            from vulkan.suite import ALL_CHECKS

            return [(unit.name, c) for c in ALL_CHECKS]
        from harness.pipelines.partitioners import PARTITION_CHECKS

        return [(f"partitioner.{unit.name}", c) for c in PARTITION_CHECKS]

    def run(self, units: list[Unit], cases: dict, config, emit: Callable[[str, str, list], None]) -> None:
        """Judge ``units``; ``cases`` maps graph name -> GraphCase; ``emit(graph, pass_name, results)``.

        Consecutive units of one entry or pass share one ``check_all`` call,
        so an isolated run forks one worker pool per pass, not per pair.
        """
        from harness.check.runner import check_all

        def relay(_d, _t, name, graph, rs):
            emit(graph, name, rs)

        i = 0
        while i < len(units):
            unit = units[i]
            if unit.kind in (ENTRY, PASS):
                j = i
                while j < len(units) and (units[j].kind, units[j].name) == (unit.kind, unit.name):
                    j += 1
                chosen = [cases[u.graph] for u in units[i:j]]
                if unit.kind == ENTRY:
                    run_entry(next(e for e in self.runnable if e.name == unit.name), chosen, config, relay)
                else:
                    check_all([next(p for p in self.passes if p.name == unit.name)], chosen, config, relay)
                i = j
                continue
            judge = partial(self._judge_other, unit, cases.get(unit.graph), config)
            if config.isolate:
                # in a forked child: lowering with a partitioner or running a backend pipeline changes
                # process-wide state that would change the verdicts of whatever runs next here
                from harness.run import forked

                emitted = forked.call(judge)
            else:
                emitted = judge()
            for args in emitted:
                emit(*args)
            i += 1

    def _judge_other(self, unit: Unit, case, config) -> list[tuple[str, str, list]]:
        """A pipeline, partitioner or Vulkan fusion unit as (graph, pass name, results) per judged pass.

        ``case`` is None for Vulkan units: they build their own.
        """
        from harness.check.runner import RunConfig

        if unit.kind == VULKAN:
            from vulkan.suite import check_case

            fuse, vcase = next((f, c) for f, c in self.vulkan if (f.name, c.name) == (unit.name, unit.graph))
            return [(unit.graph, unit.name, check_case(vcase, fuse, timeout=config.timeout)[0])]
        if unit.kind == PIPELINE:
            from harness.pipelines.pipeline import PIPELINE_CHECKS, verify_each

            p = next(p for p in self.pipelines if p.name == unit.name)
            pconfig = RunConfig(stage=p.stage, timeout=config.timeout, seed=config.seed, checks=PIPELINE_CHECKS)
            return [(unit.graph, rep.results[0].pass_name if rep.results else f"{p.name}/{rep.step}", rep.results)
                    for rep in verify_each(p, case, pconfig)]
        from harness.pipelines.partitioners import PARTITIONERS, check_backend_partitioner

        return [(unit.graph, f"partitioner.{unit.name}", check_backend_partitioner(PARTITIONERS[unit.name], case).results)]

    def keep(self, units: set) -> None:
        """Restrict the plan to ``units`` (a shard)."""
        for name in list(self.applied):
            kind = ENTRY if any(e.name == name for e in self.runnable) else PASS
            self.applied[name] = [g for g in self.applied[name] if Unit(kind, name, g) in units]
        self.pipelines = [p for p in self.pipelines if any(u.kind == PIPELINE and u.name == p.name for u in units)]
        self.partitioners = [n for n in self.partitioners if any(u.kind == PARTITIONER and u.name == n
                                                                 for u in units)]
        self.vulkan = [(f, c) for f, c in self.vulkan if Unit(VULKAN, f.name, c.name) in units]


def step_name(pipeline, index: int) -> str:
    """The pass name verify-each gives step ``index`` (0-based) of ``pipeline``."""
    return f"{pipeline.name}/{index + 1:02d}:{pipeline.steps[index].name}"


def resolve_catalogs(names):
    from passes import catalog

    if not names:
        return catalog.select(None)
    out = []
    registered = [n for n in names if ":" not in n]
    if registered:
        out.extend(catalog.select(registered))
    for spec in (n for n in names if ":" in n):
        from harness.check.loading import _import_file, _import_module

        location, _, attr = spec.rpartition(":")
        module = _import_file(location) if location.endswith(".py") or "/" in location else _import_module(location)
        if not hasattr(module, attr):
            raise UsageError(f"{location} has no attribute {attr!r}")
        out.extend(catalog.with_discovered(c)[0] if c.packages else c
                   for c in catalog._as_catalogs(getattr(module, attr), spec))
    return out


def select_entries(catalogs, only=None, include_slow: bool = True):
    from passes import catalog

    entries = catalog.all_entries(catalogs)
    if only:
        entries = [e for e in entries if any(fnmatch.fnmatchcase(e.name, pat) for pat in only)]
        if not entries:
            raise UsageError(f"--only {' '.join(only)} matches no catalog entry")
    skipped_slow = [e for e in entries if e.slow and not include_slow and e.runnable]
    runnable = [e for e in entries if e.runnable and (include_slow or not e.slow)]
    return entries, runnable, skipped_slow


def run_entry(e, cases, config, progress) -> None:
    """One catalog entry on its cases; checks that do not apply to its construction become skips."""
    from harness.check.runner import check_all
    from harness.core.results import IR_CHECK_IDS, Status, result

    skipped = e.skipped_checks
    if not skipped:
        check_all([e.loaded()], cases, config, progress=progress)
        return
    wanted = frozenset(config.checks if config.checks is not None else IR_CHECK_IDS) - set(skipped)

    def with_skips(done, total, pass_name, graph, rs):
        rs = list(rs) + [result(pass_name, graph, check, Status.SKIP, why) for check, why in skipped.items()]
        progress(done, total, pass_name, graph, rs)

    check_all([e.loaded()], cases, replace(config, checks=wanted), progress=with_skips)


def build(profile_name: str = "standard", catalogs: Optional[list] = None, only: Optional[list] = None,
          graphs: Optional[list] = None, count: Optional[int] = None, seed: int = 0,
          pipelines: Optional[list] = None, no_pipelines: bool = False,
          partitioners: Optional[list] = None, no_partitioners: bool = False,
          passes: tuple = (), pass_graphs: tuple = ("builtin",), vulkan: Optional[bool] = None) -> Plan:
    """The plan of a profile, narrowed the way ``passgate run``'s options narrow it.

    An explicit ``--catalog`` or ``--only`` (or ``--graphs``, for the Vulkan
    recipes) drops the profile's pipelines, partitioners and Vulkan fusion
    cases unless they are asked for too. ``passes`` are extra SPECs (the
    conformance suite adds the guide's reference passes) run on ``pass_graphs``.
    """
    from harness.check.loading import load_pass
    from harness.graphs import sources
    from harness.pipelines.pipeline import resolve_pipeline
    from harness.run.profiles import available_graphs, profile

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
    with_vulkan = vulkan if vulkan is not None else not (narrowed or graphs)
    return Plan(prof, cats, entries, runnable, skipped_slow, specs, notes, loaded_passes,
                [resolve_pipeline(n) for n in pipeline_names], partitioner_names, applied,
                vulkan_work(prof.vulkan_count, seed) if with_vulkan else [])


def vulkan_work(count: int, seed: int) -> list:
    """(fusion, case) for ``count`` cases of every Vulkan recipe under both built-in fusions."""
    if count <= 0:
        return []
    from vulkan import catalog, fusion, recipes

    fusions = [fusion.builtin(mode) for mode in (fusion.PREPROCESS, fusion.FUSE_PATTERNS)]
    cases = [c for r in catalog.select() for c in recipes.cases(r, count, seed)]
    return [(f, c) for f in fusions for c in cases]
