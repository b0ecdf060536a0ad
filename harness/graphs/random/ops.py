"""The typed op vocabulary random graphs are drawn from.

Each :class:`OpRule` knows which operand it accepts (dtype, rank, static
dims) and builds a call whose other arguments are *constructed* to fit: a
binary op's partner is picked among values whose shape broadcasts, or made
(a parameter, a buffer, a new input or a scalar) with such a shape; a view
gets sizes that multiply out; a conv gets a kernel no larger than the padded
input. Invalid draws are fixed by construction, never thrown away, which is
what keeps the share of graphs that export and lower near 100%.

Dynamic dimensions: a value's ``dyn`` flags mark the dims that are the
program's ``torch.export.Dim``. Ops that fix a size (views, slices, cat and
split dims, linear's and conv's channels) choose only static dims, so
export never has to specialize the dynamic one.

Rules only emit Python expressions over value names (``{0}`` is the
operand); :mod:`harness.graphs.random.generate` evaluates them on real tensors to learn
the result types, and renders the program as plain torch code.

The rules live in three modules: elementwise ops, comparisons and casts here;
views, cat/split and reductions in :mod:`harness.graphs.random.ops_shape`; layers
(linear algebra, conv, pooling, norms, embedding) in :mod:`harness.graphs.random.ops_nn`.
"""

from __future__ import annotations

from harness.graphs.random.ops_nn import (
    _addmm,
    _arange_add,
    _batch_norm,
    _bmm,
    _conv,
    _embedding,
    _flip,
    _fresh_bool,
    _fresh_index,
    _group_norm,
    _index_select,
    _layer_norm,
    _linear,
    _make_f32,
    _matmul,
    _mm,
    _pad,
    _pool,
    _repeat,
    _static_rank,
    _tril,
)
from harness.graphs.random.ops_shape import (
    _cat,
    _detach,
    _expand,
    _flatten,
    _max_dim,
    _permute,
    _reduce,
    _reshape,
    _select,
    _slice,
    _softmax,
    _split,
    _squeeze,
    _stack,
    _transpose,
    _unsqueeze,
)
from harness.graphs.random.types import (  # noqa: F401 - re-exported: the vocabulary's types
    FLOATS,
    LOW_PRECISION,
    NUMERIC,
    Emit,
    OpRule,
    Val,
    is_f32,
    is_float,
    is_numeric,
    last_static,
)

__all__ = ["UNARY_FLOAT", "RULES", "RULES_BY_NAME"]

# ---------------------------------------------------------------- elementwise


UNARY_FLOAT = {
    "neg": "torch.neg({0})", "abs": "torch.abs({0})", "exp": "torch.exp({0})", "sin": "torch.sin({0})",
    "cos": "torch.cos({0})", "tanh": "torch.tanh({0})", "sigmoid": "torch.sigmoid({0})", "relu": "torch.relu({0})",
    "gelu": "F.gelu({0})", "gelu_tanh": "F.gelu({0}, approximate='tanh')", "silu": "F.silu({0})",
    "hardswish": "F.hardswish({0})", "hardtanh": "F.hardtanh({0}, -1.0, 1.0)", "clamp": "torch.clamp({0}, -0.5, 0.75)",
    "sqrt_abs": "torch.sqrt(torch.abs({0}))", "rsqrt": "torch.rsqrt(torch.abs({0}) + 0.5)",
    "reciprocal": "torch.reciprocal({0} + 4.0)", "floor": "torch.floor({0})", "erf": "torch.erf({0})",
    "leaky_relu": "F.leaky_relu({0}, 0.1)", "elu": "F.elu({0})", "square": "torch.square({0})",
    "log1p_abs": "torch.log1p(torch.abs({0}))", "clone": "{0}.clone()", "hardsigmoid": "F.hardsigmoid({0})",
    "sign": "torch.sign({0})", "full_like": "torch.full_like({0}, 0.25)",
}


def _unary(template: str):
    return lambda g, v: Emit(template, (v.name,))


def _scalar_affine(g, v: Val) -> Emit:
    """``x * 2.0 + 1``: scalar arguments (integers for int64 values)."""
    if v.dtype == "int64":
        a, b = g.choice([2, 3, -1]), g.choice([1, -2, 5])
    else:
        a, b = g.choice([2.0, 0.5, -1.5]), g.choice([1, 0.25, -3.0])
    form = g.choice(["{0} * A + B", "({0} - B) * A", "{0} / A + B" if v.dtype != "int64" else "{0} * A - B"])
    return Emit(form.replace("A", repr(a)).replace("B", repr(b)), (v.name,))


