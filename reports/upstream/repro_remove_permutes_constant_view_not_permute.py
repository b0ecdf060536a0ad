"""RemovePermutesAroundElementwiseOps (executorch.backends.transforms.remove_permutes_around_elementwise_ops),
executorch 1.5.1.

permute_subgraph removes the permutes around a region of elementwise ops (x.permute(NHWC) -> ops ->
.permute(NCHW) runs in NCHW afterwards) and compensates every constant the region reads. A constant of
the region's rank gets a permute_copy; one of lower rank only a view_copy to
`[padded[d] for d in end_permute][permute_rank - const_rank:]`. A view renames the shape, it does not move
data: that is only right when the permutation moves size-1 dims. A [H, W, C] = [4, 5, 3] constant added in
an NHWC region is viewed as [3, 4, 5] instead of permuted to it, so the rewritten region adds scrambled
values and the program silently returns other outputs (no error, the shapes all match).
Found by passgate while writing the hand-written fixtures/corpus/targeted_transforms_permutes.py graph
(its lower-rank constant is a [3, 1, 1] one, which the view gets right); a [H, W, C] constant is kept out
of that graph and reproduced on a program of its own (tests/test_targeted_permutes.py).
This script lowers relu(x.permute(0, 2, 3, 1) + w).permute(0, 3, 1, 2) with w of shape [4, 5, 3]
(torch.export + to_edge), runs the pass on the edge program's graph module and compares with eager.
Expected: the constant is compensated with a permute (w.permute(2, 0, 1)), and the outputs are unchanged.
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
        self.w = torch.nn.Parameter(torch.arange(60, dtype=torch.float32).reshape(4, 5, 3))

    def forward(self, x):
        return (torch.relu(x.permute(NHWC) + self.w).permute(NCHW),)


torch.manual_seed(0)
model, x = Bias().eval(), torch.randn(1, 3, 4, 5)
with torch.no_grad():
    exported = torch.export.export(model, (x,), strict=False)
ep = to_edge(exported, compile_config=EdgeCompileConfig()).exported_program()
gm = RemovePermutesAroundElementwiseOps()(copy.deepcopy(ep.graph_module)).graph_module
for n in gm.graph.nodes:
    if n.op == "call_function" and n.args and getattr(n.args[0], "name", None) == "p_w":
        shape = list(n.args[0].meta["val"].shape)
        print(f"the constant p_w {shape} is compensated by {n.target.__name__}(p_w, {n.args[1]})")
permutes = [n for n in gm.graph.nodes if "permute_copy" in str(n.target)]
print(f"permute_copy nodes left: {len(permutes)}")

params = [ep.state_dict[name] for name in ep.graph_signature.parameters]
with torch.no_grad():
    got, expected = gm(*params, x)[0], model(x)[0]
wrong = (~torch.isclose(got, expected, atol=1e-5)).sum().item()
print(f"{wrong} of {expected.numel()} outputs differ from eager; max |after the pass - eager| = "
      f"{(got - expected).abs().max().item():.4g}")
if wrong:
    print("REPRODUCED: RemovePermutesAroundElementwiseOps viewed a [4, 5, 3] constant as [3, 4, 5] "
          "instead of permuting it")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
