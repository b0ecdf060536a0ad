"""GenerateSliceAndSelectNopConstraints (executorch.backends.cadence.aot.memory_constraints), executorch 1.5.1.

removable_slice_or_select_op and get_relative_offset_of_slice read slice_copy's dim and start only from
node.args (``dim = 0 if len(node.args) == 1 else node.args[1]``, start likewise). In a program saved and
loaded with ExecuTorch's serde, the arguments that have defaults (dim, start, end, step) come back as
keywords, so every slice reads as a dim-0 slice from 0: a slice of columns, h[:, 2:4] of a (4, 8) tensor,
which is no contiguous block of h, is turned into aten._slice_copy_nop with a placement constraint at
offset 0 of h, i.e. it would alias h's first eight elements (row 0) instead of copying columns 2..3.
The program as to_edge returns it (positional arguments) keeps its slice_copy. Same reading as
SimplifySliceOpPass's (passgate's cadence catalog records that one as a known numerics failure); here the
wrong plan cannot show in a run on CPU (the nop has no CPU kernel), only in the constraint it records.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import executorch.backends.cadence.aot.ops_registrations  # noqa: F401  (aten._slice_copy_nop and the other Cadence ops)
import torch
from executorch.backends.cadence.aot.memory_constraints import GenerateSliceAndSelectNopConstraints, MemConstraints
from executorch.exir import to_edge
from executorch.exir.memory_planning import update_all_tensors_lifetime
from executorch.exir.passes import SpecPropPass, ToOutVarPass
from executorch.exir.serde.serialize import deserialize, serialize


class Model(torch.nn.Module):
    def forward(self, x):
        h = torch.relu(x)
        return h[:, 2:4] * 2.0  # a slice of columns: not a contiguous block of h


def plan_slices(ep):
    """What to_executorch hands a memory planner (specs, out variants, lifetimes), then the slice constraints:
    [(target, offset of the slice in its input or None)]."""
    gm = SpecPropPass()(ep.graph_module).graph_module
    gm = ToOutVarPass()(gm).graph_module
    update_all_tensors_lifetime(gm, ep.graph_signature)
    constraints = MemConstraints()
    GenerateSliceAndSelectNopConstraints(constraints)(gm)
    out = []
    for n in gm.graph.nodes:
        if "slice" in str(n.target):
            source = constraints.get_relative_placement_source(n)
            out.append((str(n.target), None if source is None else source.offset))
    return out


ep = to_edge(torch.export.export(Model(), (torch.randn(4, 8),))).exported_program()
lowered = plan_slices(ep)
loaded = plan_slices(deserialize(serialize(ep)))
print("as to_edge returns it:", lowered)
print("saved and loaded     :", loaded)
problems = []
if lowered != [("aten.slice_copy.Tensor_out", None)]:
    problems.append(f"unexpected plan of the positional form: {lowered}")
if loaded and loaded[0][0] == "aten._slice_copy_nop.Tensor_out":
    problems.append(f"the column slice of the loaded program became a nop placed at byte offset {loaded[0][1]} of "
                    "its input (a dim-0 slice from 0), though its columns are no contiguous block")
for p in problems:
    print("REPRODUCED:", p)
sys.exit(1 if problems else 0)
