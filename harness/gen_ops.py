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
operand); :mod:`harness.generate` evaluates them on real tensors to learn
the result types, and renders the program as plain torch code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

FLOATS = ("float32", "float16", "bfloat16")
LOW_PRECISION = ("float16", "bfloat16")
NUMERIC = FLOATS + ("int64",)


@dataclass(frozen=True)
class Val:
    """A value of the program: a name usable in code, and its type."""

    name: str
    shape: tuple
    dtype: str  # a torch dtype name: float32, float16, bfloat16, int64, bool
    dyn: tuple = ()  # per dim: is it the dynamic (export.Dim) dimension
    owned: bool = False  # a fresh tensor the program may mutate in place (not a view, input or parameter)
    index_high: Optional[int] = None  # int64 input whose values are in [0, index_high): usable as indices

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def static_dims(self) -> list:
        return [d for d in range(self.rank) if not (self.dyn and self.dyn[d])]

    def is_dyn(self, d: int) -> bool:
        return bool(self.dyn) and bool(self.dyn[d])


@dataclass(frozen=True)
class Emit:
    """One statement: ``expr`` formatted with argument names; how many values it binds."""

    expr: str
    args: tuple
    view: bool = False  # the result aliases an argument (no in-place ops on it later)
    inplace: bool = False  # mutates args[0] and returns it


@dataclass(frozen=True)
class OpRule:
    name: str
    accepts: Callable[[Val], bool]
    build: Callable  # (gen, val) -> Optional[Emit]
    make: Optional[Callable] = None  # (gen) -> Val: a fresh operand when no value in the pool fits
    weight: int = 1
    aten: tuple = field(default_factory=tuple)  # the ATen ops it is meant to produce (documentation)


def is_float(v: Val) -> bool:
    return v.dtype in FLOATS


def is_f32(v: Val) -> bool:
    return v.dtype == "float32"


def is_numeric(v: Val) -> bool:
    return v.dtype in NUMERIC


def last_static(v: Val) -> bool:
    return v.rank >= 1 and not v.is_dyn(v.rank - 1)


def spatial_static(v: Val, rank: int) -> bool:
    return v.rank == rank and v.dtype == "float32" and all(not v.is_dyn(d) for d in range(1, rank))


def sizes_code(v: Val, shape: list, dyn_from: Optional[list] = None) -> str:
    """Sizes for view/reshape: dynamic dims read from the tensor, so export keeps them symbolic."""
    parts = []
    for i, s in enumerate(shape):
        src = dyn_from[i] if dyn_from else None
        parts.append(f"{{0}}.shape[{src}]" if src is not None else str(s))
    return ", ".join(parts)


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
UNARY_NUMERIC = {"neg_i": "torch.neg({0})", "abs_i": "torch.abs({0})", "scalar_affine": None}


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


# ---------------------------------------------------------------- views and aliasing


def _factor(n: int) -> Optional[tuple[int, int]]:
    for a in (2, 3, 5, 7):
        if n % a == 0 and n > a:
            return a, n // a
    return None


def _reshape(method: str):
    """Merge two adjacent static dims, or split one static dim into two factors."""

    def build(g, v: Val) -> Optional[Emit]:
        st = v.static_dims
        merges = [d for d in st if d + 1 in st]
        splits = [d for d in st if _factor(v.shape[d])]
        options = (["merge"] if merges else []) + (["split"] if splits else []) + (["flat"] if not any(v.dyn) else [])
        if not options:
            return None
        how = g.choice(options)
        dims = list(range(v.rank))
        src = [d if v.is_dyn(d) else None for d in dims]
        shape = list(v.shape)
        if how == "merge":
            d = g.choice(merges)
            shape[d:d + 2] = [shape[d] * shape[d + 1]]
            src[d:d + 2] = [None]
        elif how == "split":
            d = g.choice(splits)
            a, b = _factor(shape[d])
            shape[d:d + 1] = [a, b]
            src[d:d + 1] = [None, None]
        else:
            shape, src = [-1], [None]
        return Emit(f"{{0}}.{method}({sizes_code(v, shape, src)})", (v.name,), view=True)

    return build


def _flatten(g, v: Val) -> Optional[Emit]:
    st = v.static_dims
    runs = [d for d in st if d + 1 in st]
    if not runs:
        return None
    s = g.choice(runs)
    e = s + 1
    while e + 1 in st and g.flip():
        e += 1
    return Emit(f"torch.flatten({{0}}, {s}, {e})", (v.name,), view=True)


