"""Pass discovery: every pass a backend package ships, found without a hand-kept list.

:func:`discover` walks the pass packages and finds every ``PassBase`` /
``ExportPass`` / ``ExportedProgramPassBase`` subclass and every pass
function; :func:`cross_check` compares that with a catalog's explicit
entries. A discovered pass without an entry still runs (as an *uncurated*
entry, built the default way: :func:`with_discovered`) and is listed; an
entry whose pass no longer exists is listed as stale. Passes that cannot be
built or run here (missing vendor SDK, abstract base) are entries with
``unavailable`` set: listed with why, never silently dropped. Modules that
do not import are read from source (:func:`static_discover`), so a missing
vendor SDK does not hide what the backend ships.

:func:`discover` imports torch, executorch and the packages it walks; this
module imports neither at import time.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Optional

from harness.catalog.entries import Catalog, CatalogEntry, entry

__all__ = ["Discovered", "ImportFailure", "Discovery", "discover", "static_discover", "CrossCheck", "cross_check",
           "with_discovered"]


@dataclass(frozen=True)
class Discovered:
    spec: str
    kind: str  # class | function
    base: str  # PassBase | ExportPass | ExportedProgramPassBase | function
    abstract: bool = False


@dataclass(frozen=True)
class ImportFailure:
    module: str
    error: str
    order_dependent: bool = False  # failed on first import, imported once its package was loaded


@dataclass
class Discovery:
    found: list[Discovered] = field(default_factory=list)
    failures: list[ImportFailure] = field(default_factory=list)
    modules: int = 0
    static: list[Discovered] = field(default_factory=list)  # found in the source of modules that do not import


_PASS_RESULT_HINTS = ("GraphModule", "ExportedProgram", "PassResult")


def _is_pass_function(name: str, fn: Callable) -> bool:
    """Public functions that transform a graph module or a program (helpers are left out)."""
    if name.startswith("_"):
        return False
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    params = list(sig.parameters.values())
    if not params:
        return False
    first = str(params[0].annotation)
    returns = str(sig.return_annotation)
    takes_graph = any(h in first for h in ("GraphModule", "ExportedProgram"))
    if name.endswith("_pass"):
        return takes_graph or params[0].annotation is inspect.Parameter.empty
    return takes_graph and any(h in returns for h in _PASS_RESULT_HINTS) and "Tuple" not in returns


def _walk(root: str) -> list[str]:
    pkg = importlib.import_module(root)
    names = [root]
    if hasattr(pkg, "__path__"):
        for info in pkgutil.walk_packages(pkg.__path__, root + ".", onerror=lambda _name: None):
            parts = info.name.split(".")
            if any(p in ("test", "tests") or p.startswith("test_") for p in parts):
                continue
            names.append(info.name)
    return names


def _import(name: str) -> Optional[str]:
    try:
        importlib.import_module(name)
        return None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - vendor SDKs raise anything on import
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:240]


def discover(packages: Iterable[str]) -> Discovery:
    """Import every module under ``packages`` and list the passes defined there."""
    from executorch.exir.pass_base import ExportedProgramPassBase, ExportPass
    from torch.fx.passes.infra.pass_base import PassBase

    out = Discovery()
    modules: list[str] = []
    for root in packages:
        error = _import(root)
        if error:
            out.failures.append(ImportFailure(root, error))
            continue
        modules.extend(_walk(root))
    failed: dict[str, str] = {}
    for name in modules:
        error = _import(name)
        if error:
            failed[name] = error
    for name, error in list(failed.items()):  # circular imports succeed once the package is loaded
        if _import(name) is None:
            out.failures.append(ImportFailure(name, error, order_dependent=True))
            del failed[name]
    out.failures.extend(ImportFailure(n, e) for n, e in failed.items())
    out.modules = len(modules)
    for f in out.failures:
        if not f.order_dependent:
            out.static.extend(static_discover(f.module))
    for name in modules:
        if name in failed:
            continue
        module = importlib.import_module(name)
        for attr, obj in sorted(vars(module).items()):
            if getattr(obj, "__module__", None) != name:
                continue
            spec = f"{name}:{attr}"
            if inspect.isclass(obj) and issubclass(obj, (PassBase, ExportedProgramPassBase)):
                base = ("ExportedProgramPassBase" if issubclass(obj, ExportedProgramPassBase)
                        else "ExportPass" if issubclass(obj, ExportPass) else "PassBase")
                out.found.append(Discovered(spec, "class", base, inspect.isabstract(obj)))
            elif inspect.isfunction(obj) and _is_pass_function(attr, obj):
                out.found.append(Discovered(spec, "function", "function"))
    return out


_STATIC_BASES = ("Pass", "PassBase", "ExportPass", "ExportedProgramPassBase")


def _module_files(module: str) -> list[tuple[str, str]]:
    """(module name, file path) of ``module`` and, for a package, everything below it: without importing."""
    import os
    from importlib.util import find_spec

    root_name = module.split(".")[0]
    spec = find_spec(root_name)
    if spec is None or not spec.submodule_search_locations:
        return []
    base = os.path.join(list(spec.submodule_search_locations)[0], *module.split(".")[1:])
    if os.path.isfile(base + ".py"):
        return [(module, base + ".py")]
    out = []
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d not in ("test", "tests", "__pycache__") and not d.startswith("test_"))
        rel = os.path.relpath(folder, base)
        prefix = module if rel == "." else f"{module}.{rel.replace(os.sep, '.')}"
        for f in sorted(files):
            if f.endswith(".py") and not f.startswith("test_"):
                out.append((prefix if f == "__init__.py" else f"{prefix}.{f[:-3]}", os.path.join(folder, f)))
    return out


def static_discover(module: str) -> list[Discovered]:
    """Pass classes of a module that does not import here, found by reading its source (``ast``):
    a vendor SDK missing must not hide what the backend ships."""
    import ast

    found = []
    for name, path in _module_files(module):
        try:
            tree = ast.parse(open(path, encoding="utf-8").read(), path)
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rpartition(".")[2] for b in node.bases]
                if any(b.endswith(_STATIC_BASES) for b in bases) and not node.name.startswith("_"):
                    found.append(Discovered(f"{name}:{node.name}", "class", "(source) " + ",".join(bases)))
    return found


@dataclass
class CrossCheck:
    """Discovery against the explicit entries of one catalog."""

    catalog: str
    uncatalogued: list[Discovered]  # found by discovery, no explicit entry
    stale: list[CatalogEntry]  # explicit entry, not found (and not explained by an import failure)
    failures: list[ImportFailure]
    unimportable: list[Discovered] = field(default_factory=list)  # found in source of modules that fail to import

    @property
    def clean(self) -> bool:
        return not self.uncatalogued and not self.stale


def _failure_of(spec: str, failures: list[ImportFailure]) -> Optional[ImportFailure]:
    module = spec.partition(":")[0]
    return next((f for f in failures if not f.order_dependent
                 and (module == f.module or module.startswith(f.module + "."))), None)


def cross_check(catalog: Catalog, found: Optional[Discovery] = None) -> CrossCheck:
    found = found if found is not None else discover(catalog.packages)
    explicit = {e.spec for e in catalog.entries}
    seen = {d.spec for d in found.found}
    uncatalogued = [d for d in found.found if d.spec not in explicit]
    stale = [e for e in catalog.entries if e.spec not in seen and not e.unavailable
             and _failure_of(e.spec, found.failures) is None]
    unimportable = [d for d in found.static if d.spec not in explicit]
    return CrossCheck(catalog.name, uncatalogued, stale, list(found.failures), unimportable)


def with_discovered(catalog: Catalog, found: Optional[Discovery] = None) -> tuple[Catalog, CrossCheck]:
    """The catalog plus an uncurated entry for every discovered pass it does not list: importable
    ones run (built the default way), those in modules that fail to import are listed with the error."""
    check = cross_check(catalog, found)
    extra = []
    for d in check.uncatalogued:
        why = "abstract base class: not a pass on its own" if d.abstract else ""
        extra.append(entry(catalog.name, d.spec, curated=False, unavailable=why,
                           contract=f"discovered {d.base}; no curated contract yet"))
    explicit_modules = {e.spec.partition(":")[0] for e in catalog.entries}
    for d in check.unimportable:
        f = _failure_of(d.spec, check.failures)
        extra.append(entry(catalog.name, d.spec, curated=False, contract=f"found in source: bases {d.base}",
                           unavailable=f"{f.module} does not import here: {f.error}" if f else "does not import"))
    with_passes = {d.spec.partition(":")[0] for d in check.unimportable}
    for f in check.failures:
        covered = any(m == f.module or m.startswith(f.module + ".") for m in explicit_modules | with_passes)
        if f.order_dependent or covered or f.module in catalog.unavailable_packages:
            continue
        extra.append(CatalogEntry(name=f"{catalog.name}.<{f.module.rpartition('.')[2]}>", spec=f"{f.module}:*",
                                  catalog=catalog.name, curated=False,
                                  unavailable=f"module does not import here (no pass classes found in its source): {f.error}"))
    names = {e.name for e in catalog.entries}
    unique = []
    for e in extra:  # two modules may define passes of the same name
        if e.name in names:
            e = replace(e, name=f"{catalog.name}.{e.spec.partition(':')[0].rpartition('.')[2]}.{e.spec.rpartition(':')[2]}")
        names.add(e.name)
        unique.append(e)
    return replace(catalog, entries=catalog.entries + tuple(unique)), check
