"""Vulkan Q/DQ fusion conformance: recipes, expected fusions, tolerances, executors."""