def _permute(g, v: Val) -> Emit:
    order = g.permutation(list(range(v.rank)))
    return Emit(f"{{0}}.permute({', '.join(map(str, order))})", (v.name,), view=True)


def _transpose(g, v: Val) -> Emit:
    a = g.int(0, v.rank - 1)
    b = g.int(0, v.rank - 1)
    if a == b:
        b = (a + 1) % v.rank
    form = g.choice(["{0}.transpose(A, B)", "torch.transpose({0}, A, B)"])
    return Emit(form.replace("A", str(a - v.rank if g.flip() else a)).replace("B", str(b)), (v.name,), view=True)


def _expand(g, v: Val) -> Optional[Emit]:
    ones = [d for d in v.static_dims if v.shape[d] == 1]
    sizes = ["-1" if v.is_dyn(d) else str(v.shape[d]) for d in range(v.rank)]
    for d in ones:
        if g.flip():
            sizes[d] = str(g.int(2, 5))
    lead = [str(g.int(2, 3))] if v.rank < 4 and (g.flip() or not ones) else []
    if not ones and not lead:
        return None
    return Emit(f"{{0}}.expand({', '.join(lead + sizes)})", (v.name,), view=True)


def _slice(g, v: Val) -> Optional[Emit]:
    dims = [d for d in v.static_dims if v.shape[d] >= 2]
    if not dims:
        return None
    d = g.choice(dims)
    n = v.shape[d]
    start = g.int(0, n - 1)
    stop = g.int(start + 1, n)
    step = g.choice([1, 1, 2])
    index = ", ".join([":"] * d + [f"{start}:{stop}" + (f":{step}" if step > 1 else "")])
    if g.flip():
        return Emit(f"{{0}}[{index}]", (v.name,), view=True)
    return Emit(f"torch.narrow({{0}}, {d}, {start}, {stop - start})", (v.name,), view=True)


def _select(g, v: Val) -> Optional[Emit]:
    dims = v.static_dims
    if not dims or v.rank < 2:
        return None
    d = g.choice(dims)
    i = g.int(-v.shape[d], v.shape[d] - 1)
    return Emit(f"{{0}}.select({d}, {i})", (v.name,), view=True)


def _squeeze(g, v: Val) -> Optional[Emit]:
    ones = [d for d in v.static_dims if v.shape[d] == 1]
    if not ones or v.rank < 2:
        return None
    return Emit(f"{{0}}.squeeze({g.choice(ones)})", (v.name,), view=True)


def _unsqueeze(g, v: Val) -> Optional[Emit]:
    if v.rank >= 4:
        return None
    return Emit(f"torch.unsqueeze({{0}}, {g.int(-(v.rank + 1), v.rank)})", (v.name,), view=True)


def _detach(g, v: Val) -> Emit:
    return Emit("{0}.detach()", (v.name,), view=True)


# ---------------------------------------------------------------- cat, stack, split


def _cat(g, v: Val) -> Optional[Emit]:
    d = g.choice(v.static_dims) if v.static_dims else None
    if d is None:
        return None
    others = [g.partner_cat(v, d) for _ in range(g.int(1, 2))]
    names = ", ".join("{%d}" % (i + 1) for i in range(len(others)))
    fn = g.choice(["torch.cat", "torch.concat"])
    return Emit(f"{fn}([{{0}}, {names}], dim={d - v.rank if g.flip() else d})", (v.name, *others))


def _stack(g, v: Val) -> Optional[Emit]:
    if v.rank >= 4:
        return None
    other = g.partner_same(v)
    return Emit(f"torch.stack([{{0}}, {{1}}], dim={g.int(0, v.rank)})", (v.name, other))


def _split(g, v: Val) -> Optional[Emit]:
    dims = [d for d in v.static_dims if v.shape[d] >= 2]
    if not dims:
        return None
    d = g.choice(dims)
    n = v.shape[d]
    how = g.choice(["split", "chunk", "sizes", "unbind"] if n <= 4 else ["split", "chunk", "sizes"])
    if how == "split":
        return Emit(f"torch.split({{0}}, {g.int(1, n - 1)}, dim={d})", (v.name,), view=True)
    if how == "chunk":
        return Emit(f"torch.chunk({{0}}, {g.int(2, n)}, dim={d})", (v.name,), view=True)
    if how == "unbind":
        return Emit(f"torch.unbind({{0}}, {d})", (v.name,), view=True)
    first = g.int(1, n - 1)
    return Emit(f"torch.split({{0}}, [{first}, {n - first}], dim={d})", (v.name,), view=True)


