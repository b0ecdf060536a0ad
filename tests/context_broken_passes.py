"""Passes broken in one context each, with their fixed versions: what `passgate fuzz --contexts` must find.

Each rewrites an op the built-in graphs hold, right on the plain graph of that op and on every context but one:

- ``ReluToClamp`` writes ``relu(x)`` as ``clamp(x, 0)``; when the relu's result has several users it makes one
  clamp per user (so a later fusion can take each), and the copies get the bound as ``max`` instead of ``min``:
  wrong only when the result has two users or more;
- ``AddToSubNeg`` writes ``add(a, b)`` as ``sub(a, neg(b))`` and rebuilds the call from ``node.args`` alone, so
  the keyword-only ``alpha`` (``torch.add(a, b, alpha=2)``) is dropped: wrong only when an argument is given by
  keyword;
- ``DivToMulReciprocal`` writes ``div(a, b)`` as ``mul(a, reciprocal(b))`` when the result is small, counting
  its elements from the sizes' hints (the sample sizes export saw): a size only known at run time (``nonzero``,
  ``item()``) has no hint, and the count raises; the fixed version leaves such a division alone.
"""

from __future__ import annotations

import copy

import torch
import torch.fx
from executorch.exir.dialects._ops import ops as exir_ops
from torch.fx.passes.infra.pass_base import PassBase, PassResult

EDGE = exir_ops.edge.aten


def _call(gm: torch.fx.GraphModule, before: torch.fx.Node, target, args, kwargs=None) -> torch.fx.Node:
    with gm.graph.inserting_before(before):
        node = gm.graph.call_function(target, tuple(args), dict(kwargs or {}))
    node.meta = copy.copy(before.meta)
    return node


def _finish(gm: torch.fx.GraphModule, modified: bool) -> PassResult:
    if modified:
        gm.graph.eliminate_dead_code()
        gm.recompile()
    return PassResult(gm, modified)


class ReluToClamp(PassBase):
    """relu(x) -> clamp(x, 0), one clamp per user when there are several. The bug: the per-user copies are
    built as clamp(x, None, 0)."""

    broken = True

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        modified = False
        for node in list(gm.graph.nodes):
            if node.op != "call_function" or node.target != EDGE.relu.default:
                continue
            users = list(node.users)
            if len(users) <= 1:
                node.replace_all_uses_with(_call(gm, node, EDGE.clamp.default, (node.args[0], 0)))
            else:
                for user in users:
                    bounds = (None, 0) if self.broken else (0,)
                    clamp = _call(gm, node, EDGE.clamp.default, (node.args[0], *bounds))
                    user.replace_input_with(node, clamp)
            gm.graph.erase_node(node)
            modified = True
        return _finish(gm, modified)


class ReluToClampFixed(ReluToClamp):
    broken = False


class AddToSubNeg(PassBase):
    """add(a, b, alpha=k) -> sub(a, neg(b), alpha=k). The bug: the sub is built from node.args alone."""

    broken = True

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        modified = False
        for node in list(gm.graph.nodes):
            if node.op != "call_function" or node.target != EDGE.add.Tensor:
                continue
            a, b = node.args[:2]
            if not isinstance(b, torch.fx.Node):
                continue
            neg = _call(gm, node, EDGE.neg.default, (b,))
            neg.meta["val"] = b.meta["val"]
            kwargs = {} if self.broken else node.kwargs
            node.replace_all_uses_with(_call(gm, node, EDGE.sub.Tensor, (a, neg), kwargs))
            gm.graph.erase_node(node)
            modified = True
        return _finish(gm, modified)


class AddToSubNegFixed(AddToSubNeg):
    broken = False


class DivToMulReciprocal(PassBase):
    """div(a, b) -> mul(a, reciprocal(b)) when the result is small, by the hints of its sizes. The bug: a
    data-dependent size has no hint (None), and the count raises TypeError."""

    broken = True
    LIMIT = 1 << 20

    def small(self, val: torch.Tensor) -> bool:
        """At most LIMIT elements, by the sizes' hints (the sample sizes export saw)."""
        count = 1
        for d in val.shape:
            if isinstance(d, torch.SymInt):
                if not self.broken and not d.node.has_hint():  # a data-dependent size: no hint, not known small
                    return False
                d = d.node.hint
            count *= d
        return count <= self.LIMIT

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        modified = False
        for node in list(gm.graph.nodes):
            if node.op != "call_function" or node.target != EDGE.div.Tensor:
                continue
            a, b = node.args[:2]
            if not isinstance(b, torch.fx.Node) or not self.small(node.meta["val"]):
                continue
            reciprocal = _call(gm, node, EDGE.reciprocal.default, (b,))
            reciprocal.meta["val"] = b.meta["val"]
            node.replace_all_uses_with(_call(gm, node, EDGE.mul.Tensor, (a, reciprocal)))
            gm.graph.erase_node(node)
            modified = True
        return _finish(gm, modified)


class DivToMulReciprocalFixed(DivToMulReciprocal):
    broken = False
