"""SimplifySliceOpPass (executorch.backends.cadence.aot.simplify_ops), executorch 1.5.1.

SimplifySliceOpPass.maybe_remove_or_replace clamps an open slice end to the dim's size taken
from meta['val']. On a dynamic dim that size is a SymInt of the program's ShapeEnv (s77 below),
and the pass writes it as a literal into the new slice_copy's args:
  - the recompiled GraphModule's code names an undefined variable: calling it raises NameError;
  - run by torch.fx.Interpreter, the SymInt is turned into its hint (the example batch, 4), so
    with a batch of 6, x[1:] computes x[1:4] and the result differs from eager;
  - that run specializes the ShapeEnv, which a deepcopy of the program taken before the pass
    shares: the caller's copy loses its dynamic dim too (its placeholder meta becomes static).
Expected: the open end stays open (or becomes a sym_size node), and the program keeps running
for any batch in the Dim's range.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import contextlib
import copy
import io
import sys

import torch
from executorch.backends.cadence.aot.simplify_ops import SimplifySliceOpPass
from executorch.exir import to_edge


class DropFirst(torch.nn.Module):
    def forward(self, x):
        return x[1:].sum(0)


batch = torch.export.Dim("batch", min=3, max=64)
ep = torch.export.export(DropFirst(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: batch}})
edge = to_edge(ep).exported_program()
kept = copy.deepcopy(edge)
kept_x = next(iter(kept.graph_module.graph.nodes))
shape_before = str(tuple(kept_x.meta["val"].shape))
gm = SimplifySliceOpPass()(edge.graph_module).graph_module

bad = []
slices = [n for n in gm.graph.nodes if "slice_copy" in str(n.target)]
bad += [f"slice_copy args {n.args} hold a SymInt" for n in slices if any(isinstance(a, torch.SymInt) for a in n.args)]
x6 = torch.randn(6, 3)
expected = DropFirst()(x6)
try:
    with contextlib.redirect_stderr(io.StringIO()):  # GraphModule prints the traceback itself
        gm(x6)
except NameError as exc:
    bad.append(f"calling the GraphModule raises NameError: {exc}")
got = torch.fx.Interpreter(gm).run(x6)[0]
if not torch.allclose(got, expected):
    bad.append(f"batch 6 via Interpreter: eager {[round(v, 4) for v in expected.tolist()]}, "
               f"after the pass {[round(v, 4) for v in got.tolist()]}")
shape_after = str(tuple(kept_x.meta["val"].shape))
if shape_after != shape_before:
    bad.append(f"copy taken before the pass: x meta shape {shape_before} -> {shape_after}")
for b in bad:
    print("REPRODUCED:", b)
if not bad:
    print("SimplifySliceOpPass keeps the dynamic slice runnable")
sys.exit(1 if bad else 0)
