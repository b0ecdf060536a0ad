"""ReplaceOpsWithScalar (executorch.backends.samsung._passes.replace_scalar_ops), executorch 1.5.1.

ReplaceOpsWithScalar.call_operator turns add/sub/mul/div.Scalar and pow.Tensor_Scalar into their
.Tensor forms by wrapping the scalar as torch.tensor(scalar). For a Python int that tensor is
int64 whatever the tensor operand's dtype, so x ** 2 on an int32 x becomes
pow.Tensor_Tensor(int32, int64), which the edge dialect verifier rejects as mixed dtypes.
Expected: the scalar is wrapped in the dtype of the tensor operand (here int32), and the graph
still passes the edge verifier it passed before the pass.
Standalone: torch + executorch only (no ENN SDK). Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.samsung._passes.replace_scalar_ops import ReplaceOpsWithScalar
from executorch.exir import to_edge
from executorch.exir.verification.verifier import EXIREdgeDialectVerifier
from torch._export.verifier import SpecViolationError


class Square(torch.nn.Module):
    def forward(self, x):
        return torch.pow(x, 2)


x = torch.tensor([1, -2, 3], dtype=torch.int32)
gm = to_edge(torch.export.export(Square(), (x,))).exported_program().graph_module
EXIREdgeDialectVerifier()(gm)  # passes before the pass
gm = ReplaceOpsWithScalar()(gm).graph_module
ops = [n for n in gm.graph.nodes if n.op == "call_function"]
print("after the pass:", [f"{n.target.__name__}({', '.join(str(a.meta['val'].dtype) for a in n.args)})"
                          for n in ops if all(hasattr(a, "meta") for a in n.args)])
try:
    EXIREdgeDialectVerifier()(gm)
except SpecViolationError as exc:
    lines = str(exc).splitlines()
    culprit = next((line for line in lines if line.startswith("Operator:")), lines[0])
    print(f"REPRODUCED: edge verifier rejects the result: {lines[0]} {culprit}")
    sys.exit(1)
print("ReplaceOpsWithScalar keeps the operand dtypes consistent")
