"""Tolerances for fused-vs-Q/DQ comparisons, derived from the Q/DQ program's own quantization.

Errors are measured in the LSB that governs each output element, found by
running the *un-fused Q/DQ program* (the truth; never the et_vk CPU code):

- integer output: its LSB is 1; tolerance 1 LSB (requantization may round
  the other way);
- float output of a ``dequantize``: its LSB is that dequantize's step;
  tolerance 1 LSB;
- float output of a linear/conv/embedding fed by dequantized operands (no
  output quantization): the "propagated LSB" of the operand whose
  quantization a kernel may legitimately redo, i.e.
  ``op(lsb(x), |W|)`` when the activation is quantized *dynamically* (the
  kernel computes its own scale/zero point; tolerance 1 such LSB), otherwise
  ``op(|x|, lsb(W))`` / ``op(lsb(x), |W|)`` for reporting, with a tolerance
  of floating-point accumulation only (``2e-5 * op(|x|, |W|)``): both sides
  hold the very same integers and scales, so anything beyond rounding noise
  is a different computation. A fusion that scales weight scales by 1.02
  is ~1000x past that bound.

The LSB of a dequantized tensor is found without knowing its scheme
(per-tensor, per-channel, per-group, affine, dynamic): it is
``|dq(q') - dq(q)|`` with ``q' = q +- 1``, computed by calling the graph's
own dequantize node on the shifted integers. LSB tensors are carried through
layout-only ops (permute, view, transpose, ...) to the anchor op.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import torch
import torch.fx

__all__ = ["FP_REL", "FP_ABS", "LAYOUT_OPS", "ANCHORS", "op_short", "is_dequant", "is_dequant_name", "Anchor",
           "Probe", "probe", "Tolerance", "tolerance_for", "Comparison", "compare", "sqnr"]

FP_REL = 2e-5
FP_ABS = 1e-7

LAYOUT_OPS = {"permute_copy", "view_copy", "t_copy", "transpose_copy", "expand_copy", "clone", "_clone_dim_order",
              "squeeze_copy", "unsqueeze_copy", "permute", "view", "t", "reshape", "_to_copy",
              "_to_dim_order_copy", "alias_copy", "contiguous"}
ANCHORS = {"linear", "addmm", "mm", "bmm", "convolution", "conv2d", "embedding"}


def op_short(target: Any) -> str:
    """'addmm', 'dequantize_per_tensor', 'et_vk.q8ta_linear', '_weight_int8pack_mm', 'getitem'."""
    name = getattr(target, "__name__", str(target))
    parts = name.split(".")
    if len(parts) >= 2 and parts[0] in ("aten", "quantized_decomposed", "torchao", "dim_order_ops", "et_vk", "edge"):
        return f"et_vk.{parts[1]}" if parts[0] == "et_vk" else parts[1]
    return parts[0] if len(parts) == 1 else name


def is_dequant(target) -> bool:
    return is_dequant_name(op_short(target))


def is_dequant_name(name: str) -> bool:
    return name.startswith("dequantize") or name == "embedding_4bit"


@dataclass
class Anchor:
    op: str
    out: torch.Tensor
    abs_out: torch.Tensor  # op(|x|, |W|): the floating-point error scale
    w_unit: Optional[torch.Tensor] = None  # op(|x|, lsb(W))
    a_unit: Optional[torch.Tensor] = None  # op(lsb(x), |W|)
    dynamic_act: bool = False


@dataclass
class Probe:
    """What one run of the Q/DQ program says about the LSB of each output."""

    outputs: list
    out_lsb: list  # per output: LSB tensor of a dequantized output, or None
    anchor: Optional[Anchor] = None
    notes: list = field(default_factory=list)


def _shift(q: torch.Tensor) -> torch.Tensor:
    info = torch.iinfo(q.dtype)
    return torch.where(q < info.max, q + 1, q - 1).to(q.dtype)


def _anchor_call(op: str, node: torch.fx.Node, x, w, args: list):
    if op == "linear":
        return torch.nn.functional.linear(x, w)
    if op in ("addmm", "mm", "bmm"):
        return torch.matmul(x, w)
    if op in ("convolution", "conv2d"):
        rest = list(args[3:])
        if op == "conv2d":
            return torch.nn.functional.conv2d(x, w, None, *rest)
        return torch.convolution(x, w, None, *rest)
    if op == "embedding":
        return torch.nn.functional.embedding(x, w)
    raise ValueError(op)


def _operands(op: str, args: list) -> tuple[int, int]:
    """(activation index, weight index) of an anchor's args."""
    if op == "addmm":
        return 1, 2
    if op == "embedding":
        return 1, 0
    return 0, 1


