"""Graph cases: what a pass is run on.

A :class:`CaseSpec` says how to build a model and its sample inputs; a
:class:`GraphCase` is that model exported (``torch.export``) and lowered
(``to_edge``). Lowering costs ~0.7 s against ~3 ms for a deep copy, so each
case is lowered once per process (and once per machine, through
:mod:`harness.graphs.cache`) and every check gets its own :meth:`GraphCase.program`
copy. A copy of a program with symbolic shapes is loaded afresh from its
serialized form instead of deep-copied, because a deep copy shares the
original's ShapeEnv (:meth:`GraphCase.program` says why that matters).

Both programs are taken from a serialize/deserialize round trip even when
freshly lowered, so a cold run and a warm (cached) run hand passes the very
same graphs and reach the same verdicts.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from harness.core.stability import stable
from harness.graphs.cache import BUSY, default_cache, deserialize_program, roundtrip, serialize_program
from harness.graphs.forms import AS_LOWERED, as_lowered
from harness.graphs.memos import MEMOS

__all__ = ["STAGES", "ModelInputs", "CaseSpec", "definition_of", "GraphCase", "edge_compile_config", "edge_verifier",
           "export_and_lower", "load_case", "load_cases"]

STAGES = ("export", "edge")


@stable
@dataclass(frozen=True)
class ModelInputs:
    """What a case builder returns.

    ``model`` is an ``nn.Module`` to export, or an ``ExportedProgram`` when the
    source has to export itself (quantization flows export, prepare, convert
    and export again).
    """

    model: Any
    inputs: tuple
    dynamic_shapes: Any = None


@stable
@dataclass(frozen=True)
class CaseSpec:
    """How to build one graph case. Cheap: nothing is built until asked."""

    name: str
    source: str  # builtin | zoo | random | quantized | fixture
    build: Callable[[], ModelInputs]
    # Text that fixes what ``build`` makes (its source code, sizes, seed); hashed
    # into the cache key, so editing a model invalidates its cached lowering.
    definition: str
    tags: frozenset = field(default_factory=frozenset)
    description: str = ""
    # Quantized graphs carry ops the edge verifier rejects until a backend
    # fuses them; those cases lower with IR validity checking off.
    check_ir_validity: bool = True
    # Ops ``to_edge`` keeps whole instead of decomposing them to core ATen ("aten._prelu_kernel.default"):
    # ``EdgeCompileConfig.preserve_ops``, as a partitioner's ``ops_to_not_decompose`` keeps them in
    # ``to_edge_transform_and_lower``. Passes that act only on such an op (XNNPACK's PReLUReshapePass on
    # _prelu_kernel) see it on no plainly lowered case. Hashed into the key only when set, so the key of
    # every case that preserves nothing stays what it was.
    preserve_ops: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        preserved = f"\0{','.join(self.preserve_ops)}" if self.preserve_ops else ""
        return hashlib.sha256(
            f"{self.source}\0{self.name}\0{self.check_ir_validity}\0{self.definition}{preserved}".encode()
        ).hexdigest()[:24]


def definition_of(*objects: Any, extra: str = "") -> str:
    """Source text of the given classes/functions plus ``extra``: a case definition."""
    parts = []
    for obj in objects:
        try:
            parts.append(textwrap.dedent(inspect.getsource(obj)))
        except (OSError, TypeError):
            parts.append(repr(obj))
    parts.append(extra)
    return "\n".join(parts)


@dataclass
class GraphCase:
    """A case built, exported and lowered. Treat the programs as read-only."""

    spec: CaseSpec
    inputs: tuple
    exported: Any  # torch.export.ExportedProgram (training IR: relu_, detach, add_ still there)
    edge: Any  # ExportedProgram after to_edge
    lower_seconds: float = 0.0
    from_cache: bool = False
    # The programs are as the case cache loads them (False: a state a pipeline reached, whose metadata, e.g.
    # SpecPropPass's meta['spec'], a save and load would drop): only then is a dynamic program's copy
    # reloaded from its serialized form, and the edge verifier rebuilt from the spec.
    loaded_form: bool = True
    # per stage, the serialized form fresh copies of a dynamic program are loaded from (made on first use)
    _frozen: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.loaded_form:
            _own_edge_verifier(self.edge, self.spec)

    @property
    def name(self) -> str:
        return self.spec.name

    def program(self, stage: str):
        """A private copy of the program at ``stage`` for one check.

        A deep copy, except for a program with symbolic shapes: torch.fx's deep
        copy of a FakeTensor stays in its fake mode, so every such copy would
        share one ShapeEnv, and a guard one pass adds there (a size compared
        with ``==``) would specialize the batch symbol in every later copy, in
        the deterministic check's second run and, in one process, in every
        later pass's input. Such a program is loaded afresh from its serialized
        form instead, which gives it a ShapeEnv of its own (only a case in its
        loaded form: see ``loaded_form``).
        """
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}; expected one of {STAGES}")
        shared = self.shared(stage)
        if not self.loaded_form or not _has_symbolic_inputs(shared):
            return copy.deepcopy(shared)
        if stage not in self._frozen:
            self._frozen[stage] = serialize_program(shared)
        ep = _own_edge_verifier(deserialize_program(self._frozen[stage]), self.spec)
        return as_lowered(ep) if AS_LOWERED in self.spec.tags else ep

    def shared(self, stage: str):
        """The shared program itself (not a copy): only for read-only comparisons."""
        return self.exported if stage == "export" else self.edge

    def sample_inputs(self) -> tuple:
        return tuple(x.clone() if hasattr(x, "clone") else copy.deepcopy(x) for x in self.inputs)


def _has_symbolic_inputs(ep) -> bool:
    """Does a placeholder's ``meta['val']`` have a symbolic size? (Where a program's symbols enter.)"""
    import torch

    for node in ep.graph.nodes:
        if node.op != "placeholder":
            break
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor) and any(isinstance(d, torch.SymInt) for d in val.shape):
            return True
    return False


def _own_edge_verifier(ep, spec: CaseSpec):
    """``ep`` (an edge program) verified as ``spec`` was lowered: with its IR validity setting and preserved ops.

    ExecuTorch's deserializer gives a loaded edge program the edge verifier
    class torch's verifier registry holds for the dialect, which is whichever
    ``EXIREdgeDialectVerifier`` the process created last (every ``to_edge``
    creates one from its config). A case's ``verifier`` verdict would then
    depend on what the process lowered before loading it: after a lowering with
    validity checking off, every later case would be judged by a verifier that
    checks no op. A program that is not in the edge dialect is left alone.
    """
    if any(getattr(v, "dialect", "") == "EDGE" for v in ep.verifiers):
        ep._verifiers = [edge_verifier(spec.check_ir_validity, spec.preserve_ops)]
    return ep


def edge_compile_config(check_ir_validity: bool, preserve_ops: tuple[str, ...]):
    """The ``EdgeCompileConfig`` a case is lowered with, verified by, and handed to a partitioner's
    ``to_edge_transform_and_lower`` with (one config per case, so a preserved op stays preserved there too)."""
    from executorch.exir import EdgeCompileConfig

    return EdgeCompileConfig(_check_ir_validity=check_ir_validity,
                             preserve_ops=[_aten_op(name) for name in preserve_ops])


@functools.lru_cache(maxsize=None)
def edge_verifier(check_ir_validity: bool, preserve_ops: tuple[str, ...]):
    """The edge dialect verifier class of one lowering configuration, made once per process: each creation
    also registers a class in torch's verifier registry, which the deserializer reads (see
    :func:`_own_edge_verifier`)."""
    from executorch.exir.verification.verifier import EXIREdgeDialectVerifier

    config = edge_compile_config(check_ir_validity, preserve_ops)
    return EXIREdgeDialectVerifier(edge_compile_config=config, class_only=True)


def _aten_op(name: str):
    """The OpOverload an op name such as ``aten._prelu_kernel.default`` names (``torch.ops.aten.<op>.<overload>``)."""
    import torch

    try:
        namespace, op, overload = name.split(".")
        return getattr(getattr(getattr(torch.ops, namespace), op), overload)
    except (ValueError, AttributeError) as exc:
        raise ValueError(f"preserve_ops: no op {name!r} (expected namespace.op.overload)") from exc


def export_and_lower(spec: CaseSpec):
    """Build, export and lower a spec. Returns (inputs, exported, edge)."""
    import torch
    from executorch.exir import to_edge

    built = spec.build()
    if isinstance(built.model, torch.export.ExportedProgram):
        exported = built.model
    else:
        model = built.model.eval()
        with torch.no_grad():
            exported = torch.export.export(
                model, tuple(built.inputs), dynamic_shapes=built.dynamic_shapes, strict=False
            )
    config = edge_compile_config(spec.check_ir_validity, spec.preserve_ops)
    edge = to_edge(copy.deepcopy(exported), compile_config=config).exported_program()
    return tuple(built.inputs), exported, edge


def load_case(spec: CaseSpec, cache: Optional["CaseCache"] = None,  # noqa: F821
              wait: bool = True) -> Optional[GraphCase]:
    """The lowered case for ``spec``: from this process's memo, the disk cache, or built now.

    With ``wait=False``, None when another process is lowering it right now (see :func:`load_cases`).
    """
    import time


    cache = cache if cache is not None else default_cache()
    memo_key = f"{spec.key}:{cache.root if cache else ''}"
    if memo_key in MEMOS.cases:
        return MEMOS.cases[memo_key]
    started = time.perf_counter()
    entry = cache.load(spec) if cache else None
    from_cache = entry is not None
    if entry is None and cache is not None:
        # One lowering per machine: processes sharing the cache (xdist workers, shards) that miss the same
        # case wait for whichever took the lock first and read its entry instead of lowering it again.
        with cache.lowering(spec, wait) as stored:
            if stored is BUSY:
                return None
            entry = stored
            from_cache = entry is not None
            if entry is None:
                inputs, exported, edge = export_and_lower(spec)
                entry = cache.store(spec, inputs, exported, edge)
    if entry is None:
        inputs, exported, edge = export_and_lower(spec)

        entry = (inputs, roundtrip(exported), roundtrip(edge))
    inputs, exported, edge = entry
    if AS_LOWERED in spec.tags:  # the form to_edge returned, not the loaded one (harness.graphs.forms says why)
        exported, edge = as_lowered(exported), as_lowered(edge)
    case = GraphCase(spec, inputs, exported, edge, time.perf_counter() - started, from_cache)
    MEMOS.cases[memo_key] = case
    return case


def load_cases(specs: list, cache: Optional["CaseCache"] = None,  # noqa: F821
               loaded: Optional[Callable[[int, GraphCase], None]] = None) -> list[GraphCase]:
    """:func:`load_case` for each spec, in order; ``loaded(index, case)`` as each arrives.

    A case that another process is lowering at this moment is taken last, so
    processes that share a cold cache (xdist workers, shards) lower different
    cases at once instead of queueing behind the same one.
    """
    out: dict[int, GraphCase] = {}
    busy = []
    for i, spec in enumerate(specs):
        case = load_case(spec, cache, wait=False)
        if case is None:
            busy.append(i)
            continue
        out[i] = case
        if loaded:
            loaded(i, case)
    for i in busy:
        out[i] = load_case(specs[i], cache)
        if loaded:
            loaded(i, out[i])
    return [out[i] for i in range(len(specs))]

