"""FuseQuantizedOpsTransform (executorch.backends.vulkan._passes.fuse_quantized_ops), executorch 1.5.1.

For a weight-only 4-bit linear (a per-channel symmetric int8 weight with values in [-8, 7] behind
dequantize_per_channel) the pass replaces the linear by et_vk.linear_qcs4w(x, packed, scales), where
pack_4bit_weight_tensor stores each value plus 8 as an unsigned nibble (two per byte). The op's CPU
implementation (executorch.backends.vulkan.custom_ops_lib.linear_qcs4w, what the fused program runs on a
CPU and what the op's meta/reference computes) unpacks the nibbles (0..15) and dequantizes them with no zero
point: it never takes the 8 off, so the fused program computes x @ ((w + 8) * s).T, the right answer plus
8 * s * sum(x).
Found by passgate (check numerics) on the 4-bit outputs of the hand-written
fixtures/corpus/targeted_quant_weight_only.py graph (its 8-bit outputs match).
This script packs a 4-bit weight with the pass's own pack_4bit_weight_tensor and compares
et_vk.linear_qcs4w's CPU result with the dequantized linear it replaces.
Expected: linear_qcs4w(x, pack_4bit_weight_tensor(w), s) == x @ (w * s).T.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import executorch.backends.vulkan.custom_ops_lib  # noqa: F401 - registers the et_vk ops
import torch
from executorch.backends.vulkan._passes.fuse_quantized_ops import pack_4bit_weight_tensor

g = torch.Generator().manual_seed(0)
w = torch.randint(-8, 8, (4, 8), dtype=torch.int8, generator=g)  # 4-bit values, as the Vulkan quantizer makes
s = torch.rand(4, generator=g) + 0.1  # per-output-channel scales
x = torch.randn(2, 8, generator=g)

expected = x @ (w.float() * s[:, None]).T  # the dequantize_per_channel -> linear the pass replaces
got = torch.ops.et_vk.linear_qcs4w(x, pack_4bit_weight_tensor(w), s)
print(f"max |linear_qcs4w - dequantized linear| = {(got - expected).abs().max().item():.4g}")
offset = 8 * x.sum(1, keepdim=True) * s
print(f"max |linear_qcs4w - (dequantized linear + 8*s*sum(x))| = {(got - expected - offset).abs().max().item():.4g}")
if not torch.allclose(got, expected, atol=1e-4, rtol=1e-4):
    print("REPRODUCED: et_vk.linear_qcs4w's CPU implementation does not undo the +8 of pack_4bit_weight_tensor")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
