"""DecomposeDivMode and DecomposeRemainder (executorch.backends.qualcomm._passes), executorch 1.5.1.

backends/qualcomm/_passes/decompose_div_mode.py rewrites div(x, y, rounding_mode='floor') into
div.Tensor + floor, and backends/qualcomm/_passes/decompose_remainder.py rewrites remainder(x, y)
into x - floor(x / y) * y with div.Tensor. div.Tensor is true division and no cast back to the
input dtype is inserted, so on int32 inputs both results become float32 tensors, while eager
(and the nodes' own meta['val'], copied from the replaced node) say int32; the edge verifier
then rejects the graph (div.Tensor claiming an int32 result, floor with float32 in / int32 out).
Expected: integer floor-divide / remainder keep the input dtype (or are left alone).
Standalone: torch + executorch only (no QNN SDK). Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.qualcomm._passes.decompose_div_mode import DecomposeDivMode
from executorch.backends.qualcomm._passes.decompose_remainder import DecomposeRemainder
from executorch.exir import to_edge


class FloorDiv(torch.nn.Module):
    def forward(self, x, y):
        return torch.div(x, y, rounding_mode="floor")


class Remainder(torch.nn.Module):
    def forward(self, x, y):
        return torch.remainder(x, y)


x = torch.tensor([-7, 7, 5], dtype=torch.int32)
y = torch.tensor([2, 2, 3], dtype=torch.int32)
bad = []
for model, pass_cls in ((FloorDiv(), DecomposeDivMode), (Remainder(), DecomposeRemainder)):
    expected = model(x, y)
    gm = to_edge(torch.export.export(model, (x, y))).exported_program().graph_module
    gm = pass_cls()(gm).graph_module
    got = gm(x, y)[0]
    if got.dtype != expected.dtype or not torch.equal(got.to(expected.dtype), expected):
        bad.append(f"{pass_cls.__name__}: eager {expected.tolist()} ({expected.dtype}), "
                   f"after the pass {got.tolist()} ({got.dtype})")
for b in bad:
    print("REPRODUCED:", b)
if not bad:
    print("integer floor-divide and remainder keep their dtype and values")
sys.exit(1 if bad else 0)
