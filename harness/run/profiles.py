"""Workloads of ``passgate run``: which catalogs, on which graphs, with which pipelines.

Three profiles, each for one use (see the timings in ``passgate run --help``
and in the README):

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

A source a build does not have yet (no zoo in a checkout) is left out with a
note rather than failing the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.errors import UsageError

CORE_CATALOGS = ("exir", "transforms", "vulkan", "xnnpack")
PIPELINE_NAMES = ("vulkan", "xnnpack", "to_executorch")
PARTITIONER_NAMES = ("vulkan", "xnnpack")


@dataclass(frozen=True)
class Profile:
    name: str
    catalogs: tuple[str, ...]  # empty: every catalog
    graphs: tuple[str, ...]
    include_slow: bool
    pipelines: tuple[str, ...]
    random_count: int = 0
    partitioners: tuple[str, ...] = ()
    description: str = ""
    vulkan_count: int = 0  # cases per Vulkan Q/DQ fusion recipe, under both built-in fusions (0: none)


PROFILES: dict[str, Profile] = {
    "quick": Profile("quick", CORE_CATALOGS, ("builtin",), False, (),
                     description="core catalogs, built-in graphs, no slow passes: pre-merge"),
    "standard": Profile("standard", (), ("builtin", "quantized"), True, PIPELINE_NAMES,
                        partitioners=PARTITIONER_NAMES, vulkan_count=1,
                        description="every catalog, built-in + quantized graphs, backend pipelines and partitioners, "
                                    "one case per Vulkan fusion recipe: tox -e conformance"),
    "full": Profile("full", (), ("builtin", "zoo", "quantized", "random"), True, PIPELINE_NAMES, random_count=25,
                    partitioners=PARTITIONER_NAMES, vulkan_count=3,
                    description="every catalog on every graph source, pipelines, partitioners, three cases per "
                                "Vulkan fusion recipe: certification"),
}


def profile(name: str) -> Profile:
    if name not in PROFILES:
        raise UsageError(f"unknown profile {name!r}; expected one of {', '.join(PROFILES)}")
    return PROFILES[name]


def available_graphs(selection: tuple[str, ...], count: int, seed: int) -> tuple[list, list[str]]:
    """The case specs of ``selection``, leaving out sources this build lacks; returns (specs, notes)."""
    from harness.graphs import sources

    specs, notes = [], []
    for name in selection:
        try:
            specs.extend(sources.select([name], count or None, seed))
        except UsageError as exc:
            if name in ("zoo", "quantized", "random"):
                notes.append(f"graph source {name} left out: {exc}")
                continue
            raise
    seen, unique = set(), []
    for s in specs:
        if s.name not in seen:
            seen.add(s.name)
            unique.append(s)
    return unique, notes
