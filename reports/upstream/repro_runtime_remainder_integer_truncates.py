"""torch.remainder on integer tensors through to_edge -> to_executorch -> the ExecuTorch runtime, executorch 1.5.1:
the portable remainder kernel computes C's truncated remainder (the sign of the dividend), not torch's
floored one (the sign of the divisor).

For a = [-7, -3, 5, 7], b = [3, 2, -3, -2] eager gives [2, 1, -1, -1], the runtime [-1, -1, 2, 1]; the same
for int8, int32 and int64, for remainder.Tensor and remainder.Scalar (a % 3: eager [2, 0, 2, 1], runtime
[-1, 0, 2, 1]). Float inputs agree. Found by passgate's `runtime_numerics` on a generated corpus graph
(`corpus_06c14c3d`: an int8 remainder, "first diverging op: remainder.Tensor_out"); passgate's IR checks run
the edge program in torch, where it is right.
Expected: the runtime's result equals eager's for every sign (Python's floored modulo, as torch.remainder).
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.exir import to_edge
from executorch.runtime import Runtime


class Remainder(torch.nn.Module):
    def forward(self, a, b):
        return torch.remainder(a, b)


wrong = 0
for dtype in (torch.int8, torch.int32, torch.int64, torch.float32):
    a = torch.tensor([-7, -3, 5, 7], dtype=dtype)
    b = torch.tensor([3, 2, -3, -2], dtype=dtype)
    program = to_edge(torch.export.export(Remainder(), (a, b), strict=False)).to_executorch()
    got = Runtime.get().load_program(program.buffer).load_method("forward").execute([a, b])[0]
    expected = torch.remainder(a, b)
    same = got.tolist() == expected.tolist()
    wrong += not same
    print(f"{str(dtype):14} eager {expected.tolist()}  runtime {got.tolist()}  {'ok' if same else 'DIFFERS'}")
if wrong:
    print(f"REPRODUCED: the runtime's integer remainder takes the dividend's sign ({wrong} dtype(s) differ)")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
