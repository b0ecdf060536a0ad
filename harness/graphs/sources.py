"""Graph sources: resolving ``--graphs`` into case specs.

Names a user can give: a source (``builtin``, ``zoo``, ``quantized``,
``random``, ``all``) or any case name. ``random`` is the engine's own
(:mod:`harness.graphs.random`); the static sources are content and plug in
through the ``passgate.graph_sources`` entry point group (name -> a callable
or attribute giving a tuple of CaseSpec; passgate's are in
``fixtures/sources.py``), so the engine never imports ``fixtures``. They are
listed by their ``order`` attribute, then by name: entry points come back
sorted by name, and ``builtin, zoo, quantized`` is the order ``--graphs all``
and reports have always used. A source may also say how to print one of its
cases as a plain torch program (a ``program`` attribute: spec -> text, used by
``passgate graphs --show``). A source that fails to import (an optional
dependency) is reported, not silently dropped; one whose module is not built
in this checkout is empty.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional

from harness.core import plugins
from harness.core.errors import UsageError
from harness.graphs.cases import CaseSpec
from harness.graphs.random.generate import random_specs as generate

__all__ = ["DEFAULT_RANDOM_COUNT", "static_sources", "static_specs", "random_specs",
           "known_static", "select", "source_of", "program_of", "runnable", "EPILOGUE"]

DEFAULT_RANDOM_COUNT = 25
_UNRANKED = 1000  # sources without an ``order`` come after those with one, by name


@lru_cache(maxsize=None)
def _registered() -> dict[str, tuple[Any, Any]]:
    """source name -> (entry point, what it gives or the ModuleNotFoundError of a module not built), in order."""
    loaded = []
    for ep in plugins.points(plugins.GRAPH_SOURCES):
        try:
            value: Any = ep.load()
        except ModuleNotFoundError as exc:
            # not built yet in this checkout: empty; a missing dependency is raised when the source is used
            value = _NotBuilt() if exc.name == ep.module else _Broken(exc)
        except Exception as exc:  # noqa: BLE001 - raised when the source is used, not when another one is
            value = _Broken(exc)
        loaded.append((getattr(value, "order", _UNRANKED), ep.name, ep, value))
    return {name: (ep, value) for _, name, ep, value in sorted(loaded, key=lambda t: t[:2])}


class _NotBuilt:
    """A source whose module this checkout does not have."""


class _Broken:
    """A source whose entry point failed to load: its error, raised when the source is used."""

    def __init__(self, error: BaseException):
        self.error = error


def static_sources() -> tuple[str, ...]:
    """The names of the registered static sources, in order."""
    return tuple(_registered())


def static_specs(source: str) -> tuple[CaseSpec, ...]:
    """The cases of static source ``source`` (empty when it is not built in this checkout)."""
    _ep, value = _registered()[source]
    if isinstance(value, _NotBuilt):
        return ()
    if isinstance(value, _Broken):
        raise value.error
    return tuple(value() if callable(value) else value)


def random_specs(count: int, seed: int) -> list[CaseSpec]:
    return list(generate(count, seed))


def known_static() -> dict[str, CaseSpec]:
    """Every static case by name (the first source that has a name wins)."""
    specs: dict[str, CaseSpec] = {}
    for source in static_sources():
        for spec in static_specs(source):
            specs.setdefault(spec.name, spec)
    return specs


def select(names: Optional[list[str]], count: Optional[int] = None, seed: int = 0) -> list[CaseSpec]:
    """The specs ``--graphs`` asks for, in a stable order, without duplicates."""
    names = names or ["builtin"]
    chosen: list[CaseSpec] = []
    by_name: Optional[dict[str, CaseSpec]] = None
    static = static_sources()
    for name in names:
        if name == "all":
            for source in static:
                chosen.extend(static_specs(source))
            chosen.extend(random_specs(count or DEFAULT_RANDOM_COUNT, seed))
        elif name == "random":
            chosen.extend(random_specs(count or DEFAULT_RANDOM_COUNT, seed))
        elif name in static:
            specs = static_specs(name)
            if not specs:
                raise UsageError(f"graph source {name!r} is empty in this build")
            chosen.extend(specs)
        else:
            by_name = by_name if by_name is not None else known_static()
            if name not in by_name:
                known = ", ".join(["all", "random", *static])
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



def source_of(name: str) -> Optional[tuple[str, CaseSpec]]:
    """(registered source, spec) of static case ``name``; None when no static source has it."""
    for source in static_sources():
        for spec in static_specs(source):
            if spec.name == name:
                return source, spec
    return None


# What every printed program ends with: a reader runs the file and sees the case exported and run, the two steps
# passgate takes before to_edge. `build()` returns (model, inputs, dynamic shapes); the model is an ExportedProgram
# when the source exports it itself (quantization: export, prepare, convert, export again).
EPILOGUE = '''

if __name__ == "__main__":
    model, inputs, dynamic_shapes = build()
    if isinstance(model, torch.export.ExportedProgram):
        exported = model
    else:
        with torch.no_grad():
            exported = torch.export.export(model, tuple(inputs), dynamic_shapes=dynamic_shapes, strict=False)
    with torch.no_grad():
        outputs = exported.module()(*inputs)
    leaves = [t for t in torch.utils._pytree.tree_leaves(outputs) if isinstance(t, torch.Tensor)]
    calls = sum(node.op == "call_function" for node in exported.graph.nodes)
    print(f"{NAME}: exported ({calls} ops), ran on its example inputs: "
          + ", ".join(f"{str(t.dtype).replace('torch.', '')}{list(t.shape)}" for t in leaves))
    # passgate checks passes on this program after to_edge:
    #   from executorch.exir import to_edge; edge = to_edge(exported).exported_program()
'''


def runnable(name: str, text: str) -> str:
    """``text`` (a program defining ``build()``) as a script that exports and runs its case: any
    ``if __name__ == "__main__":`` block it has is replaced by :data:`EPILOGUE`."""
    import ast

    lines = text.rstrip("\n").splitlines()
    for node in reversed(ast.parse(text).body):
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__"):
            del lines[node.lineno - 1:node.end_lineno]
    body = "\n".join(lines).rstrip("\n")
    return f"{body}\n\n\nNAME = {name!r}{EPILOGUE}"


def program_of(name: str) -> str:
    """Case ``name`` as a runnable plain torch program: a random graph (``random_s<seed>_<index>``) or a case of
    a static source that can print its cases (its ``program`` attribute)."""
    import re

    match = re.match(r"^random_s(-?\d+)_(\d+)$", name)
    if match:
        from harness.graphs.random.generate import draw_program

        return runnable(name, draw_program(int(match.group(1)), int(match.group(2))).code())
    found = source_of(name)
    if found is None:
        raise UsageError(f"unknown case {name!r}: not a random_s<seed>_<index> name or a case of "
                         f"{', '.join(static_sources())} (see `passgate graphs`)")
    source, spec = found
    _ep, value = _registered()[source]
    write = getattr(value, "program", None)
    if write is None:
        raise UsageError(f"graph source {source!r} cannot print its cases as programs (no `program` attribute)")
    return write(spec)
