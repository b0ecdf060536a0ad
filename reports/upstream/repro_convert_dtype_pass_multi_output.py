"""ConvertDtypePass (executorch.backends.transforms.convert_dtype_pass), executorch 1.5.1.

ConvertDtypePass(src, dst) casts src-dtype placeholders to dst and rewrites meta['val'] of every
call_function whose meta['val'] is a single FakeTensor of src dtype. Ops with several outputs
(native_layer_norm, native_batch_norm, split_with_sizes_copy: meta['val'] is a tuple or list) and the
getitem nodes that unpack them (skipped explicitly) keep src dtype in meta['val'], while at run time
they now compute dst: e.g. ConvertDtypePass(torch.float32, torch.float16) on a layer norm leaves
meta['val'] saying float32 on a node that returns float16, and the edge verifier then sees an add
of float16 and "float32" tensors (mismatched dtypes).
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import operator
import sys

import torch
from executorch.backends.transforms.convert_dtype_pass import ConvertDtypePass
from executorch.exir import to_edge
from torch.fx.passes.fake_tensor_prop import FakeTensorProp


class LayerNormAdd(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(8)

    def forward(self, x):
        return self.norm(x) + x


x = torch.randn(2, 8)
ep = to_edge(torch.export.export(LayerNormAdd(), (x,))).exported_program()
gm = ConvertDtypePass(torch.float32, torch.float16)(ep.graph_module).graph_module
claimed = {n.name: n.meta["val"] for n in gm.graph.nodes if n.op == "call_function"}
# what the nodes compute now: propagate (fake) values from float16 inputs through the rewritten graph
fake_inputs = [n.meta["val"].to(torch.float16) if n.meta["val"].dtype == torch.float32 else n.meta["val"]
               for n in gm.graph.nodes if n.op == "placeholder"]
FakeTensorProp(gm, mode=fake_inputs[0].fake_mode).propagate_dont_convert_inputs(*fake_inputs)
problems = []
for n in gm.graph.nodes:
    if n.op != "call_function" or n.name not in claimed:
        continue
    old, new = claimed[n.name], n.meta["val"]
    old_d = [t.dtype for t in old] if isinstance(old, (tuple, list)) else [old.dtype]
    new_d = [t.dtype for t in new] if isinstance(new, (tuple, list)) else [new.dtype]
    if old_d != new_d:
        kind = "getitem of a multi-output op" if n.target is operator.getitem else "multi-output op"
        problems.append(f"{n.name} ({kind}): meta['val'] says {old_d}, it computes {new_d}")
for p in problems:
    print("REPRODUCED:", p)
sys.exit(1 if problems else 0)