class _ProbeInterpreter(torch.fx.Interpreter):
    def __init__(self, gm):
        super().__init__(gm, garbage_collect_values=False)
        self.lsb: dict = {}  # node -> LSB tensor (same shape as the node's value)
        self.dynamic: set = set()  # nodes whose LSB comes from a dynamic (computed) scale
        self.anchor: Optional[Anchor] = None

    def run_node(self, n: torch.fx.Node):
        out = super().run_node(n)
        if n.op != "call_function":
            return out
        op = op_short(n.target)
        args = [self.env[a] if isinstance(a, torch.fx.Node) else a for a in n.args]
        kwargs = {k: (self.env[v] if isinstance(v, torch.fx.Node) else v) for k, v in n.kwargs.items()}
        if is_dequant(n.target) and isinstance(args[0], torch.Tensor) and not args[0].dtype.is_floating_point:
            shifted = n.target(_shift(args[0]), *args[1:], **kwargs)
            self.lsb[n] = (shifted - out).abs()
            scale = n.args[1] if len(n.args) > 1 else None
            if op == "dequantize_affine":
                scale = n.args[2]
            if isinstance(scale, torch.fx.Node) and scale.op not in ("placeholder", "get_attr"):
                self.dynamic.add(n)
        elif op in LAYOUT_OPS and n.args and n.args[0] in self.lsb:
            self.lsb[n] = n.target(self.lsb[n.args[0]], *args[1:], **kwargs)
            if n.args[0] in self.dynamic:
                self.dynamic.add(n)
        elif op in ANCHORS and self.anchor is None:
            self._record(n, op, args, out)
        return out

    def _record(self, n, op, args, out):
        ai, wi = _operands(op, args)
        x, w = args[ai], args[wi]
        if not isinstance(w, torch.Tensor) or not isinstance(x, torch.Tensor):
            return
        xa = x if op == "embedding" else x.abs()
        with torch.no_grad():
            anchor = Anchor(op, out, _anchor_call(op, n, xa, w.abs(), args).abs())
            if n.args[wi] in self.lsb:
                anchor.w_unit = _anchor_call(op, n, xa, self.lsb[n.args[wi]], args)
            if op != "embedding" and n.args[ai] in self.lsb:
                anchor.a_unit = _anchor_call(op, n, self.lsb[n.args[ai]], w.abs(), args)
                anchor.dynamic_act = n.args[ai] in self.dynamic
        self.anchor = anchor


def probe(ep, inputs: tuple) -> Probe:
    """Run the Q/DQ program once, noting each output's LSB and the anchor's propagated LSBs."""
    from harness.check.execution import flat_args

    gm = ep.graph_module
    interp = _ProbeInterpreter(gm)
    with torch.no_grad():
        out = interp.run(*flat_args(ep, inputs))
    leaves = torch.utils._pytree.tree_leaves(out)
    output_node = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    out_nodes = torch.utils._pytree.tree_leaves(output_node.args[0])
    out_lsb = [interp.lsb.get(node) if isinstance(node, torch.fx.Node) and is_dequant(getattr(node, "target", None))
               else None for node in out_nodes]
    return Probe([x.detach().clone() for x in leaves], out_lsb, interp.anchor)


