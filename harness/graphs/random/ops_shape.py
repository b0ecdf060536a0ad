"""Op rules that move data around: views and aliasing, cat/stack, reductions, softmax.

Every size they fix (a view's shape, a slice's bounds, a cat or split dim) is
chosen among a value's *static* dims, so the program's dynamic dimension is
never specialized by export. Part of the vocabulary of :mod:`harness.graphs.random.ops`.
"""

from __future__ import annotations

import math
from typing import Optional

from harness.graphs.random.types import Emit, Val, call, is_float, sizes_code

# the rule builders ops.py assembles into the vocabulary
__all__ = ["_any_all", "_cat", "_detach", "_expand", "_flatten", "_permute", "_reduce", "_reshape", "_select",
           "_slice", "_softmax", "_squeeze", "_stack", "_transpose", "_unsqueeze"]

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
    head = g.choice(["torch.flatten", "{0}.flatten"])
    return Emit(call(g, head, ["{0}"] if head.startswith("torch") else [], [("start_dim", s), ("end_dim", e)]),
                (v.name,), view=True)


def _permute(g, v: Val) -> Emit:
    order = g.permutation(list(range(v.rank)))
    dims = ", ".join(map(str, order))
    form = g.choice([f"{{0}}.permute({dims})", f"torch.permute({{0}}, ({dims}))", f"torch.permute({{0}}, dims=[{dims}])"])
    return Emit(form, (v.name,), view=True)


def _transpose(g, v: Val) -> Emit:
    a = g.int(0, v.rank - 1)
    b = g.int(0, v.rank - 1)
    if a == b:
        b = (a + 1) % v.rank
    form = g.choice(["{0}.transpose(A, B)", "torch.transpose({0}, A, B)", "torch.transpose({0}, dim0=A, dim1=B)"])
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


def _divisible_dim(g, v: Val) -> Optional[tuple[int, int]]:
    """A static dim of ``v`` with at least 2 elements (one a slice or split can cut), and its size."""
    dims = [d for d in v.static_dims if v.shape[d] >= 2]
    if not dims:
        return None
    d = g.choice(dims)
    return d, v.shape[d]


def _slice(g, v: Val) -> Optional[Emit]:
    picked = _divisible_dim(g, v)
    if picked is None:
        return None
    d, n = picked
    start = g.int(0, n - 1)
    stop = g.int(start + 1, n)
    step = g.choice([1, 2])
    index = ", ".join([":"] * d + [f"{start}:{stop}" + (f":{step}" if step > 1 else "")])
    if g.flip():
        return Emit(f"{{0}}[{index}]", (v.name,), view=True)
    return Emit(call(g, "torch.narrow", ["{0}"], [("dim", d), ("start", start), ("length", stop - start)]), (v.name,),
                view=True)


def _select(g, v: Val) -> Optional[Emit]:
    dims = v.static_dims
    if not dims or v.rank < 2:
        return None
    d = g.choice(dims)
    i = g.int(-v.shape[d], v.shape[d] - 1)
    head = g.choice(["{0}.select", "torch.select"])
    return Emit(call(g, head, ["{0}"] if head.startswith("torch") else [], [("dim", d), ("index", i)]), (v.name,),
                view=True)


def _squeeze(g, v: Val) -> Optional[Emit]:
    ones = [d for d in v.static_dims if v.shape[d] == 1]
    if not ones or v.rank < 2:
        return None
    return Emit(f"{{0}}.squeeze({g.choice(ones)})", (v.name,), view=True)


def _unsqueeze(g, v: Val) -> Optional[Emit]:
    if v.rank >= 4:
        return None
    d = g.int(-(v.rank + 1), v.rank)
    return Emit(g.choice([f"torch.unsqueeze({{0}}, {d})", f"{{0}}.unsqueeze(dim={d})", f"{{0}}.unsqueeze({d})"]),
                (v.name,), view=True)


