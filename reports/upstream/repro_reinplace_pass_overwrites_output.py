"""reinplace_pass (executorch.exir.passes.reinplace), executorch 1.5.1.

reinplace_pass walks the graph backwards and rewrites a functional op in place when its mutated
argument has no later use. It collects the later uses (seen_nodes) from call_function nodes only:
the output node is skipped, so a tensor the program returns counts as dead once its last
call_function user is passed. Here y = abs(x) is returned and also feeds sigmoid; with sigmoid in
ops_to_inplace (as ExecutorchBackendConfig.reinplace_extra_ops adds elementwise ops) the pass makes
it sigmoid_(y), which overwrites the returned y (passgate check numerics).
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.exir import to_edge
from executorch.exir.dialects._ops import ops
from executorch.exir.passes.reinplace import reinplace_pass


class ReturnsInput(torch.nn.Module):
    def forward(self, x):
        y = torch.abs(x)
        return y, torch.sigmoid(y)


x = torch.randn(2, 3)
model = ReturnsInput().eval()
ep = to_edge(torch.export.export(model, (x,))).exported_program()
ep = reinplace_pass(ep, ops_to_inplace={ops.edge.aten.sigmoid.default})
calls = [n.target.__name__ for n in ep.graph.nodes if n.op == "call_function"]
inplace = [name for name in calls if name.endswith("_.default")]
expected, got = model(x), ep.module()(x)
print(f"in-place nodes after the pass: {inplace}")
print(f"output 0 (abs(x)): max abs error {float((got[0] - expected[0]).abs().max()):.3g}")
if not torch.allclose(got[0], expected[0]):
    print("REPRODUCED: reinplace_pass overwrote a tensor the program returns")
    sys.exit(1)
sys.exit(0)