# ---------------------------------------------------------------- binary


def _binary(fn: str, dtypes=NUMERIC):
    def build(g, v: Val) -> Emit:
        other = g.partner(v, dtypes=(v.dtype,) if v.dtype in dtypes else dtypes, scalar_ok=fn in ("add", "sub", "mul"))
        if g.flip():
            return Emit(f"torch.{fn}({{1}}, {{0}})", (v.name, other))
        return Emit(f"torch.{fn}({{0}}, {{1}})", (v.name, other))

    return build


def _operator(sym: str):
    def build(g, v: Val) -> Emit:
        other = g.partner(v, dtypes=(v.dtype,), scalar_ok=True)
        return Emit(f"{{0}} {sym} {{1}}", (v.name, other))

    return build


def _compare(fn: str):
    def build(g, v: Val) -> Emit:
        other = g.partner(v, dtypes=(v.dtype,), scalar_ok=True)
        return Emit(f"torch.{fn}({{0}}, {{1}})", (v.name, other))

    return build


def _logical(fn: str):
    def build(g, v: Val) -> Emit:
        other = g.partner(v, dtypes=("bool",), scalar_ok=False)
        return Emit(f"torch.{fn}({{0}}, {{1}})", (v.name, other))

    return build


def _where(g, cond: Val) -> Emit:
    dtype = g.choice(["float32", "float32", "int64", "bfloat16"])
    a = g.partner(cond, dtypes=(dtype,), scalar_ok=False, same_dtype_only=True)
    b = g.partner(cond, dtypes=(dtype,), scalar_ok=True, same_dtype_only=True)
    return Emit("torch.where({0}, {1}, {2})", (cond.name, a, b))


def _masked_fill(g, v: Val) -> Emit:
    return Emit("{0}.masked_fill({0} > 0.5, -1.0)", (v.name,))


def _inplace_unary(method: str):
    return lambda g, v: Emit(f"{{0}}.{method}()", (v.name,), inplace=True)


def _inplace_binary(method: str):
    def build(g, v: Val) -> Emit:
        other = g.partner(v, dtypes=(v.dtype,), scalar_ok=True, into=True)
        return Emit(f"{{0}}.{method}({{1}})", (v.name, other), inplace=True)

    return build


# ---------------------------------------------------------------- casts


def _cast(g, v: Val) -> Emit:
    targets = {"float32": ["float16", "bfloat16", "int64", "bool"], "float16": ["float32"], "bfloat16": ["float32"],
               "int64": ["float32", "bool"], "bool": ["float32", "int64"]}[v.dtype]
    to = g.choice(targets)
    form = g.choice([f"{{0}}.to(torch.{to})", {"float32": "{0}.float()", "int64": "{0}.long()", "bool": "{0}.bool()",
                                                 "float16": "{0}.half()", "bfloat16": "{0}.bfloat16()"}[to]])
    return Emit(form, (v.name,))