def _detach(g, v: Val) -> Emit:
    return Emit("{0}.detach()", (v.name,), view=True)


# ---------------------------------------------------------------- cat, stack


def _cat(g, v: Val) -> Optional[Emit]:
    d = g.choice(v.static_dims) if v.static_dims else None
    if d is None:
        return None
    others = [g.partner_cat(v, d) for _ in range(g.int(1, 2))]
    names = ", ".join("{%d}" % (i + 1) for i in range(len(others)))
    fn = g.choice(["torch.cat", "torch.concat"])
    return Emit(call(g, fn, [f"[{{0}}, {names}]"], [("dim", d - v.rank if g.flip() else d)]), (v.name, *others))


def _stack(g, v: Val) -> Optional[Emit]:
    if v.rank >= 4:
        return None
    other = g.partner_same(v)
    return Emit(call(g, "torch.stack", ["[{0}, {1}]"], [("dim", g.int(0, v.rank))]), (v.name, other))


# ---------------------------------------------------------------- reductions


def _reduce(g, v: Val) -> Optional[Emit]:
    """Reductions over static dims (or everything), with keepdim, written positionally or by keyword.

    ``var``/``std`` take ``correction`` and ``keepdim`` by keyword only: ``torch.var(x, 1, True)`` is the
    old ``unbiased`` overload."""
    dims = v.static_dims
    if v.dtype == "bool":
        return _any_all(g, v)
    fns = ["sum", "amax", "amin", "cumsum", "prod"] + (["mean", "var", "std", "logsumexp"] if is_float(v) else [])
    fn = g.choice(fns)
    if fn == "cumsum":
        return Emit(call(g, "torch.cumsum", ["{0}"], [("dim", g.choice(dims))]), (v.name,)) if dims else None
    keep = g.flip()
    if not dims or (g.int(0, 4) == 0 and fn in ("sum", "mean", "amax", "prod") and not any(v.dyn)):
        return Emit(f"torch.{fn}({{0}})" if fn not in ("amax", "amin") else f"torch.{fn}({{0}}, dim=None)", (v.name,))
    if fn == "prod":  # prod takes one dim
        return Emit(call(g, "torch.prod", ["{0}"], [("dim", g.choice(dims)), ("keepdim", keep)]), (v.name,))
    chosen = sorted({g.choice(dims) for _ in range(g.int(1, 2))})
    dim = str(chosen[0]) if len(chosen) == 1 else f"({', '.join(map(str, chosen))})"
    if fn in ("var", "std"):  # Bessel's correction only over more than one element (else NaN and a warning)
        correction = g.int(0, 1) if math.prod(v.shape[d] for d in chosen) > 1 else 0
        return Emit(f"torch.{fn}({{0}}, dim={dim}, correction={correction}, keepdim={keep})", (v.name,))
    head = g.choice([f"torch.{fn}", f"{{0}}.{fn}"])
    return Emit(call(g, head, ["{0}"] if head.startswith("torch") else [], [("dim", dim), ("keepdim", keep)]),
                (v.name,))


def _any_all(g, v: Val) -> Emit:
    """any/all of a mask: over a static dim (keepdim or not, positional or keyword), or over everything."""
    fn = g.choice(["any", "all"])
    head = g.choice([f"torch.{fn}", f"{{0}}.{fn}"])
    required = ["{0}"] if head.startswith("torch") else []
    if not v.static_dims or g.int(0, 3) == 0:
        return Emit(f"{head}({', '.join(required)})", (v.name,))
    return Emit(call(g, head, required, [("dim", g.choice(v.static_dims)), ("keepdim", g.flip())]), (v.name,))


def _softmax(g, v: Val) -> Optional[Emit]:
    fn = g.choice(["torch.softmax", "torch.log_softmax", "F.softmax", "F.log_softmax"])
    return Emit(call(g, fn, ["{0}"], [("dim", g.int(-v.rank, v.rank - 1))]), (v.name,))
