"""Catalog entries: one upstream pass, how passgate builds it, and the contract it is held to.

Why entries and not a list of SPECs: most upstream passes cannot be built by
the core's default rule (no arguments, or only the ExportedProgram). Some
want real arguments (``TagMemoryMetaPass`` a texture-limit triple), some want
the program assigned after construction (the Vulkan passes read
``self._exported_program``, as ``vulkan_preprocess.apply_passes`` sets it),
some are functions over the whole program, some only make sense after
``SpecPropPass`` or on quantized graphs, and some change meaning on purpose
(``FuseActivationPass`` moves the activation into node metadata for the
XNNPACK serializer). A :class:`CatalogEntry` records all of that, plus the
checks the pass is known to fail with the reason and upstream reference.

A pass whose constructor takes parameters is one entry with several
*configurations* (:class:`Config`): ``ConvertDtypePass`` int64 -> int32 and
int32 -> int64, ``MemoryPlanningPass`` with and without graph IO allocation.
A catalog writes them once (``entry(..., configs={...})``) and the
:class:`Catalog` expands them into plain entries named ``Name[config]``, so
everything downstream (listing, plans, units, baseline keys, pytest ids)
sees ordinary entries and needs no notion of configurations. The default
construction keeps the bare ``Name``: adding configurations to an entry
changes none of its existing baseline keys or conformance item ids.

These are the engine's types: the catalogs themselves (``passes/``, or a
vendor's) are content, registered through the ``passgate.catalogs`` entry
point group (:mod:`harness.catalog.registry`). Nothing here imports torch or
executorch at import time; building an entry's pass does.
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Optional, Union

from harness.check.loading import LoadedPass, instantiate
from harness.core.stability import stable
from harness.pipelines import pipeline

__all__ = ["CATALOG_STAGES", "QUANTIZED", "ANY_GRAPH", "KnownFailure", "Build", "Lazy", "resolve", "EntryFactory",
           "Config", "CONFIG_LABEL", "config_name", "split_config", "CatalogEntry", "Catalog", "entry", "known"]

CATALOG_STAGES = ("export", "edge", "quantized-edge")
QUANTIZED = "quantized"  # graph source / tag of quantized cases
ANY_GRAPH = "*"  # in applies_to: every graph of the entry's stage, float and quantized, of every source


@stable
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


@stable
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
    - ``graph_and_program``: ``target(gm, ep, *args, **kwargs)`` (``external_mutable_weights_pass``);
    - ``memory_planning``: ``target(*args, **kwargs)`` run as ``to_executorch`` runs its memory-planning pass,
      ``run(gm, graph_signature)`` then ``run_multimethod()`` (:class:`harness.pipelines.pipeline.MemoryPlanningRun`).

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
        parts = [_shown(a) for a in self.args] + [f"{k}={_shown(v)}" for k, v in self.kwargs]
        text = {
            "default": f"{attr} (default construction)",
            "call": f"{attr}({', '.join(parts)})",
            "program": f"{attr}({', '.join(['ep', *parts])})",
            "program_attr": f"{attr}({', '.join(parts)}); ._exported_program = ep",
            "program_function": f"{attr}({', '.join(['ep', *parts])}) -> ep",
            "graph_function": f"{attr}({', '.join(['gm', *parts])})",
            "graph_and_program": f"{attr}({', '.join(['gm', 'ep', *parts])})",
            "memory_planning": f"{attr}({', '.join(parts)}).run(gm, graph_signature)",
        }[self.how]
        return f"{' -> '.join(Build.short(s) for s in self.after)} -> {text}" if self.after else text


def _shown(value: Any) -> str:
    """An argument as ``passgate passes`` and reports show it: functions and classes by name, never by the
    ``<function f at 0x...>`` repr, whose address changes every run (same seed, same report)."""
    if inspect.isfunction(value) or inspect.isclass(value) or inspect.isbuiltin(value):
        return getattr(value, "__qualname__", getattr(value, "__name__", repr(value)))
    return repr(value)


@stable
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
    """The object ``module:attr.sub`` names (imports the module)."""
    module, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


@stable
@dataclass(frozen=True)
class EntryFactory:
    """``LoadedPass(kind='factory')`` object: builds the entry's pass for the program it is handed."""

    spec: str
    build: Build

    def __call__(self, ep):
        if self.build.after:
            # The prerequisites first; the entry's own pass is built at its step, for the program that step is
            # handed (a pass built from the program reads that one, not the program before the prerequisites)
            steps = [pipeline.Step(Build.short(s), EntryFactory(s, Build())) for s in self.build.after]
            last = EntryFactory(self.spec, replace(self.build, after=()))
            return pipeline.PassSequence(steps + [pipeline.Step(self.spec.rpartition(":")[2], last)],
                                         last_requires=True)
        target = resolve(self.spec)
        # Lazy arguments are made here, positional and keyword alike, whatever the build calls
        b = replace(self.build, args=tuple(_arg(a) for a in self.build.args),
                    kwargs=tuple((k, _arg(v)) for k, v in self.build.kwargs))
        kwargs = dict(b.kwargs)
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
        elif b.how == "memory_planning":
            p = pipeline.MemoryPlanningRun(target(*b.args, **kwargs))
        else:

            p = instantiate(target, ep) if inspect.isclass(target) else target
        return p