@dataclass
class Tolerance:
    unit: torch.Tensor  # the LSB each element's error is counted in
    unit_name: str  # "out LSB" | "act LSB (dynamic)" | "act LSB" | "weight LSB" | "|y|"
    allowed: torch.Tensor  # absolute error allowed per element
    basis: str  # human words for where the tolerance comes from


def _fit(t: Optional[torch.Tensor], like: torch.Tensor) -> Optional[torch.Tensor]:
    if t is None:
        return None
    t = t.double()
    if t.shape == like.shape:
        return t
    if t.numel() == like.numel():
        return t.reshape(like.shape)
    return None


def tolerance_for(p: Probe, i: int) -> Tolerance:
    y = p.outputs[i]
    if not y.dtype.is_floating_point:
        one = torch.ones_like(y, dtype=torch.float64)
        return Tolerance(one, "out LSB", one, "integer output: 1 LSB")
    lsb = _fit(p.out_lsb[i], y) if i < len(p.out_lsb) else None
    if lsb is not None:
        return Tolerance(lsb, "out LSB", lsb * (1 + 1e-6) + FP_ABS, "dequantized output: 1 LSB of its step")
    a = p.anchor
    fp = FP_REL * _fit(a.abs_out, y) + FP_ABS if a is not None and _fit(a.abs_out, y) is not None else None
    if a is not None and fp is not None:
        a_unit, w_unit = _fit(a.a_unit, y), _fit(a.w_unit, y)
        if a_unit is not None and a.dynamic_act:
            return Tolerance(a_unit, "act LSB (dynamic)", a_unit + fp,
                             "dynamically quantized activation: 1 LSB of every activation, propagated")
        if a_unit is not None:
            return Tolerance(a_unit, "act LSB", fp, "same integers on both sides: floating-point accumulation only")
        if w_unit is not None:
            return Tolerance(w_unit, "weight LSB", fp, "same integers on both sides: floating-point accumulation only")
    mag = y.double().abs() + FP_ABS
    return Tolerance(mag, "|y|", FP_REL * mag, "no quantized operand found: floating-point only")


@dataclass
class Comparison:
    ok: bool
    worst_lsb: float  # worst error in units of Tolerance.unit
    worst_ratio: float  # worst error / allowed
    unit_name: str
    max_abs: float
    bad: int  # elements beyond tolerance
    total: int
    where: Optional[tuple] = None  # index of the worst element


def compare(actual: torch.Tensor, expected: torch.Tensor, tol: Tolerance) -> Comparison:
    if actual.shape != expected.shape:
        return Comparison(False, math.inf, math.inf, tol.unit_name, math.inf, expected.numel(), expected.numel())
    err = (actual.double() - expected.double()).abs()
    err = torch.nan_to_num(err, nan=math.inf)
    units = err / tol.unit.clamp_min(1e-30)
    units = torch.where(err == 0, torch.zeros_like(units), units)
    ratio = torch.where(err == 0, torch.zeros_like(err), err / tol.allowed.clamp_min(1e-30))
    bad = int((err > tol.allowed).sum())
    flat = int(ratio.argmax()) if ratio.numel() else 0
    where = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), ratio.shape)) if ratio.numel() else None
    return Comparison(bad == 0, float(units.max()) if units.numel() else 0.0, float(ratio.max()) if ratio.numel() else 0.0,
                      tol.unit_name, float(err.max()) if err.numel() else 0.0, bad, err.numel(), where)


def sqnr(actual: torch.Tensor, reference: torch.Tensor) -> float:
    """10 log10(|ref|^2 / |actual - ref|^2) in dB; inf when identical, nan when the reference is all zeros."""
    ref = reference.double()
    noise = float(((actual.double() - ref) ** 2).sum())
    signal = float((ref**2).sum())
    if signal == 0.0:
        return math.nan
    if noise == 0.0:
        return math.inf
    return 10.0 * math.log10(signal / noise)
