"""PropagateViewCopyPermuteDownPass (executorch.backends.transforms.propagate_view_copy_permute_pass), executorch 1.5.1.

The pass moves permutes down past the ops that follow them, remapping the dim those ops take;
PropagateViewCopyPermuteDownPass._maybe_swap_permute_args reads that dim only positionally:
`args = self._dim_arg(next_node.args[1])`. A program read back with ExecuTorch's own program serde
(executorch.exir.serde.serialize, which ETRecord and passgate's case cache use) passes every argument after
the input as a keyword: slice_copy.Tensor(x, dim=2, start=1, end=...). So a permute followed by a slice
makes the pass fail with IndexError "tuple index out of range" on a valid program. (The Propagate passes
likewise read a reduction's keepdim only as next_node.args[2]; there they merely skip the swap.)
Found by passgate on the hand-written fixtures/corpus/targeted_transforms_permutes.py graph, in the form
its case cache hands programs over (saved and loaded); that graph is now tagged as_lowered (handed over as
to_edge returns it) and the loaded form is reproduced on a program of its own (tests/test_targeted_permutes.py).
This script lowers x.permute(0, 2, 3, 1)[:, :, 1:] (torch.export + to_edge), round-trips the edge program
through executorch.exir.serde.serialize serialize / deserialize, and runs the pass on its graph module.
Expected: the dim is read from args or kwargs (the slice moves above the permute, on dim 3), the output
is unchanged.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import copy
import sys

import torch
from executorch.backends.transforms.propagate_view_copy_permute_pass import PropagateViewCopyPermuteDownPass
from executorch.exir import EdgeCompileConfig, to_edge
from executorch.exir.serde.serialize import deserialize, serialize

NHWC = (0, 2, 3, 1)


class PermuteSlice(torch.nn.Module):
    def forward(self, x):
        return (x.permute(NHWC)[:, :, 1:],)


torch.manual_seed(0)
model, x = PermuteSlice().eval(), torch.randn(1, 3, 4, 5)
with torch.no_grad():
    exported = torch.export.export(model, (x,), strict=False)
edge = to_edge(exported, compile_config=EdgeCompileConfig()).exported_program()
ep = deserialize(serialize(edge))  # ExecuTorch's serde round trip: the same program, arguments by keyword
for name, prog in (("as lowered", edge), ("as loaded", ep)):
    (node,) = [n for n in prog.graph.nodes if "slice_copy" in str(n.target)]
    print(f"{name}: slice_copy args={node.args} kwargs={node.kwargs}")
try:
    gm = PropagateViewCopyPermuteDownPass(ep)(copy.deepcopy(ep.graph_module)).graph_module
except IndexError as exc:
    print(f"the pass raised IndexError: {exc}")
    print("REPRODUCED: PropagateViewCopyPermuteDownPass read a loaded slice's keyword dim as args[1]")
    sys.exit(1)

with torch.no_grad():
    got, expected = gm(x)[0], model(x)[0]
if got.shape != expected.shape or not torch.allclose(got, expected):
    print("REPRODUCED: PropagateViewCopyPermuteDownPass changed what the loaded program computes")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
