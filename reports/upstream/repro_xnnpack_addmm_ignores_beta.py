"""torch.addmm(bias, x, w, beta=0.5) lowered with the XNNPACK partitioner and run by the ExecuTorch runtime,
executorch 1.5.1: the delegate computes x @ w + bias, as if beta were 1.

XNNPACK's addmm config takes the addmm as a fully-connected layer with the bias as its bias and does not look at
beta (or alpha), so the delegate adds the whole bias; eager and the portable runtime add beta * bias. Found by
passgate's `runtime_numerics` of the XNNPACK partitioner's lowered program on a generated corpus graph
(`corpus_5c0e5150`: an addmm with beta=0.5 under a max and a hardswish, max abs err 0.6).
Expected: the lowered program's result equals eager's (or the partitioner leaves such an addmm to the portable
kernels). Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime


class Addmm(torch.nn.Module):
    def __init__(self, beta: float, alpha: float):
        super().__init__()
        self.beta, self.alpha = beta, alpha
        self.w = torch.nn.Parameter(torch.full((4, 3), 0.25))
        self.b = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))

    def forward(self, x):
        return torch.addmm(self.b, x, self.w, beta=self.beta, alpha=self.alpha)


wrong = 0
x = torch.ones(2, 4)
for beta, alpha in ((1.0, 1.0), (0.5, 1.0), (1.0, 2.0)):
    model = Addmm(beta, alpha).eval()
    ep = torch.export.export(model, (x,), strict=False)
    program = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch()
    delegated = "XnnpackBackend" in [d.id for plan in program.executorch_program.execution_plan for d in plan.delegates]
    got = Runtime.get().load_program(program.buffer).load_method("forward").execute([x])[0]
    expected = model(x).detach()
    same = torch.allclose(got, expected, atol=1e-5)
    wrong += not same
    print(f"beta {beta} alpha {alpha} delegated {delegated}: eager {expected[0].tolist()}  runtime "
          f"{got[0].tolist()}  {'ok' if same else 'DIFFERS'}")
if wrong:
    print(f"REPRODUCED: the XNNPACK delegate's addmm ignores beta / alpha ({wrong} case(s) differ)")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
