"""weights_to_outputs_pass (executorch.exir.passes.weights_to_outputs_pass), executorch 1.5.1.

On a joint forward-backward (training) program the pass appends each weight that has a gradient
to the graph's outputs, with an OutputSpec of kind TOKEN (upstream's own comment calls that a
hack: there is no OutputKind for a parameter; that and the extra outputs are by design and not
what is reported here). The bug: the pass is not idempotent. It does not look for the TOKEN
outputs it already added, so a second call appends the same weights again. Here (loss + 2
gradients, weight and bias) the outputs grow 3 -> 5 -> 7, one more copy of each weight per call.
Expected: a second call leaves an already-processed program unchanged.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
import torch.nn.functional as F
from executorch.exir import to_edge
from executorch.exir.passes.weights_to_outputs_pass import weights_to_outputs_pass
from torch.export.experimental import _export_forward_backward


class TrainLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        return F.cross_entropy(self.linear(x), y)


inputs = (torch.randn(2, 4), torch.tensor([0, 2]))
joint = _export_forward_backward(torch.export.export(TrainLinear(), inputs, strict=False))
ep = to_edge(joint).exported_program()


def n_outputs(ep):
    return len(ep.graph.output_node().args[0]), len(ep.graph_signature.output_specs)


counts = [n_outputs(ep)]
for _ in range(2):
    ep = weights_to_outputs_pass(ep)
    counts.append(n_outputs(ep))
print("graph outputs / output specs, before -> 1st call -> 2nd call:", " -> ".join(f"{g}/{s}" for g, s in counts))
if counts[2] != counts[1]:
    print("REPRODUCED: a second weights_to_outputs_pass call appended the weights again")
    sys.exit(1)
print("weights_to_outputs_pass is idempotent")
