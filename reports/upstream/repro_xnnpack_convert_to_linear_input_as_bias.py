"""ConvertToLinearPass (executorch.backends.xnnpack._passes.convert_to_linear), executorch 1.5.1.

F.linear(v, w) + v (a residual add right after a bias-free linear) is lowered by to_edge as
permute_copy(w) / mm(v, w^T) / add(mm, v). ConvertToLinearPass rebuilds aten.linear from the mm and, to find a
bias, takes the other operand of the add that follows the mm (find_bias_for_mm) without checking that it is a
bias (a constant of the output's last dimension): here it is v, the linear's own input, so the rewritten
program computes linear(v, w, bias=v) + v and adds v twice (passgate check numerics on targeted_xnnpack_qnn3).
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.xnnpack._passes.convert_to_linear import ConvertToLinearPass
from executorch.exir import to_edge


class Residual(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, v):
        return torch.nn.functional.linear(v, self.w) + v


torch.manual_seed(0)
model = Residual().eval()
v = torch.randn(3, 4)
ep = to_edge(torch.export.export(model, (v,), strict=True)).exported_program()
inputs = [ep.state_dict[s.target] if s.target else v for s in ep.graph_signature.input_specs]
gm = ConvertToLinearPass()(ep.graph_module).graph_module
linears = [n for n in gm.graph.nodes if n.op == "call_function" and "linear" in n.target.__name__]
print(f"linear nodes after the pass: {[(n.name, [str(a) for a in n.args]) for n in linears]}")
with torch.no_grad():
    got, expected = gm(*inputs)[0], model(v)
err = float((got - expected).abs().max())
print(f"max abs error against the model: {err:.3g}")
if err > 1e-5:
    print("REPRODUCED: ConvertToLinearPass took the linear's own input for its bias")
    sys.exit(1)
sys.exit(0)
