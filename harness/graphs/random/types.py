"""The types op rules share: a typed value, an emitted call, a rule, and the dtypes values may have.

See :mod:`harness.graphs.random.ops` for the vocabulary itself and why arguments are
constructed to fit rather than drawn and rejected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

__all__ = ["FLOATS", "LOW_PRECISION", "INTS", "SIGNED_INTS", "NUMERIC", "DTYPES", "INT_RANGES", "Val", "Emit",
           "OpRule", "is_float", "is_f32", "is_int", "is_numeric", "is_input", "is_input_name", "last_static",
           "sizes_code", "call", "sample_code"]

FLOATS = ("float32", "float16", "bfloat16")
LOW_PRECISION = ("float16", "bfloat16")
INTS = ("int8", "int16", "int32", "int64", "uint8")
SIGNED_INTS = ("int8", "int16", "int32", "int64")
NUMERIC = FLOATS + INTS
DTYPES = NUMERIC + ("bool",)  # every dtype the edge dialect carries that random graphs use

# Integer samples stay small, so sums and products do not overflow in a few statements and integer
# division is defined. int64 values are in [0, 8): an int64 input may serve as indices (``index_high``).
INT_RANGES = {"int64": (0, 8), "int32": (-8, 9), "int16": (-8, 9), "int8": (-4, 5), "uint8": (0, 8)}


@dataclass(frozen=True)
class Val:
    """A value of the program: a name usable in code, and its type."""

    name: str
    shape: tuple
    dtype: str  # a torch dtype name, one of DTYPES
    dyn: tuple = ()  # per dim: is it the dynamic (export.Dim) dimension
    owned: bool = False  # a fresh tensor the program may mutate in place (not a view, input or parameter)
    index_high: Optional[int] = None  # int64 value whose elements are in [0, index_high): usable as indices
    index_dim: Optional[int] = None  # the dim along which its indices are distinct (topk, sort, argmax keepdim)
    channels_last: bool = False  # an input given in channels-last memory format

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
    index: tuple = ()  # per result: (index_high, index_dim) when it holds indices, else None


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


def is_int(v: Val) -> bool:
    return v.dtype in INTS


def is_numeric(v: Val) -> bool:
    return v.dtype in NUMERIC


def is_input_name(name: str) -> bool:
    """A user input of the program (``x0``, ``x1``, ...): mutating it is a USER_INPUT_MUTATION."""
    return name.startswith("x") and name[1:].isdigit()


def is_input(v: Val) -> bool:
    return is_input_name(v.name)


def last_static(v: Val) -> bool:
    return v.rank >= 1 and not v.is_dyn(v.rank - 1)


def sizes_code(v: Val, shape: list, dyn_from: Optional[list] = None) -> str:
    """Sizes for view/reshape: dynamic dims read from the tensor, so export keeps them symbolic."""
    parts = []
    for i, s in enumerate(shape):
        src = dyn_from[i] if dyn_from else None
        parts.append(f"{{0}}.shape[{src}]" if src is not None else str(s))
    return ", ".join(parts)


def call(g, head: str, required: list, optional: list) -> str:
    """``head(required..., optional...)`` with the optional ``(name, value)`` arguments passed positionally up
    to a drawn point and by keyword after it, so both spellings of a call occur (``torch.sum(x, 1, True)`` and
    ``torch.sum(x, dim=1, keepdim=True)``). Only for parameters that are positional-or-keyword."""
    k = g.int(0, len(optional))
    parts = list(required) + [str(v) for _, v in optional[:k]] + [f"{n}={v}" for n, v in optional[k:]]
    return f"{head}({', '.join(parts)})"


def sample_code(shape: str, dtype: str, gen: str = "g") -> str:
    """Source of a random sample of ``dtype`` (the generator's and ``make_inputs``'s values alike)."""
    if dtype == "bool":
        return f"torch.randint(0, 2, {shape}, generator={gen}).bool()"
    if dtype in INT_RANGES:
        lo, hi = INT_RANGES[dtype]
        cast = "" if dtype == "int64" else f".to(torch.{dtype})"
        return f"torch.randint({lo}, {hi}, {shape}, generator={gen}){cast}"
    cast = "" if dtype == "float32" else f".to(torch.{dtype})"
    return f"torch.randn({shape}, generator={gen}){cast}"
