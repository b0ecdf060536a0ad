"""convert_constant_dim_order_pass (executorch/exir/passes/convert_constant_dim_order_pass.py, run
by to_edge in _generate_edge_program), executorch 1.5.1.

to_edge raises "RuntimeError: Missing input spec for lifted tensor b." on any model holding a
non-persistent buffer that is neither contiguous nor channels-last (here a transposed one used
by a plain add, no cast or clone). torch.export stores non-persistent buffers in
ep.constants with an input spec of kind BUFFER; the pass's loop over ep.constants normalizes
the tensor and then looks up its placeholder with kind InputKind.CONSTANT_TENSOR only
(_update_placeholder_meta), finds no such spec and raises. (The same helper's second check
tests `input_spec is None` again where `placeholder_node is None` was meant.) Upstream's tests
cover a plain tensor attribute (CONSTANT_TENSOR) and a persistent buffer, never a
non-persistent one.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys
import traceback

import torch
from executorch.exir import to_edge


class NonPersistentStrided(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.randn(4, 3).t(), persistent=False)

    def forward(self, x):
        return x + self.b


model = NonPersistentStrided()
x = torch.randn(3, 4)
ep = torch.export.export(model, (x,))
print("input specs:", [(s.kind.name, s.target, s.persistent) for s in ep.graph_signature.input_specs])
print("ep.constants:", {k: tuple(v.stride()) for k, v in ep.constants.items()})
problems = []
try:
    out = to_edge(ep).exported_program().module()(x)
    print("to_edge: ok, matches eager:", torch.allclose(out, model(x)))
except Exception as exc:
    where = [f.name for f in traceback.extract_tb(exc.__traceback__)][-3:]
    print(f"to_edge: {type(exc).__name__}: {exc} (in {' -> '.join(where)})")
    problems.append(f"to_edge raises {type(exc).__name__}: {exc}")
for p in problems:
    print("REPRODUCED:", p)
sys.exit(1 if problems else 0)
