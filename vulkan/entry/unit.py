"""The Vulkan Q/DQ fusion cases as units of a plan (``passgate run``, the conformance suite).

The engine's plan (:mod:`harness.run.plan`) knows catalog entries,
pipelines and partitioners; the Vulkan work plugs in through the
``passgate.units`` entry point group, where pyproject.toml registers
:func:`units`. A :class:`VulkanUnit` is one fusion on one recipe case: it
builds its own case (:mod:`vulkan.cases.lowering`), so it needs no graph case from
the plan, and it is judged by :func:`vulkan.judging.suite.check_case`. A
:class:`ShrunkUnit` is one of the search's committed shrunk failures
(:func:`vulkan.search.pinned.shrunk_cases`) under the fusion that failed it.

Import-light: torch and executorch are imported when a unit is judged or
the profile asks for Vulkan cases, not when the entry point loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.run.plan import Unit

__all__ = ["SHRUNK_CHECKS", "VULKAN", "ShrunkUnit", "VulkanUnit", "shrunk_units", "units"]

VULKAN = "vulkan"
# What the gate judges a committed shrunk failure with: the search's checks plus the device check (a skip
# without a device executor), the checks its failure was shrunk on. ``passgate vulkan`` also judges the IR
# checks of the fused program on it (vulkan.entry.search_run._shrunk_results); the gate leaves them to the pinned
# recipe cases, which record them once per recipe (executorch 1.5.1 fails meta_stack_trace on every fused node).
# Spelled out, not imported from vulkan.search.evaluate (which imports torch): the plan lists items before any unit
# runs; tests/test_vulkan_pinned.py checks it equals SEARCH_CHECKS + (DEVICE_CHECK,).
SHRUNK_CHECKS = ("fusion_expected", "fused_vs_qdq", "fused_vs_float", "device_vs_reference")


@dataclass(frozen=True)
class VulkanUnit(Unit):
    """A Vulkan Q/DQ fusion (its name is ``name``) on one recipe case (its name is ``graph``)."""

    fusion: Any = field(default=None, compare=False, repr=False)  # vulkan.backend.fusion.Fusion
    case: Any = field(default=None, compare=False, repr=False)  # vulkan.cases.recipes.VulkanCase

    kind: ClassVar[str] = VULKAN
    needs_case: ClassVar[bool] = False
    heaviness: ClassVar[int] = 3

    def items(self) -> list[tuple[str, str]]:
        from vulkan.judging.suite import ALL_CHECKS

        return [(self.name, c) for c in ALL_CHECKS]

    def judge(self, case, config) -> list[tuple[str, str, list]]:
        from vulkan.judging.suite import check_case

        return [(self.graph, self.name, check_case(self.case, self.fusion, timeout=config.timeout)[0])]


@dataclass(frozen=True)
class ShrunkUnit(VulkanUnit):
    """A committed shrunk failure of the search (``graph``: its case's name) under the fusion that failed it.

    Judged as ``passgate vulkan`` judges the shrunk failures it reports, on
    :data:`SHRUNK_CHECKS` (the IR checks aside): the
    full :func:`vulkan.judging.suite.check_case`, with the
    diagnosis (the "Fault: ..." a triage rule reads), which a ``--replay``
    draw goes without (:func:`vulkan.search.evaluate.evaluate`); both give the same
    verdicts (tests/test_vulkan_pinned.py). The results carry the check the
    search recorded and its boundary, so a report says what the case is for.
    """

    shrunk: Any = field(default=None, compare=False, repr=False)  # vulkan.search.pinned.Shrunk

    def items(self) -> list[tuple[str, str]]:
        return [(self.name, c) for c in SHRUNK_CHECKS]

    def judge(self, case, config) -> list[tuple[str, str, list]]:
        from vulkan.judging.suite import check_case

        res, _ = check_case(self.case, self.fusion, wanted=SHRUNK_CHECKS, timeout=config.timeout)
        s = self.shrunk
        for r in res:
            r.details.update(op=s.op, config=s.desc.config_id(), shrunk=True, boundary=s.boundary,
                             recorded_check=s.check)
        return [(self.graph, self.name, res)]


def shrunk_units(fusions: list) -> list[ShrunkUnit]:
    """One unit per committed shrunk failure, under the fusion that failed it (file order)."""
    from vulkan.search import pinned, spaces

    by_name = {f.name: f for f in fusions}
    out = []
    for s in pinned.shrunk_cases():
        c = spaces.desc_case(s.desc)
        out.append(ShrunkUnit(s.fusion, c.name, by_name[s.fusion], c, s))
    return out


def units(profile, seed: int) -> list[VulkanUnit]:
    """``profile.vulkan_count`` cases of every Vulkan recipe under both built-in fusions (none for 0).

    One case per recipe at the default seed (the standard profile, the gate)
    is the committed set of :mod:`vulkan.search.pinned`, so the gate neither draws
    nor depends on hypothesis' choice sequence; other counts and seeds draw.
    The gate also replays the search's committed shrunk failures
    (:func:`shrunk_units`), after the recipe cases, which keep their place.
    """
    count = getattr(profile, "vulkan_count", 0)
    if count <= 0:
        return []
    from vulkan.backend import fusion
    from vulkan.cases import catalog, recipes
    from vulkan.search import pinned

    fusions = [fusion.builtin(mode) for mode in (fusion.PREPROCESS, fusion.FUSE_PATTERNS)]
    if count == 1 and seed == pinned.SEED:
        cases = pinned.standard_cases()
    else:
        cases = [c for r in catalog.select() for c in recipes.cases(r, count, seed)]
    out = [VulkanUnit(f.name, c.name, f, c) for f in fusions for c in cases]
    if count == 1 and seed == pinned.SEED:
        out += shrunk_units(fusions)
    return out
