"""FuseActivationPass (executorch.backends.samsung._passes.fuse_activation), executorch 1.5.1.

FuseActivationPass._fuse asserts that every activation following a convolution / linear maps to
a fused activation name. For hardtanh, map_hardtan_relux returns a name only for bounds (0, 6)
(RELU6) and None otherwise, so a conv followed by F.hardtanh with its default bounds (-1, 1)
makes the pass fail with AssertionError("Not supported ... now.") instead of leaving the
hardtanh unfused, though Samsung's own op_hardtanh lowers any bounds (CLIP).
(map_hardtan_relux also reads min_val / max_val only as args[1] / args[2]: keyword bounds, as an
exir.serde save/load leaves them, raise IndexError.)
Expected: activations that cannot be fused are left in the graph.
Standalone: torch + executorch only (no ENN SDK). Exit status 1 while it reproduces.
"""
import sys

import torch
import torch.nn.functional as F
from executorch.backends.samsung._passes.fuse_activation import FuseActivationPass
from executorch.exir import to_edge


class ConvHardtanh(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 1)

    def forward(self, x):
        return F.hardtanh(self.conv(x))


x = torch.randn(1, 3, 4, 4)
ep = to_edge(torch.export.export(ConvHardtanh().eval(), (x,))).exported_program()
try:
    FuseActivationPass()(ep.graph_module)
except AssertionError as exc:
    print(f"REPRODUCED: FuseActivationPass raised AssertionError on hardtanh(-1, 1): {exc}")
    sys.exit(1)
print("FuseActivationPass left or fused hardtanh(-1, 1)")
