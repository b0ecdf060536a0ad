"""XNNPACK's Conv1dUnsqueezePass (executorch.backends.xnnpack._passes.conv1d_unsqueeze_pass), executorch 1.5.1.

It makes a conv1d's weight 4-D by replacing the parameter in the state dict and its placeholder's
meta['val'], whoever else reads it, and recognizes a conv1d by its weight's rank. A weight read twice breaks:
the same nn.Conv1d applied twice (the second convolution now sees a 4-D weight, is taken for a conv2d and left
with a 3-D input: the retrace raises), or a conv1d weight also read by another op (a tied linear: its view of
the weight now gets a 4-D tensor). backends.transforms' ConvertConv1dToConv2dPass checks the weight's users
for exactly this.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.xnnpack._passes.conv1d_unsqueeze_pass import Conv1dUnsqueezePass
from executorch.exir import to_edge


class Twice(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(4, 4, 3, padding=1)

    def forward(self, x):
        return self.conv(torch.relu(self.conv(x)))


ep = to_edge(torch.export.export(Twice().eval(), (torch.randn(2, 4, 8),))).exported_program()
problems = []
try:
    Conv1dUnsqueezePass(ep)(ep.graph_module)
except Exception as exc:
    problems.append(f"on one Conv1d applied twice Conv1dUnsqueezePass raises {type(exc).__name__}: "
                    f"{str(exc).splitlines()[0]}")
for p in problems:
    print("REPRODUCED:", p)
sys.exit(1 if problems else 0)
