"""Deliberately broken passes: each breaks one rule, so a test can show passgate catches it.

Each class names the check id that must flag it in ``EXPECTED``. They are
written the way real bugs are: plausible code with one thing wrong.
"""

from __future__ import annotations

import copy
import operator

import torch
import torch.fx
from executorch.exir.dialects._ops import ops as exir_ops
from torch.fx.passes.infra.pass_base import PassBase, PassResult

ATEN = torch.ops.aten
EDGE = exir_ops.edge.aten


class RawCallFunctionNoMeta(PassBase):
    """Rebuilds every relu with raw ``graph.call_function`` and copies no metadata."""

    passgate_stage = "export"

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        for node in list(gm.graph.nodes):
            if node.op == "call_function" and node.target in (ATEN.relu.default, ATEN.relu_.default):
                with gm.graph.inserting_before(node):
                    new = gm.graph.call_function(ATEN.relu.default, node.args)
                node.replace_all_uses_with(new)
                gm.graph.erase_node(node)
        gm.recompile()
        return PassResult(gm, True)


class MoveIntoSubmodule(PassBase):
    """Moves every relu into a submodule reached by ``call_module`` (what fuse_partition does)."""

    passgate_stage = "export"

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        for i, node in enumerate(list(gm.graph.nodes)):
            if node.op != "call_function" or node.target not in (ATEN.relu.default, ATEN.relu_.default):
                continue
            sub = torch.fx.Graph()
            x = sub.placeholder("x")
            sub.output(sub.call_function(ATEN.relu.default, (x,)))
            name = f"moved_relu_{i}"
            gm.add_submodule(name, torch.fx.GraphModule(torch.nn.Module(), sub))
            with gm.graph.inserting_before(node):
                call = gm.graph.call_module(name, node.args)
            call.meta = copy.copy(node.meta)
            node.replace_all_uses_with(call)
            gm.graph.erase_node(node)
        gm.recompile()
        return PassResult(gm, True)


class RetargetAddToSub(PassBase):
    """Retargets add to sub and keeps all metadata: only the meaning changes."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target == EDGE.add.Tensor:
                node.target = EDGE.sub.Tensor
        gm.recompile()
        return PassResult(gm, True)


class ClaimFloat16(PassBase):
    """Claims float16 in ``meta['val']`` of every relu while it computes float32."""

    passgate_stage = "export"

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target in (ATEN.relu.default, ATEN.relu_.default):
                val = node.meta["val"]
                if val.dtype == torch.float32:
                    with torch._guards.detect_fake_mode([val]):
                        node.meta["val"] = val.to(torch.float16)
        return PassResult(gm, True)


class EditsInputReturnsCopy(PassBase):
    """Returns a pristine copy but scribbles on the module it was handed."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        result = copy.deepcopy(gm)
        for node in gm.graph.nodes:
            if node.op == "call_function":
                node.meta.pop("stack_trace", None)
                node.meta["passgate_scribble"] = True
        return PassResult(result, True)


class NeverFixedPoint(PassBase):
    """Adds one more ``alias_copy`` before the first output on every run: never idempotent."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
        first = output.args[0][0]
        if not isinstance(first, torch.fx.Node) or first.op != "call_function" or first.target is operator.getitem:
            return PassResult(gm, False)
        with gm.graph.inserting_before(output):
            alias = gm.graph.call_function(EDGE.alias_copy.default, (first,))
        alias.meta = copy.copy(first.meta)
        output.replace_input_with(first, alias)
        gm.recompile()
        return PassResult(gm, True)


class OddLastDimAdd(PassBase):
    """Rewrites float ``add(a, b)`` as ``a - (-b)``, but forgets the negation when the result's
    last dimension is odd: right on every even-width tensor, wrong on odd ones (random graphs find it)."""

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        changed = False
        for node in list(gm.graph.nodes):
            if node.op != "call_function" or node.target != EDGE.add.Tensor:
                continue
            a, b = node.args[:2]
            val = node.meta.get("val")
            if not isinstance(b, torch.fx.Node) or val is None or not val.dtype.is_floating_point or val.dim() == 0:
                continue
            last = val.shape[-1]
            if isinstance(last, int) and last % 2 == 1:
                node.target = EDGE.sub.Tensor  # the bug: should be sub(a, neg(b))
                changed = True
        gm.recompile()
        return PassResult(gm, changed)


# pass class -> (the check ids that must flag it, graphs it is run on)
EXPECTED = {
    RawCallFunctionNoMeta: {"meta_val", "meta_stack_trace", "meta_nn_module_stack", "meta_debug_handle"},
    MoveIntoSubmodule: {"no_call_module"},
    RetargetAddToSub: {"numerics"},
    ClaimFloat16: {"val_matches_execution"},
    EditsInputReturnsCopy: {"input_unchanged"},
    NeverFixedPoint: {"idempotent"},
}
