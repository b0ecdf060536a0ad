"""et_vk.q8ta_linear / q8ta_linear_gemv from the quantized_linear pattern (executorch.backends.vulkan.patterns.quantized_linear,
run by FusePatternsPass), executorch 1.5.1.

For a statically quantized linear (q -> dq -> linear(dq per-channel int8 weight) -> q) the pattern replacement
(make_q8ta_linear_custom_op) pads the weight scales, the bias and the weight sums it hands to the fused op to a
multiple of 4 output channels in the program's state dict, but leaves the (N, K) int8 weight as it is. The fused
op's implementation (executorch.backends.vulkan.custom_ops_lib.q8ta_linear and q8ta_linear_gemv, what the fused
program runs on a CPU) dequantizes the (N, K) weight with the padded scales, which broadcasts it to (4, K) when
N = 1, and nothing slices the result back: the fused program returns (M, 4) where the model returns (M, 1), while
the fused node's meta['val'] still says (M, 1). (q8ta_conv2d's implementation in the same file strips exactly this
padding: "Remove any padding added to output channels dim to align to a multiple of 4"; q8ta_linear even slices
the padded bias by the output width it expects, bias[: out.shape[-1]].)
Found by passgate (check fused_vs_float, and fused_vs_qdq on the asymmetric-weight variant) on its
q8ta_linear[xnnpack], q8ta_linear[vulkan-static-io] and q8ta_linear_gemv[xnnpack] cases with K = 4, N = 1
(XNNPACKQuantizer / VulkanQuantizer static per-channel PT2E flows) and its hand-built search cases, both under
the Vulkan preprocess pass list and under FusePatternsPass alone.
This script builds the same Q/DQ linear by hand (what those PT2E flows leave in the graph: per-tensor int8
activations, per-channel symmetric int8 weight, K = 4, N = 1), once with M = 1 (fused into q8ta_linear_gemv) and
once with M = 2 (q8ta_linear), lowers it to edge keeping the VulkanPartitioner's ops, applies FusePatternsPass the
way vulkan_preprocess.apply_passes does, and compares the output shapes of the float model, the Q/DQ program and
the fused program.
Expected: the fused program's outputs have the model's shapes, (1, 1) and (2, 1), and its values match the Q/DQ
program's.
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
K, N = 4, 1


class QdqLinear(torch.nn.Module):
    """float x -> q/dq (per tensor) -> linear(dq per-channel int8 weight, bias) -> q/dq (per tensor)."""

    def __init__(self, seed):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        w = torch.randn(N, K, generator=g) / K**0.5
        scales = w.abs().amax(dim=1) / 127.0
        self.register_buffer("w_q", torch.round(w / scales[:, None]).to(torch.int8))
        self.register_buffer("w_scales", scales)
        self.register_buffer("w_zps", torch.zeros(N, dtype=torch.int64))
        self.bias = torch.nn.Parameter(torch.randn(N, generator=g) * 0.1)

    def weight(self):
        return qd.dequantize_per_channel(self.w_q, self.w_scales, self.w_zps, 0, -127, 127, torch.int8)

    def forward(self, x):
        x = qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 0.02, 3, -128, 127, torch.int8), 0.02, 3, -128, 127,
                                     torch.int8)
        y = torch.nn.functional.linear(x, self.weight(), self.bias)
        return qd.dequantize_per_tensor(qd.quantize_per_tensor(y, 0.01, -5, -128, 127, torch.int8), 0.01, -5, -128,
                                        127, torch.int8)


class TwoLinears(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gemv, self.gemm = QdqLinear(0), QdqLinear(1)

    def forward(self, x1, x2):  # x1: (1, K) -> q8ta_linear_gemv, x2: (2, K) -> q8ta_linear
        return self.gemv(x1), self.gemm(x2)


model = TwoLinears().eval()
g = torch.Generator().manual_seed(2)
inputs = (torch.randn(1, K, generator=g), torch.randn(2, K, generator=g))

config = EdgeCompileConfig(preserve_ops=list(ops_not_to_decompose))  # as to_edge_transform_and_lower(VulkanPartitioner)
ep = to_edge(torch.export.export(model, inputs, strict=False), compile_config=config).exported_program()
expected = ep.module()(*inputs)  # the Q/DQ program

fused = apply_passes(ep, [FusePatternsPass()])  # exactly as VulkanBackend.preprocess applies it
got = fused.module()(*inputs)

reproduced = False
fused_nodes = [n for n in fused.graph.nodes if n.op == "call_function" and "q8ta_linear" in n.target.__name__]
for node, want, have, ref in zip(fused_nodes, expected, got, model(*inputs)):
    print(f"{node.target.__name__}: float model {tuple(ref.shape)}, Q/DQ program {tuple(want.shape)}, "
          f"fused program {tuple(have.shape)} (fused node meta['val'] says {tuple(node.meta['val'].shape)})")
    print(f"    Q/DQ {want.flatten().tolist()}  fused {have.flatten().tolist()}")
    reproduced |= have.shape != want.shape
if len(fused_nodes) == 2 and reproduced:
    print(f"REPRODUCED: et_vk.q8ta_linear(_gemv) as fused returns its output with N = {N} padded to a multiple of 4 "
          "and nothing slices it back: the fused program's output shape differs from the model's")
    sys.exit(1)
print("fused ops:", [n.target.__name__ for n in fused_nodes])
print("not reproduced")
sys.exit(0)
