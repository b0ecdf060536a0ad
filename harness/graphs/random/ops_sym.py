"""Op rules for what the passes ``to_edge`` runs first, and the edge-to-backend rewrite, look for.

``to_edge`` runs several passes on the ATen program before anything else
(``SymToTensorPass``, ``RemoveMixedTypeOperators``,
``remove_unused_parameters_pass``, ``convert_constant_dim_order_pass``) and
``to_executorch`` turns symbolic size arithmetic into ``executorch_prim`` ops
(``EdgeToBackendOpsPass``). Their catalog entries run where upstream runs
them, and found nothing to do on the graphs the rest of the vocabulary
draws, because models rarely write these forms in one statement and the
other rules never do:

- ``sym_size_arith``: a size computed from the dynamic dimension
  (``x.reshape(x.shape[0] * 6)``): ``sym_size`` -> ``operator.mul`` -> view;
- ``scale_by_size``: a tensor times a dynamic size (``x * x.shape[0]``): a
  SymInt in a Tensor slot of ``mul.Tensor``;
- ``mixed_dtype_binary`` / ``mixed_dtype_compare``: an arithmetic op or a
  comparison between a float tensor and an integer one (``to_edge``
  promotes neither comparisons nor, before ``RemoveMixedTypeOperators``,
  arithmetic; Vulkan's ``InsertDtypePromotionPass`` casts comparisons). The
  integer operand is a rounded copy of the float one (clamped into range
  first: a float -> int conversion out of range is undefined) or an integer
  value that broadcasts; no Python scalar is added (``RemoveMixedTypeOperators``
  cannot take one, ``to_edge`` runs ``ScalarToTensorPass`` first);
- ``with_unused_parameter``: a layer registered on the model and never
  called, so its parameters are exported but no node reads them. The
  statement is an ordinary op on the operand; the layer rides in its
  ``args`` (not in its expression), so pruning keeps the layer exactly as
  long as the statement lives;
- ``strided_constant``: an elementwise op with a buffer (or parameter)
  stored in another layout than the default: transposed or permuted
  (neither contiguous nor channels-last: ``convert_constant_dim_order_pass``
  makes such buffers contiguous) or channels-last, as ``model.to(
  memory_format=torch.channels_last)`` leaves weights. A transposed or
  permuted constant is read through ``.contiguous()``: an op's result takes
  its operands' layout, and ``to_edge`` fails on any cast or clone of a
  value whose dim order is neither contiguous nor channels-last ("Failed to
  map a given dim_order", ``MemoryFormatOpsPass``, which runs before
  ``convert_constant_dim_order_pass`` normalizes the constant), so later
  statements (and a promotion to another dtype) read only standard layouts.

Rules needing a dynamic dimension accept only values that have one. Each
rule is one plain torch statement, with weight 1: the forms should occur in
some graphs, not crowd out the rest. Part of the vocabulary of
:mod:`harness.graphs.random.ops`.
"""

from __future__ import annotations

import math
from typing import Optional

from harness.graphs.random.types import Emit, Val, is_float, is_numeric, sample_code

__all__ = ["has_dynamic_dim", "accepts_float_dynamic", "accepts_strided", "sym_size_arith", "scale_by_size",
           "mixed_dtype_binary", "mixed_dtype_compare", "with_unused_parameter", "strided_constant"]

_INT_PARTNERS = ("int32", "int64", "int16", "uint8")
# float -> int conversions are defined only in range: clamp first (the ranges of ops.py's casts)
_CLAMP = {"int32": (-100, 100), "int64": (-100, 100), "int16": (-100, 100), "uint8": (0, 200)}


def has_dynamic_dim(v: Val) -> bool:
    return any(v.dyn)


def accepts_float_dynamic(v: Val) -> bool:
    return is_float(v) and has_dynamic_dim(v)


def sym_size_arith(g, v: Val) -> Emit:
    """Flatten through a size computed from the dynamic dims: ``reshape(x.shape[d] * (static product))``."""
    dyn = [d for d in range(v.rank) if v.is_dyn(d)]
    rest = math.prod(v.shape[i] for i in range(v.rank) if i not in dyn)
    size = " * ".join([f"{{0}}.shape[{d}]" for d in dyn] + ([str(rest)] if rest > 1 or len(dyn) == 1 else []))
    if g.flip():
        return Emit(f"{{0}}.reshape({size})", (v.name,), view=True)
    return Emit(f"{{0}}.contiguous().view({size})", (v.name,), view=True)


def scale_by_size(g, v: Val) -> Emit:
    """A float tensor scaled by a dynamic size: the SymInt lands in ``mul.Tensor``'s (div's, add's) Tensor slot."""
    d = g.choice([d for d in range(v.rank) if v.is_dyn(d)])
    op = g.choice(["{0} * {0}.shape[D]", "{0} / {0}.shape[D]", "{0} + {0}.shape[D]", "{0}.shape[D] * {0}"])
    return Emit(op.replace("D", str(d)), (v.name,))


