"""The vendor's fusion: two clamps in a row become one (hardswish lowers to ``clamp(min=0)`` then ``clamp(max=6)``).

``FuseClampPairs`` is written the way the pass-writing guide asks: it edits
the outer clamp in place, so the fused node keeps its ``meta['val']``, stack
trace and module stack, and it fuses only when the two ranges overlap (two
disjoint ranges give a constant, which one clamp cannot express).
``FuseClampPairsLoose`` is the same fusion written carelessly, on purpose:
it keeps the outer clamp's range and forgets the inner one's, so hardswish's
``clamp(min=0)`` is lost and passgate's ``numerics`` check catches it. Plain
torch.fx passes (``PassBase``), no backend needed.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch.fx.passes.infra.pass_base import PassBase, PassResult

__all__ = ["clamp_pairs", "FuseClampPairs", "FuseClampPairsLoose"]


def _bound(node: torch.fx.Node, index: int, name: str) -> Optional[float]:
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name)


def _merged(lo1, hi1, lo2, hi2) -> Optional[tuple]:
    """(min, max) of one clamp equal to clamp(lo2, hi2) after clamp(lo1, hi1); None when the ranges are disjoint."""
    if any(isinstance(b, torch.fx.Node) for b in (lo1, hi1, lo2, hi2)):
        return None  # tensor bounds: not known here
    lo = max((b for b in (lo1, lo2) if b is not None), default=None)
    hi = min((b for b in (hi1, hi2) if b is not None), default=None)
    if lo is not None and hi is not None and lo > hi:
        return None
    return lo, hi


def clamp_pairs(graph: torch.fx.Graph) -> list[tuple[torch.fx.Node, torch.fx.Node, tuple]]:
    """(inner, outer, merged bounds) for every clamp whose only user is another clamp it can be fused with."""
    out = []
    for outer in graph.nodes:
        if outer.op != "call_function" or "clamp.default" not in str(outer.target) or not outer.args:
            continue
        inner = outer.args[0]
        if not (isinstance(inner, torch.fx.Node) and inner.target == outer.target and len(inner.users) == 1):
            continue
        merged = _merged(_bound(inner, 1, "min"), _bound(inner, 2, "max"),
                         _bound(outer, 1, "min"), _bound(outer, 2, "max"))
        if merged is not None:
            out.append((inner, outer, merged))
    return out


class FuseClampPairs(PassBase):
    """clamp(clamp(x, a, b), c, d) -> clamp(x, max(a, c), min(b, d)), keeping the outer node and its metadata."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        pairs = clamp_pairs(graph_module.graph)
        for inner, outer, (lo, hi) in pairs:
            outer.args, outer.kwargs = (inner.args[0], lo, hi), {}
            graph_module.graph.erase_node(inner)
        if pairs:
            graph_module.recompile()
        return PassResult(graph_module, bool(pairs))


class FuseClampPairsLoose(PassBase):
    """The same fusion keeping only the outer clamp's range (broken on purpose: ``numerics`` fails)."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        pairs = clamp_pairs(graph_module.graph)
        for inner, outer, _merged_range in pairs:
            outer.args = (inner.args[0], *outer.args[1:])
            graph_module.graph.erase_node(inner)
        if pairs:
            graph_module.recompile()
        return PassResult(graph_module, bool(pairs))
