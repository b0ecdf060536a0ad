"""RemovePermutesAroundElementwiseOps (executorch.backends.transforms.remove_permutes_around_elementwise_ops),
executorch 1.5.1.

The pass removes the permutes around a region of elementwise ops and remaps the dims of the reductions in
it (mean.dim, sum.dim_IntList with keepdim=True) in update_mean_dim:
`set_arg(node, "dim", [start_permute[d] for d in dims])`. sum(x, dim=None, keepdim=True) lowers to
sum.dim_IntList with dim=None (a reduction over every dim, which needs no remapping at all), and
update_mean_dim iterates it: TypeError "'NoneType' object is not iterable", and the pass fails on a valid
program.
Found by passgate while writing the hand-written fixtures/corpus/targeted_transforms_permutes.py graph
(its sum(dim=None, keepdim=True) is an output, outside any region the pass rewrites); one inside a
region is kept out of that graph and reproduced on a program of its own (tests/test_targeted_permutes.py).
This script lowers torch.sum(x.permute(0, 2, 3, 1) * 2.0, dim=None, keepdim=True).permute(0, 3, 1, 2)
(torch.export + to_edge), runs the pass on the edge program's graph module and compares with eager.
Expected: dim=None is left as it is (every dim), the permutes go and the output is unchanged.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import copy
import sys

import torch
from executorch.backends.transforms.remove_permutes_around_elementwise_ops import (
    RemovePermutesAroundElementwiseOps,
)
from executorch.exir import EdgeCompileConfig, to_edge

NHWC, NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


class SumAll(torch.nn.Module):
    def forward(self, x):
        return (torch.sum(x.permute(NHWC) * 2.0, dim=None, keepdim=True).permute(NCHW),)


torch.manual_seed(0)
model, x = SumAll().eval(), torch.randn(1, 3, 4, 5)
with torch.no_grad():
    exported = torch.export.export(model, (x,), strict=False)
ep = to_edge(exported, compile_config=EdgeCompileConfig()).exported_program()
for n in ep.graph.nodes:
    if n.op == "call_function" and "sum" in str(n.target):
        print(f"lowered: {n.target.__name__}(args={n.args[1:]}, kwargs={n.kwargs})")
try:
    gm = RemovePermutesAroundElementwiseOps()(copy.deepcopy(ep.graph_module)).graph_module
except TypeError as exc:
    print(f"the pass raised TypeError: {exc}")
    print("REPRODUCED: RemovePermutesAroundElementwiseOps.update_mean_dim iterated sum's dim=None")
    sys.exit(1)

with torch.no_grad():
    got, expected = gm(x)[0], model(x)[0]
print(f"max |after the pass - eager| = {(got - expected).abs().max().item():.4g}")
if got.shape != expected.shape or not torch.allclose(got, expected, atol=1e-4):
    print("REPRODUCED: RemovePermutesAroundElementwiseOps changed what the program computes")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
