"""Op rules that move data around: views and aliasing, cat/stack/split, reductions, softmax.

Every size they fix (a view's shape, a slice's bounds, a cat or split dim) is
chosen among a value's *static* dims, so the program's dynamic dimension is
never specialized by export. Part of the vocabulary of :mod:`harness.graphs.random.ops`.
"""

from __future__ import annotations

import math
from typing import Optional

from harness.graphs.random.types import Emit, Val, is_float, sizes_code

# the rule builders ops.py assembles into the vocabulary
__all__ = ["_cat", "_detach", "_expand", "_flatten", "_max_dim", "_permute", "_reduce", "_reshape", "_select",
           "_slice", "_softmax", "_split", "_squeeze", "_stack", "_transpose", "_unsqueeze"]

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
    picked = _divisible_dim(g, v)
    if picked is None:
        return None
    d, n = picked
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
        return Emit(f"torch.sort({{0}}, dim={d})", (v.name,))  # sort.default: core ATen (sort.stable is not)
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
    if fn in ("var", "std"):  # Bessel's correction only over more than one element (else NaN and a warning)
        correction = g.int(0, 1) if math.prod(v.shape[d] for d in chosen) > 1 else 0
        return Emit(f"torch.{fn}({{0}}, dim={dim}, correction={correction}, keepdim={keep})", (v.name,))
    return Emit(f"torch.{fn}({{0}}, dim={dim}, keepdim={keep})", (v.name,))


def _softmax(g, v: Val) -> Optional[Emit]:
    fn = g.choice(["torch.softmax", "torch.log_softmax", "F.softmax", "F.log_softmax"])
    return Emit(f"{fn}({{0}}, dim={g.int(-v.rank, v.rank - 1)})", (v.name,))
