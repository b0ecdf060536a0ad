"""Op rules that update state in place: buffers (``self.b3.add_(...)``) and user inputs (``x0.mul_(...)``).

``torch.export`` records such updates in the graph signature (outputs of
kind BUFFER_MUTATION and USER_INPUT_MUTATION, once functionalized, as
``to_edge`` does) and ExecuTorch writes the new values back after the graph
runs. That write-back, and every pass that must keep a mutated value's last
write as the one returned, is only exercised by graphs that mutate state;
in-place ops on fresh temporaries (:mod:`harness.graphs.random.ops`) are
functionalized away without a trace in the signature.

The updates are the ones models make: accumulate (``add_``, ``mul_``,
``sub_`` with ``alpha``), an exponential moving average
(``mul_(0.9).add_(x, alpha=0.1)``, as running statistics), ``copy_`` (with
broadcasting and a safe dtype conversion), ``index_put_`` of rows (distinct
indices, or ``accumulate=True``), a slice written through ``narrow(...).copy_``
(a KV-cache update), and ``clamp_``/``masked_fill_``/``fill_`` of inputs. A
buffer may be one an earlier statement already read, so reads before and
after the write both occur. Each statement binds the updated tensor, which
later statements read; int64 inputs (usable as indices) are never updated.
Part of the vocabulary of :mod:`harness.graphs.random.ops`.
"""

from __future__ import annotations

from typing import Optional

from harness.graphs.random.gen import broadcasts
from harness.graphs.random.types import DTYPES, FLOATS, Emit, Val, is_input

__all__ = ["copy_targets", "updatable_input", "buffer_update", "input_update"]


def copy_targets(dtype: str) -> tuple:
    """The dtypes ``copy_`` may convert a ``dtype`` value to with a defined result for every value: anything
    from ints and bools (ints wrap), floats and bool from floats (float -> int of a large value is undefined)."""
    return FLOATS + ("bool",) if dtype in FLOATS else DTYPES


def updatable_input(v: Val) -> bool:
    """A user input not yet updated (still in the pool under its own name) and not holding indices."""
    return is_input(v) and v.index_high is None


def _buffer_for(g, v: Val, same_dtype: bool) -> Optional[Val]:
    """An existing buffer ``v`` can be written into (maybe read by an earlier statement), or None."""
    dtypes = (v.dtype,) if same_dtype else copy_targets(v.dtype)
    fits = [b for b in g.buffers if b.dtype in dtypes and broadcasts(b, v, True)]
    return g.choice(fits[-6:]) if fits and g.flip() else None


def buffer_update(g, v: Val) -> Optional[Emit]:
    """Write ``v`` (static shape) into a buffer: accumulate, average, copy, index_put_ or a slice."""
    if any(v.dyn):
        return None
    how = g.choice(["accumulate", "average", "copy", "index_put", "slice"])
    if how == "index_put" and v.rank >= 1:
        return _index_put(g, v)
    if how == "slice" and v.static_dims:
        return _slice_write(g, v)
    if how == "average" and v.dtype in FLOATS:
        buf = _buffer_for(g, v, True) or g.buffer(v.shape, v.dtype)
        return Emit(f"{{0}}.mul_(0.9).add_({{1}}, alpha={g.choice(['0.1', '0.5'])})", (buf.name, v.name), inplace=True)
    if (how == "copy" or v.dtype == "bool") and v.name not in g.state_values:
        buf = _buffer_for(g, v, False) or g.buffer(v.shape, g.choice([v.dtype, *copy_targets(v.dtype)]))
        g.state_values.add(v.name)  # a same-type copy_ makes ``v`` itself the buffer's new value: only once
        return Emit("{0}.copy_({1})", (buf.name, v.name), inplace=True)
    if v.dtype == "bool":
        return None
    buf = _buffer_for(g, v, True) or g.buffer(v.shape, v.dtype)
    alpha = g.choice(["", ", alpha=2"] + ([", alpha=0.5"] if v.dtype in FLOATS else []))
    method = g.choice(["add_", "sub_", "mul_"])
    return Emit(f"{{0}}.{method}({{1}}{alpha if method != 'mul_' else ''})", (buf.name, v.name), inplace=True)


