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

Values have every dtype the edge dialect carries (float32, float16,
bfloat16, int8, int16, int32, int64, uint8, bool); optional arguments are
passed positionally or by keyword (:func:`harness.graphs.random.types.call`),
as models write both.

The rules live in several modules: elementwise ops, comparisons and casts
here; views, cat/stack and reductions in :mod:`harness.graphs.random.ops_shape`;
layers (linear algebra, conv, pooling, norms, embedding) in
:mod:`harness.graphs.random.ops_nn`; integer arithmetic and index producers and
consumers in :mod:`harness.graphs.random.ops_int`; ops with several results in
:mod:`harness.graphs.random.ops_multi`; in-place updates of buffers and inputs in
:mod:`harness.graphs.random.ops_mutate`; further views and memory layouts in
:mod:`harness.graphs.random.ops_layout`; what the passes ``to_edge`` runs first look
for (size arithmetic on the dynamic dim, mixed-dtype operands, unused
parameters, constants stored transposed or channels-last) in
:mod:`harness.graphs.random.ops_sym`.
"""

from __future__ import annotations

from harness.graphs.random import ops_int, ops_layout, ops_multi, ops_mutate, ops_patterns, ops_sym
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
    _any_all,
    _cat,
    _detach,
    _expand,
    _flatten,
    _permute,
    _reduce,
    _reshape,
    _select,
    _slice,
    _softmax,
    _squeeze,
    _stack,
    _transpose,
    _unsqueeze,
)
from harness.graphs.random.types import (  # noqa: F401 - re-exported: the vocabulary's types
    DTYPES,
    FLOATS,
    INTS,
    LOW_PRECISION,
    NUMERIC,
    Emit,
    OpRule,
    Val,
    call,
    is_f32,
    is_float,
    is_int,
    is_numeric,
    last_static,
)

__all__ = ["UNARY_FLOAT", "UNARY_FLOAT_ARGS", "RULES", "RULES_BY_NAME"]

# ---------------------------------------------------------------- elementwise


UNARY_FLOAT = {
    "neg": "torch.neg({0})", "abs": "torch.abs({0})", "exp": "torch.exp({0})", "sin": "torch.sin({0})",
    "cos": "torch.cos({0})", "tanh": "torch.tanh({0})", "sigmoid": "torch.sigmoid({0})", "relu": "torch.relu({0})",
    "gelu": "F.gelu({0})", "gelu_tanh": "F.gelu({0}, approximate='tanh')", "silu": "F.silu({0})",
    "hardswish": "F.hardswish({0})", "sqrt_abs": "torch.sqrt(torch.abs({0}))",
    "rsqrt": "torch.rsqrt(torch.abs({0}) + 0.5)", "reciprocal": "torch.reciprocal({0} + 4.0)",
    "floor": "torch.floor({0})", "erf": "torch.erf({0})", "square": "torch.square({0})",
    "log1p_abs": "torch.log1p(torch.abs({0}))", "clone": "{0}.clone()", "hardsigmoid": "F.hardsigmoid({0})",
    "sign": "torch.sign({0})", "full_like": "torch.full_like({0}, 0.25)",
}

# Unary float ops with optional arguments, passed positionally or by keyword (both spellings occur).
UNARY_FLOAT_ARGS = {
    "leaky_relu": lambda g: call(g, "F.leaky_relu", ["{0}"], [("negative_slope", g.choice(["0.1", "0.2"]))]),
    "elu": lambda g: call(g, "F.elu", ["{0}"], [("alpha", g.choice(["1.0", "0.5"]))]),
    "hardtanh": lambda g: call(g, "F.hardtanh", ["{0}"], [("min_val", "-1.0"), ("max_val", "1.0")]),
    "clamp": lambda g: g.choice([call(g, "torch.clamp", ["{0}"], [("min", "-0.5"), ("max", "0.75")]),
                                 "{0}.clamp(min=-0.5)", "torch.clamp({0}, max=0.75)"]),
}


def _unary(template: str):
    return lambda g, v: Emit(template, (v.name,))


def _unary_args(make):
    return lambda g, v: Emit(make(g), (v.name,))


def _scalar_affine(g, v: Val) -> Emit:
    """``x * 2.0 + 1``: scalar arguments (integers for integer values)."""
    if v.dtype in INTS:
        a, b = g.choice([2, 3, -1]), g.choice([1, -2, 5])
    else:
        a, b = g.choice([2.0, 0.5, -1.5]), g.choice([1, 0.25, -3.0])
    form = g.choice(["{0} * A + B", "({0} - B) * A", "{0} / A + B" if v.dtype not in INTS else "{0} * A - B"])
    return Emit(form.replace("A", repr(a)).replace("B", repr(b)), (v.name,))


# ---------------------------------------------------------------- binary


def _binary(fn: str, dtypes=NUMERIC):
    def build(g, v: Val) -> Emit:
        other = g.partner(v, dtypes=(v.dtype,) if v.dtype in dtypes else dtypes, scalar_ok=fn in ("add", "sub", "mul"))
        if fn in ("add", "sub") and g.int(0, 3) == 0:  # alpha is keyword-only
            alpha = g.choice(["2", "-1"] if v.dtype in INTS else ["2", "0.5"])
            return Emit(f"torch.{fn}({{0}}, {{1}}, alpha={alpha})", (v.name, other))
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
    dtype = g.choice(["float32", "float32", "int64", "bfloat16", "float16", "int8", "int32", "uint8"])
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


def _owned(v: Val) -> bool:
    """A fresh temporary an in-place op may update (never one holding indices: later views would go out of range)."""
    return v.owned and v.index_high is None


# ---------------------------------------------------------------- casts

_METHOD = {"float32": "float", "float16": "half", "bfloat16": "bfloat16", "int64": "long", "int32": "int",
           "int16": "short", "int8": "char", "uint8": "byte", "bool": "bool"}
_CLAMP_BEFORE = {"int8": (-100, 100), "int16": (-1000, 1000), "uint8": (0, 200)}


def _cast(g, v: Val) -> Emit:
    """A cast to any other dtype; floats are clamped into a small int dtype's range first (out of range, the
    conversion is undefined and differs between kernels)."""
    to = g.choice([d for d in DTYPES if d != v.dtype])
    src = "{0}"
    if v.dtype in FLOATS and to in _CLAMP_BEFORE:
        lo, hi = _CLAMP_BEFORE[to]
        src = f"{{0}}.clamp({lo}, {hi})"
    form = g.choice([f"{src}.to(torch.{to})", f"{src}.{_METHOD[to]}()", f"{src}.to(dtype=torch.{to})",
                     f"{src}.type(torch.{to})"])
    return Emit(form, (v.name,))


def _numeric_rank(v: Val) -> bool:
    return is_numeric(v) and v.rank >= 1


def _rank4(v: Val) -> bool:
    return v.rank == 4 and not any(v.is_dyn(d) for d in range(1, 4))


RULES: list[OpRule] = [
    *(OpRule(n, is_float, _unary(t)) for n, t in UNARY_FLOAT.items()),
    *(OpRule(n, is_float, _unary_args(m)) for n, m in UNARY_FLOAT_ARGS.items()),
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
    OpRule("any_all", lambda v: v.dtype == "bool" and v.rank >= 1, _any_all, make=_fresh_bool),
    OpRule("masked_fill", is_float, _masked_fill),
    OpRule("relu_", lambda v: is_float(v) and _owned(v), _inplace_unary("relu_"), weight=2),
    OpRule("sigmoid_", lambda v: is_float(v) and _owned(v), _inplace_unary("sigmoid_")),
    OpRule("add_", lambda v: is_numeric(v) and _owned(v), _inplace_binary("add_"), weight=2),
    OpRule("mul_", lambda v: is_numeric(v) and _owned(v), _inplace_binary("mul_"), weight=2),
    OpRule("cast", lambda v: True, _cast, weight=4),
    # integers: arithmetic, promotion across dtypes, comparisons as data (ops_int)
    OpRule("int_unary", is_int, ops_int.int_unary, weight=2),
    OpRule("int_bitwise", lambda v: is_int(v) or v.dtype == "bool", ops_int.int_bitwise),
    OpRule("int_div", is_int, ops_int.int_div, weight=2),
    OpRule("promote", is_numeric, ops_int.promote, weight=2),
    OpRule("compare_cast", is_numeric, ops_int.compare_cast),
    # indices: produced (argmax, topk, sort, max.dim) and consumed (ops_int, ops_multi)
    OpRule("arg_reduce", _numeric_rank, ops_int.arg_reduce, weight=2),
    OpRule("topk", _numeric_rank, ops_multi.topk, make=_make_f32(2)),
    OpRule("sort", _numeric_rank, ops_multi.sort),
    OpRule("max_dim", _numeric_rank, ops_multi.max_dim),
    OpRule("aminmax", _numeric_rank, ops_multi.aminmax),
    OpRule("gather", ops_int.is_index, ops_int.gather, make=ops_int.fresh_index, weight=3),
    OpRule("scatter", lambda v: ops_int.is_index(v) and v.index_dim is not None, ops_int.scatter,
           make=ops_int.fresh_distinct_index, weight=2),
    OpRule("index_select_by", ops_int.is_index, ops_int.index_select_by, weight=2),
    OpRule("index_by", ops_int.is_index, ops_int.index_by),
    # several results (ops_multi)
    OpRule("split", lambda v: v.rank >= 1, ops_multi.split, weight=2),
    OpRule("native_layer_norm", lambda v: is_f32(v) and last_static(v), ops_multi.native_layer_norm,
           make=_make_f32(3)),
    OpRule("batch_norm_f", _static_rank(2, 4), ops_multi.batch_norm_functional, make=_make_f32(3)),
    OpRule("max_pool_indices", _static_rank(4, 4), ops_multi.max_pool_indices, make=_make_f32(4)),
    # state updated in place: BUFFER_MUTATION, USER_INPUT_MUTATION (ops_mutate)
    OpRule("buffer_update", lambda v: not any(v.dyn), ops_mutate.buffer_update, weight=3),
    OpRule("input_update", ops_mutate.updatable_input, ops_mutate.input_update, weight=2),
    # views and layout
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
    OpRule("movedim", lambda v: v.rank >= 2, ops_layout.movedim),
    OpRule("matrix_transpose", lambda v: 1 <= v.rank, ops_layout.matrix_transpose),
    OpRule("swapaxes", lambda v: v.rank >= 2, ops_layout.swapaxes),
    OpRule("unflatten", lambda v: v.rank <= 3, ops_layout.unflatten),
    OpRule("squeeze_dims", lambda v: any(v.shape[d] == 1 for d in v.static_dims), ops_layout.squeeze_dims),
    OpRule("as_strided", lambda v: v.rank >= 1 and not any(v.dyn), ops_layout.as_strided),
    OpRule("contiguous", lambda v: v.rank >= 2, ops_layout.contiguous),
    OpRule("channels_last", _rank4, ops_layout.channels_last, make=_make_f32(4), weight=2),
    OpRule("cat", lambda v: v.rank >= 1, _cat, weight=2),
    OpRule("stack", lambda v: v.rank <= 3, _stack),
    OpRule("reduce", lambda v: v.rank >= 1, _reduce, weight=4),
    OpRule("softmax", lambda v: is_float(v) and v.rank >= 1, _softmax, weight=2),
    OpRule("linear", lambda v: is_f32(v) and last_static(v), _linear, make=_make_f32(2), weight=2),
    OpRule("matmul", lambda v: is_f32(v) and last_static(v), _matmul, make=_make_f32(3)),
    OpRule("addmm", _static_rank(2, 2), _addmm, make=_make_f32(2)),
    OpRule("mm", _static_rank(2, 2), _mm, make=_make_f32(2)),
    OpRule("bmm", _static_rank(3, 3), _bmm, make=_make_f32(3), weight=2),
    OpRule("conv1d", _static_rank(3, 3), _conv(3), make=_make_f32(3), weight=2),
    OpRule("conv2d", _static_rank(4, 4), _conv(4), make=_make_f32(4), weight=3),
    OpRule("pool1d", _static_rank(3, 3), _pool(3), make=_make_f32(3)),
    OpRule("pool2d", _static_rank(4, 4), _pool(4), make=_make_f32(4), weight=2),
    OpRule("batch_norm", _static_rank(2, 4), _batch_norm, make=_make_f32(4), weight=2),
    OpRule("layer_norm", lambda v: is_f32(v) and last_static(v), _layer_norm, make=_make_f32(3), weight=2),
    OpRule("group_norm", _static_rank(3, 4), _group_norm, make=_make_f32(4)),
    OpRule("embedding", ops_int.is_index, _embedding, make=_fresh_index),
    OpRule("index_select", lambda v: v.rank >= 1, _index_select),
    OpRule("pad", lambda v: is_float(v) and last_static(v), _pad),
    OpRule("repeat", lambda v: v.rank >= 1, _repeat),
    OpRule("flip", lambda v: v.rank >= 1, _flip),
    OpRule("tril", lambda v: v.rank >= 2 and not v.is_dyn(v.rank - 1) and not v.is_dyn(v.rank - 2), _tril),
    OpRule("arange_add", lambda v: v.dtype in ("float32", "int64", "int32") and last_static(v), _arange_add),
    # multi-op patterns backend passes rewrite, each written as one nested expression (ops_patterns)
    OpRule("pattern", ops_patterns.accepts_pattern, ops_patterns.pattern, make=_make_f32(4), weight=2),
    # what the passes to_edge runs on the ATen program first, and EdgeToBackendOpsPass, rewrite (ops_sym)
    OpRule("sym_size_arith", ops_sym.has_dynamic_dim, ops_sym.sym_size_arith),
    OpRule("scale_by_size", ops_sym.accepts_float_dynamic, ops_sym.scale_by_size),
    OpRule("mixed_dtype_binary", is_float, ops_sym.mixed_dtype_binary),
    OpRule("mixed_dtype_compare", is_float, ops_sym.mixed_dtype_compare),
    OpRule("with_unused_parameter", is_float, ops_sym.with_unused_parameter),
    OpRule("strided_constant", ops_sym.accepts_strided, ops_sym.strided_constant),
]

RULES_BY_NAME: dict[str, OpRule] = {r.name: r for r in RULES}
