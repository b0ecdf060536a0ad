"""RemoveRedundantCopyPass (executorch.backends.xnnpack._passes.remove_redundant_copy_pass), executorch 1.5.1.

The pass is meant to remove pairs of layout copies (aten._to_copy to channels-last and back) that
ChannelsLastTaggedReshapePass inserted. Its second branch in _try_remove_regular_redundant_to_copy
fires for any _to_copy whose input is "NCHW" (not tagged XNN_NHWC_NODE, which is every node of a
graph without convolutions) and that is itself NCHW: it replaces the copy by its input, whatever the
copy did. After DimOrderOpsRevertPass (which runs before it in XNNPACKPassManager) every dtype cast
is an aten._to_copy, so a plain `x.relu().to(torch.float16)` loses its cast: the program returns
float32 where it returned float16. Run as XNNPACKPassManager orders them: DimOrderOpsRevertPass,
ChannelsLastTaggedReshapePass, RemoveRedundantCopyPass.
Expected: a _to_copy that changes the dtype (or is not one of a pair of layout copies) is kept.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.xnnpack._passes.channels_last_tagged_reshape_pass import ChannelsLastTaggedReshapePass
from executorch.backends.xnnpack._passes.remove_redundant_copy_pass import RemoveRedundantCopyPass
from executorch.exir import to_edge
from executorch.exir.passes.memory_format_ops_pass import DimOrderOpsRevertPass


class Cast(torch.nn.Module):
    def forward(self, x):
        return x.relu().to(torch.float16)


x = torch.randn(2, 3)
ep = to_edge(torch.export.export(Cast(), (x,))).exported_program()
gm = ep.graph_module
for p in (DimOrderOpsRevertPass(), ChannelsLastTaggedReshapePass(ep), RemoveRedundantCopyPass(ep)):
    gm = p(gm).graph_module
    if isinstance(p, DimOrderOpsRevertPass):
        casts = [n for n in gm.graph.nodes if n.op == "call_function" and "_to_copy" in str(n.target)]
        print(f"after DimOrderOpsRevertPass: {len(casts)} _to_copy cast(s) to {[n.kwargs.get('dtype') for n in casts]}")

out = gm(x)[0]
expected = Cast()(x)
print(f"eager: {expected.dtype}; after the passes: {out.dtype}")
left = [n for n in gm.graph.nodes if n.op == "call_function" and "_to_copy" in str(n.target)]
print(f"_to_copy nodes left: {len(left)}")
if out.dtype != expected.dtype:
    print("REPRODUCED: RemoveRedundantCopyPass removed a dtype cast that is not a redundant layout copy")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
