"""executorch.exir.passes.const_prop_pass.ConstPropPass (step 7 of XNNPACKPassManager's default list) on an edge
program, executorch 1.5.1: the folded constant is stored as a `get_attr` of a new `_tensor_constant0` attribute,
not lifted into the program's constants and signature, and executorch.exir.serde (what ETRecord saves an edge
program with) then refuses the program: "SerializeError: Failed serializing node ...".

The edge program before the pass serializes and reads back. Found by passgate's `serialize_roundtrip` on the
XNNPACK pipeline's result of 10 graphs of the standard profile (every program with a constant sub-expression:
a `torch.full` / `arange` / scalar tensor folded by the pass).
Expected: the folded constant is lifted like the others (the exported program's constants) and the program
survives the serde. Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.exir import to_edge
from executorch.exir.passes.const_prop_pass import ConstPropPass
from executorch.exir.serde.serialize import deserialize, serialize


class AddFolded(torch.nn.Module):
    def forward(self, x):
        return x + torch.arange(4, dtype=torch.float32) * 2


x = torch.randn(2, 4)
manager = to_edge(torch.export.export(AddFolded(), (x,), strict=False))
deserialize(serialize(manager.exported_program()))  # the program before the pass survives
folded = manager.transform([ConstPropPass()]).exported_program()
attrs = [n.target for n in folded.graph_module.graph.nodes if n.op == "get_attr"]
print("get_attr nodes after ConstPropPass:", attrs, "| lifted constants:", list(folded.constants))
try:
    back = deserialize(serialize(folded))
except Exception as exc:  # noqa: BLE001
    print(f"REPRODUCED: exir.serde refuses the folded program: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    sys.exit(1)
same = torch.allclose(back.module()(x), AddFolded()(x))
print("not reproduced: the folded program survives the serde" + ("" if same else " (but computes otherwise)"))
sys.exit(0 if same else 1)
