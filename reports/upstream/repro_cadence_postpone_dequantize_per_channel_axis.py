"""PostponeDequantizeOpBelowUseChainPass (executorch.backends.cadence.aot.reorder_ops), executorch 1.5.1.

A linear whose weight is dequantized per channel along axis 0 (weight-only quantization, [out, in] int8 with
one scale per output row) is lowered by to_edge as permute_copy(dequantize(w)) / mm. The pass postpones the
dequantize below its use chain, i.e. below the permute_copy, and keeps axis=0: after the permute the output
rows are on axis 1, so the dequantize now scales along the input dimension: wrong numbers, or, when the two
sizes differ, a program that no longer runs (scales of 4 against a dim of 8; passgate runnable on
targeted_vulkan_qdq3).
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import executorch.backends.cadence.aot.ops_registrations  # noqa: F401  (cadence ops the pass module names)
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers torch.ops.quantized_decomposed)
from executorch.backends.cadence.aot.reorder_ops import PostponeDequantizeOpBelowUseChainPass
from executorch.exir import to_edge

QD = torch.ops.quantized_decomposed


class WeightOnlyLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("w", torch.randint(-128, 127, (4, 8), dtype=torch.int8))
        self.register_buffer("scales", torch.rand(4) * 0.01 + 0.005)
        self.register_buffer("zeros", torch.zeros(4, dtype=torch.int64))

    def forward(self, x):
        w = QD.dequantize_per_channel.default(self.w, self.scales, self.zeros, 0, -128, 127, torch.int8)
        return torch.nn.functional.linear(x, w)


torch.manual_seed(0)
model = WeightOnlyLinear().eval()
x = torch.randn(3, 8)
ep = to_edge(torch.export.export(model, (x,))).exported_program()
gm = PostponeDequantizeOpBelowUseChainPass()(ep.graph_module).graph_module
inputs = [ep.state_dict.get(s.target, ep.constants.get(s.target)) if s.target else x
          for s in ep.graph_signature.input_specs]
try:
    with torch.no_grad():
        got = gm(*inputs)[0]
    err = float((got - model(x)).abs().max())
    problem = f"max abs error {err:.3g}" if err > 1e-5 else None
except RuntimeError as exc:
    problem = f"the rewritten program does not run: {str(exc).splitlines()[0]}"
print(problem or "the pass kept the program's meaning")
if problem:
    print("REPRODUCED: PostponeDequantizeOpBelowUseChainPass moved a per-channel dequantize past a permute "
          "without remapping its axis")
    sys.exit(1)
sys.exit(0)
