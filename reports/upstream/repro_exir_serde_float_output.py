"""ExecuTorch's program serde (executorch.exir.serde.serialize), executorch 1.5.1: a program that returns a Python
float cannot be read back.

torch.export keeps a non-tensor output (an int, a float, a bool, None) as a ConstantArgument, and its own serde
(torch.export.save / load) round-trips every one of them. ExecuTorch's fork of that serde,
exir/serde/export_serialize.py, serializes a float output (Argument(as_float=...)) but its
deserialize_graph_output reads back tensors, SymInts, SymBools, ints and None only, and raises
"Unable to deserialize output node Argument(as_float=0.5)". ETRecord and every tool that saves an edge
program with this serde lose such a program.
Found by a passgate helper while writing fixtures/corpus/targeted_exir_outputs.py (passgate caches lowered
programs through this serde; the float output was left out of that graph for this reason).
This script exports a module returning (relu(x), 0.5), lowers it with to_edge, and round-trips the edge
program through torch.export's serde (works) and ExecuTorch's (raises).
Expected: ExecuTorch's serde reads back what it wrote, as torch's does.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import io
import sys

import torch
from executorch.exir import to_edge
from executorch.exir.serde.serialize import deserialize, serialize


class FloatOut(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x), 0.5


ep = torch.export.export(FloatOut(), (torch.randn(2, 3),), strict=False)
buf = io.BytesIO()
torch.export.save(ep, buf)
buf.seek(0)
print("torch.export save / load:", torch.export.load(buf).module()(torch.ones(2, 3))[1])
edge = to_edge(ep).exported_program()
try:
    back = deserialize(serialize(edge))
except Exception as exc:  # noqa: BLE001 - the failure is what this script shows
    print(f"executorch.exir.serde raised {type(exc).__name__}: {str(exc).splitlines()[0]}")
    print("REPRODUCED: ExecuTorch's serde cannot read back a program with a float output")
    sys.exit(1)
print("not reproduced:", back.graph_signature.output_specs)
sys.exit(0)
