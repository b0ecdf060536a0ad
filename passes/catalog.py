"""The pass catalog: every graph pass ExecuTorch ships, made runnable, each with its contract.

Why a catalog and not a list of SPECs: most upstream passes cannot be built
by the core's default rule (no arguments, or only the ExportedProgram). Some
want real arguments (``TagMemoryMetaPass`` a texture-limit triple), some want
the program assigned after construction (the Vulkan passes read
``self._exported_program``, as ``vulkan_preprocess.apply_passes`` sets it),
some are functions over the whole program, some only make sense after
``SpecPropPass`` or on quantized graphs, and some change meaning on purpose
(``FuseActivationPass`` moves the activation into node metadata for the
XNNPACK serializer). A :class:`CatalogEntry` records all of that, plus the
checks the pass is known to fail with the reason and upstream reference.

Nothing is picked by hand: :func:`discover` walks the pass packages and finds
every ``PassBase`` / ``ExportPass`` / ``ExportedProgramPassBase`` subclass and
every pass function, and :func:`cross_check` compares that with the explicit
entries. A discovered pass without an entry still runs (as an *uncurated*
entry, built the default way) and is listed; an entry whose pass no longer
exists is listed as stale. Passes that cannot be built or run here (missing
vendor SDK, abstract base, needs an ``EdgeProgramManager``) are entries with
``unavailable`` set: listed with why, never silently dropped.

Third parties add catalogs through the ``passgate.catalogs`` entry point
group: each entry point names a callable returning a :class:`Catalog` or a
list of them (passgate registers its own, ``passes.catalog:builtin_catalogs``).

This module imports neither torch nor executorch at import time; the
per-backend ``catalog_*`` modules it loads do.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Optional

from harness.core.errors import UsageError

CATALOG_STAGES = ("export", "edge", "quantized-edge")
ENTRY_POINT_GROUP = "passgate.catalogs"
QUANTIZED = "quantized"  # graph source / tag of quantized cases


@dataclass(frozen=True)
class KnownFailure:
    """A check the pass is known to fail, and why.

    ``kind``: ``bug`` (we believe upstream should fix it), ``by-design`` (the
    pass deliberately leaves a state the check rejects, e.g. backend-only ops
    consumed under a relaxed verifier), ``precondition`` (it needs a graph
    state our cases do not give it).
    """

    check: str
    reason: str
    upstream: str = ""  # issue / PR / file:line
    graphs: tuple[str, ...] = ()  # graph names or tags; empty: any graph
    kind: str = "bug"

    def matches(self, graph: str, tags: Iterable[str] = ()) -> bool:
        return not self.graphs or graph in self.graphs or bool(set(self.graphs) & set(tags))


@dataclass(frozen=True)
class Build:
    """How to construct a pass for one program. Picklable: isolated runs ship it to a worker.

    ``how``:
    - ``default``: the core's rule (class with no arguments or the program; function; instance);
    - ``call``: ``target(*args, **kwargs)``;
    - ``program``: ``target(ep, *args, **kwargs)``;
    - ``program_attr``: ``target(*args, **kwargs)`` then ``_exported_program = ep``
      (what ``vulkan_preprocess.apply_passes`` does);
    - ``program_function``: ``target(ep, *args, **kwargs)`` returns a program;
    - ``graph_function``: ``target(gm, *args, **kwargs)`` with the extra arguments bound;
    - ``graph_and_program``: ``target(gm, ep, *args, **kwargs)`` (``external_mutable_weights_pass``).

    ``after``: specs of passes run first, in order (e.g. ``SpecPropPass`` for
    passes that read ``meta['spec']``), the way the ExecuTorch flow orders them.
    """

    how: str = "default"
    args: tuple = ()
    kwargs: tuple = ()  # (name, value) pairs
    after: tuple[str, ...] = ()

    @staticmethod
    def short(spec: str) -> str:
        name = spec.rpartition(":")[2]
        return "SpecPropPass" if name == "SpecPropWithPlaceholders" else name

    def describe(self, attr: str) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        text = {
            "default": f"{attr} (default construction)",
            "call": f"{attr}({', '.join(parts)})",
            "program": f"{attr}({', '.join(['ep', *parts])})",
            "program_attr": f"{attr}({', '.join(parts)}); ._exported_program = ep",
            "program_function": f"{attr}({', '.join(['ep', *parts])}) -> ep",
            "graph_function": f"{attr}({', '.join(['gm', *parts])})",
            "graph_and_program": f"{attr}({', '.join(['gm', 'ep', *parts])})",
        }[self.how]
        return f"{' -> '.join(Build.short(s) for s in self.after)} -> {text}" if self.after else text


@dataclass(frozen=True)
class Lazy:
    """A constructor argument made when the pass is built: ``resolve(spec)()``
    (a fresh state object per run, or one that needs torch/executorch to exist)."""

    spec: str

    def __repr__(self) -> str:
        return f"{self.spec.rpartition(':')[2]}()"


def _arg(a: Any) -> Any:
    return resolve(a.spec)() if isinstance(a, Lazy) else a


def resolve(spec: str) -> Any:
    module, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class EntryFactory:
    """``LoadedPass(kind='factory')`` object: builds the entry's pass for the program it is handed."""

    spec: str
    build: Build

    def __call__(self, ep):
        from harness.pipelines import pipeline

        target = resolve(self.spec)
        b = replace(self.build, args=tuple(_arg(a) for a in self.build.args))
        kwargs = {k: _arg(v) for k, v in b.kwargs}
        if b.how == "call":
            p = target(*b.args, **kwargs)
        elif b.how == "program":
            p = target(ep, *b.args, **kwargs)
        elif b.how == "program_attr":
            p = target(*b.args, **kwargs)
            p._exported_program = ep
        elif b.how == "program_function":
            p = pipeline.ProgramFunctionPass(target, b.args, b.kwargs)
        elif b.how == "graph_function":
            p = pipeline.GraphFunctionPass(target, b.args, b.kwargs)
        elif b.how == "graph_and_program":
            p = pipeline.GraphFunctionPass(target, (ep, *b.args), b.kwargs)
        else:
            from harness.check.loading import instantiate

            p = instantiate(target, ep) if inspect.isclass(target) else target
        if not b.after:
            return p
        steps = [pipeline.Step(Build.short(s), EntryFactory(s, Build())) for s in b.after]
        steps.append(pipeline.Step(self.spec.rpartition(":")[2], _Fixed(p)))
        return pipeline.PassSequence(steps, last_requires=True)


