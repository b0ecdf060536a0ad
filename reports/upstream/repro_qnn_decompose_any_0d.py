"""DecomposeAny (executorch.backends.qualcomm._passes.decompose_any), executorch 1.5.1.

The pass replaces any / any.dim / any.dims with the graph of its Any module, which compares the
int32 sum with torch.zeros(1) instead of a 0-d zero. When the any reduces to a 0-d tensor
(torch.any(x) over all dims, keepdim False) broadcasting makes the result shape (1,), not ():
the program's output changes shape, and the node after the any (here logical_not) keeps
meta['val'] shape () while it now computes shape (1,).
Expected: the decomposed any returns the same shape as eager (here ()).
Standalone: torch + executorch only (no QNN SDK). Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.qualcomm._passes.decompose_any import DecomposeAny
from executorch.exir import to_edge


class NoneAbove(torch.nn.Module):
    def forward(self, x):
        return torch.logical_not(torch.any(x > 0))


x = torch.tensor([[-1.0, 2.0], [0.5, -3.0]])
expected = NoneAbove()(x)
gm = to_edge(torch.export.export(NoneAbove(), (x,))).exported_program().graph_module
gm = DecomposeAny()(gm).graph_module
got = gm(x)[0]
meta_shape = tuple(gm.graph.output_node().args[0][0].meta["val"].shape)
if got.shape != expected.shape:
    print(f"REPRODUCED: eager output shape {tuple(expected.shape)}, after DecomposeAny {tuple(got.shape)} "
          f"(its meta['val'] still says {meta_shape})")
    sys.exit(1)
print("DecomposeAny keeps the 0-d shape")
