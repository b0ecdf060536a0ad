"""What a Vulkan case is and how it is made: shapes, module families, quantization flows, recipes, lowering.

The ground floor of ``vulkan/``: it imports no other room. A recipe names a
Q/DQ pattern the backend fuses (or must decline) and how to quantize a
module into it (:mod:`~vulkan.cases.recipes`, :mod:`~vulkan.cases.flows`);
the catalog lists them; :mod:`~vulkan.cases.lowering` lowers a case and
caches both its Q/DQ program and its fused one.
"""
