"""Rank0ToRank1Pass (executorch.backends.transforms.rank_0_to_rank_1), executorch 1.5.1.

The pass promises (docstring) to turn rank-0 inputs into rank-1 tensors. It only rewrites
meta['val'] of rank-0 placeholders, to shape (1, 1) (rank 2), and leaves the tensors alone:
BatchNorm's num_batches_tracked buffer (shape ()) now claims shape (1, 1), so metadata no longer
describes what the program computes (passgate check val_matches_execution).
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.transforms.rank_0_to_rank_1 import Rank0ToRank1Pass
from executorch.exir import to_edge


class ConvBN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn = torch.nn.Conv2d(3, 4, 1), torch.nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn(self.conv(x))


ep = to_edge(torch.export.export(ConvBN().eval(), (torch.randn(1, 3, 4, 4),))).exported_program()
Rank0ToRank1Pass()(ep.graph_module)
buffers = {s.arg.name: s.target for s in ep.graph_signature.input_specs if s.target}
bad = []
for n in ep.graph_module.graph.nodes:
    if n.op == "placeholder" and n.name in buffers:
        tensor = ep.state_dict.get(buffers[n.name], ep.constants.get(buffers[n.name]))
        if tensor is not None and tuple(n.meta["val"].shape) != tuple(tensor.shape):
            bad.append(f"{n.name}: meta['val'] shape {tuple(n.meta['val'].shape)}, tensor shape {tuple(tensor.shape)}")
for b in bad:
    print("REPRODUCED:", b)
sys.exit(1 if bad else 0)
