"""ConvertBmmToMatmul (executorch.backends.qualcomm._passes.convert_bmm_to_matmul), executorch 1.5.1.

On the bmm of an ordinary self-attention block (q @ k^T with q, k from one fused qkv linear) the
pass raises AssertionError("Found a new pattern needed be converted to linear op") instead of
leaving a pattern it does not know alone (passgate check runs). The pass is off by default in
QnnPassManager but can be switched on by passes_job.
Standalone: torch + executorch only (no QNN SDK). Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.qualcomm._passes.convert_bmm_to_matmul import ConvertBmmToMatmul
from executorch.exir import to_edge


class Attention(torch.nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads, self.qkv = heads, torch.nn.Linear(dim, 3 * dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v))
        attn = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        return (attn @ v).transpose(1, 2).reshape(b, t, d)


ep = to_edge(torch.export.export(Attention().eval(), (torch.randn(2, 5, 16),))).exported_program()
try:
    ConvertBmmToMatmul()(ep.graph_module)
except AssertionError as exc:
    print(f"REPRODUCED: ConvertBmmToMatmul raised AssertionError: {exc}")
    sys.exit(1)
print("ConvertBmmToMatmul handled the attention graph")