def _int_operand(g, v: Val, dtypes: tuple) -> tuple:
    """(code, args): an integer operand for float ``v``: a rounded copy of ``v`` or an integer value that broadcasts."""
    other = g.choice(dtypes)
    if g.int(0, 2):
        lo, hi = _CLAMP[other]
        return f"{{0}}.clamp({lo}, {hi}).round().to(torch.{other})", (v.name,)
    return "{1}", (v.name, g.partner(v, dtypes=(other,)))


def mixed_dtype_binary(g, v: Val) -> Emit:
    """A float tensor combined with an integer one: an arithmetic op whose operands have different dtypes."""
    c, args = _int_operand(g, v, _INT_PARTNERS)
    op = g.choice(["{0} + {c}", "{0} * {c}", "torch.sub({0}, {c})", "{c} + {0}", "torch.mul({c}, {0})"])
    return Emit(op.replace("{c}", c), args)


def mixed_dtype_compare(g, v: Val) -> Emit:
    """A comparison between a float tensor and an integer one (a boolean result)."""
    c, args = _int_operand(g, v, _INT_PARTNERS[:2])
    fn = g.choice(["torch.gt", "torch.lt", "torch.ge", "torch.le", "torch.eq"])
    return Emit(f"{fn}({{0}}, {c})" if g.int(0, 2) else f"{fn}({c}, {{0}})", args)


def with_unused_parameter(g, v: Val) -> Emit:
    """A layer the model registers and never calls; the statement itself is an ordinary op on ``v``."""
    width = v.shape[-1] if v.rank and not v.is_dyn(v.rank - 1) else 2
    ctor = g.choice([f"nn.Linear({width}, {g.size()})", f"nn.LayerNorm({width})", f"nn.Embedding(8, {width})"])
    mod = g.module(ctor)  # never called: its weight (and bias) are parameters no node reads
    forms = ["torch.relu({0})", "{0}.clone()", "torch.tanh({0})"] if is_float(v) else ["{0}.clone()"]
    return Emit(g.choice(forms), (v.name, mod))  # ``mod`` is not in the expression: it keeps the layer declared


def _big_dims(v: Val) -> list:
    return [d for d in v.static_dims if v.shape[d] > 1]


def accepts_strided(v: Val) -> bool:
    """Two static dims of size > 1: a constant of ``v``'s shape then has layouts other than the default."""
    return is_numeric(v) and len(_big_dims(v)) >= 2


def strided_constant(g, v: Val) -> Optional[Emit]:
    """``v`` combined with a constant of its shape (size 1 along dynamic dims) stored transposed, permuted or
    channels-last."""
    shape = tuple(1 if v.is_dyn(d) else s for d, s in enumerate(v.shape))
    big = _big_dims(v)
    channels_last = v.rank == 4 and shape[1] > 1 and shape[2] * shape[3] > 1
    how = g.choice(["transpose", "permute"] + (["channels_last"] * 2 if channels_last else []))
    if how == "channels_last":
        text = sample_code(repr(shape), v.dtype) + ".contiguous(memory_format=torch.channels_last)"
        if is_float(v) and g.flip():  # a weight converted with the model (model.to(memory_format=...))
            const = g.param_init(text)
        else:
            const = g.buffer_init(text)
    elif how == "transpose" or v.rank == 2:  # two dims of size > 1 swapped in storage
        a, b = sorted(g.permutation(big)[:2])
        stored = list(shape)
        stored[a], stored[b] = shape[b], shape[a]
        view = g.choice([".t()", ".T", ".transpose(0, 1)"]) if v.rank == 2 else f".transpose({a}, {b})"
        const = g.buffer_init(sample_code(repr(tuple(stored)), v.dtype) + view)
    else:  # a permutation that moves two dims of size > 1 relative to each other
        order = list(g.permutation(list(range(v.rank))))
        if [d for d in order if d in big] == big:
            order.reverse()
        stored = tuple(shape[d] for d in order)  # stored[i] = shape[order[i]]: .permute(inverse) gives ``shape``
        inverse = [order.index(d) for d in range(v.rank)]
        const = g.buffer_init(sample_code(repr(stored), v.dtype) + f".permute({', '.join(map(str, inverse))})")
    op = g.choice(["{0} + {1}", "torch.mul({0}, {1})", "{1} - {0}", "torch.maximum({0}, {1})"])
    if how != "channels_last":  # read into contiguous memory first (see the module docstring)
        op = op.replace("{1}", "{1}.contiguous()")
    return Emit(op, (v.name, const))
