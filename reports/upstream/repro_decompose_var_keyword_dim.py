"""DecomposeVar (executorch.backends.qualcomm._passes.decompose_var), executorch 1.5.1.

DecomposeVar reads var.correction's dim only from the positional args
(`dim = node.args[1] if len(node.args) > 1 else None`) and, when it finds none, reduces over every
dim. A program read back with ExecuTorch's own program serde (executorch.exir.serde.serialize
save / load, which ETRecord and passgate's case cache use) passes the dim as a keyword
(var.correction(x, dim=[1], correction=1, keepdim=True)), so torch.var(x, dim=1, keepdim=True) on a (6, 5) input is
decomposed into a variance over the whole tensor: shape (1, 1) instead of (6, 1), other values
(passgate checks numerics and val_matches_execution).
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import io
import sys

import torch
from executorch.backends.qualcomm._passes.decompose_var import DecomposeVar
from executorch.exir.serde.serialize import load, save


class Var(torch.nn.Module):
    def forward(self, x):
        return torch.var(x, dim=1, correction=1, keepdim=True)


x = torch.randn(6, 5)
model = Var().eval()
buffer = io.BytesIO()
save(torch.export.export(model, (x,)), buffer)
buffer.seek(0)
ep = load(buffer)  # a saved program, as a lowering flow reads it back
var = next(n for n in ep.graph.nodes if n.op == "call_function" and "var" in str(n.target))
print(f"as loaded: var args={var.args} kwargs={var.kwargs}")
gm = DecomposeVar()(ep.graph_module).graph_module
expected, got = model(x), gm(x)[0]
print(f"model output shape {tuple(expected.shape)}, after DecomposeVar {tuple(got.shape)}")
if got.shape != expected.shape or not torch.allclose(got, expected, atol=1e-5):
    print("REPRODUCED: DecomposeVar ignored the keyword dim and reduced over every dim")
    sys.exit(1)
sys.exit(0)
