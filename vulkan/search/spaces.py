"""The registry of fused-op spaces: every :class:`~vulkan.search.space.OpSpace` the Vulkan search explores, by name.

Why a module of its own: the spaces (:mod:`vulkan.search.space_ops`, :mod:`vulkan.search.space_conv`) are built from
the data types of :mod:`vulkan.search.space`, so the lookup that needs all of them declared sits above both,
and every import points downward.
"""

from __future__ import annotations

from vulkan.cases.recipes import VulkanCase, case_spec
from vulkan.search import space_conv, space_ops  # noqa: F401 - importing them registers their spaces
from vulkan.search.space import SPACES, CaseDesc, OpSpace

__all__ = ["space", "select", "desc_case"]


def space(name: str) -> OpSpace:
    """The space of the fused op ``name`` (e.g. ``et_vk.q8ta_relu``)."""
    return SPACES[name]


def select(ops=None) -> list[OpSpace]:
    """Spaces whose op name contains any of ``ops`` (all when None)."""
    if not ops:
        return list(SPACES.values())
    return [s for s in SPACES.values() if any(o in s.name for o in ops)]


def desc_case(desc: CaseDesc) -> VulkanCase:
    """The :class:`VulkanCase` of a description: cached and checked like a catalog case."""
    recipe = space(desc.op).recipe(desc)
    shape = desc.shape_dict()
    return VulkanCase(recipe, shape, desc.seed, case_spec(recipe, shape, desc.seed))
