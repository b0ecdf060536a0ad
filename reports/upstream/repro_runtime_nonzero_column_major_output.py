"""torch.nonzero through to_edge -> to_executorch -> the ExecuTorch runtime, executorch 1.5.1: the result comes back transposed.

torch's fake (meta) kernel of aten.nonzero makes its [u0, ndim] result column-major: stride (1, u0). The
program's output TensorSpec takes that dim order ([1, 0]), while the portable nonzero.out kernel writes its
result row-major into the buffer. The runtime hands the buffer back with the column-major strides, so
every index pair is read across rows: for m = [[1, 0, 2], [0, 3, 0]] eager gives [[0, 0], [0, 2], [1, 1]],
the runtime [[0, 2], [0, 1], [0, 1]] (stride (1, 3)), the row-major buffer 0 0 0 2 1 1 read with strides (1, 3).
Found by a passgate helper while writing fixtures/corpus/targeted_exir_outputs.py (whose nonzero output the
whole to_executorch flow returns transposed); passgate's own checks run the edge program, not the runtime.
Expected: the runtime's result equals eager's (the kernel writes the dim order the spec says, or the spec is
made contiguous).
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.exir import to_edge
from executorch.runtime import Runtime


class NonZero(torch.nn.Module):
    def forward(self, m):
        return torch.nonzero(m)


m = torch.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])
ep = torch.export.export(NonZero(), (m,), strict=False)
fake = [n.meta["val"].stride() for n in ep.graph.nodes if n.op == "call_function" and "nonzero" in str(n.target)]
print("the fake result's stride:", fake)
program = to_edge(ep).to_executorch()
got = Runtime.get().load_program(program.buffer).load_method("forward").execute([m])[0]
expected = torch.nonzero(m)
print("eager  :", expected.tolist())
print("runtime:", got.tolist(), "stride", got.stride())
if got.tolist() != expected.tolist():
    print("REPRODUCED: the runtime returns nonzero's result with column-major strides over a row-major buffer")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
