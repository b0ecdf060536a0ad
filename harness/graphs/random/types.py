"""The types op rules share: a typed value, an emitted call, a rule.

See :mod:`harness.graphs.random.ops` for the vocabulary itself and why arguments are
constructed to fit rather than drawn and rejected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

__all__ = ["FLOATS", "LOW_PRECISION", "NUMERIC", "Val", "Emit", "OpRule", "is_float", "is_f32", "is_numeric",
           "last_static", "sizes_code"]

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


def sizes_code(v: Val, shape: list, dyn_from: Optional[list] = None) -> str:
    """Sizes for view/reshape: dynamic dims read from the tensor, so export keeps them symbolic."""
    parts = []
    for i, s in enumerate(shape):
        src = dyn_from[i] if dyn_from else None
        parts.append(f"{{0}}.shape[{src}]" if src is not None else str(s))
    return ", ".join(parts)
