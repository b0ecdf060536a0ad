"""Graph sources: resolving ``--graphs`` into case specs.

Names a user can give: a source (``builtin``, ``zoo``, ``quantized``,
``random``, ``all``) or any case name. Sources register here by module so
that a source that fails to import (an optional dependency) is reported, not
silently dropped.
"""

from __future__ import annotations

import importlib
from typing import Callable, Optional

from harness.core.errors import UsageError
from harness.graphs.cases import CaseSpec

# source name -> (module, attribute holding a tuple of CaseSpec)
STATIC_SOURCES: dict[str, tuple[str, str]] = {
    "builtin": ("fixtures.builtin", "BUILTIN_SPECS"),
    "zoo": ("fixtures.zoo", "ZOO_SPECS"),
    "quantized": ("fixtures.zoo", "QUANTIZED_SPECS"),
}

DEFAULT_RANDOM_COUNT = 25


def static_specs(source: str) -> tuple[CaseSpec, ...]:
    module_name, attr = STATIC_SOURCES[source]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return ()  # source not built yet in this checkout
        raise
    return tuple(getattr(module, attr, ()))


def random_specs(count: int, seed: int) -> list[CaseSpec]:
    try:
        from harness.graphs.random.generate import random_specs as generate
    except ModuleNotFoundError as exc:
        if exc.name == "harness.graphs.random.generate":
            raise UsageError("random graphs are not available in this build") from None
        raise
    return list(generate(count, seed))


def known_static() -> dict[str, CaseSpec]:
    specs: dict[str, CaseSpec] = {}
    for source in STATIC_SOURCES:
        for spec in static_specs(source):
            specs.setdefault(spec.name, spec)
    return specs


def select(names: Optional[list[str]], count: Optional[int] = None, seed: int = 0) -> list[CaseSpec]:
    """The specs ``--graphs`` asks for, in a stable order, without duplicates."""
    names = names or ["builtin"]
    chosen: list[CaseSpec] = []
    by_name: Optional[dict[str, CaseSpec]] = None
    for name in names:
        if name == "all":
            for source in STATIC_SOURCES:
                chosen.extend(static_specs(source))
            chosen.extend(random_specs(count or DEFAULT_RANDOM_COUNT, seed))
        elif name == "random":
            chosen.extend(random_specs(count or DEFAULT_RANDOM_COUNT, seed))
        elif name in STATIC_SOURCES:
            specs = static_specs(name)
            if not specs:
                raise UsageError(f"graph source {name!r} is empty in this build")
            chosen.extend(specs)
        else:
            by_name = by_name if by_name is not None else known_static()
            if name not in by_name:
                known = ", ".join(["all", "random", *STATIC_SOURCES])
                raise UsageError(f"unknown graph {name!r}: not a source ({known}) or a known case name "
                                 f"(see `passgate graphs`)")
            chosen.append(by_name[name])
    seen: set[str] = set()
    unique = []
    for spec in chosen:
        if spec.name not in seen:
            seen.add(spec.name)
            unique.append(spec)
    return unique


SpecFilter = Callable[[CaseSpec], bool]
