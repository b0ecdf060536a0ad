"""DecomposeScaledDotProductAttention (executorch.backends.transforms.decompose_sdpa), executorch 1.5.1.

The constructor takes allow_non_fake_inputs (its comment: "With allow_non_fake_inputs=False, we don't get
_unsafe_view ops in the graph, we allow disabling it here") and stores it in self._allow_non_fake_inputs,
which nothing reads: call() traces the decomposition with make_fx(_allow_non_fake_inputs=...) taken from
its own keyword argument, default True, and PassBase.__call__ never passes one. So
DecomposeScaledDotProductAttention(allow_non_fake_inputs=False) decomposes exactly like the default
construction; only call(gm, allow_non_fake_inputs=False) honours the setting.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import executorch.backends.transforms.decompose_sdpa as decompose_sdpa
import torch
from executorch.backends.transforms.decompose_sdpa import DecomposeScaledDotProductAttention


class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


seen = []
real_make_fx = decompose_sdpa.make_fx


def spy_make_fx(*args, **kwargs):  # records what the pass asks make_fx for
    seen.append(kwargs.get("_allow_non_fake_inputs"))
    return real_make_fx(*args, **kwargs)


decompose_sdpa.make_fx = spy_make_fx
q = k = v = torch.randn(1, 2, 5, 8)
gm = torch.export.export(Attention(), (q, k, v)).graph_module
p = DecomposeScaledDotProductAttention(allow_non_fake_inputs=False)
p(gm)
print(f"constructed with allow_non_fake_inputs=False (stored: {p._allow_non_fake_inputs}); "
      f"make_fx was called with _allow_non_fake_inputs={seen}")
problems = []
if any(flag is not False for flag in seen):
    problems.append("the constructor's allow_non_fake_inputs=False never reaches make_fx: the decomposition is "
                    "traced with _allow_non_fake_inputs=True, as if the argument had not been given")
for p in problems:
    print("REPRODUCED:", p)
sys.exit(1 if problems else 0)
