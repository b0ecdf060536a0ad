#!/usr/bin/env python3
"""Cadence's HoistOpsCloserToDefPass hoists a slice above the definition of its own data-dependent end.

The pass moves each ``slice_copy`` (one of its targets) to just after the definition of its input (for a
placeholder input: after the last placeholder), so the slice is computed as early as possible. It moves the
node without looking at its other arguments: when the slice's end is a symbol read at run time
(``k = n.item()``, ``x[:k]``), the hoisted slice reads ``k`` before the ``_local_scalar_dense`` node that
defines it, and the graph is no longer topologically ordered; recompiling it raises.

Found by ``passgate fuzz --contexts`` (a ``slice`` in the ``producer=item`` context), shrunk to two statements.
Plain torch + executorch; exits 1 while the bug is present, 0 once the pass leaves such a slice where it is (or
hoists it no further than its last argument's definition).
"""

import sys

import executorch.backends.cadence.aot.ops_registrations  # noqa: F401 - registers the cadence ops the pass names
import torch
from executorch.backends.cadence.aot.reorder_ops import HoistOpsCloserToDefPass
from executorch.exir import to_edge


class DataDependentSlice(torch.nn.Module):
    def forward(self, x, n):
        k = n.item()
        torch._check(k >= 0)
        torch._check(k <= x.shape[0])
        return (x[:k],)


def main() -> int:
    ep = torch.export.export(DataDependentSlice(), (torch.randn(2, 3), torch.tensor(1)))
    gm = to_edge(ep).exported_program().graph_module
    try:
        result = HoistOpsCloserToDefPass()(gm)
        (result.graph_module if result is not None else gm).graph.lint()
    except RuntimeError as exc:
        print(f"BUG: HoistOpsCloserToDefPass broke the graph's order: {str(exc).splitlines()[0][:200]}")
        return 1
    print("ok: the slice stays after the definition of its end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
