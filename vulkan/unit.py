"""The Vulkan Q/DQ fusion cases as units of a plan (``passgate run``, the conformance suite).

The engine's plan (:mod:`harness.run.plan`) knows catalog entries,
pipelines and partitioners; the Vulkan work plugs in through the
``passgate.units`` entry point group, where pyproject.toml registers
:func:`units`. A :class:`VulkanUnit` is one fusion on one recipe case: it
builds its own case (:mod:`vulkan.lowering`), so it needs no graph case from
the plan, and it is judged by :func:`vulkan.suite.check_case`.

Import-light: torch and executorch are imported when a unit is judged or
the profile asks for Vulkan cases, not when the entry point loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.run.plan import Unit

__all__ = ["VULKAN", "VulkanUnit", "units"]

VULKAN = "vulkan"


@dataclass(frozen=True)
class VulkanUnit(Unit):
    """A Vulkan Q/DQ fusion (its name is ``name``) on one recipe case (its name is ``graph``)."""

    fusion: Any = field(default=None, compare=False, repr=False)  # vulkan.fusion.Fusion
    case: Any = field(default=None, compare=False, repr=False)  # vulkan.recipes.VulkanCase

    kind: ClassVar[str] = VULKAN
    needs_case: ClassVar[bool] = False
    heaviness: ClassVar[int] = 3

    def items(self) -> list[tuple[str, str]]:
        from vulkan.suite import ALL_CHECKS

        return [(self.name, c) for c in ALL_CHECKS]

    def judge(self, case, config) -> list[tuple[str, str, list]]:
        from vulkan.suite import check_case

        return [(self.graph, self.name, check_case(self.case, self.fusion, timeout=config.timeout)[0])]


def units(profile, seed: int) -> list[VulkanUnit]:
    """``profile.vulkan_count`` cases of every Vulkan recipe under both built-in fusions (none for 0).

    One case per recipe at the default seed (the standard profile, the gate)
    is the committed set of :mod:`vulkan.pinned`, so the gate neither draws
    nor depends on hypothesis' choice sequence; other counts and seeds draw.
    """
    count = getattr(profile, "vulkan_count", 0)
    if count <= 0:
        return []
    from vulkan import catalog, fusion, pinned, recipes

    fusions = [fusion.builtin(mode) for mode in (fusion.PREPROCESS, fusion.FUSE_PATTERNS)]
    if count == 1 and seed == pinned.SEED:
        cases = pinned.standard_cases()
    else:
        cases = [c for r in catalog.select() for c in recipes.cases(r, count, seed)]
    return [VulkanUnit(f.name, c.name, f, c) for f in fusions for c in cases]
