"""LayoutTransform (executorch.backends.qualcomm._passes.layout_transform), executorch 1.5.1.

With a dynamic batch dimension, to_edge gives native_group_norm its N as a sym_size node
(a SymInt argument). LayoutTransform.traverse visits every argument of a layout-sensitive op and
is_edge_condition reads `.shape` of each one's meta['val']: on the SymInt it raises
AttributeError: 'SymInt' object has no attribute 'shape'. QNN's own flow exports with
strict=True and accepts dynamic_shapes, as this script does. Upstream's tests export static shapes.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.qualcomm._passes.layout_transform import LayoutTransform
from executorch.exir import to_edge

model = torch.nn.GroupNorm(1, 5).eval()
x = torch.randn(3, 5, 5)
batch = torch.export.Dim("batch", min=2, max=64)
ep = to_edge(torch.export.export(model, (x,), dynamic_shapes=({0: batch},), strict=True)).exported_program()
norm = next(n for n in ep.graph.nodes if "native_group_norm" in str(n.target))
print("native_group_norm arguments:", [getattr(a, "name", a) for a in norm.args])
try:
    LayoutTransform(ep)(ep.graph_module)
except AttributeError as exc:
    print(f"REPRODUCED: LayoutTransform raised AttributeError: {exc}")
    sys.exit(1)
print("fixed: LayoutTransform ran on the dynamic-batch group norm")
sys.exit(0)
