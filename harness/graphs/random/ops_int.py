"""Op rules of integer tensors: integer arithmetic, mixed-dtype promotion, and index producers and consumers.

Real graphs carry integers in two roles that the float vocabulary never
exercises: as *data* (quantized int8/uint8 tensors, int32 accumulators,
comparisons cast to int and counted) and as *indices* (argmax, topk and sort
results fed to gather, scatter, index_select, indexing and embeddings). A pass
that assumes float dtypes, or loses track of which int64 tensor holds
indices, fails only there.

Everything stays defined by construction: divisors are non-zero scalars or
``abs().clamp(min=1)`` of a tensor; indices come from a value whose
``index_high`` bounds them, and the indexed operand is built with exactly
that size along the indexed dim; scatter only writes along a dim where the
indices are distinct (``index_dim``), so its result does not depend on the
order of writes. Part of the vocabulary of :mod:`harness.graphs.random.ops`.
"""

from __future__ import annotations

import math
from typing import Optional

from harness.graphs.random.types import FLOATS, NUMERIC, SIGNED_INTS, Emit, Val, call

__all__ = ["is_index", "int_unary", "int_bitwise", "int_div", "promote", "compare_cast", "arg_reduce", "gather",
           "scatter", "index_select_by", "index_by", "fresh_index", "fresh_distinct_index"]

# ---------------------------------------------------------------- integer arithmetic


def is_index(v: Val) -> bool:
    """int64 values in [0, index_high), a small bound (a flat argmax over a large tensor is not used)."""
    return v.dtype == "int64" and v.index_high is not None and 1 <= v.index_high <= 64


def int_unary(g, v: Val) -> Emit:
    lo, hi = (0, 5) if v.dtype == "uint8" else (-3, 4)
    forms = ["torch.abs({0})", "torch.sign({0})", "torch.square({0})", "torch.pow({0}, 2)", "torch.bitwise_not({0})",
             "~{0}", call(g, "torch.clamp", ["{0}"], [("min", lo), ("max", hi)]), "{0}.clamp(min=%d)" % lo]
    if v.dtype in SIGNED_INTS:
        forms += ["torch.neg({0})", "-{0}"]
    return Emit(g.choice(forms), (v.name,))


def int_bitwise(g, v: Val) -> Emit:
    """``&``, ``|``, ``^`` of two ints (or bools) of one dtype, or with an int scalar."""
    fn, sym = g.choice([("bitwise_and", "&"), ("bitwise_or", "|"), ("bitwise_xor", "^")])
    other = g.partner(v, dtypes=(v.dtype,), scalar_ok=v.dtype != "bool")
    if other.lstrip("-").isdigit():
        other = str(abs(int(other)))  # a non-negative mask: the same for every int dtype
    form = g.choice([f"torch.{fn}({{0}}, {{1}})", f"{{0}} {sym} {{1}}"])
    return Emit(form, (v.name, other))


def int_div(g, v: Val) -> Emit:
    """Floor/trunc division and remainders by a non-zero divisor (a scalar, or a tensor made non-zero)."""
    if g.int(0, 2) == 0:  # a tensor divisor of the same dtype, clamped away from zero
        other = g.partner(v, dtypes=(v.dtype,))
        form = g.choice(["torch.div({0}, {1}.abs().clamp(min=1), rounding_mode='floor')",
                         "torch.remainder({0}, {1}.abs().clamp(min=1))", "torch.fmod({0}, {1}.abs().clamp(min=1))",
                         "{0} // {1}.abs().clamp(min=1)"])
        return Emit(form, (v.name, other))
    k = g.choice([2, 3, 5])
    form = g.choice(["{0} // K", "torch.floor_divide({0}, K)", "{0} % K", "torch.remainder({0}, K)",
                     "torch.fmod({0}, K)", "{0} / K",
                     call(g, "torch.div", ["{0}", "K"], [("rounding_mode", g.choice(["'floor'", "'trunc'"]))])])
    return Emit(form.replace("K", str(k)), (v.name,))


