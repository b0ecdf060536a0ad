"""XNNPACK's DecomposeBatchNorm and FuseBatchNormPass (executorch.backends.xnnpack._passes), executorch 1.5.1.

Both name the parameters they create after an existing one and create them with
backends.transforms.utils.create_constant_placeholder, which RETURNS THE EXISTING placeholder when the name is
taken ("Multiple pattern replacements may request the same shared weight"). So:
- DecomposeBatchNorm names the depthwise weight / bias after the batch norm's gamma: without affine parameters
  (BatchNorm2d(affine=False)) gamma is None, get_tensor_name gives "", and every such batch norm gets
  "_decomposed_bn_weight" / "_decomposed_bn_bias": the second one silently computes with the first one's folded
  statistics (a shape error instead when the channel counts differ).
- FuseBatchNormPass names the folded weight after the conv's weight ("<weight>_fused_bn"): one conv weight
  shared by two convolutions, each followed by its own batch norm (a shared conv with a batch norm per
  domain), gives both the same name, and the second conv computes with the first batch norm folded in.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.xnnpack._passes.decompose_batch_norm import DecomposeBatchNorm
from executorch.backends.xnnpack._passes.fuse_batch_norm import FuseBatchNormPass
from executorch.exir import to_edge
from executorch.exir.passes import dead_code_elimination_pass


class TwoPlainBatchNorms(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.BatchNorm2d(4, affine=False)
        self.b = torch.nn.BatchNorm2d(4, affine=False)

    def forward(self, x):
        return self.a(torch.relu(x)), self.b(torch.tanh(x))


class SharedConvPerDomainBatchNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 1)
        self.bn_a = torch.nn.BatchNorm2d(4)
        self.bn_b = torch.nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn_a(self.conv(x)), self.bn_b(self.conv(torch.relu(x)))


def run(model, channels, pass_cls):
    torch.manual_seed(0)
    model = model.eval()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-1, 1)
            m.running_var.uniform_(0.5, 2)
    x = torch.randn(1, channels, 5, 5)
    ep = to_edge(torch.export.export(model, (x,))).exported_program()
    dead_code_elimination_pass(ep.graph_module)  # as XNNPACK's partitioner hands it: no dead getitems
    ep._graph_module = pass_cls(ep)(ep.graph_module).graph_module
    with torch.no_grad():
        want, got = model(x), ep.module()(x)
    return [i for i, (w, g) in enumerate(zip(want, got)) if not torch.allclose(w, g, atol=1e-4)]


problems = []
bad = run(TwoPlainBatchNorms(), 4, DecomposeBatchNorm)
if bad:
    problems.append(f"DecomposeBatchNorm: outputs {bad} of two BatchNorm2d(affine=False) differ from eager")
bad = run(SharedConvPerDomainBatchNorm(), 3, FuseBatchNormPass)
if bad:
    problems.append(f"FuseBatchNormPass: outputs {bad} of a shared conv with a batch norm per branch differ from eager")
for p in problems:
    print("REPRODUCED:", p)
sys.exit(1 if problems else 0)
