"""Vulkan Q/DQ fusion conformance: recipes, expected fusions, tolerances, executors.

Six rooms along the data flow, each importing only itself and the rooms
before it (``tests/test_layers.py`` keeps it so):

1. :mod:`vulkan.cases`: what a case is and how it is made (shapes, module
   families, quantization flows, recipes and their catalog, lowering);
2. :mod:`vulkan.backend`: the backend under test: the fusion and the
   executors that run what it produces;
3. :mod:`vulkan.judging`: one (fusion, case) judged: tolerances, the Vulkan
   and IR checks, diagnosis;
4. :mod:`vulkan.search`: each fused op's configuration space searched,
   failures shrunk, and the committed cases the gate replays;
5. :mod:`vulkan.reports`: tables, the error CSV, reproducers, report.html's
   section, BundledPrograms;
6. :mod:`vulkan.entry`: the top floor, what the engine calls through its
   entry points: ``passgate vulkan`` and the plan's units.
"""
