"""Small broken passes for the check reference pages (docs/checks/): one rule broken each.

``tests/broken_passes.py`` covers the metadata, call_module, numerics, val, input and idempotence
checks; these cover the rest of what ``passgate check`` judges. Each is plausible code with one thing
wrong, run by ``docs/scripts/check_examples.py`` to capture what the terminal shows.
"""

from __future__ import annotations

import torch
import torch.fx
from executorch.exir.dialects._ops import ops as exir_ops
from torch.fx.passes.infra.pass_base import PassBase, PassResult

__all__ = ["ReadsMissingQuantAttrs", "MovesReluToTheEnd", "ReturnsAnExtraOutput", "PutsBackAtenRelu",
           "CallsMmOnAnAdd", "PromisesNoRelu", "RewritesEveryOtherCall", "LooksForHardtanh"]

EDGE = exir_ops.edge.aten


def _relus(gm: torch.fx.GraphModule) -> list:
    return [n for n in gm.graph.nodes if n.op == "call_function" and n.target == EDGE.relu.default]


class ReadsMissingQuantAttrs(PassBase):
    """``runs``: reads a metadata key that only quantized graphs carry, and raises on a float one."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        for node in _relus(gm):
            scale = node.meta["quant_attrs"]["scale"]  # the bug: assumes every relu was quantized
            node.meta["scale"] = scale
        return PassResult(gm, True)


class MovesReluToTheEnd(PassBase):
    """``graph_lint``: moves each relu just before the output, after the nodes that use it."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
        for node in _relus(gm):
            output.prepend(node)  # the bug: users of the relu now come before it
        return PassResult(gm, True)


class ReturnsAnExtraOutput(PassBase):
    """``signature``: returns the first output twice without recording it in the graph signature."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
        outs = tuple(output.args[0])
        output.args = (outs + (outs[0],),)
        gm.recompile()
        return PassResult(gm, True)


class PutsBackAtenRelu(PassBase):
    """``verifier``: rewrites edge relus with the ATen operator, which the edge dialect does not allow."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        for node in _relus(gm):
            node.target = torch.ops.aten.relu.default
        gm.recompile()
        return PassResult(gm, True)


class CallsMmOnAnAdd(PassBase):
    """``runnable``: retargets a broadcasting add to mm, whose shapes then do not agree at run time."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        changed = False
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target == EDGE.add.Tensor:
                node.target = EDGE.mm.default  # the bug: meant for 2-D operands only
                changed = True
        gm.recompile()
        return PassResult(gm, changed)


class PromisesNoRelu(PassBase):
    """``ensures``: says in its ensures hook that no relu is left, but only rewrites the first one."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        relus = _relus(gm)
        if relus:
            node = relus[0]
            with gm.graph.inserting_before(node):
                new = gm.graph.call_function(EDGE.clamp.default, (node.args[0], 0.0))
            new.meta = dict(node.meta)
            node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
            gm.recompile()
        return PassResult(gm, bool(relus))

    def ensures(self, graph_module: torch.fx.GraphModule) -> None:
        left = _relus(graph_module)
        if left:
            raise AssertionError(f"{len(left)} relu node(s) left: {', '.join(n.name for n in left)}")


_CALLS = [0]


class RewritesEveryOtherCall(PassBase):
    """``deterministic``: keeps a counter across calls, so two runs on the same input differ."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        _CALLS[0] += 1
        if _CALLS[0] % 2:  # the bug: state that outlives one call
            return PassResult(gm, False)
        for node in _relus(gm):
            node.target = EDGE.clamp.default
            node.args = (node.args[0], 0.0)
        gm.recompile()
        return PassResult(gm, True)


class LooksForHardtanh(PassBase):
    """``exercised``: rewrites hardtanh, which no graph it is run on contains: it was never tested."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        changed = False
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target == EDGE.hardtanh.default:
                node.target = EDGE.clamp.default
                changed = True
        gm.recompile()
        return PassResult(gm, changed)
