"""The backend under test: the fusion that turns a Q/DQ program into ``et_vk`` ops, and what runs the result.

Above :mod:`vulkan.cases` (a fusion applies the recipes of its mode and
caches through their lowering), below everything that judges: the checks
only ever see a :class:`~vulkan.backend.fusion.FusionRun` and an executor.
"""
