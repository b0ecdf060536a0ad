"""XnnpackPartitioner (executorch.backends.xnnpack.partition.config.generic_node_configs.AvgPoolingConfig), executorch 1.5.1.

F.avg_pool2d on an unbatched [C, H, W] tensor (legal in torch) exports as aten.avg_pool2d on a rank-3 input.
AvgPoolingConfig.check_constraints checks ceil_mode, padding and divisor_override but not the rank, so the
partitioner delegates the pool; XNNPACK's own preprocess then runs ChannelsLastTaggedReshapePass, which asserts
"Attempting to convert non-NHWC compatible node to NHWC" on the rank-3 input, and to_edge_transform_and_lower
fails on the whole program instead of leaving the pool on the CPU (passgate: partitioner.xnnpack x
targeted_transforms_layout3 x runs). Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower


class UnbatchedPool(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.avg_pool2d(x, 2)


x = torch.randn(3, 4, 4)
ep = torch.export.export(UnbatchedPool(), (x,), strict=True)
try:
    lowered = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
except Exception as exc:  # noqa: BLE001 - the pass manager wraps the assertion
    cause = exc.__cause__ or exc
    if "non-NHWC compatible" in str(cause):
        print(f"REPRODUCED: lowering raised {type(exc).__name__}: {exc} (cause: {cause})")
        sys.exit(1)
    raise
got = lowered.exported_program().module()(x)
print(f"lowered; max abs error against eager {float((got - UnbatchedPool()(x)).abs().max()):.3g}")
sys.exit(0)
