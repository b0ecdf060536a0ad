"""Which mutants a campaign draws, and what can reach them.

An entry's mutants are those of its own code (:func:`owned`): its class or
function and the module-level definitions it names, transitively; a
sibling pass of the same module is another entry's. Entries are drawn
round-robin over catalogs and mutants round-robin over entries, both
seeded (:func:`sample_entries`, :func:`sample_mutants`). A mutant is reached
by the cases that execute its probe line (:func:`probe_line`: its own line,
or the next with bytecode when it has none), and one no case reaches in
code declared unreachable (``passgate.unreachable``) is left out of the
score with the declaration's reason (:func:`declared_unreachable`).
"""

from __future__ import annotations

import functools
import os
import random
import types
from typing import Callable

from harness.mutate.operators import Mutant, mutants_of
from harness.mutate.overlay import source_of

__all__ = ["catalog_of", "sample_entries", "owned", "sample_mutants", "probe_line", "declared_unreachable"]


def catalog_of(target) -> str:
    return target.catalog or "pass"


def sample_entries(targets: list, count: int, seed: int) -> list:
    """``count`` targets with mutable source, round-robin over catalogs (each shuffled by ``seed``)."""
    rng = random.Random(f"entries:{seed}")
    by_catalog: dict[str, list] = {}
    for t in targets:
        if t.files:
            by_catalog.setdefault(catalog_of(t), []).append(t)
    for group in by_catalog.values():
        rng.shuffle(group)
    chosen, queues = [], [list(g) for _, g in sorted(by_catalog.items())]
    while len(chosen) < count and any(queues):
        for q in queues:
            if q and len(chosen) < count:
                chosen.append(q.pop())
    return sorted(chosen, key=lambda t: targets.index(t))


def owned(target) -> Callable[[Mutant], bool]:
    """Which mutants of the target's files are its own code: the entry (its class with the bases defined beside
    it, or its function) and the module-level functions and classes it names, transitively. A module often
    holds several passes (Cadence's ``reorder_ops.py`` a dozen, ``external_constants_pass.py`` three functions
    that are three catalog entries): a sibling's code is another entry's, which no graph can make this entry
    run, and counting its mutants here would call them unreached by the corpus. An entry that does not resolve,
    or whose name is defined in none of its files: every mutant of its files."""
    import functools
    import inspect

    from harness.catalog.entries import resolve

    try:
        obj = resolve(target.entry.spec) if target.entry is not None else target.loaded.obj
    except Exception:  # noqa: BLE001 - an entry that does not resolve: every mutant of its files
        return lambda m: True
    while isinstance(obj, functools.partial):
        obj = obj.func
    if inspect.isclass(obj):
        roots = {c.__name__ for c in inspect.getmro(obj)}
    elif inspect.isroutine(obj):
        roots = {getattr(inspect.unwrap(obj), "__name__", "")}
    else:
        roots = {c.__name__ for c in inspect.getmro(type(obj))}
    mine = _named_closure(target.files, roots)
    if not mine:
        return lambda m: True
    return lambda m: m.qualname.split(".", 1)[0] in mine


def _named_closure(files, roots: set) -> set:
    """The module-level definitions of ``files`` among ``roots`` and every one they name, transitively."""
    import ast

    defined: dict = {}
    for f in files:
        try:
            tree = ast.parse(source_of(f))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined[node.name] = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    todo = [r for r in roots if r in defined]
    seen = set(todo)
    while todo:
        for name in defined[todo.pop()] & defined.keys():
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def sample_mutants(targets: list, count: int, seed: int, operators: tuple = ()) -> list[tuple]:
    """``count`` (target, mutant) pairs, round-robin over the targets, each target's own mutants (:func:`owned`)
    shuffled by ``seed``."""
    rng = random.Random(f"mutants:{seed}")
    sources: dict[str, str] = {}
    queues = []
    for t in targets:
        mine = []
        for f in t.files:
            if f not in sources:
                sources[f] = source_of(f)
            mine.extend(mutants_of(f, sources[f], list(operators) or None))
        own = owned(t)
        mine = [m for m in mine if own(m)]
        rng.shuffle(mine)
        queues.append((t, mine))
    chosen: list[tuple] = []
    while len(chosen) < count and any(q for _, q in queues):
        for t, q in queues:
            if q and len(chosen) < count:
                chosen.append((t, q.pop()))
    return chosen


@functools.lru_cache(maxsize=256)
def _code_lines(file: str) -> frozenset:
    """The lines of ``file`` that carry bytecode (what coverage.py can record as executed), empty if it cannot
    be compiled."""
    try:
        code = compile(source_of(file), file, "exec")
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    lines, todo = set(), [code]
    while todo:
        c = todo.pop()
        lines.update(line for _, _, line in c.co_lines() if line)
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return frozenset(lines)


def probe_line(file: str, line: int) -> int:
    """The executed line that says a mutant's site ran: its own line, or, when that line has no bytecode, the
    next one that has. A statement that opens on a line of its own (``if (`` with the condition below it) is
    compiled to its condition's lines only, so coverage never records the line a mutant of the whole statement
    (``if ...: -> if False:``) sits on; the first line of its condition runs exactly when it does."""
    lines = _code_lines(file)
    if not lines or line in lines:
        return line
    return min((n for n in lines if n > line), default=line)


@functools.lru_cache(maxsize=1)
def _declarations() -> tuple:
    """(real path of the module's file, declaration) of every ``passgate.unreachable`` declaration of dead code
    (a ``traced`` one runs, where coverage.py cannot see it: its mutants are judged as any other)."""
    from harness.check.loading import source_file
    from harness.run.reachable import declared

    return tuple((source_file(d.module), d) for d in declared() if d.kind == "dead")


def declared_unreachable(mutant: Mutant) -> str:
    """Why no program can run ``mutant``'s line, as the ``passgate.unreachable`` declarations say (the ones the
    coverage report leaves out of its reachable figures), or "" when none covers it."""
    here = os.path.realpath(mutant.file)
    return next((d.reason for path, d in _declarations() if path == here and d.covers(mutant.qualname, mutant.line)),
                "")
