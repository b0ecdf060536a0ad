"""DecomposeWrapWithAutocast (executorch.backends.qualcomm._passes.decompose_wrap_with_autocast), executorch 1.5.1.

torch.export turns a torch.autocast region into a wrap_with_autocast(device, dtype, enabled, cache,
submod, *operands) node whose submodule names its placeholders arg0_1, arg1_1, ...
DecomposeWrapWithAutocast._replace inlines the submodule with merge_decomposed_graph, but builds its remap
from the names of the outer operands ({"x": x, "p_w": p_w}); merge_decomposed_graph looks each
submodule placeholder up by its own name (remap.pop(placeholder.name)), so the first lookup raises
KeyError: 'arg1_1'. Any autocast region (strict or non-strict export) makes the pass raise; it runs in
QnnPassManager.transform_for_export_pipeline, on the exported program's graph module.
Found by passgate (check runs) on the hand-written fixtures/corpus/targeted_qnn_ops.py graph (an autocast
region with enabled=False, as models keep one in float32).
This script exports a module with such a region strictly and runs the pass on the exported program's
graph module (the export stage, as QNN runs it).
Expected: the region is inlined (remap keyed by the submodule's placeholders, in operand order) and the
program returns the eager result.
Standalone: torch + executorch only (no QNN SDK). Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.qualcomm._passes.decompose_wrap_with_autocast import DecomposeWrapWithAutocast


class Float32Region(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 3))

    def forward(self, x):
        with torch.autocast("cpu", enabled=False):
            return torch.mm(x, self.w)


torch.manual_seed(0)
model = Float32Region().eval()
x = torch.randn(3, 4)
expected = model(x)
gm = torch.export.export(model, (x,), strict=True).graph_module

for n in gm.graph.nodes:
    if isinstance(n.target, torch._higher_order_ops.wrap.WrapWithAutocast):
        submod = getattr(gm, n.args[4].target)
        print(f"wrap_with_autocast operands: {[a.name for a in n.args[5:]]}; "
              f"submodule placeholders: {[p.name for p in submod.graph.find_nodes(op='placeholder')]}")
try:
    gm = DecomposeWrapWithAutocast()(gm).graph_module
except KeyError as e:
    print(f"DecomposeWrapWithAutocast raised KeyError: {e}")
    print("REPRODUCED: DecomposeWrapWithAutocast keys its remap by the outer operand names, "
          "merge_decomposed_graph looks up the submodule's placeholder names")
    sys.exit(1)
got = gm(model.w, x)[0]
if not torch.allclose(got, expected):
    print(f"not the KeyError, but the inlined region differs from eager: max diff {(got - expected).abs().max()}")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
