"""QuantizedBinaryMatch (executorch.backends.vulkan.patterns.quantized_binary), run by FusePatternsPass, executorch 1.5.1.

The quantized_binary pattern matches dq(a) + dq(b) -> [relu ->] quantize, takes an optional aten.relu between
the add and the output quantize into the match, and replaces the whole pattern by
et_vk.q8ta_add(a, b, a_scale, a_zp, b_scale, b_zp, out_scale, out_zp, alpha). q8ta_add has no activation
argument (neither its CPU implementation in executorch.backends.vulkan.custom_ops_lib nor the Vulkan kernel in
Q8taBinary.cpp applies one), so the relu is simply dropped. That only goes unnoticed when the output zero point
is the int8 minimum (-128), where every negative sum clamps to the zero point anyway; with any other output zero
point (e.g. 0, what a symmetric activation scheme gives) negative sums come out negative instead of 0.
Found by passgate (checks fusion_expected, fused_vs_qdq and fused_vs_float) on its hand-built
decline:q8ta_add-relu-unclamped case, dq(a) + dq(b) -> relu -> q with output zero point 0, both under the
Vulkan preprocess pass list and under FusePatternsPass alone.
This script exports that Q/DQ graph, lowers it to edge keeping the VulkanPartitioner's ops, applies
FusePatternsPass the way vulkan_preprocess.apply_passes does, and runs the Q/DQ and the fused program (the et_vk
ops' CPU implementations) on inputs where some of the sums are negative.
Expected: the pattern is declined when a relu is present and the output zero point does not clamp at 0 (or the
relu is kept), so the fused program returns what the Q/DQ program returns.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import executorch.backends.vulkan.custom_ops_lib  # noqa: F401 - registers the et_vk ops (and their CPU implementations)
import torch
from executorch.backends.vulkan._passes.fuse_patterns import FusePatternsPass
from executorch.backends.vulkan.partitioner.vulkan_partitioner import ops_not_to_decompose
from executorch.backends.vulkan.vulkan_preprocess import apply_passes
from executorch.exir import EdgeCompileConfig, to_edge

qd = torch.ops.quantized_decomposed


class QdqAddRelu(torch.nn.Module):
    """int8 a, b -> dequantize -> add -> relu -> quantize (output zero point 0, not -128) -> int8."""

    def forward(self, qa, qb):
        a = qd.dequantize_per_tensor(qa, 0.02, 0, -128, 127, torch.int8)
        b = qd.dequantize_per_tensor(qb, 0.03, 0, -128, 127, torch.int8)
        return qd.quantize_per_tensor(torch.relu(a + b), 0.03, 0, -128, 127, torch.int8)


qa = torch.tensor([[-100, 50, 10, -5]], dtype=torch.int8)
qb = torch.tensor([[-20, 30, -60, 5]], dtype=torch.int8)  # a + b = -2.6, 1.9, -1.6, 0.05

config = EdgeCompileConfig(preserve_ops=list(ops_not_to_decompose))  # as to_edge_transform_and_lower(VulkanPartitioner)
ep = to_edge(torch.export.export(QdqAddRelu(), (qa, qb), strict=False), compile_config=config).exported_program()
expected = ep.module()(qa, qb)  # the Q/DQ program

fused = apply_passes(ep, [FusePatternsPass()])  # exactly as VulkanBackend.preprocess applies it
targets = [n.target.__name__ for n in fused.graph.nodes if n.op == "call_function"]
got = fused.module()(qa, qb)

print("fused graph ops:", targets)
print("Q/DQ program: ", expected.tolist())
print("fused program:", got.tolist())
has_relu = any("relu" in t for t in targets)
if any("q8ta_add" in t for t in targets) and (not has_relu) and not torch.equal(got, expected):
    print("REPRODUCED: FusePatternsPass fuses dq + dq -> add -> relu -> q (output zero point 0) into et_vk.q8ta_add, "
          "which has no activation argument: the relu is dropped and negative sums come out negative")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