def _max_dim(g, v: Val) -> Optional[Emit]:
    if not v.static_dims:
        return None
    fn = g.choice(["torch.max", "torch.min", "torch.sort"])
    d = g.choice(v.static_dims)
    if fn == "torch.sort":
        return Emit(f"torch.sort({{0}}, dim={d}, stable=True)", (v.name,))
    return Emit(f"{fn}({{0}}, dim={d}, keepdim={g.flip()})", (v.name,))


# ---------------------------------------------------------------- reductions


def _reduce(g, v: Val) -> Optional[Emit]:
    if v.dtype == "bool":
        fn = g.choice(["torch.any", "torch.all"])
        dims = v.static_dims
        return Emit(f"{fn}({{0}}, dim={g.choice(dims)})" if dims else f"{fn}({{0}})", (v.name,))
    fns = ["sum", "amax", "amin", "argmax", "cumsum"] + (["mean", "var", "std", "logsumexp"] if is_float(v) else [])
    fn = g.choice(fns)
    dims = v.static_dims
    if fn == "cumsum":
        return Emit(f"torch.cumsum({{0}}, dim={g.choice(dims)})", (v.name,)) if dims else None
    if fn == "argmax":
        return Emit(f"torch.argmax({{0}}, dim={g.choice(dims)}, keepdim={g.flip()})", (v.name,)) if dims else None
    keep = g.flip()
    if not dims or (g.int(0, 4) == 0 and fn in ("sum", "mean", "amax") and not any(v.dyn)):
        return Emit(f"torch.{fn}({{0}})" if fn not in ("amax", "amin") else f"torch.{fn}({{0}}, dim=None)", (v.name,))
    chosen = sorted({g.choice(dims) for _ in range(g.int(1, 2))})
    dim = str(chosen[0]) if len(chosen) == 1 else f"({', '.join(map(str, chosen))})"
    if fn in ("var", "std"):
        return Emit(f"torch.{fn}({{0}}, dim={dim}, correction={g.int(0, 1)}, keepdim={keep})", (v.name,))
    return Emit(f"torch.{fn}({{0}}, dim={dim}, keepdim={keep})", (v.name,))


def _softmax(g, v: Val) -> Optional[Emit]:
    fn = g.choice(["torch.softmax", "torch.log_softmax", "F.softmax", "F.log_softmax"])
    return Emit(f"{fn}({{0}}, dim={g.int(-v.rank, v.rank - 1)})", (v.name,))


# ---------------------------------------------------------------- linear algebra


def _linear(g, v: Val) -> Emit:
    k = v.shape[-1]
    mod = g.module(f"nn.Linear({k}, {g.size()}, bias={g.flip()})")
    return Emit(f"{mod}({{0}})", (v.name,))


def _matmul(g, v: Val) -> Emit:
    k = v.shape[-1]
    w = g.param((k, g.size()) if v.rank > 1 or g.flip() else (k,))
    return Emit(g.choice(["torch.matmul({0}, {1})", "{0} @ {1}"]), (v.name, w))


def _addmm(g, v: Val) -> Emit:
    k, n = v.shape[1], g.size()
    w, b = g.param((k, n)), g.param((n,) if g.flip() else (1, n))
    return Emit("torch.addmm({2}, {0}, {1}, beta=0.5)" if g.flip() else "torch.addmm({2}, {0}, {1})", (v.name, w, b))


def _mm(g, v: Val) -> Emit:
    return Emit("torch.mm({0}, {1})", (v.name, g.param((v.shape[1], g.size()))))


def _bmm(g, v: Val) -> Emit:
    if v.is_dyn(0) or g.flip():
        return Emit("torch.bmm({0}, {0}.transpose(1, 2))", (v.name,))
    return Emit("torch.bmm({0}, {1})", (v.name, g.param((v.shape[0], v.shape[2], g.size()))))


# ---------------------------------------------------------------- conv, pooling, norms


def _conv(rank: int):
    def build(g, v: Val) -> Emit:
        c = v.shape[1]
        spatial = min(v.shape[2:])
        pad = g.int(0, 2)
        k = g.int(1, min(5, spatial + 2 * pad))
        stride = g.choice([1, 1, 2])
        depthwise = c > 1 and g.int(0, 2) == 0
        groups, out = (c, c * g.int(1, 2)) if depthwise else (1, g.size())
        cls = "nn.Conv2d" if rank == 4 else "nn.Conv1d"
        mod = g.module(f"{cls}({c}, {out}, {k}, stride={stride}, padding={pad}, groups={groups}, bias={g.flip()})")
        return Emit(f"{mod}({{0}})", (v.name,))

    return build