CONFIG_LABEL = re.compile(r"^[A-Za-z0-9_]+$")


def config_name(base: str, label: str) -> str:
    """The entry name of configuration ``label`` of entry ``base``: ``transforms.ConvertDtypePass[i32_to_i64]``."""
    return f"{base}[{label}]"


def split_config(name: str) -> tuple[str, str]:
    """``Name[config]`` -> (``Name``, ``config``); a name without a configuration -> (name, "")."""
    if name.endswith("]") and "[" in name:
        base, _, label = name[:-1].rpartition("[")
        return base, label
    return name, ""


@stable
@dataclass(frozen=True)
class Config:
    """One construction of a parameterized pass, beside the entry's default one.

    Why a configuration and not a second hand-written entry: the contract,
    stage and known failures of one pass are mostly the same whatever it is
    constructed with, so a configuration states only what differs. Fields
    left ``None`` take the entry's value; ``known`` failures are added to the
    entry's (``inherit_known=False``: replace them, for a construction the
    entry's reasons do not describe). ``contract`` says what this
    construction promises, or what it is there to reach (empty: the entry's).
    """

    build: Build
    contract: str = ""
    known: tuple[KnownFailure, ...] = ()
    inherit_known: bool = True
    applies_to: Optional[tuple[str, ...]] = None
    stage: Optional[str] = None
    semantics: Optional[str] = None
    slow: Optional[bool] = None
    unavailable: Optional[str] = None

    def apply(self, e: "CatalogEntry", name: str, label: str) -> "CatalogEntry":
        """``e`` built this way, named ``name``."""
        pick = lambda mine, theirs: theirs if mine is None else mine  # noqa: E731
        return replace(
            e, name=name, config=label, configs=(), build=self.build,
            contract=self.contract or e.contract,
            known=(e.known if self.inherit_known else ()) + tuple(self.known),
            applies_to=tuple(pick(self.applies_to, e.applies_to)), stage=pick(self.stage, e.stage),
            semantics=pick(self.semantics, e.semantics), slow=pick(self.slow, e.slow),
            unavailable=pick(self.unavailable, e.unavailable))


