"""RemovePermutesAroundElementwiseOps (executorch.backends.transforms.remove_permutes_around_elementwise_ops),
executorch 1.5.1.

permute_subgraph removes the permutes around a region of elementwise ops (x.permute(NHWC) -> ops ->
.permute(NCHW) runs in NCHW afterwards) and compensates every constant the region reads. A constant of
lower rank than the region gets a view_copy to
`[padded[d] for d in end_permute][permute_rank - const_rank:]`, padded = [1] * (rank - const_rank) + shape.
For the most common such constant, a per-channel [C] bias added in an NHWC region, that is
[1, C, 1, 1][3:] = [1]: a view of C elements to [1], and the retrace the pass ends with fails with
RuntimeError "shape '[1]' is invalid for input of size 3". (The right compensation is [C, 1, 1].)
Found by passgate while writing the hand-written fixtures/corpus/targeted_transforms_permutes.py graph
(its per-channel constant is the [3, 1, 1] one the branch gets right); a [C] bias is kept out of that graph
and reproduced on a program of its own (tests/test_targeted_permutes.py).
This script lowers relu(x.permute(0, 2, 3, 1) + b).permute(0, 3, 1, 2) with b of shape [3] (torch.export
+ to_edge), runs the pass on the edge program's graph module and prints the view_copy it gave b.
Expected: the region is rewritten with b viewed as [3, 1, 1] (or left alone), and the outputs are unchanged.
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


class Bias(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.b = torch.nn.Parameter(torch.arange(3, dtype=torch.float32))

    def forward(self, x):
        return (torch.relu(x.permute(NHWC) + self.b).permute(NCHW),)


torch.manual_seed(0)
model, x = Bias().eval(), torch.randn(1, 3, 4, 5)
with torch.no_grad():
    exported = torch.export.export(model, (x,), strict=False)
ep = to_edge(exported, compile_config=EdgeCompileConfig()).exported_program()
gm = copy.deepcopy(ep.graph_module)
try:
    result = RemovePermutesAroundElementwiseOps()(gm)
except RuntimeError as exc:
    views = [n for n in gm.graph.nodes if "view_copy" in str(n.target) and n.args[0].name == "p_b"]
    for n in views:
        print(f"compensating view of the bias p_b {list(n.args[0].meta['val'].shape)}: view_copy(p_b, {n.args[1]})")
    print(f"the pass raised RuntimeError: {str(exc).splitlines()[0]}")
    print("REPRODUCED: RemovePermutesAroundElementwiseOps viewed a per-channel [3] bias as [1]")
    sys.exit(1)

params = [ep.state_dict[name] for name in ep.graph_signature.parameters]
with torch.no_grad():
    got, expected = result.graph_module(*params, x)[0], model(x)[0]
print(f"max |after the pass - eager| = {(got - expected).abs().max().item():.4g}")
if not torch.allclose(got, expected, atol=1e-5):
    print("REPRODUCED: RemovePermutesAroundElementwiseOps changed what the program computes")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
