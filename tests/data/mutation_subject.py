"""A correct pass for the mutation engine's tests: relu(x) becomes clamp(x, 0), metadata copied.

Its mutants are the test's subjects: dropping the metadata copy must be
caught by a metadata check, an off-by-one clamp bound by numerics, and a
flipped guard that makes the pass change nothing by the gate's
``still_exercised`` (no IR check fails on a program left as it was).
"""

import torch
from executorch.exir.dialects._ops import ops as exir_ops
from torch.fx.passes.infra.pass_base import PassBase, PassResult

EDGE = exir_ops.edge.aten


class ReluToClamp(PassBase):
    """relu(x) -> clamp(x, 0): the same values through the portable clamp kernel."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        changed = False
        for node in list(graph_module.graph.nodes):
            if node.op != "call_function" or node.target != EDGE.relu.default:
                continue
            with graph_module.graph.inserting_before(node):
                new = graph_module.graph.call_function(EDGE.clamp.default, (node.args[0], 0))
            new.meta = dict(node.meta)
            node.replace_all_uses_with(new)
            graph_module.graph.erase_node(node)
            changed = True
        if changed:
            graph_module.recompile()
        return PassResult(graph_module, changed)


class FoldDoubleNeg(PassBase):
    """neg(neg(x)) -> x, when nothing else reads the inner neg (else it must stay, and so must the outer one)."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        changed = False
        for node in list(graph_module.graph.nodes):
            if node.op != "call_function" or node.target != EDGE.neg.default:
                continue
            inner = node.args[0]
            if not isinstance(inner, torch.fx.Node) or inner.target != EDGE.neg.default:
                continue
            if len(inner.users) != 1:
                continue
            node.replace_all_uses_with(inner.args[0])
            graph_module.graph.erase_node(node)
            graph_module.graph.erase_node(inner)
            changed = True
        if changed:
            graph_module.recompile()
        return PassResult(graph_module, changed)