@dataclass(frozen=True)
class _Fixed:
    """A factory returning an already built pass (the last step of an ``after`` sequence)."""

    p: Any

    def __call__(self, ep):
        return self.p


@dataclass(frozen=True)
class CatalogEntry:
    """One upstream pass and its contract."""

    name: str  # unique across catalogs: "<catalog>.<Attr>"
    spec: str  # module:attr
    stage: str = "edge"  # export | edge | quantized-edge
    semantics: str = "preserving"  # preserving | changing
    build: Build = field(default_factory=Build)
    applies_to: tuple[str, ...] = ()  # graph names, tags or sources; empty: every graph of its stage
    known: tuple[KnownFailure, ...] = ()
    unavailable: str = ""  # why it cannot be constructed or run here
    contract: str = ""  # what it promises, in one line
    slow: bool = False  # seconds per call even on small graphs: kept out of the quick profile
    curated: bool = True  # False: discovered without an explicit entry, built the default way
    catalog: str = ""

    @property
    def runner_stage(self) -> str:
        return "edge" if self.stage == "quantized-edge" else self.stage

    @property
    def construct(self) -> str:
        return self.build.describe(self.spec.rpartition(":")[2])

    @property
    def runnable(self) -> bool:
        return not self.unavailable

    def applies(self, spec) -> bool:
        """Does this entry run on graph case ``spec`` (a CaseSpec)?"""
        quantized = spec.source == QUANTIZED or QUANTIZED in spec.tags
        wanted = self.applies_to or ((QUANTIZED,) if self.stage == "quantized-edge" else ())
        if not wanted:
            return not quantized  # float passes: the float graphs (quantized ones only when listed)
        return spec.name in wanted or spec.source in wanted or bool(set(wanted) & set(spec.tags))

    @property
    def skipped_checks(self) -> dict:
        """Checks that do not apply to how this entry is built, with why (reported as skips)."""
        if self.build.after:
            first = ", ".join(Build.short(s) for s in self.build.after)
            return {"idempotent": f"run after {first}: a second run would re-run them on a graph already past "
                                  "their stage",
                    "input_unchanged": f"run after {first} on a copy the sequence owns: what the pass does to its "
                                       "own input is not observable here (see the pipelines' verify-each)"}
        return {}

    def known_for(self, check: str, graph: str, tags: Iterable[str] = ()) -> Optional[KnownFailure]:
        return next((k for k in self.known if k.check == check and k.matches(graph, tags)), None)

    def loaded(self):
        """A LoadedPass that builds this entry's pass afresh for every run."""
        from harness.check.loading import LoadedPass

        return LoadedPass(spec=self.spec, name=self.name, obj=EntryFactory(self.spec, self.build), kind="factory",
                          semantics=self.semantics, stage=self.runner_stage)