def promote(g, v: Val) -> Emit:
    """A binary op across two dtypes (int8 + int32, uint8 * float16, int * 0.5): type promotion in the graph."""
    if g.int(0, 3) == 0:
        return Emit(g.choice(["{0} * 0.5", "{0} + 1.5", "torch.mul({0}, -0.25)"]), (v.name,))
    to = g.choice([d for d in NUMERIC if d != v.dtype])
    other = g.partner(v, dtypes=(to,))
    floating = v.dtype in FLOATS or to in FLOATS
    alpha = g.choice(["0.5", "2.0"] if floating else ["2", "-1"])
    form = g.choice(["torch.add({0}, {1})", "{0} * {1}", "torch.sub({1}, {0})", "torch.maximum({0}, {1})",
                     f"torch.add({{0}}, {{1}}, alpha={alpha})", f"torch.sub({{0}}, {{1}}, alpha={alpha})"])
    return Emit(form, (v.name, other))


def compare_cast(g, v: Val) -> Emit:
    """A comparison cast to an integer dtype (and maybe counted along a dim): masks become data."""
    fn, sym = g.choice([("gt", ">"), ("lt", "<"), ("ge", ">="), ("ne", "!=")])
    other = g.partner(v, dtypes=(v.dtype,), scalar_ok=True)
    expr = g.choice([f"({{0}} {sym} {{1}})", f"torch.{fn}({{0}}, {{1}})"])
    expr += g.choice([".int()", ".long()", ".to(torch.int8)", ".to(torch.uint8)", ".to(torch.int32)",
                      ".to(torch.int16)"])
    if g.int(0, 3) == 0 and v.static_dims:
        expr += call(g, ".sum", [], [("dim", g.choice(v.static_dims)), ("keepdim", g.flip())])
    return Emit(expr, (v.name, other))


# ---------------------------------------------------------------- index producers


def arg_reduce(g, v: Val) -> Optional[Emit]:
    """argmax/argmin over a dim (indices in [0, size)), or over everything (a flat index)."""
    fn = g.choice(["argmax", "argmin"])
    if not v.static_dims or (g.int(0, 2) == 0 and not any(v.dyn)):
        high = math.prod(v.shape) if not any(v.dyn) else None
        return Emit(g.choice([f"torch.{fn}({{0}})", f"{{0}}.{fn}()"]), (v.name,), index=((high, None),))
    d = g.choice(v.static_dims)
    keep = g.flip()
    dim = d - v.rank if g.int(0, 3) == 0 else d
    head = g.choice([f"torch.{fn}", f"{{0}}.{fn}"])
    required = ["{0}"] if head.startswith("torch") else []
    optional = [("dim", dim), ("keepdim", keep)] if keep or g.flip() else [("dim", dim)]
    return Emit(call(g, head, required, optional), (v.name,), index=((v.shape[d], d if keep else None),))


def fresh_index(g) -> Val:
    """An index tensor when the pool has none: the argmax of a fresh float input would do, but an int64 input
    in [0, 8) is shorter."""
    return g.new_input(g.int(1, 2), "int64", index=True)


def fresh_distinct_index(g) -> Val:
    """Indices distinct along dim 0 when the pool has none (scatter's operand; topk and sort make them, but
    only after one of them was drawn): a constant buffer of ``n`` distinct indices in [0, high)."""
    high = g.int(2, 8)
    n = g.int(1, high)
    return Val(g.buffer_distinct_index(n, high), (n,), "int64", (False,), index_high=high, index_dim=0)


# ---------------------------------------------------------------- index consumers


def _indexed_operand(g, idx: Val, d: int) -> tuple[str, str]:
    """A value shaped like ``idx`` but of size ``index_high`` along ``d`` (gather's source, scatter's target)."""
    shape = list(idx.shape)
    shape[d] = idx.index_high
    dyn = tuple(f and k != d for k, f in enumerate(idx.dyn or (False,) * idx.rank))
    dtype = g.choice(["float32", "float32", "float16", "int32", "int8", "bool"])
    return g.tensor(tuple(shape), dyn, dtype, avoid=idx.name), dtype


