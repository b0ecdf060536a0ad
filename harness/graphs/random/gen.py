"""What op rules draw from while a random program is generated: :class:`Gen`.

It holds the hypothesis ``draw`` (every choice a rule makes goes through it,
so the same seed gives the same program in every process), the pool of typed
values so far, the declarations (parameters, buffers, modules) and the sample
environments the generator evaluates statements in; and it makes the
arguments rules need: new inputs, parameters and buffers of any dtype, index
buffers, and partners that broadcast with a value. Split from
:mod:`harness.graphs.random.generate`, which runs the draw.
"""

from __future__ import annotations

from typing import Callable, Optional

from hypothesis import strategies as st

from harness.graphs.random.program import Decl
from harness.graphs.random.types import FLOATS, INT_RANGES, Val, sample_code

__all__ = ["BATCHES", "Gen", "broadcasts"]

BATCHES = (3, 5)  # sample size of the dynamic dim, and the size of the second (probing) evaluation


class Gen:
    """What op rules draw from: hypothesis choices, the value pool, makers of new arguments."""

    def __init__(self, draw: Callable, seed: int, dynamic: bool):
        import torch

        self.draw = draw
        self.seed = seed
        self.batch = BATCHES[0] if dynamic else None
        self.inputs: list[Val] = []
        self.decls: list[Decl] = []
        self.pool: list[Val] = []
        self.buffers: list[Val] = []  # buffers a statement may update in place (name: ``self.b3``)
        # Values that are (or may alias) the new value of a buffer or input: a buffer copy_ from one of them would
        # make two state outputs the same node, which torch.export's signature check rejects.
        self.state_values: set[str] = set()
        self.holder = torch.nn.Module()  # parameters and modules, for evaluation
        self.envs: list[dict] = [{} for _ in (BATCHES if dynamic else BATCHES[:1])]
        self.torch_gen = torch.Generator().manual_seed(seed)

    # -------------------------------------------------------- hypothesis choices
    def int(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def choice(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def flip(self) -> bool:
        return self.draw(st.booleans())

    def permutation(self, seq) -> list:
        return self.draw(st.permutations(seq))

    def size(self) -> int:
        return self.draw(st.integers(1, 7))

    # -------------------------------------------------------- new arguments
    def new_input(self, rank: int, dtype: str, static_tail: bool = False, index: bool = False,
                  shape: Optional[tuple] = None, dyn: Optional[tuple] = None) -> Val:
        import torch

        if shape is None:
            shape = tuple(self.size() for _ in range(rank))
            dyn = (False,) * rank
            if self.batch is not None and rank >= 2 and not index:
                shape, dyn = (self.batch,) + shape[1:], (True,) + (False,) * (rank - 1)
        channels_last = len(shape) == 4 and dtype in FLOATS and self.int(0, 3) == 0
        v = Val(f"x{len(self.inputs)}", tuple(shape), dtype, tuple(dyn or (False,) * len(shape)),
                index_high=8 if dtype == "int64" else None, channels_last=channels_last)
        self.inputs.append(v)
        self.pool.append(v)
        for env, b in zip(self.envs, BATCHES):
            real = tuple(b if f else s for s, f in zip(v.shape, v.dyn))
            t = _sample(torch, real, dtype, self.torch_gen)
            env[v.name] = t.contiguous(memory_format=torch.channels_last) if channels_last else t
        return v

    def _decl(self, prefix: str, lines: list[str]) -> str:
        name = f"{prefix}{len(self.decls)}"
        d = Decl(name, tuple(lines))
        self.decls.append(d)
        import torch
        from torch import nn
        from torch.nn import functional as F

        ns = {"torch": torch, "nn": nn, "F": F, "self": self.holder, "g": self.torch_gen}
        for text in d.lines:
            exec(text.format(m=d.ref), ns)  # noqa: S102 - our own generated code
        return d.ref

    def param(self, shape: tuple, dtype: str = "float32") -> str:
        """A parameter (floats only) or a buffer of ``dtype``; buffers may later be updated in place."""
        if dtype == "int64":  # signed values: an int64 parameter is never used as indices
            text = f"torch.randint(-3, 4, {_shape(shape)}, generator=g)"
        else:
            text = sample_code(_shape(shape), dtype)
        if dtype in FLOATS and self.flip():
            return self._decl("p", [f"{{m}} = nn.Parameter({text})"])
        ref = self._decl("b", [f'self.register_buffer("b{len(self.decls)}", {text})'])
        self.buffers.append(Val(ref, tuple(shape), dtype, (False,) * len(shape)))
        return ref

    def buffer(self, shape: tuple, dtype: str) -> Val:
        """A new buffer (never a parameter: it is to be updated in place); its type, named ``self.bN``."""
        text = sample_code(_shape(shape), dtype)
        ref = self._decl("b", [f'self.register_buffer("b{len(self.decls)}", {text})'])
        self.buffers.append(Val(ref, tuple(shape), dtype, (False,) * len(shape)))
        return self.buffers[-1]

    def buffer_init(self, text: str) -> str:
        """A buffer holding ``text`` (e.g. running statistics), not offered to in-place updates."""
        return self._decl("b", [f'self.register_buffer("b{len(self.decls)}", {text})'])

    def param_init(self, text: str) -> str:
        """A parameter holding ``text`` (a float tensor, e.g. one stored channels-last)."""
        return self._decl("p", [f"{{m}} = nn.Parameter({text})"])

    def buffer_index(self, n: int, high: int) -> str:
        idx = [self.int(0, high - 1) for _ in range(n)]
        return self._decl("b", [f'self.register_buffer("b{len(self.decls)}", torch.tensor({idx!r}))'])

    def buffer_distinct_index(self, n: int, high: int) -> str:
        """``n`` distinct indices in [0, high): where duplicates would make a write order-dependent."""
        idx = self.permutation(list(range(high)))[:n]
        return self._decl("b", [f'self.register_buffer("b{len(self.decls)}", torch.tensor({idx!r}))'])

    def tensor(self, shape: tuple, dyn: tuple, dtype: str, avoid: str = "") -> str:
        """A value of exactly this type: one of the pool, or a new parameter/buffer (static) or input (dynamic)."""
        fits = [u for u in self.pool + self.buffers if (u.shape, u.dtype, u.dyn) == (tuple(shape), dtype, tuple(dyn))
                and u.name != avoid]  # a buffer may have been updated in place before: a read after the write
        if fits and self.flip():
            return self.choice(fits[-8:]).name
        if any(dyn):
            return self.new_input(len(shape), dtype, shape=tuple(shape), dyn=tuple(dyn)).name
        return self.param(tuple(shape), dtype)

    def module(self, ctor: str, init: Optional[list] = None) -> str:
        return self._decl("m", [f"{{m}} = {ctor}", *(init or [])])

    # -------------------------------------------------------- partners
    def partner(self, v: Val, dtypes=("float32",), scalar_ok: bool = False, into: bool = False,
                same_dtype_only: bool = False) -> str:
        """A second operand that broadcasts with ``v`` (into ``v``'s shape when ``into``)."""
        dtype = v.dtype if v.dtype in dtypes else dtypes[0]
        kind = self.int(0, 5)
        if scalar_ok and kind == 0:
            return repr(self.choice([2, -1, 3]) if dtype in INT_RANGES else self.choice([0.5, -1.25, 2.0, 3]))
        fits = [u for u in self.pool if u.dtype == dtype and u.name != v.name and broadcasts(v, u, into)]
        if fits and kind <= 3:
            return self.choice(fits[-8:]).name
        shape, dyn = [], []
        keep = self.int(1, v.rank) if v.rank else 0
        for d in range(v.rank - keep, v.rank):
            if v.is_dyn(d):  # a parameter broadcasts over the dynamic dim; a new input shares it
                shared = not (kind == 4 or into)
                shape.append(v.shape[d] if shared else 1)
                dyn.append(shared)
            elif v.shape[d] == 1 and not into and self.flip():
                shape.append(self.size())
                dyn.append(False)
            else:
                shape.append(v.shape[d] if self.int(0, 2) else 1)
                dyn.append(False)
        if any(dyn):
            return self.new_input(len(shape), dtype, shape=tuple(shape), dyn=tuple(dyn)).name
        if kind == 4 or not v.rank:
            return self.param(tuple(shape), dtype)
        return self.new_input(len(shape), dtype, shape=tuple(shape), dyn=tuple(dyn)).name

    def partner_cat(self, v: Val, d: int) -> str:
        fits = [u for u in self.pool if u.dtype == v.dtype and u.rank == v.rank and u.name != v.name
                and all(u.shape[i] == v.shape[i] and u.is_dyn(i) == v.is_dyn(i) for i in range(v.rank) if i != d)
                and not u.is_dyn(d)]
        if fits and self.flip():
            return self.choice(fits[-8:]).name
        shape = list(v.shape)
        shape[d] = self.size()
        if any(v.dyn):
            return self.new_input(v.rank, v.dtype, shape=tuple(shape), dyn=v.dyn).name
        return self.param(tuple(shape), v.dtype)

    def partner_same(self, v: Val) -> str:
        fits = [u for u in self.pool if (u.shape, u.dtype, u.dyn) == (v.shape, v.dtype, v.dyn) and u.name != v.name]
        if fits and self.flip():
            return self.choice(fits[-8:]).name
        if any(v.dyn):
            return self.new_input(v.rank, v.dtype, shape=v.shape, dyn=v.dyn).name
        return self.param(v.shape, v.dtype)


def _shape(shape: tuple) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _sample(torch, shape, dtype: str, gen):
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=gen).bool()
    if dtype in INT_RANGES:
        lo, hi = INT_RANGES[dtype]
        return torch.randint(lo, hi, shape, generator=gen).to(getattr(torch, dtype))
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


def broadcasts(v: Val, u: Val, into: bool) -> bool:
    """Does ``u`` broadcast with ``v`` (into ``v``'s shape, when ``into``), dynamic dims included?"""
    if u.rank > v.rank and into:
        return False
    for i in range(1, min(v.rank, u.rank) + 1):
        a, b = v.shape[-i], u.shape[-i]
        ad, bd = v.is_dyn(v.rank - i), u.is_dyn(u.rank - i)
        if ad != bd:
            if (ad and b != 1) or (bd and (a != 1 or into)):
                return False
            continue
        if a != b and not (b == 1 or (a == 1 and not into)):
            return False
    if u.rank > v.rank and any(u.dyn[: u.rank - v.rank]):
        return False
    return True
