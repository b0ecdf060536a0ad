"""RecomposePadMaxPool2d (executorch.backends.qualcomm._passes.recompose_pad_maxpool2d), executorch 1.5.1.

RecomposePadMaxPool2d.call moves a max_pool2d's padding into a constant_pad_nd(-inf) and emits a new
max_pool2d_with_indices with padding 0 but the same ceil_mode. With ceil_mode=True PyTorch drops a last
window that would start in the right padding; once the padding is part of the input that window starts
inside it and is kept. F.max_pool2d(v, 2, 2, 1, 1, True) on a (1, 2, 5, 6) input gives (1, 2, 3, 4) in
eager and (1, 2, 4, 4) after the pass: the program's output changes shape, and its extra last row is
-inf (those windows cover only the -inf padding row and the space past it). Besides, the new max_pool node's
meta['val'][0] is the padded input's value (shape (1, 2, 7, 8)), not the pooled output's.
Found by passgate (checks numerics and val_matches_execution) on the hand-written
fixtures/corpus/targeted_qnn_ops.py graph.
This script exports that max_pool2d strictly, lowers it with to_edge, runs the pass on the edge program's
graph module and compares the output with eager.
Expected: the recomposed pool returns the eager output (e.g. keep the padding in the pool when ceil_mode
drops a window, or correct the output size), and the new node's meta['val'] holds the pooled shape.
Standalone: torch + executorch only (no QNN SDK). Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.qualcomm._passes.recompose_pad_maxpool2d import RecomposePadMaxPool2d
from executorch.exir import to_edge
from torch.nn import functional as F


class CeilPool(torch.nn.Module):
    def forward(self, v):
        return F.max_pool2d(v, 2, 2, 1, 1, True)  # kernel, stride, padding, dilation, ceil_mode


torch.manual_seed(0)
v = torch.randn(1, 2, 5, 6)
expected = CeilPool()(v)
gm = to_edge(torch.export.export(CeilPool(), (v,), strict=True)).exported_program().graph_module
gm = RecomposePadMaxPool2d()(gm).graph_module

for n in gm.graph.nodes:
    if n.op == "call_function" and "max_pool2d" in str(n.target):
        args = tuple(a.name if isinstance(a, torch.fx.Node) else a for a in n.args)
        print(f"emitted max_pool2d_with_indices{args}, "
              f"meta['val'][0] shape {tuple(n.meta['val'][0].shape)}")
got = gm(v)[0]
print(f"eager output shape {tuple(expected.shape)}, after RecomposePadMaxPool2d {tuple(got.shape)}")
print(f"last output row after the pass (batch 0, channel 0): {got[0, 0, -1].tolist()}")
if got.shape != expected.shape or not torch.equal(got, expected):
    print("REPRODUCED: RecomposePadMaxPool2d keeps ceil_mode=True after moving the padding into the input, "
          "so a window PyTorch drops survives")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
