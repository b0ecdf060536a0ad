"""Passes broken on one kind of graph only, each with its fixed version: what `passgate fuzz` must find.

Each is plausible code with one thing wrong, right on every other graph:

- ``WidenInt32Arith`` runs int32 elementwise arithmetic in int64 (a backend
  without int32 kernels) but forgets the cast back: wrong only where a graph
  computes on int32 tensors;
- ``ShapeClassTagger`` memoizes a per-shape layout class in a dict keyed by
  the shape: a dynamic batch dimension is a ``SymInt``, which is unhashable,
  so it raises only on graphs with a dynamic batch;
- ``MergeGetitems`` merges duplicate ``getitem`` nodes of a multi-output op
  (topk, max.dim, split, layer norm) but keys them by the op alone, so
  ``values, indices = topk(...)`` ends up reading ``values`` twice;
- ``DecomposeDequantize`` writes a per-tensor dequantize out as float
  arithmetic but leaves out the zero point: wrong only on quantized graphs
  whose quantizer chose an asymmetric range (``passgate fuzz --quantize``).
"""

from __future__ import annotations

import copy
import operator

import torch
import torch.fx
from executorch.exir.dialects._ops import ops as exir_ops
from torch.fx.passes.infra.pass_base import PassBase, PassResult

EDGE = exir_ops.edge.aten
CAST = exir_ops.edge.dim_order_ops._to_dim_order_copy.default
INT_ARITH = {EDGE.add.Tensor, EDGE.sub.Tensor, EDGE.mul.Tensor, EDGE.maximum.default, EDGE.minimum.default,
             EDGE.neg.default, EDGE.abs.default, EDGE.where.self}


def _as(val, dtype):
    with torch._guards.detect_fake_mode([val]):
        return val.to(dtype)


def _cast(gm: torch.fx.GraphModule, value: torch.fx.Node, dtype, before: torch.fx.Node) -> torch.fx.Node:
    with gm.graph.inserting_before(before):
        cast = gm.graph.call_function(CAST, (value,), {"dtype": dtype})
    cast.meta = copy.copy(before.meta)
    cast.meta["val"] = _as(value.meta["val"], dtype)
    return cast


def _int32_arith(node: torch.fx.Node) -> bool:
    val = node.meta.get("val")
    return node.op == "call_function" and node.target in INT_ARITH and isinstance(val, torch.Tensor) \
        and val.dtype == torch.int32


class WidenInt32Arith(PassBase):
    """int32 add/sub/mul/max/min/neg/abs/where computed in int64: the arguments are cast up, and the result
    should be cast back to int32 for its users. The bug: it is not, so users read int64 where the graph
    (and meta['val']) says int32."""

    def widen(self, gm: torch.fx.GraphModule, node: torch.fx.Node) -> None:
        args = [_cast(gm, a, torch.int64, node) if isinstance(a, torch.fx.Node) and a.meta["val"].dtype == torch.int32
                else a for a in node.args]
        node.args = tuple(args)

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        nodes = [n for n in gm.graph.nodes if _int32_arith(n)]
        for node in nodes:
            self.widen(gm, node)
        gm.recompile()
        return PassResult(gm, bool(nodes))


class WidenInt32ArithFixed(WidenInt32Arith):
    """The same, with the cast back to int32 after the widened op."""

    def widen(self, gm: torch.fx.GraphModule, node: torch.fx.Node) -> None:
        narrow = node.meta["val"]
        super().widen(gm, node)
        node.meta["val"] = _as(narrow, torch.int64)
        with gm.graph.inserting_after(node):
            back = gm.graph.call_function(CAST, (node,), {"dtype": torch.int32})
        node.replace_all_uses_with(back, delete_user_cb=lambda user: user is not back)
        back.meta = copy.copy(node.meta)
        back.meta["val"] = narrow


def _shape_class(shape) -> str:
    rank = len(shape)
    return {0: "scalar", 1: "vector", 2: "matrix", 4: "image"}.get(rank, "tensor")


