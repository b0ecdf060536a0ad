"""Op rules with several results: topk, sort, max/min over a dim, aminmax, native layer norm, batch norm,
max pooling with indices, and the split family.

A multi-output op is one node whose results are read through ``getitem``
nodes; passes that rewrite such a node, or that assume the first result is
the only one used, break on the others. Every result binds its own name in
the program (``v3, v4 = torch.topk(...)``), so later statements use each of
them, not only the first: the indices results carry ``index_high`` (and
``index_dim`` when they are distinct along the dim, as topk's and sort's
are), so :mod:`harness.graphs.random.ops_int` feeds them to gather and
scatter. ``var_mean``/``std_mean`` are left out: they are not core ATen and
ExecuTorch's ``to_edge`` rejects them. Part of the vocabulary of
:mod:`harness.graphs.random.ops`.
"""

from __future__ import annotations

from typing import Optional

from harness.graphs.random.types import Emit, Val, call

__all__ = ["topk", "sort", "max_dim", "aminmax", "native_layer_norm", "batch_norm_functional", "max_pool_indices",
           "split"]


def _dim(g, v: Val) -> Optional[tuple[int, str]]:
    """A static dim of ``v`` and how to write it (sometimes negative)."""
    if not v.static_dims:
        return None
    d = g.choice(v.static_dims)
    return d, str(d - v.rank if g.int(0, 3) == 0 else d)


def topk(g, v: Val) -> Optional[Emit]:
    picked = _dim(g, v)
    if picked is None:
        return None
    d, dim = picked
    n = v.shape[d]
    k = g.int(1, n)
    largest = g.flip()
    if g.flip():
        expr = call(g, "torch.topk", ["{0}", str(k)], [("dim", dim), ("largest", largest), ("sorted", True)])
    else:
        expr = f"{{0}}.topk({k}, {dim})" if largest else f"{{0}}.topk({k}, dim={dim}, largest=False)"
    return Emit(expr, (v.name,), index=(None, (n, d)))


def sort(g, v: Val) -> Optional[Emit]:
    """sort (values, indices) or argsort; never ``stable=True`` (sort.stable is not core ATen)."""
    picked = _dim(g, v)
    if picked is None:
        return None
    d, dim = picked
    descending = g.flip()
    if g.int(0, 2) == 0:
        return Emit(call(g, "torch.argsort", ["{0}"], [("dim", dim), ("descending", descending)]), (v.name,),
                    index=((v.shape[d], d),))
    head = g.choice(["torch.sort", "{0}.sort"])
    expr = call(g, head, ["{0}"] if head == "torch.sort" else [], [("dim", dim), ("descending", descending)])
    return Emit(expr, (v.name,), index=(None, (v.shape[d], d)))


def max_dim(g, v: Val) -> Optional[Emit]:
    """max.dim / min.dim: (values, indices), indices distinct along the dim only when it is kept."""
    picked = _dim(g, v)
    if picked is None:
        return None
    d, dim = picked
    fn = g.choice(["max", "min"])
    keep = g.flip()
    head = g.choice([f"torch.{fn}", f"{{0}}.{fn}"])
    expr = call(g, head, ["{0}"] if head.startswith("torch") else [], [("dim", dim), ("keepdim", keep)])
    return Emit(expr, (v.name,), index=(None, (v.shape[d], d if keep else None)))


def aminmax(g, v: Val) -> Optional[Emit]:
    picked = _dim(g, v)
    if picked is None:
        return None
    _, dim = picked
    return Emit(f"torch.aminmax({{0}}, dim={dim}, keepdim={g.flip()})", (v.name,))


def native_layer_norm(g, v: Val) -> Emit:
    """``torch.native_layer_norm``: (out, mean, rstd), all three used later, unlike ``F.layer_norm``'s."""
    shape = tuple(v.shape[-2:]) if v.rank >= 2 and not v.is_dyn(v.rank - 2) and g.flip() else tuple(v.shape[-1:])
    affine = g.flip()
    w = g.param(shape) if affine else "None"
    b = g.param(shape) if affine and g.flip() else "None"
    return Emit(f"torch.native_layer_norm({{0}}, {list(shape)!r}, {w}, {b}, {g.choice(['1e-05', '0.001'])})",
                (v.name,))


def batch_norm_functional(g, v: Val) -> Emit:
    """``F.batch_norm(..., training=False)`` on running statistics held in buffers."""
    c = v.shape[1]
    mean = g.buffer_init(f"torch.randn({c}, generator=g) * 0.1")
    var = g.buffer_init(f"torch.rand({c}, generator=g) + 0.5")
    weight = g.param((c,)) if g.flip() else "None"
    bias = g.param((c,)) if g.flip() else "None"
    expr = call(g, "F.batch_norm", ["{0}", mean, var],
                [("weight", weight), ("bias", bias), ("training", False), ("momentum", 0.1),
                 ("eps", g.choice(["1e-05", "0.001"]))])
    return Emit(expr, (v.name,))


def max_pool_indices(g, v: Val) -> Emit:
    """``F.max_pool2d(..., return_indices=True)``: max_pool2d_with_indices with both results used."""
    k = g.int(1, min(3, *v.shape[2:]))
    stride = g.int(1, 2)
    pad = g.int(0, k // 2)
    expr = call(g, "F.max_pool2d", ["{0}", str(k)], [("stride", stride), ("padding", pad)])
    return Emit(expr[:-1] + ", return_indices=True)", (v.name,))


def split(g, v: Val) -> Optional[Emit]:
    """split (by size or sizes), chunk, tensor_split, unbind: several views of one value."""
    dims = [d for d in v.static_dims if v.shape[d] >= 2]
    if not dims:
        return None
    d = g.choice(dims)
    n = v.shape[d]
    how = g.choice(["split", "chunk", "sizes", "tensor_split", "method"] + (["unbind"] if n <= 4 else []))
    if how == "split":
        return Emit(call(g, "torch.split", ["{0}", str(g.int(1, n - 1))], [("dim", d)]), (v.name,), view=True)
    if how == "chunk":
        return Emit(call(g, "torch.chunk", ["{0}", str(g.int(2, n))], [("dim", d)]), (v.name,), view=True)
    if how == "unbind":
        return Emit(call(g, "torch.unbind", ["{0}"], [("dim", d)]), (v.name,), view=True)
    if how == "tensor_split":
        return Emit(f"torch.tensor_split({{0}}, {g.int(2, n)}, dim={d})", (v.name,), view=True)
    first = g.int(1, n - 1)
    if how == "method":
        return Emit(f"{{0}}.split([{first}, {n - first}], {d})", (v.name,), view=True)
    return Emit(call(g, "torch.split", ["{0}", f"[{first}, {n - first}]"], [("dim", d)]), (v.name,), view=True)
