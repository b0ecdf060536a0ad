"""DecomposeAtenApproxGeluPass (executorch.backends.cadence.aot.decompose_ops), executorch 1.5.1.

call_operator never checks which operator it is called for: it replaces EVERY operator of the
graph by the tanh-approximate GELU formula applied to the operator's first argument. On a linear
layer the addmm/permute ops vanish (wrong shapes and values: passgate numerics, verifier); on a
multi-output op (split, batch norm) the pass crashes (runs). Upstream's only test builds a graph holding a
single gelu(approximate="tanh") node, where the missing check cannot show.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.cadence.aot.decompose_ops import DecomposeAtenApproxGeluPass
from executorch.exir import to_edge

problems = []
linear = torch.nn.Sequential(torch.nn.Linear(16, 8)).eval()
x = torch.randn(4, 16)
ep = to_edge(torch.export.export(linear, (x,))).exported_program()
gm = DecomposeAtenApproxGeluPass()(ep.graph_module).graph_module
ops = sorted({getattr(n.target, "__name__", str(n.target)) for n in gm.graph.nodes if n.op == "call_function"})
print("ops after the pass on a plain linear layer (no gelu in it):", ops)
if "addmm" not in ops:
    problems.append("the linear layer's addmm was replaced by the gelu formula")
params = [p for p in (dict(ep.named_parameters()) | dict(ep.named_buffers())).values()]
out = gm(*params, x)[0]
if out.shape != linear(x).shape:
    problems.append(f"the result has shape {tuple(out.shape)} instead of {tuple(linear(x).shape)}")


class Split(torch.nn.Module):
    def forward(self, x):
        a, b = torch.split(x, 2, dim=1)
        return a * b


ep = to_edge(torch.export.export(Split(), (torch.randn(1, 4),))).exported_program()
try:
    DecomposeAtenApproxGeluPass()(ep.graph_module)
except Exception as exc:
    problems.append(f"on a split the pass raises {type(exc).__name__}: {str(exc).splitlines()[0]}")
for p in problems:
    print("REPRODUCED:", p)
sys.exit(1 if problems else 0)
