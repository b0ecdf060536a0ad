"""The profiles: the one table saying what ``quick``, ``standard`` and ``full`` mean, and the versioned suite.

Three profiles, each for one use (see ``passgate run --help``; measured
timings are in CHANGELOG.md):

- ``quick``: the pre-merge job, a few minutes on 2 cores. The four core
  catalogs (ExecuTorch's own passes, the shared transforms, Vulkan, XNNPACK)
  on the built-in graphs, passes that take seconds per call left out;
- ``standard``: the default of ``tox -e conformance``. Every catalog that runs
  here on the built-in and quantized graphs, the backend pipelines
  (Vulkan, XNNPACK, to_executorch) verified after every pass, and the
  Vulkan and XNNPACK partitioners (support, convexity, delegate calls), and
  one case per Vulkan Q/DQ fusion recipe under both built-in fusions;
- ``full``: certification. Every catalog on every graph source (built-in,
  model zoo, quantized, random), pipelines included.

``passgate run``, the conformance suite (``conformance/``) and the pre-merge
gate build their plan from a :class:`Profile` (:mod:`harness.run.plan`);
``passgate certify`` takes its :class:`Workload` from the same profile: the
guide's reference passes on the profile's ``certify_graphs``. The suite
version changes whenever a workload or a known violation changes; a
certification bundle records it.

Known violations are expected failures with their reason: the conformance
suite reports them as xfail (a fixed one is listed, like a Vulkan CTS waiver
that no longer applies). A source a build does not have yet (no zoo in a
checkout) is left out of a run with a note rather than failing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from harness.core import plugins
from harness.core.errors import UsageError
from harness.graphs import sources

__all__ = ["SUITE_VERSION", "CORE_CATALOGS", "PIPELINE_NAMES", "PARTITIONER_NAMES", "RUNTIME_LEGS", "Profile",
           "PROFILES", "profile", "available_graphs", "Workload", "suite_passes", "known_violations", "workload"]

SUITE_VERSION = "2026.12.2"  # what each version added: CHANGELOG.md

CORE_CATALOGS = ("exir", "transforms", "vulkan", "xnnpack")
PIPELINE_NAMES = ("vulkan", "xnnpack", "to_executorch")
PARTITIONER_NAMES = ("vulkan", "xnnpack")
# What the runtime checks judge (harness.check.runtime): each case's own edge program, each pipeline's result,
# the XNNPACK partitioner's lowered program. `--runtime` asks for all three.
RUNTIME_LEGS = ("cases", "pipelines", "partitioners")


@dataclass(frozen=True)
class Profile:
    name: str
    catalogs: tuple[str, ...]  # empty: every catalog
    graphs: tuple[str, ...]
    include_slow: bool
    pipelines: tuple[str, ...]
    random_count: int = 0  # random graphs, for ``graphs`` and ``certify_graphs`` alike
    partitioners: tuple[str, ...] = ()
    description: str = ""
    vulkan_count: int = 0  # cases per Vulkan Q/DQ fusion recipe, under both built-in fusions (0: none)
    # The graph sources ``passgate certify`` runs the suite passes (and the backend under test) on. They
    # differ from ``graphs`` at ``standard`` on purpose: a certification runs a handful of passes, so it can
    # afford the model zoo, while ``run`` / the conformance suite run every catalog entry, where the zoo would
    # multiply the time of the default ``tox -e conformance`` (it waits for ``full``), and they need the
    # quantized graphs the quantized-edge entries apply to. Changing it changes SUITE_VERSION.
    certify_graphs: tuple[str, ...] = ()
    # The runtime legs (RUNTIME_LEGS) a run of the profile has unless `--runtime` / `--no-runtime` says: a leg is
    # on once the violations it finds on the profile's graphs are triaged into reports/baseline.json (or it
    # would turn every gate red at once). standard: all three (docs/runtime.md has the counts). Changing it
    # changes SUITE_VERSION.
    runtime: tuple[str, ...] = ()


PROFILES: dict[str, Profile] = {
    "quick": Profile("quick", CORE_CATALOGS, ("builtin",), False, (),
                     description="core catalogs, built-in graphs, no slow passes: pre-merge",
                     certify_graphs=("builtin",)),
    # corpus: the distilled generated graphs (fixtures/corpus, `passgate corpus distill`): 10 graphs, +4.4 min of
    # `passgate run` on one core (+~2.2 min of the 2-worker conformance suite, ~9 min in all, warm)
    "standard": Profile("standard", (), ("builtin", "quantized", "corpus"), True, PIPELINE_NAMES,
                        partitioners=PARTITIONER_NAMES, vulkan_count=1,
                        description="every catalog, built-in + quantized graphs and the distilled generated corpus, "
                                    "backend pipelines and partitioners, one case per Vulkan fusion recipe and the committed shrunk "
                                    "Vulkan failures: "
                                    "tox -e conformance",
                        certify_graphs=("builtin", "zoo"), runtime=RUNTIME_LEGS),
    "full": Profile("full", (), ("builtin", "zoo", "quantized", "random"), True, PIPELINE_NAMES, random_count=25,
                    partitioners=PARTITIONER_NAMES, vulkan_count=3,
                    description="every catalog on every graph source, pipelines, partitioners, three cases per "
                                "Vulkan fusion recipe: certification",
                    certify_graphs=("builtin", "zoo", "quantized", "random")),
}


def profile(name: str) -> Profile:
    if name not in PROFILES:
        raise UsageError(f"unknown profile {name!r}; expected one of {', '.join(PROFILES)}")
    return PROFILES[name]


def available_graphs(selection: tuple[str, ...], count: int, seed: int) -> tuple[list, list[str]]:
    """The case specs of ``selection``, leaving out sources this build lacks; returns (specs, notes)."""

    specs, notes = [], []
    for name in selection:
        try:
            specs.extend(sources.select([name], count or None, seed))
        except UsageError as exc:
            if name in ("zoo", "quantized", "random", "corpus"):
                notes.append(f"graph source {name} left out: {exc}")
                continue
            raise
    seen, unique = set(), []
    for s in specs:
        if s.name not in seen:
            seen.add(s.name)
            unique.append(s)
    return unique, notes


# -- the certification workload ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    """What ``passgate certify`` runs for a profile: not configurable, or it would not be the suite."""

    profile: str
    passes: tuple[str, ...]
    graphs: tuple[str, ...]  # --graphs selection
    random_count: int = 0
    seed: int = 0
    known: dict = field(default_factory=dict)  # (pass name, graph, check) -> reason


def _suite_providers() -> list:
    return [provider() for _ep, provider in plugins.load_all(plugins.SUITE_PASSES, "suite passes")]


def suite_passes() -> tuple[str, ...]:
    """The SPECs content registers under ``passgate.suite_passes`` (the guide's reference passes), in order."""
    return tuple(spec for specs, _known in _suite_providers() for spec in specs)


def known_violations(graphs: Optional[Iterable[str]] = None) -> dict:
    """(pass, graph, check) -> reason: the suite passes' own recorded violations on ``graphs``.

    None: on the graphs each provider names by default (the built-in graphs its violations occur on).
    """
    known: dict = {}
    for _specs, known_of in _suite_providers():
        known.update(known_of() if graphs is None else known_of(list(graphs)))
    return known


def workload(name: str = "standard") -> Workload:
    """The certification workload of profile ``name``."""

    prof = profile(name)
    graphs, count = prof.certify_graphs, prof.random_count
    names = [s.name for s in sources.select(list(graphs), count or None, 0)]
    return Workload(prof.name, suite_passes(), graphs, random_count=count, known=known_violations(names))