def _index_put(g, v: Val) -> Emit:
    """Rows ``idx`` of a buffer with ``v.shape[0]`` rows or more get ``v``: ``index_put_((idx,), v)``."""
    n = v.shape[0]
    m = n + g.int(0, 3)
    buf = g.buffer((m,) + tuple(v.shape[1:]), v.dtype)
    accumulate = v.dtype != "bool" and g.flip()
    fits = [u for u in g.pool if u.dtype == "int64" and u.index_high is not None and u.index_high <= m
            and u.shape == (n,) and not any(u.dyn)]
    if accumulate and fits and g.flip():  # computed indices may repeat: only accumulating is deterministic
        idx = g.choice(fits[-4:]).name
    else:
        idx = g.buffer_distinct_index(n, m)
    acc = g.choice([", True", ", accumulate=True"]) if accumulate else g.choice(["", ", accumulate=False"])
    return Emit(f"{{0}}.index_put_(({{2}},), {{1}}{acc})", (buf.name, v.name, idx), inplace=True)


def _slice_write(g, v: Val) -> Emit:
    """``self.b.narrow(d, start, n).copy_(v)``: part of a larger buffer written (the result is that part)."""
    d = g.choice(v.static_dims)
    n = v.shape[d]
    shape = list(v.shape)
    shape[d] = n + g.int(1, 3)
    buf = g.buffer(tuple(shape), v.dtype)
    start = g.int(0, shape[d] - n)
    form = g.choice([f"{{0}}.narrow({d}, {start}, {n}).copy_({{1}})",
                     "{0}[" + ", ".join([":"] * d + [f"{start}:{start + n}"]) + "].copy_({1})"])
    return Emit(form, (buf.name, v.name), inplace=True, view=True)


def input_update(g, v: Val) -> Emit:
    """An in-place op on a user input: a USER_INPUT_MUTATION, its new value read by later statements."""
    if v.dtype == "bool":
        other = g.partner(v, dtypes=("bool",), into=True)
        return Emit(g.choice(["{0}.logical_or_({1})", "{0}.logical_and_({1})", "{0}.copy_({1})"]),
                    (v.name, other), inplace=True)
    how = g.choice(["arith", "arith", "copy", "clamp", "masked_fill", "fill"])
    if how == "clamp":
        lo = 0 if v.dtype == "uint8" else -1
        return Emit(g.choice([f"{{0}}.clamp_({lo}, 3)", f"{{0}}.clamp_(min={lo})", "{0}.clamp_(max=2)"]),
                    (v.name,), inplace=True)
    if how == "fill":
        return Emit(g.choice(["{0}.fill_(1)", "{0}.zero_()"]), (v.name,), inplace=True)
    if how == "masked_fill":
        mask = g.partner(v, dtypes=("bool",), into=True)
        return Emit("{0}.masked_fill_({1}, 0)", (v.name, mask), inplace=True)
    other = g.partner(v, dtypes=(v.dtype,), scalar_ok=True, into=True)
    if how == "copy":
        return Emit("{0}.copy_({1})", (v.name, other), inplace=True) if not _scalar(other) else \
            Emit(f"{{0}}.fill_({other})", (v.name,), inplace=True)
    alpha = ", alpha=2" if not _scalar(other) and g.int(0, 2) == 0 else ""
    method = g.choice(["add_", "sub_", "mul_"])
    return Emit(f"{{0}}.{method}({{1}}{alpha if method != 'mul_' else ''})", (v.name, other), inplace=True)


def _scalar(arg: str) -> bool:
    return not (arg.startswith("x") or arg.startswith("v") or arg.startswith("self."))