class ShapeClassTagger(PassBase):
    """Tags every tensor node with ``meta['layout_class']`` (a backend's layout hint), computed once per
    distinct shape. The bug: the memo is keyed by the shape itself, and a dynamic dim is an unhashable
    SymInt."""

    def key(self, shape):
        return tuple(shape)

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        memo: dict = {}
        changed = False
        for node in gm.graph.nodes:
            val = node.meta.get("val")
            if node.op != "call_function" or not isinstance(val, torch.Tensor):
                continue
            key = self.key(val.shape)
            if key not in memo:
                memo[key] = _shape_class(val.shape)
            if node.meta.get("layout_class") != memo[key]:
                node.meta["layout_class"] = memo[key]
                changed = True
        return PassResult(gm, changed)


class ShapeClassTaggerFixed(ShapeClassTagger):
    def key(self, shape):
        return tuple(str(s) for s in shape)


class MergeGetitems(PassBase):
    """Merges getitem nodes that read the same result of a multi-output op into one (dead ones are left to
    dead-code elimination). The bug: they are keyed by the op alone, not by (op, index), so every result of
    topk / max.dim / split that is read reads the first."""

    def key(self, node: torch.fx.Node):
        return node.args[0]

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        first: dict = {}
        changed = False
        for node in list(gm.graph.nodes):
            if node.op != "call_function" or node.target is not operator.getitem or not node.users:
                continue
            key = self.key(node)
            if key not in first:
                first[key] = node
                continue
            node.replace_all_uses_with(first[key])
            gm.graph.erase_node(node)
            changed = True
        gm.recompile()
        return PassResult(gm, changed)


class MergeGetitemsFixed(MergeGetitems):
    def key(self, node: torch.fx.Node):
        return node.args[0], node.args[1]


DEQUANTIZE = exir_ops.edge.quantized_decomposed.dequantize_per_tensor.default


def _after(gm: torch.fx.GraphModule, anchor: torch.fx.Node, target, args: tuple, val) -> torch.fx.Node:
    with gm.graph.inserting_after(anchor):
        node = gm.graph.call_function(target, args)
    node.meta = copy.copy(anchor.meta)
    node.meta["val"] = val
    return node


class DecomposeDequantize(PassBase):
    """Per-tensor dequantize written out as float arithmetic, ``(q.float() - zero_point) * scale``, for a
    backend without a dequantize kernel. The bug: the zero point is left out, which is right only for
    symmetric quantization: wrong wherever a PT2E quantizer chose an affine (asymmetric) activation range."""

    def shifted(self, gm: torch.fx.GraphModule, widened: torch.fx.Node, zero_point: int) -> torch.fx.Node:
        return widened

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        nodes = [n for n in gm.graph.nodes if n.op == "call_function" and n.target == DEQUANTIZE
                 and not n.kwargs.get("out_dtype") and isinstance(n.args[1], float)]
        for node in nodes:
            q, scale, zero_point = node.args[:3]
            out = node.meta["val"]
            with gm.graph.inserting_before(node):
                widened = gm.graph.call_function(CAST, (q,), {"dtype": torch.float32})
            widened.meta = copy.copy(node.meta)
            widened.meta["val"] = _as(q.meta["val"], torch.float32)
            shifted = self.shifted(gm, widened, zero_point)
            scaled = _after(gm, shifted, EDGE.mul.Scalar, (shifted, scale), out)
            node.replace_all_uses_with(scaled)
            gm.graph.erase_node(node)
        gm.recompile()
        return PassResult(gm, bool(nodes))


class DecomposeDequantizeFixed(DecomposeDequantize):
    def shifted(self, gm: torch.fx.GraphModule, widened: torch.fx.Node, zero_point: int) -> torch.fx.Node:
        return _after(gm, widened, EDGE.sub.Scalar, (widened, zero_point), widened.meta["val"])
