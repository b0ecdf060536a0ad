"""PropagateViewCopyPermuteUpPass (executorch.backends.transforms.propagate_view_copy_permute_pass), executorch 1.5.1.

The Up pass moves a permute above the elementwise op that feeds it. Its override of
_can_move_through_elementwise accepts an op when at most one input is not layout-invariant, but never
checks that input's rank against the permutation's (the base class does). An add that broadcasts a
rank-2 tensor and a [1, 1, 1] constant up to rank 3, followed by permute(0, 2, 1), passes that test: the
permute is moved onto the add's first input (the [1, 1, 1] operand), where it is a no-op and is dropped.
The program then returns [1, 4, 5] where it returned [1, 5, 4]: the pass silently changes an output's
shape. With the operands the other way round the permute lands on the rank-2 operand and the retrace
raises IndexError ("Dimension out of range").
Found by passgate on the hand-written fixtures/corpus/targeted_transforms_permutes2.py graph (numerics,
output 2's shape).
This script lowers (sigmoid(c) + relu(v)).permute(0, 2, 1), c a [1, 1, 1] buffer and v [4, 5]
(torch.export + to_edge), runs the pass on a copy of its graph module and compares the outputs.
Expected: the permute stays below the add (or moves above both operands with their ranks respected), the
output is unchanged.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import copy
import sys

import torch
from executorch.backends.transforms.propagate_view_copy_permute_pass import PropagateViewCopyPermuteUpPass
from executorch.exir import EdgeCompileConfig, to_edge


class BroadcastAddPermute(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("c", torch.full((1, 1, 1), 0.5))

    def forward(self, v):
        return ((torch.sigmoid(self.c) + torch.relu(v)).permute(0, 2, 1),)


torch.manual_seed(0)
model, v = BroadcastAddPermute().eval(), torch.randn(4, 5)
with torch.no_grad():
    exported = torch.export.export(model, (v,), strict=False)
edge = to_edge(exported, compile_config=EdgeCompileConfig()).exported_program()
try:
    gm = PropagateViewCopyPermuteUpPass(edge)(copy.deepcopy(edge.graph_module)).graph_module
except IndexError as exc:
    print(f"the pass raised IndexError: {exc}")
    print("REPRODUCED: PropagateViewCopyPermuteUpPass moved a permute onto an operand of another rank")
    sys.exit(1)

# the edge program's graph module takes the lifted buffer first, then the user input
with torch.no_grad():
    got, expected = gm(edge.state_dict["c"], v)[0], model(v)[0]
print(f"expected shape {tuple(expected.shape)}, the pass's program gives {tuple(got.shape)}")
if got.shape != expected.shape or not torch.allclose(got, expected):
    print("REPRODUCED: PropagateViewCopyPermuteUpPass changed what the program computes")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
