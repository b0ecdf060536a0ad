"""XnnpackPartitioner (executorch.backends.xnnpack.partition.config.generic_node_configs.AddConfig), executorch 1.5.1.

torch.add(a, b, alpha=n) where n is a symbolic size (a dynamic dimension of another input) exports as
aten.add.Tensor with kwargs={"alpha": <sym_size node>}. AddConfig.check_constraints, asked whether it can
delegate the add, runs np.isclose(node.kwargs["alpha"], 1.0) on that fx.Node and raises TypeError
("unsupported operand type(s) for -: 'Node' and 'float"), so to_edge_transform_and_lower fails on the whole
program instead of leaving that add undelegated (passgate: partitioner.xnnpack x targeted_exir_misc3 x runs).
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower


class ScaledAdd(torch.nn.Module):
    def forward(self, a, b, d):
        return torch.add(a, b, alpha=d.shape[0])


inputs = (torch.ones(2, 3), torch.ones(2, 3), torch.ones(4))
dims = (None, None, {0: torch.export.Dim("n", min=2, max=6)})
ep = torch.export.export(ScaledAdd(), inputs, dynamic_shapes=dims, strict=False)
add = next(n for n in ep.graph.nodes if n.op == "call_function" and "add" in str(n.target))
print(f"exported: {add.format_node()}")
try:
    lowered = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
except TypeError as exc:
    print(f"REPRODUCED: partitioning raised TypeError: {exc}")
    sys.exit(1)
out = lowered.exported_program().module()(*inputs)
print(f"lowered; add left to the CPU or delegated, result {out.flatten()[:3].tolist()} (expected 5.0)")
sys.exit(0)