def gather(g, idx: Val) -> Optional[Emit]:
    if not idx.static_dims:
        return None
    d = idx.index_dim if idx.index_dim in idx.static_dims else g.choice(idx.static_dims)
    src, _ = _indexed_operand(g, idx, d)
    form = g.choice(["torch.gather({1}, D, {0})", "torch.gather({1}, dim=D, index={0})", "{1}.gather(D, {0})",
                     "torch.take_along_dim({1}, {0}, dim=D)"])
    return Emit(form.replace("D", str(d)), (idx.name, src))


def scatter(g, idx: Val) -> Optional[Emit]:
    """scatter/scatter_add/scatter_reduce along the dim where ``idx`` is distinct: a deterministic result."""
    d = idx.index_dim
    if d is None or idx.is_dyn(d):
        return None
    dest, dtype = _indexed_operand(g, idx, d)
    how = g.choice(["value", "src", "add", "reduce"] if dtype != "bool" else ["value", "src"])
    if how == "value":
        value = "True" if dtype == "bool" else "2"
        return Emit(g.choice([f"torch.scatter({{1}}, {d}, {{0}}, {value})", f"{{1}}.scatter({d}, {{0}}, {value})"]),
                    (idx.name, dest))
    src = g.tensor(idx.shape, idx.dyn, dtype, avoid=idx.name)
    if how == "add":
        return Emit(g.choice([f"torch.scatter_add({{1}}, {d}, {{0}}, {{2}})", f"{{1}}.scatter_add({d}, {{0}}, {{2}})"]),
                    (idx.name, dest, src))
    if how == "reduce":
        red = g.choice(["'sum'", "'amax'", "'amin'", "'prod'"])
        reduce = red if g.flip() else f"reduce={red}"
        return Emit(f"torch.scatter_reduce({{1}}, {d}, {{0}}, {{2}}, {reduce}, include_self={g.flip()})",
                    (idx.name, dest, src))
    return Emit(call(g, "torch.scatter", ["{1}", str(d), "{0}"], [("src", "{2}")]), (idx.name, dest, src))


def index_select_by(g, idx: Val) -> Emit:
    """index_select by an index tensor (flattened when it has several dims)."""
    fits = [(u, d) for u in g.pool if u.name != idx.name for d in u.static_dims if u.shape[d] == idx.index_high]
    if fits and g.flip():
        u, d = g.choice(fits[-8:])
        src = u.name
    else:
        shape = [g.size() for _ in range(g.int(1, 3))]
        d = g.int(0, len(shape) - 1)
        shape[d] = idx.index_high
        src = g.param(tuple(shape), g.choice(["float32", "float32", "int32", "bfloat16", "uint8"]))
    index = "{0}" if idx.rank <= 1 else "{0}.reshape(-1)"
    if g.flip():
        return Emit(f"{{1}}.index_select({d}, {index})", (idx.name, src))
    return Emit(call(g, "torch.index_select", ["{1}"], [("dim", d), ("index", index)]), (idx.name, src))


def index_by(g, idx: Val) -> Optional[Emit]:
    """Advanced indexing ``src[idx]`` / ``src[:, idx]``: aten.index.Tensor."""
    rank = g.int(1, 3)
    if idx.rank + rank - 1 > 4:
        return None
    shape = [g.size() for _ in range(rank)]
    d = 1 if rank >= 2 and g.flip() else 0
    shape[d] = idx.index_high
    src = g.tensor(tuple(shape), (False,) * rank, g.choice(["float32", "float32", "int8", "int64", "float16"]))
    return Emit("{1}[{0}]" if d == 0 else "{1}[:, {0}]", (idx.name, src))
