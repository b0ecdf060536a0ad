"""A channels-last tensor times a contiguous one through to_edge -> to_executorch -> the ExecuTorch runtime,
executorch 1.5.1: the runtime refuses the program it was given (error 0x12, InvalidArgument).

`torch.prod(x, 1, keepdim=True) * x` with x channels-last: the product's result is contiguous (shape
(6, 1, 4, 4)), x is channels-last, and eager broadcasts them as it does any two strided tensors. to_edge and
to_executorch accept the program and keep each tensor's dim order in its TensorSpec; the portable mul.out
kernel then checks that its inputs and output share one dim order (tensors_have_same_dim_order,
runtime/core/exec_aten/util/tensor_util_portable.cpp) and fails the call: "3 input tensors have different dim
orders", "KernelCall failed at instruction 0:1 in operator aten::mul.out: 0x12". The same check stops clamp.out,
relu.out and the other elementwise kernels of passgate's corpus graphs whose inputs mix channels-last and
contiguous tensors (corpus_464dc254, corpus_7f0d7a1f, corpus_cabdaeb9, targeted_layout_bn).
Found by passgate's runtime checks (runtime_runs on the standard profile's corpus cases).
Expected: the runtime's result equals eager's (the kernel handles mixed dim orders, or the flow makes them agree
before emission, or it rejects the program at to_executorch rather than at run time).
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.exir import to_edge
from executorch.runtime import Runtime


class ProdTimes(torch.nn.Module):
    def forward(self, x):
        return torch.prod(x, 1, keepdim=True) * x


x = torch.randn(6, 5, 4, 4, generator=torch.Generator().manual_seed(0)).contiguous(memory_format=torch.channels_last)
expected = ProdTimes()(x)
program = to_edge(torch.export.export(ProdTimes(), (x,), strict=False)).to_executorch()
try:
    got = Runtime.get().load_program(program.buffer).load_method("forward").execute([x])[0]
except RuntimeError as exc:
    print("the runtime refused the program:", exc)
    print("REPRODUCED: a mixed channels-last / contiguous mul that eager computes fails in the runtime with 0x12")
    sys.exit(1)
if not torch.allclose(got, expected, rtol=1e-4, atol=1e-4):
    print("REPRODUCED (otherwise): the runtime's result differs from eager's")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