@stable
@dataclass(frozen=True)
class CatalogEntry:
    """One upstream pass and its contract (one construction of it: see :class:`Config`)."""

    name: str  # unique across catalogs: "<catalog>.<Attr>"
    spec: str  # module:attr
    stage: str = "edge"  # export | edge | quantized-edge
    semantics: str = "preserving"  # preserving | changing | observing (harness.core.kinds.Semantics)
    build: Build = field(default_factory=Build)
    applies_to: tuple[str, ...] = ()  # graph names, tags or sources ("*": all); empty: the float graphs
    known: tuple[KnownFailure, ...] = ()
    unavailable: str = ""  # why it cannot be constructed or run here
    contract: str = ""  # what it promises, in one line
    slow: bool = False  # seconds per call even on small graphs: kept out of the quick profile
    curated: bool = True  # False: discovered without an explicit entry, built the default way
    catalog: str = ""
    config: str = ""  # label of the construction this entry is ("" when the default is given as build=)
    # (label, Config) of the other constructions, expanded by Catalog into entries ``name[label]``
    configs: tuple[tuple[str, Config], ...] = ()

    @property
    def base_name(self) -> str:
        """The entry name without its ``[config]`` suffix: what the default construction is called."""
        return split_config(self.name)[0]

    def expanded(self) -> tuple["CatalogEntry", ...]:
        """This entry (the default construction, its name unchanged) and one entry per other configuration."""
        if not self.configs:
            return (self,)
        base = replace(self, configs=())
        return (base, *(c.apply(base, config_name(self.name, label), label) for label, c in self.configs))

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
        if ANY_GRAPH in wanted:
            return True
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

        return LoadedPass(spec=self.spec, name=self.name, obj=EntryFactory(self.spec, self.build), kind="factory",
                          semantics=self.semantics, stage=self.runner_stage)


@stable
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
        # configurations become entries here, once: every consumer of a catalog sees plain entries
        self.entries = tuple(x if x.catalog else replace(x, catalog=self.name)
                             for e in self.entries for x in e.expanded())


# -- helpers catalogs use to write entries compactly ----------------------------------------------------

@stable
def entry(catalog: str, spec: str, configs: Optional[Mapping[str, Union[Build, Config]]] = None,
          default: str = "", **kw) -> CatalogEntry:
    """An entry of ``catalog`` named ``<catalog>.<attr of spec>``.

    ``configs``: the pass's other constructions, label -> :class:`Build` (or a
    :class:`Config` where contract, known failures, applies_to, ... differ);
    each becomes an entry ``<catalog>.<attr>[label]`` when the :class:`Catalog`
    is made. The default construction is ``build=`` and keeps the bare name;
    or name it with ``default=label`` (one of ``configs``, whose build and
    overrides it then takes), so a list of every construction reads as one
    table::

        entry(C, "...:ConvertDtypePass", default="i64_to_i32", configs={
            "i64_to_i32": Build("call", (torch.int64, torch.int32)),
            "i32_to_i64": Build("call", (torch.int32, torch.int64)),
        })
    """
    name = f"{catalog}.{spec.rpartition(':')[2]}"
    items = [(label, c if isinstance(c, Config) else Config(c)) for label, c in (configs or {}).items()]
    for label, c in items:
        if not CONFIG_LABEL.match(label):
            raise ValueError(f"{name}: configuration label {label!r} must match {CONFIG_LABEL.pattern} "
                             "(it becomes part of entry names, globs, pytest ids and file names)")
        if not isinstance(c.build, Build):
            raise TypeError(f"{name}[{label}]: a configuration is a Build or a Config, not {type(c.build).__name__}")
    e = CatalogEntry(name=name, spec=spec, catalog=catalog, **kw)
    if default:
        chosen = dict(items).get(default)
        if chosen is None:
            raise ValueError(f"{name}: default={default!r} is not one of its configurations {[k for k, _ in items]}")
        if "build" in kw:
            raise ValueError(f"{name}: give the default construction as build= or as default=, not both")
        e = chosen.apply(e, name, default)
        items = [(label, c) for label, c in items if label != default]
    return replace(e, configs=tuple(items)) if items else e


@stable
def known(check: str, reason: str, upstream: str = "", graphs: tuple = (), kind: str = "bug") -> KnownFailure:
    """A :class:`KnownFailure`, with ``graphs`` given as any iterable."""
    return KnownFailure(check, reason, upstream, tuple(graphs), kind)
