"""DecomposeMaxPool3d (executorch.backends.qualcomm._passes.decompose_maxpool3d), executorch 1.5.1.

In the edge dialect max_pool3d is max_pool3d_with_indices, a two-output op read through
getitem(pool, 0). DecomposeMaxPool3d.call replaces the pool (via merge_decomposed_graph) by the graph of
its ModelMaxPool3D, whose output is a single tensor (a view_copy), and rewires the pool's users to it:
the getitem(·, 0) is kept and now indexes that tensor, i.e. takes batch 0. F.max_pool3d(p, 2) on a
(2, 2, 4, 5, 6) input returns (2, 2, 2, 2, 3) in eager and only batch 0, shape (2, 2, 2, 3), after the
pass (with N=1, as in passgate's graph, the output loses its batch dimension: (1, 2, 2, 2, 3) ->
(2, 2, 2, 3)).
Found by passgate (checks numerics and val_matches_execution) on the hand-written
fixtures/corpus/targeted_qnn_ops.py graph.
This script exports that max_pool3d strictly, lowers it with to_edge, runs the pass on the edge program's
graph module and compares the output with eager.
Expected: the pool's getitem(·, 0) users are rewired to the decomposed output (the getitem dropped), so
the program returns the eager result.
Standalone: torch + executorch only (no QNN SDK). Exit status 1 while it reproduces.
"""
import operator
import sys

import torch
from executorch.backends.qualcomm._passes.decompose_maxpool3d import DecomposeMaxPool3d
from executorch.exir import to_edge
from torch.nn import functional as F


class Pool3d(torch.nn.Module):
    def forward(self, p):
        return F.max_pool3d(p, 2)


torch.manual_seed(0)
p = torch.randn(2, 2, 4, 5, 6)
expected = Pool3d()(p)
gm = to_edge(torch.export.export(Pool3d(), (p,), strict=True)).exported_program().graph_module
gm = DecomposeMaxPool3d()(gm).graph_module

for n in gm.graph.nodes:
    if n.op == "call_function" and n.target is operator.getitem and "max_pool" not in str(n.args[0].target):
        print(f"kept {n.name} = getitem({n.args[0].name}, {n.args[1]}) on a plain tensor "
              f"(meta['val'] shape {tuple(n.meta['val'].shape)})")
got = gm(p)[0]
print(f"eager output shape {tuple(expected.shape)}, after DecomposeMaxPool3d {tuple(got.shape)}")
print(f"output equals eager batch 0: {got.shape == expected[0].shape and torch.equal(got, expected[0])}")
if got.shape != expected.shape or not torch.equal(got, expected):
    print("REPRODUCED: DecomposeMaxPool3d keeps the getitem(·, 0) of the multi-output pool, which now selects "
          "batch 0 of the decomposed output")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