@dataclass
class Catalog:
    """A named set of entries and the packages discovery walks for it."""

    name: str
    packages: tuple[str, ...]
    entries: tuple[CatalogEntry, ...]
    description: str = ""
    # module prefix -> reason, for whole backends that cannot import here (vendor SDKs)
    unavailable_packages: dict = field(default_factory=dict)

    def __post_init__(self):
        self.entries = tuple(e if e.catalog else replace(e, catalog=self.name) for e in self.entries)


# -- helpers the catalog_* modules use to write entries compactly ---------------------------------------

def entry(catalog: str, spec: str, **kw) -> CatalogEntry:
    return CatalogEntry(name=f"{catalog}.{spec.rpartition(':')[2]}", spec=spec, catalog=catalog, **kw)


def known(check: str, reason: str, upstream: str = "", graphs: tuple = (), kind: str = "bug") -> KnownFailure:
    return KnownFailure(check, reason, upstream, tuple(graphs), kind)


# -- discovery ------------------------------------------------------------------------------------------

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


# -- registry -------------------------------------------------------------------------------------------

BUILTIN_MODULES = (
    "passes.catalog_exir",
    "passes.catalog_transforms",
    "passes.catalog_vulkan",
    "passes.catalog_xnnpack",
    "passes.catalog_qualcomm",
    "passes.catalog_backends",
)


def builtin_catalogs() -> list[Catalog]:
    """passgate's own catalogs (registered as the ``passgate`` entry point of ``passgate.catalogs``)."""
    out: list[Catalog] = []
    for module in BUILTIN_MODULES:
        value = importlib.import_module(module).CATALOGS
        out.extend(value)
    return out


def _as_catalogs(value: Any, source: str) -> list[Catalog]:
    if callable(value) and not isinstance(value, Catalog):
        value = value()
    items = [value] if isinstance(value, Catalog) else list(value)
    for c in items:
        if not isinstance(c, Catalog):
            raise UsageError(f"catalog entry point {source} gave a {type(c).__name__}, not a passes.catalog.Catalog")
    return items


def load_catalogs() -> dict[str, Catalog]:
    """Every catalog: passgate's own and those third parties register under ``passgate.catalogs``."""
    from importlib.metadata import entry_points

    catalogs: dict[str, Catalog] = {}
    points = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (ep.name != "passgate", ep.name))
    if not any(ep.value == "passes.catalog:builtin_catalogs" for ep in points):
        for c in builtin_catalogs():  # an older editable install without the entry point
            catalogs[c.name] = c
    for ep in points:
        try:
            value = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin is bad input, named
            raise UsageError(f"catalog entry point {ep.name} ({ep.value}) failed to load: "
                             f"{type(exc).__name__}: {exc}") from None
        for c in _as_catalogs(value, f"{ep.name} ({ep.value})"):
            if c.name in catalogs and ep.value != "passes.catalog:builtin_catalogs":
                raise UsageError(f"catalog {c.name!r} from entry point {ep.name} is already defined")
            catalogs[c.name] = c
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
    out, seen = [], set()
    for c in catalogs:
        for e in c.entries:
            if e.name in seen:
                raise UsageError(f"two catalog entries are named {e.name!r}")
            seen.add(e.name)
            out.append(e)
    return out
