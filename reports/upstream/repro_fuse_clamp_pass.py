"""FuseClampPass (executorch.backends.transforms.fuse_conv_with_clamp), executorch 1.5.1.

conv2d -> relu is fused into et_vk.conv_with_clamp(..., output_min=0.0, output_max=sys.float_info.max).
1. runnable: the bound is a float64 maximum; the op's reference implementation (clamp of a float32
   tensor) raises "value cannot be converted to type float without overflow", so the edge program the
   pass returns can no longer run on CPU. float('inf') (what the op's own default uses) would be exact.
2. meta_stack_trace / meta_nn_module_stack: the fused node is made with graph.create_node and no
   metadata, so it carries neither a stack trace nor an nn_module_stack (nor a debug handle).
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import executorch.backends.vulkan.vulkan_preprocess  # noqa: F401  (importing fuse_conv_with_clamp first is a circular import)
import torch
from executorch.backends.transforms.fuse_conv_with_clamp import FuseClampPass
from executorch.exir import to_edge


class ConvReLU(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


x = torch.randn(1, 3, 8, 8)
ep = to_edge(torch.export.export(ConvReLU().eval(), (x,))).exported_program()
gm = FuseClampPass()(ep.graph_module).graph_module
fused = [n for n in gm.graph.nodes if "conv_with_clamp" in str(n.target)]
problems = []
print("fused node:", fused[0].format_node())
missing = [k for k in ("stack_trace", "nn_module_stack") if not fused[0].meta.get(k)]
if missing:
    problems.append(f"the fused node has no {', '.join(missing)}")
try:
    params = {**dict(ep.named_parameters()), **dict(ep.named_buffers())}
    args = [params[s.target] for s in ep.graph_signature.input_specs if s.target] + [x]
    gm(*args)
except RuntimeError as exc:
    problems.append(f"the fused program does not run: {exc}")
for p in problems:
    print("REPRODUCED:", p)
sys.exit(1 if problems else 0)
