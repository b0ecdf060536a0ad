"""RecomposeRmsNorm (executorch.backends.samsung._passes.compose_rms_norm), executorch 1.5.1.

The pass finds a decomposed nn.RMSNorm through source_fn_stack (get_source_partitions) and replaces it
by one aten.rms_norm node whose weight is _get_gamma_node(output_node): the first argument of the
partition's output mul that is not a call_function. For an nn.RMSNorm without a weight
(elementwise_affine=False) the output mul is mul(x, rsqrt(...)), whose only such argument is the norm's
input x itself; so the pass emits rms_norm(x, <x's whole shape>, x, eps): the input is used as the weight
and its whole shape as normalized_shape (normalizing over every dimension instead of the last one), and
the recomposed program computes a different result than eager.
Found by passgate (check numerics) on the `norm_plain` output of the hand-written
fixtures/corpus/targeted_rms_norm.py graph.
This script exports nn.RMSNorm(8, elementwise_affine=False) strictly (only a strict export records the
source_fn_stack the pass matches), lowers it with to_edge, runs the pass on the edge program's graph
module and compares the recomposed program's output with eager.
Expected: a weightless RMSNorm is recomposed with weight=None and normalized_shape [8] (or left alone).
Standalone: torch + executorch only (no ENN SDK). Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.samsung._passes.compose_rms_norm import RecomposeRmsNorm
from executorch.exir import to_edge

torch.manual_seed(0)
model = torch.nn.RMSNorm(8, elementwise_affine=False).eval()
x = torch.randn(2, 4, 8)
ep = to_edge(torch.export.export(model, (x,), strict=True)).exported_program()
gm = RecomposeRmsNorm()(ep.graph_module).graph_module

rms = [n for n in gm.graph.nodes if n.op == "call_function" and "rms_norm" in str(n.target)]
for n in rms:
    inp, shape, weight, eps = n.args
    print(f"emitted rms_norm(input={inp.name}, normalized_shape={shape}, weight={weight}, eps={eps})")
if not rms:
    print("no rms_norm node emitted")

expected = model(x)
out = gm(x)[0]
diff = (out - expected).abs().max().item()
print(f"max |recomposed - eager| = {diff:.4g}")
if not torch.allclose(out, expected, atol=1e-5, rtol=1e-5):
    print("REPRODUCED: RecomposeRmsNorm used the input of a weightless RMSNorm as its weight")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
