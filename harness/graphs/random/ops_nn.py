"""Op rules of layers: linear algebra, conv, pooling, norms, embedding, and shape-making ops.

Layer sizes are read off the operand (channels, features) and kernels are
kept within the padded input, so every call is valid by construction. Part
of the vocabulary of :mod:`harness.graphs.random.ops`.
"""

from __future__ import annotations

from typing import Optional

from harness.graphs.random.types import Emit, Val, call, is_f32

# the rule builders ops.py assembles into the vocabulary
__all__ = ["_addmm", "_arange_add", "_batch_norm", "_bmm", "_conv", "_embedding", "_flip", "_fresh_bool",
           "_fresh_index", "_group_norm", "_index_select", "_layer_norm", "_linear", "_make_f32", "_matmul", "_mm",
           "_pad", "_pool", "_repeat", "_static_rank", "_tril"]

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
        optional = [("weight", "None"), ("bias", "None"), ("eps", "1e-05")][:g.int(0, 3)]
        return Emit(call(g, "F.layer_norm", ["{0}", repr(tuple(shape))], optional), (v.name,))
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
    return Emit(call(g, "torch.index_select", ["{0}"], [("dim", d), ("index", "{1}")]), (v.name, idx))


# ---------------------------------------------------------------- shape-making


def _pad(g, v: Val) -> Emit:
    left, right = g.int(0, 2), g.int(0, 2)
    return Emit(call(g, "F.pad", ["{0}", f"({left}, {right})"], [("mode", "'constant'"), ("value", g.choice([0.0, 1.5]))]),
                (v.name,))


def _repeat(g, v: Val) -> Optional[Emit]:
    if any(v.dyn) or v.rank > 3:
        return None
    reps = [g.int(1, 2) for _ in range(v.rank)]
    return Emit(f"{{0}}.repeat({', '.join(map(str, reps))})", (v.name,))


def _flip(g, v: Val) -> Emit:
    return Emit(call(g, "torch.flip", ["{0}"], [("dims", f"[{g.int(0, v.rank - 1)}]")]), (v.name,))


def _tril(g, v: Val) -> Emit:
    return Emit(call(g, g.choice(["torch.tril", "torch.triu"]), ["{0}"], [("diagonal", g.int(-1, 1))]), (v.name,))


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
