"""Passes whose results cannot be executed, for the numerics-blind report (tests/test_blind.py).

Written the way real bugs are: plausible code with one thing wrong, here an
element count off by one, so the program the pass returns raises when it runs
and no case can judge its numerics.
"""

from __future__ import annotations

import copy
from typing import Optional

import torch
import torch.fx
from executorch.exir.dialects._ops import ops as exir_ops
from torch.fx.passes.infra.pass_base import PassBase, PassResult

__all__ = ["FlattenOutputOffByOne", "FlattenRank4OutputOffByOne"]

EDGE = exir_ops.edge.aten


class FlattenOutputOffByOne(PassBase):
    """Flattens the first output before it is returned, asking for one element more than it holds."""

    only_rank: Optional[int] = None

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
        first = output.args[0][0]
        val = first.meta.get("val") if isinstance(first, torch.fx.Node) else None
        if not isinstance(val, torch.Tensor) or (self.only_rank is not None and val.dim() != self.only_rank):
            return PassResult(gm, False)
        with gm.graph.inserting_before(output):
            flat = gm.graph.call_function(EDGE.view_copy.default, (first, [val.numel() + 1]))  # the bug: + 1
        flat.meta = copy.copy(first.meta)
        output.replace_input_with(first, flat)
        gm.recompile()
        return PassResult(gm, True)


class FlattenRank4OutputOffByOne(FlattenOutputOffByOne):
    """The same bug, only where the first output is an image batch (rank 4): the other cases run."""

    only_rank = 4
