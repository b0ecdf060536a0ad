"""ConvertToLinearPass (executorch.backends.xnnpack._passes.convert_to_linear), executorch 1.5.1.

nn.Linear on a channels-last rank-4 input is lowered by to_edge as
expand_copy / _clone_dim_order / view_copy / bmm / view_copy + add(bias). ConvertToLinearPass
matches that source partition by its bmm, builds aten.linear(input, weight) and erases the
partition: the bias is only looked for as addmm's argument or, for mm, as the add after it
(find_bias_for_mm), never for bmm, so the add with the bias is erased and not passed to the linear
(passgate check numerics: the outputs move by the bias).
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.xnnpack._passes.convert_to_linear import ConvertToLinearPass
from executorch.exir import to_edge

torch.manual_seed(0)
model = torch.nn.Linear(7, 4).eval()
x = torch.randn(6, 5, 2, 7).contiguous(memory_format=torch.channels_last)
ep = to_edge(torch.export.export(model, (x,))).exported_program()
inputs = [ep.state_dict[s.target] if s.target else x for s in ep.graph_signature.input_specs]
gm = ConvertToLinearPass()(ep.graph_module).graph_module
linears = [n for n in gm.graph.nodes if n.op == "call_function" and "linear" in n.target.__name__]
print(f"linear nodes after the pass: {[(n.name, len(n.args)) for n in linears]} (3 args: with bias)")
with torch.no_grad():
    got, expected = gm(*inputs)[0], model(x)
err = float((got - expected).abs().max())
print(f"max abs error against the model: {err:.3g}")
if err > 1e-5:
    print("REPRODUCED: ConvertToLinearPass dropped the bias of a linear lowered through bmm")
    sys.exit(1)
sys.exit(0)
