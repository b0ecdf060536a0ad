"""XNNPACK's FuseBatchNormPass (executorch.backends.xnnpack._passes.fuse_batch_norm), executorch 1.5.1.

can_fuse checks that the conv weight and the batch norm's weight are parameters, not its bias: a batch norm
after a conv whose shift is computed (F.batch_norm(conv(x), mean, var, weight, bias + shift), a class- or
condition-dependent shift) passes, and _fuse_ops then reads the bias with get_param_tensor, which raises
"unsupported param type, call_function".
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
import torch.nn.functional as F
from executorch.backends.xnnpack._passes.fuse_batch_norm import FuseBatchNormPass
from executorch.exir import to_edge
from executorch.exir.passes import dead_code_elimination_pass


class ConditionalShift(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 1)
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x, shift):
        return F.batch_norm(self.conv(x), self.bn.running_mean, self.bn.running_var, self.bn.weight,
                            self.bn.bias + shift, False)


ep = to_edge(torch.export.export(ConditionalShift().eval(), (torch.randn(1, 3, 4, 4), torch.randn(3)))).exported_program()
dead_code_elimination_pass(ep.graph_module)
problems = []
try:
    FuseBatchNormPass(ep)(ep.graph_module)
except Exception as exc:
    problems.append(f"FuseBatchNormPass raises {type(exc).__name__}: {str(exc).splitlines()[0]}")
for p in problems:
    print("REPRODUCED:", p)
sys.exit(1 if problems else 0)