RULES: list[OpRule] = [
    *(OpRule(n, is_float, _unary(t)) for n, t in UNARY_FLOAT.items()),
    OpRule("neg_int", lambda v: v.dtype == "int64", _unary("torch.neg({0})")),
    OpRule("abs_int", lambda v: v.dtype == "int64", _unary("torch.abs({0})")),
    OpRule("scalar_affine", is_numeric, _scalar_affine, weight=3),
    OpRule("add", is_numeric, _binary("add"), weight=3),
    OpRule("sub", is_numeric, _binary("sub")),
    OpRule("mul", is_numeric, _binary("mul"), weight=2),
    OpRule("div", is_float, _binary("div", FLOATS)),
    OpRule("maximum", is_numeric, _binary("maximum")),
    OpRule("minimum", is_numeric, _binary("minimum")),
    OpRule("atan2", is_float, _binary("atan2", FLOATS)),
    OpRule("operator", is_numeric, lambda g, v: _operator(g.choice(["+", "-", "*"]))(g, v), weight=2),
    *(OpRule(f, is_numeric, _compare(f)) for f in ("gt", "lt", "ge", "le", "eq", "ne")),
    *(OpRule(f, lambda v: v.dtype == "bool", _logical(f), make=_fresh_bool) for f in ("logical_and", "logical_or", "logical_xor")),
    OpRule("logical_not", lambda v: v.dtype == "bool", _unary("torch.logical_not({0})"), make=_fresh_bool),
    OpRule("where", lambda v: v.dtype == "bool", _where, make=_fresh_bool, weight=3),
    OpRule("masked_fill", is_float, _masked_fill),
    OpRule("relu_", lambda v: is_float(v) and v.owned, _inplace_unary("relu_"), weight=2),
    OpRule("sigmoid_", lambda v: is_float(v) and v.owned, _inplace_unary("sigmoid_")),
    OpRule("add_", lambda v: is_float(v) and v.owned, _inplace_binary("add_"), weight=2),
    OpRule("mul_", lambda v: is_float(v) and v.owned, _inplace_binary("mul_"), weight=2),
    OpRule("cast", lambda v: True, _cast, weight=3),
    OpRule("view", lambda v: v.rank >= 1, _reshape("view"), weight=2),
    OpRule("reshape", lambda v: v.rank >= 1, _reshape("reshape"), weight=2),
    OpRule("flatten", lambda v: v.rank >= 2, _flatten),
    OpRule("permute", lambda v: v.rank >= 2, _permute),
    OpRule("transpose", lambda v: v.rank >= 2, _transpose),
    OpRule("expand", lambda v: v.rank >= 1, _expand),
    OpRule("slice", lambda v: v.rank >= 1, _slice, weight=2),
    OpRule("select", lambda v: v.rank >= 2, _select),
    OpRule("squeeze", lambda v: v.rank >= 2 and any(v.shape[d] == 1 for d in v.static_dims), _squeeze),
    OpRule("unsqueeze", lambda v: v.rank <= 3, _unsqueeze),
    OpRule("detach", lambda v: True, _detach),
    OpRule("cat", lambda v: v.rank >= 1, _cat, weight=2),
    OpRule("stack", lambda v: v.rank <= 3, _stack),
    OpRule("split", lambda v: v.rank >= 1, _split, weight=2),
    OpRule("max_dim", lambda v: is_numeric(v) and v.rank >= 1, _max_dim),
    OpRule("reduce", lambda v: v.rank >= 1, _reduce, weight=3),
    OpRule("softmax", lambda v: is_float(v) and v.rank >= 1, _softmax, weight=2),
    OpRule("linear", lambda v: is_f32(v) and last_static(v), _linear, make=_make_f32(2), weight=2),
    OpRule("matmul", lambda v: is_f32(v) and last_static(v), _matmul, make=_make_f32(3)),
    OpRule("addmm", _static_rank(2, 2), _addmm, make=_make_f32(2)),
    OpRule("mm", _static_rank(2, 2), _mm, make=_make_f32(2)),
    OpRule("bmm", _static_rank(3, 3), _bmm, make=_make_f32(3)),
    OpRule("conv1d", _static_rank(3, 3), _conv(3), make=_make_f32(3), weight=2),
    OpRule("conv2d", _static_rank(4, 4), _conv(4), make=_make_f32(4), weight=3),
    OpRule("pool1d", _static_rank(3, 3), _pool(3), make=_make_f32(3)),
    OpRule("pool2d", _static_rank(4, 4), _pool(4), make=_make_f32(4), weight=2),
    OpRule("batch_norm", _static_rank(2, 4), _batch_norm, make=_make_f32(4), weight=2),
    OpRule("layer_norm", lambda v: is_f32(v) and last_static(v), _layer_norm, make=_make_f32(3), weight=2),
    OpRule("group_norm", _static_rank(3, 4), _group_norm, make=_make_f32(4)),
    OpRule("embedding", lambda v: v.index_high is not None, _embedding, make=_fresh_index),
    OpRule("index_select", lambda v: v.rank >= 1, _index_select),
    OpRule("pad", lambda v: is_float(v) and last_static(v), _pad),
    OpRule("repeat", lambda v: v.rank >= 1, _repeat),
    OpRule("flip", lambda v: v.rank >= 1, _flip),
    OpRule("tril", lambda v: v.rank >= 2 and not v.is_dyn(v.rank - 1) and not v.is_dyn(v.rank - 2), _tril),
    OpRule("arange_add", lambda v: v.dtype in ("float32", "int64") and last_static(v), _arange_add),
]

RULES_BY_NAME: dict[str, OpRule] = {r.name: r for r in RULES}
