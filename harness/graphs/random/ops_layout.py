"""Op rules of views and memory layout beyond :mod:`harness.graphs.random.ops_shape`: movedim, t/mT,
swapaxes, unflatten, squeeze of several dims, as_strided, contiguous, and channels-last tensors.

The edge dialect turns every view into a ``*_copy`` op and every layout
change into ``_clone_dim_order``/``_to_dim_order_copy`` with an explicit dim
order: passes that match views or reason about strides and dim orders
(memory-format passes, ``RemoveCloneOpsTransform``, view-copy elimination)
meet them only when graphs have them. Channels-last values come from
``.contiguous(memory_format=torch.channels_last)`` and ``.to(memory_format=...)``
here, and from channels-last graph inputs (:mod:`harness.graphs.random.generate`);
conv and elementwise rules then read them like any rank-4 value.

``as_strided`` reads the storage, not the view: it is applied to a fresh
contiguous clone so eager and exported programs agree, with sizes and
strides that stay inside that clone; its result is a view (an in-place op
on it would need ``as_strided_scatter``, which is not core ATen). Sizes that the program's dynamic
dimension would have to fix are avoided, as in ``ops_shape``. Part of the
vocabulary of :mod:`harness.graphs.random.ops`.
"""

from __future__ import annotations

import math
from typing import Optional

from harness.graphs.random.types import Emit, Val, call

__all__ = ["movedim", "matrix_transpose", "swapaxes", "unflatten", "squeeze_dims", "as_strided", "contiguous",
           "channels_last"]


def movedim(g, v: Val) -> Emit:
    a, b = g.int(0, v.rank - 1), g.int(0, v.rank - 1)
    fn = g.choice(["torch.movedim", "torch.moveaxis", "{0}.movedim"])
    required = [] if fn.startswith("{0}") else ["{0}"]
    optional = [("source", a), ("destination", b)] if fn != "torch.moveaxis" else []
    expr = call(g, fn, required, optional) if optional else f"{fn}({{0}}, {a}, {b})"
    return Emit(expr, (v.name,), view=True)


def matrix_transpose(g, v: Val) -> Emit:
    """``t()`` / ``.T`` of a matrix (or vector), ``.mT`` of a batch of matrices."""
    if v.rank <= 2:
        return Emit(g.choice(["{0}.t()", "torch.t({0})", "{0}.T"] if v.rank == 2 else ["{0}.t()", "torch.t({0})"]),
                    (v.name,), view=True)
    return Emit(g.choice(["{0}.mT", "{0}.transpose(-2, -1)"]), (v.name,), view=True)


def swapaxes(g, v: Val) -> Emit:
    a, b = g.int(0, v.rank - 1), g.int(0, v.rank - 1)
    return Emit(g.choice([f"torch.swapaxes({{0}}, {a}, {b})", f"{{0}}.swapdims({a}, {b})"]), (v.name,), view=True)


def unflatten(g, v: Val) -> Optional[Emit]:
    """A static dim split in two (``-1`` for one of them, sometimes)."""
    dims = [d for d in v.static_dims if v.shape[d] >= 4 and any(v.shape[d] % k == 0 for k in (2, 3))]
    if not dims:
        return None
    d = g.choice(dims)
    n = v.shape[d]
    a = g.choice([k for k in (2, 3) if n % k == 0])
    sizes = g.choice([f"({a}, {n // a})", f"({a}, -1)", f"(-1, {n // a})", f"[{a}, {n // a}]"])
    head = g.choice(["torch.unflatten", "{0}.unflatten"])
    return Emit(call(g, head, ["{0}"] if head.startswith("torch") else [], [("dim", d), ("sizes", sizes)]), (v.name,),
                view=True)


def squeeze_dims(g, v: Val) -> Optional[Emit]:
    """squeeze of every size-1 dim, or of a tuple of dims (squeeze.dims)."""
    ones = [d for d in v.static_dims if v.shape[d] == 1]
    if not ones:
        return None
    if not any(v.dyn) and g.flip():
        return Emit(g.choice(["{0}.squeeze()", "torch.squeeze({0})"]), (v.name,), view=True)
    dims = sorted({g.choice(ones) for _ in range(2)} | ({g.choice(v.static_dims)} if g.flip() else set()))
    return Emit(f"torch.squeeze({{0}}, {tuple(dims)!r})", (v.name,), view=True)


def as_strided(g, v: Val) -> Optional[Emit]:
    """Overlapping windows (or a strided sub-grid) of a contiguous copy of ``v``, all inside its storage."""
    if any(v.dyn) or v.rank < 1:
        return None
    n = math.prod(v.shape)
    if n < 2:
        return None
    step = g.int(1, 2)
    rows = g.int(1, min(4, 1 + (n - 1) // step))
    span = (rows - 1) * step  # the last row starts here (before the offset)
    width = g.int(1, min(4, n - span))
    offset = g.int(0, n - span - width)
    src = "{0}.clone(memory_format=torch.contiguous_format)"
    size, stride = f"({rows}, {width})", f"({step}, 1)"
    if g.flip():
        return Emit(f"torch.as_strided({src}, {size}, {stride}, {offset})", (v.name,), view=True)
    return Emit(f"{src}.as_strided({size}, {stride}" + (f", storage_offset={offset})" if offset else ")"), (v.name,),
                view=True)


def contiguous(g, v: Val) -> Emit:
    """A contiguous value: ``contiguous()`` returns ``v`` itself when it already is (an alias, like a view)."""
    if g.int(0, 2) == 0:
        return Emit("{0}.clone(memory_format=torch.contiguous_format)", (v.name,))
    return Emit(g.choice(["{0}.contiguous()", "{0}.contiguous(memory_format=torch.contiguous_format)"]), (v.name,),
                view=True)


def channels_last(g, v: Val) -> Emit:
    """A rank-4 value in channels-last memory format (a dim order of 0, 2, 3, 1 in the edge program); as with
    ``contiguous``, only the ``clone`` form never aliases ``v``."""
    if g.int(0, 2) == 0:
        return Emit("{0}.clone(memory_format=torch.channels_last)", (v.name,))
    form = g.choice(["{0}.contiguous(memory_format=torch.channels_last)", "{0}.to(memory_format=torch.channels_last)"])
    return Emit(form, (v.name,), view=True)
