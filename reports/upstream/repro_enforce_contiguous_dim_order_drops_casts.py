"""EnforceContiguousDimOrder (executorch.backends.transforms.enforce_contiguous_dim_order), executorch 1.5.1.

The pass is meant to make every dim order contiguous: step 1 removes each
dim_order_ops._to_dim_order_copy / _clone_dim_order that is not an IO boundary clone by
rewiring its users to its input. It never looks at the dtype argument, and to_edge lowers every
dtype cast (x.int(), x.to(torch.int64), x.float()) to _to_dim_order_copy(x, dtype=...): the casts
are removed too, so the program returns float32 where the model returns int32 (passgate check
numerics: "The values for attribute 'dtype' do not match").
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.transforms.enforce_contiguous_dim_order import EnforceContiguousDimOrder
from executorch.exir import to_edge


class Cast(torch.nn.Module):
    def forward(self, x):
        return (x + x).int()


x = torch.randn(2, 3)
model = Cast().eval()
ep = to_edge(torch.export.export(model, (x,))).exported_program()
casts = [n for n in ep.graph.nodes if "dtype" in n.kwargs]
result = EnforceContiguousDimOrder()(ep.graph_module)
gm = result.graph_module
left = [n for n in gm.graph.nodes if "dtype" in n.kwargs]
expected, got = model(x), gm(x)[0]
print(f"casts before the pass: {[n.name for n in casts]}, after: {[n.name for n in left]}")
print(f"model returns {expected.dtype}, the program after the pass returns {got.dtype}")
if got.dtype != expected.dtype:
    print("REPRODUCED: EnforceContiguousDimOrder removed a dtype-changing _to_dim_order_copy")
    sys.exit(1)
sys.exit(0)
