"""The catalog registry: which catalogs exist, and the entries a run selects from them.

The engine ships no catalog. Catalogs are content (passgate's own in
``passes/``, a vendor's in its package) and plug in through the
``passgate.catalogs`` entry point group: each entry point names a callable
returning a :class:`~harness.catalog.entries.Catalog` or a list of them
(passgate registers its own as the ``passgate`` entry point). ``--catalog``
also takes a ``module:attr`` / ``file.py:attr`` SPEC giving one, so a catalog
can be tried before it is registered.
"""

from __future__ import annotations

import fnmatch
from typing import Any, Iterable, Optional

from harness.catalog.discovery import with_discovered
from harness.catalog.entries import Catalog, CatalogEntry
from harness.check.loading import resolve_spec
from harness.core import plugins
from harness.core.errors import UsageError

__all__ = ["as_catalogs", "load_catalogs", "select", "all_entries", "resolve_catalogs",
           "name_matches", "select_entries"]



def as_catalogs(value: Any, source: str) -> list[Catalog]:
    """``value`` (a Catalog, a list of them, or a callable returning either) as a list; ``source`` names it in errors."""
    if callable(value) and not isinstance(value, Catalog):
        value = value()
    items = [value] if isinstance(value, Catalog) else list(value)
    for c in items:
        if not isinstance(c, Catalog):
            raise UsageError(f"catalog entry point {source} gave a {type(c).__name__}, not a harness.catalog.Catalog")
    return items


def load_catalogs() -> dict[str, Catalog]:
    """Every catalog registered under ``passgate.catalogs`` (passgate's own entry point first, then by name)."""
    catalogs: dict[str, Catalog] = {}
    defined_by: dict[str, str] = {}  # catalog name -> value of the entry point that defined it
    for ep, value in plugins.load_all(plugins.CATALOGS, "catalog"):
        for c in as_catalogs(value, f"{ep.name} ({ep.value})"):
            if c.name in catalogs and defined_by[c.name] != ep.value:
                raise UsageError(f"catalog {c.name!r} from entry point {ep.name} is already defined")
            catalogs[c.name] = c
            defined_by[c.name] = ep.value
    return catalogs


def select(names: Optional[Iterable[str]] = None, discovered: bool = True) -> list[Catalog]:
    """The catalogs ``--catalog`` names (all by default), with discovered passes merged in."""
    catalogs = load_catalogs()
    names = list(names or catalogs)
    unknown = [n for n in names if n not in catalogs]
    if unknown:
        raise UsageError(f"unknown catalog {unknown[0]!r}; known: {', '.join(sorted(catalogs))}")
    chosen = [catalogs[n] for n in names]
    return [with_discovered(c)[0] for c in chosen] if discovered else chosen


def all_entries(catalogs: Iterable[Catalog]) -> list[CatalogEntry]:
    """The entries of ``catalogs`` in order; two entries of one name are a usage error."""
    out, seen = [], set()
    for c in catalogs:
        for e in c.entries:
            if e.name in seen:
                raise UsageError(f"two catalog entries are named {e.name!r}")
            seen.add(e.name)
            out.append(e)
    return out


def resolve_catalogs(names: Optional[list[str]]) -> list[Catalog]:
    """``--catalog NAME|SPEC ...``: registered catalogs by name (all when ``names`` is empty), then SPECs,
    each with its discovered passes merged in when it names packages to walk."""
    if not names:
        return select(None)
    out = []
    registered = [n for n in names if ":" not in n]
    if registered:
        out.extend(select(registered))
    for spec in (n for n in names if ":" in n):

        value = resolve_spec(spec, "catalog", "package.module:attr or path/to/file.py:attr")
        out.extend(with_discovered(c)[0] if c.packages else c for c in as_catalogs(value, spec))
    return out


def _literal_brackets(pattern: str) -> str:
    """``pattern`` with ``[`` and ``]`` standing for themselves (``[[]``, ``[]]``) and ``*``/``?`` still globs."""
    return "".join("[[]" if ch == "[" else "[]]" if ch == "]" else ch for ch in pattern)


def name_matches(name: str, pattern: str) -> bool:
    """Does ``--only PATTERN`` select entry ``name``?

    A glob (fnmatch, case-sensitive), where square brackets may also be
    literal: configuration entries are named ``Name[config]``, and fnmatch
    alone would read ``[...]`` as a character class, so
    ``transforms.ConvertDtypePass[i32_to_i64]`` would not even match itself.
    A name matches when the pattern matches it either way, so
    ``'transforms.ConvertDtypePass[*]'`` selects every configuration of that
    pass but not its default construction, ``'*[*]'`` every configuration
    entry, ``'transforms.ConvertDtypePass*'`` the pass in all its
    constructions, and a character class (``'exir.[A-C]*'``) still works.
    """
    if fnmatch.fnmatchcase(name, pattern):
        return True
    return "[" in pattern and fnmatch.fnmatchcase(name, _literal_brackets(pattern))


def select_entries(catalogs: Iterable[Catalog], only: Optional[list[str]] = None,
                   include_slow: bool = True) -> tuple[list, list, list]:
    """(every entry, the runnable ones this run takes, runnable ones left out as slow); ``only`` globs names
    (:func:`name_matches`: ``[`` ``]`` also match themselves, for ``Name[config]`` entries)."""
    entries = all_entries(catalogs)
    if only:
        entries = [e for e in entries if any(name_matches(e.name, pat) for pat in only)]
        if not entries:
            raise UsageError(f"--only {' '.join(only)} matches no catalog entry")
    skipped_slow = [e for e in entries if e.slow and not include_slow and e.runnable]
    runnable = [e for e in entries if e.runnable and (include_slow or not e.slow)]
    return entries, runnable, skipped_slow
