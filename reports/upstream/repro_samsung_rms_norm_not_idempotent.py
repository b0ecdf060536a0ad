"""RecomposeRmsNorm (executorch.backends.samsung._passes.compose_rms_norm), executorch 1.5.1.

RecomposeRmsNorm.call replaces a decomposed nn.RMSNorm (found through source_fn_stack by
get_source_partitions) by one aten.rms_norm node and then sets `rms_node.meta = output_node.meta`:
the new node inherits the output mul's source_fn_stack, which still names torch.nn.RMSNorm. Run the
pass a second time on its own result and get_source_partitions finds a one-node "RMSNorm partition"
holding just that rms_norm node; _get_eps_node finds no add node in it and raises
RuntimeError("Failed to locate add node in RMSNorm partition"). The pass is not idempotent: a graph
it has already recomposed (or one holding a genuine rms_norm traced from nn.RMSNorm) makes it fail.
Found by passgate (check idempotent: the pass run again on its own output raised) on the hand-written
fixtures/corpus/targeted_rms_norm.py graph.
This script exports nn.RMSNorm(8) strictly (only a strict export records source_fn_stack), lowers it
with to_edge, runs the pass once (checks the result against eager), then runs it again on its result.
Expected: the second run leaves the already recomposed rms_norm alone.
Standalone: torch + executorch only (no ENN SDK). Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.samsung._passes.compose_rms_norm import RecomposeRmsNorm
from executorch.exir import to_edge

torch.manual_seed(0)
model = torch.nn.RMSNorm(8, eps=1e-5).eval()
with torch.no_grad():
    model.weight.copy_(torch.rand(8) + 0.5)
x = torch.randn(2, 4, 8)
ep = to_edge(torch.export.export(model, (x,), strict=True)).exported_program()

RecomposeRmsNorm()(ep.graph_module)  # mutates ep.graph_module in place
rms = [n for n in ep.graph_module.graph.nodes if n.op == "call_function" and "rms_norm" in str(n.target)]
print(f"first run: {len(rms)} rms_norm node(s); "
      f"source_fn_stack of the new node: {rms[0].meta.get('source_fn_stack') if rms else None}")
ok = torch.allclose(ep.module()(x), model(x), atol=1e-5, rtol=1e-5)
print(f"first run matches eager: {ok}")

try:
    RecomposeRmsNorm()(ep.graph_module)
except RuntimeError as exc:
    print(f"REPRODUCED: the second run of RecomposeRmsNorm on its own result raised RuntimeError: {exc}")
    sys.exit(1)
print("second run succeeded: not reproduced")
sys.exit(0)