def _pool(rank: int):
    def build(g, v: Val) -> Emit:
        n = "2d" if rank == 4 else "1d"
        spatial = min(v.shape[2:])
        kind = g.choice(["max", "avg", "adaptive"])
        if kind == "adaptive":
            return Emit(f"F.adaptive_avg_pool{n}({{0}}, 1)", (v.name,))
        k = g.int(1, min(3, spatial))
        pad = g.int(0, k // 2)
        stride = g.int(1, 2)
        return Emit(f"F.{kind}_pool{n}({{0}}, {k}, stride={stride}, padding={pad})", (v.name,))

    return build


def _batch_norm(g, v: Val) -> Emit:
    c = v.shape[1]
    cls = "nn.BatchNorm2d" if v.rank == 4 else "nn.BatchNorm1d"
    mod = g.module(f"{cls}({c})", init=[f"{{m}}.running_mean.copy_(torch.randn({c}, generator=g) * 0.1)",
                                         f"{{m}}.running_var.copy_(torch.rand({c}, generator=g) + 0.5)"])
    return Emit(f"{mod}({{0}})", (v.name,))


def _layer_norm(g, v: Val) -> Emit:
    shape = v.shape[-2:] if v.rank >= 2 and not v.is_dyn(v.rank - 2) and g.flip() else v.shape[-1:]
    if g.flip():
        return Emit(f"F.layer_norm({{0}}, {tuple(shape)!r})", (v.name,))
    mod = g.module(f"nn.LayerNorm({list(shape)!r}, elementwise_affine={g.flip()})")
    return Emit(f"{mod}({{0}})", (v.name,))


def _group_norm(g, v: Val) -> Optional[Emit]:
    c = v.shape[1]
    groups = g.choice([d for d in (1, 2, 3) if c % d == 0])
    return Emit(f"{g.module(f'nn.GroupNorm({groups}, {c})')}({{0}})", (v.name,))


def _embedding(g, v: Val) -> Emit:
    mod = g.module(f"nn.Embedding({v.index_high}, {g.size()})")
    return Emit(f"{mod}({{0}})", (v.name,))


def _index_select(g, v: Val) -> Optional[Emit]:
    if not v.static_dims:
        return None
    d = g.choice(v.static_dims)
    n = g.int(1, 4)
    idx = g.buffer_index(n, v.shape[d])
    return Emit(f"torch.index_select({{0}}, {d}, {{1}})", (v.name, idx))


# ---------------------------------------------------------------- shape-making


def _pad(g, v: Val) -> Emit:
    left, right = g.int(0, 2), g.int(0, 2)
    return Emit(f"F.pad({{0}}, ({left}, {right}), value={g.choice([0.0, 1.5])})", (v.name,))


def _repeat(g, v: Val) -> Optional[Emit]:
    if any(v.dyn) or v.rank > 3:
        return None
    reps = [g.int(1, 2) for _ in range(v.rank)]
    return Emit(f"{{0}}.repeat({', '.join(map(str, reps))})", (v.name,))


def _flip(g, v: Val) -> Emit:
    return Emit(f"torch.flip({{0}}, [{g.int(0, v.rank - 1)}])", (v.name,))


def _tril(g, v: Val) -> Emit:
    return Emit(f"torch.tril({{0}}, {g.int(-1, 1)})", (v.name,))


def _arange_add(g, v: Val) -> Emit:
    return Emit(f"{{0}} + torch.arange({v.shape[-1]}, dtype=torch.{v.dtype})", (v.name,))


def _make_f32(rank: int):
    return lambda g: g.new_input(rank, "float32", static_tail=True)


def _fresh_bool(g) -> Val:
    return g.new_input(g.int(1, 3), "bool")


def _fresh_index(g) -> Val:
    return g.new_input(g.int(1, 2), "int64", index=True)


def _static_rank(lo: int, hi: int):
    return lambda v: is_f32(v) and lo <= v.rank <= hi and all(not v.is_dyn(d) for d in range(1, v.rank))


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
    OpRule("squeeze", lambda v: v.rank >= 2, _squeeze),
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
