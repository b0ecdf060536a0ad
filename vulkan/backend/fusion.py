"""The fusion under test: ExecuTorch's Vulkan preprocessing, FusePatternsPass alone, or a vendor's pass.

``vulkan-preprocess`` (the default) runs the passes of
``VulkanBackend.preprocess`` (executorch 1.5.1, ``vulkan_preprocess.py``) in
its order, up to serialization (``VkGraphBuilder``), on the whole edge
program, applying each the way ``vulkan_preprocess.apply_passes`` does
(``_exported_program`` set right before the call, ``_transform`` with the
any-op verifier). The list is copied from that file because preprocess has
no hook to stop before serialization; ``tests/test_vulkan_fusion.py`` checks
that the order still matches the installed source.

``fuse-patterns`` runs ``FusePatternsPass`` alone as ExecuTorch's own tests
(``backends/vulkan/test/test_vulkan_passes.py``) apply it: set
``_exported_program``, call ``.call(ep.graph_module)``, inspect the program,
which the pass edited in place.

Measured on this machine: ``FusePatternsPass`` costs 2.2-4.5 s per call even
when nothing matches, because ``replace_all_fusable_subgraphs`` calls every
pattern's ``get_graphs_fn`` on each call and the two RoPE patterns
(``export_llama_rope`` ~1.3 s, ``hf_rope`` ~1.5 s) ``torch.export`` their
pattern graphs every time; the quantized-op detectors take milliseconds.
Every other preprocess pass takes < 50 ms on these graphs.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Optional

from vulkan.cases.recipes import FUSE_PATTERNS, PREPROCESS

__all__ = ["FUSE_PATTERNS", "PREPROCESS", "PREPROCESS_ORDER", "BuiltinFusion", "Fusion", "FusionRun", "UserFusion",
           "apply_one", "builtin", "fuse", "pattern_graphs_memoized", "preprocess_passes", "prime_pattern_graphs",
           "source_digest"]


@dataclass
class FusionRun:
    mode: str
    outcome: str  # ok | raised | timeout
    program: Any = None
    seconds: float = 0.0
    stages: dict = field(default_factory=dict)  # pass name -> seconds
    error: str = ""
    traceback: str = ""
    from_cache: bool = False
    # Which metadata keys each call_function node carried when handed over (harness.check.metadata.snapshot):
    # the "before" side of the meta_* checks.
    before_meta: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def info(self) -> dict:
        return {"outcome": self.outcome, "seconds": self.seconds, "stages": self.stages,
                "error": self.error, "traceback": self.traceback}


def preprocess_passes(program) -> list:
    """VulkanBackend.preprocess's passes, in its order, default compile options (1.5.1)."""
    from functools import partial

    import executorch.backends.vulkan.utils as vk_utils
    from executorch.backends.transforms.addmm_mm_to_linear import AddmmToLinearTransform
    from executorch.backends.transforms.fuse_conv_with_clamp import FuseClampPass
    from executorch.backends.transforms.fuse_view_copy import FuseViewCopyTransform
    from executorch.backends.transforms.view_copy_to_squeeze_unsqueeze import ViewCopyToSqueezeUnsqueezePass
    from executorch.backends.vulkan._passes import (
        FoldQDQPass,
        FusePatternsPass,
        FuseQuantizedOpsTransform,
        InsertDtypePromotionPass,
        RemoveAssertsTransform,
        RemoveRedundantOpsTransform,
        SqueezeUnsqueezeInputs,
        TagMemoryMetaPass,
        insert_prepack_nodes,
    )
    from executorch.backends.vulkan.serialization.vulkan_graph_schema import VkMemoryLayout, VkStorageType
    from executorch.backends.xnnpack._passes import FuseBatchNormPass
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite, greedy
    from executorch.exir.passes import MemoryPlanningPass, SpecPropPass
    from executorch.exir.passes.sym_shape_eval_pass import ConstraintBasedSymShapeEvalPass

    planning = MemoryPlanningAlgorithmSuite(algo_list=[partial(greedy, allow_overlapping_allocations=False)])
    return [
        AddmmToLinearTransform(), FuseBatchNormPass(program), AddmmToLinearTransform(), InsertDtypePromotionPass(),
        FusePatternsPass(), FuseClampPass(), RemoveRedundantOpsTransform(), FuseQuantizedOpsTransform(),
        FoldQDQPass(), SqueezeUnsqueezeInputs(), FuseViewCopyTransform(), ViewCopyToSqueezeUnsqueezePass(),
        SpecPropPass(),
        RemoveAssertsTransform(), insert_prepack_nodes,
        TagMemoryMetaPass(vk_utils.DEFAULT_TEXTURE_LIMITS, default_storage_type=VkStorageType.TEXTURE_3D,
                          default_memory_layout=VkMemoryLayout.TENSOR_WIDTH_PACKED, force_fp16=False),
        ConstraintBasedSymShapeEvalPass(), MemoryPlanningPass(memory_planning_algo=planning),
    ]


PREPROCESS_ORDER = ("AddmmToLinearTransform", "FuseBatchNormPass", "AddmmToLinearTransform",
                    "InsertDtypePromotionPass", "FusePatternsPass", "FuseClampPass", "RemoveRedundantOpsTransform",
                    "FuseQuantizedOpsTransform", "FoldQDQPass", "SqueezeUnsqueezeInputs", "FuseViewCopyTransform",
                    "ViewCopyToSqueezeUnsqueezePass", "SpecPropPass", "RemoveAssertsTransform",
                    "insert_prepack_nodes", "TagMemoryMetaPass", "ConstraintBasedSymShapeEvalPass",
                    "MemoryPlanningPass")


def _pass_name(p: Any) -> str:
    return getattr(p, "__name__", None) or type(p).__name__


def apply_one(program, p):
    """Apply one pass exactly as ``vulkan_preprocess.apply_passes`` does."""
    from executorch.backends.vulkan.vulkan_preprocess import apply_passes
    from executorch.exir.passes import MemoryPlanningPass

    if isinstance(p, MemoryPlanningPass):
        program.graph_module.encounter_to_out_var_failure = True  # as preprocess does before planning
    return apply_passes(program, [p])


def _timed(mode: str, fn, ep, timeout: Optional[float]) -> FusionRun:
    import logging

    from harness.check.invoke import deadline
    from harness.core.errors import PassTimeout

    # A fused op whose CPU implementation cannot run on fake tensors makes the
    # pass's re-trace fail; torch logs the whole traceback at ERROR before
    # raising. The exception is the verdict (kept in the run), the log is noise.
    logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)
    run = FusionRun(mode, "ok")
    started = time.perf_counter()
    try:
        with deadline(timeout):
            run.program = fn(ep, run.stages)
    except PassTimeout as exc:
        run.outcome, run.error = "timeout", str(exc)
    except Exception as exc:  # noqa: BLE001 - a fusion that raises is a verdict (must decline, not crash)
        run.outcome, run.error = "raised", f"{type(exc).__name__}: {_first_line(exc)}"
        run.traceback = traceback.format_exc(limit=12)
    run.seconds = time.perf_counter() - started
    return run


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    # ExecuTorch wraps pass errors ("An error occurred when running the 'X' pass ..."): name the cause.
    cause = exc.__cause__ or exc.__context__
    if cause is not None and "error occurred when running" in text:
        return f"in {text.split(chr(39))[1] if chr(39) in text else 'a pass'}: {type(cause).__name__}: {_first_line(cause)}"
    return text.splitlines()[0] if text else ""


def _preprocess(ep, stages: dict):
    from torch.export._remove_auto_functionalized_pass import unsafe_remove_auto_functionalized_pass

    program = unsafe_remove_auto_functionalized_pass(ep)
    for p in preprocess_passes(program):
        started = time.perf_counter()
        program = apply_one(program, p)
        name = _pass_name(p)
        stages[name] = round(stages.get(name, 0.0) + time.perf_counter() - started, 4)
    return program


def _fuse_patterns(ep, stages: dict):
    from executorch.backends.vulkan._passes.fuse_patterns import FusePatternsPass

    started = time.perf_counter()
    p = FusePatternsPass()
    p._exported_program = ep
    p.call(ep.graph_module)  # edits ep in place, as ExecuTorch's tests read it back
    ep.graph_module.recompile()
    stages["FusePatternsPass"] = round(time.perf_counter() - started, 4)
    return ep


class Fusion:
    """What is under test. ``run(ep)`` fuses a private copy; never raises.

    ``cache_key`` names what fixes the fused program besides the case (and
    the torch / executorch versions the cache adds): None when nothing does
    reliably, and then the fusion is never cached.
    """

    name: str = ""
    mode: str = ""
    cache_key: Optional[str] = None

    @property
    def cacheable(self) -> bool:
        return self.cache_key is not None

    def run(self, ep, timeout: Optional[float] = None) -> FusionRun:
        raise NotImplementedError


class BuiltinFusion(Fusion):
    def __init__(self, mode: str):
        if mode not in (PREPROCESS, FUSE_PATTERNS):
            raise ValueError(f"unknown fusion mode {mode!r}")
        self.mode = self.name = self.cache_key = mode

    def run(self, ep, timeout: Optional[float] = None) -> FusionRun:
        fn = _preprocess if self.mode == PREPROCESS else _fuse_patterns
        return _timed(self.mode, fn, ep, timeout)


class UserFusion(Fusion):
    """A vendor's fusion from ``--pass SPEC``: a pass (class/instance) or a pipeline function.

    Passes are applied the way ``vulkan_preprocess.apply_passes`` applies them
    (so a pass that needs ``_exported_program`` gets it); a function whose
    first parameter is annotated ``ExportedProgram`` or named ``ep`` /
    ``program`` / ``exported_program`` is a pipeline and gets the program; any
    other function gets the ``GraphModule`` and its result is folded back.
    ``mode`` says which recipes apply (a pipeline replacing preprocess, or a
    pattern pass replacing FusePatternsPass): declare ``passgate_vulkan_mode``.
    """

    def __init__(self, loaded, mode: Optional[str] = None):
        self.loaded = loaded
        self.name = loaded.name
        self.mode = mode or getattr(loaded.obj, "passgate_vulkan_mode", PREPROCESS)
        digest = source_digest(loaded.obj)
        # The fused program is a function of the pass's source, how it is applied and the case: a rerun after
        # an edit anywhere else reuses it; any edit to the pass's source is a new key, so a miss.
        self.cache_key = None if digest is None else f"{self.mode}:{loaded.kind}:{loaded.name}@{digest}"

    def run(self, ep, timeout: Optional[float] = None) -> FusionRun:
        return _timed(self.mode, self._apply, ep, timeout)

    def _apply(self, ep, stages: dict):
        started = time.perf_counter()
        obj = self.loaded.obj
        if self.loaded.kind == "function":
            if _takes_program(obj):
                out = obj(ep)
            else:
                from harness.check.invoke import as_graph_module, fold_back

                gm = as_graph_module(obj(ep.graph_module), ep.graph_module)
                out, _ = fold_back(ep, gm)
        else:
            p = self.loaded.make(ep)
            if hasattr(p, "_exported_program"):
                p._exported_program = ep
            out = apply_one(ep, p)
        stages[self.name] = round(time.perf_counter() - started, 4)
        return out


def source_digest(obj) -> Optional[str]:
    """SHA-256 of the source a vendor pass is made of, or None when it has no source file.

    The files hashed are the module defining ``obj`` and the modules it
    draws on directly (its globals' modules, a class's bases') unless they
    are installed packages or the standard library (under ``sys.prefix``:
    the torch / executorch versions are in every cache key already). Bytes,
    not modification times: touching a file changes nothing, editing it does.
    """
    import hashlib
    import os
    import sys

    home = inspect.getmodule(obj)
    if getattr(home, "__file__", None) is None:
        return None
    installed = tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    related = [home, *vars(home).values(), *(inspect.getmro(obj) if inspect.isclass(obj) else ())]
    files = {os.path.realpath(home.__file__)}
    for thing in related:
        mod = thing if inspect.ismodule(thing) else inspect.getmodule(thing)
        path = getattr(mod, "__file__", None)
        if path and path.endswith(".py") and not os.path.realpath(path).startswith(installed):
            files.add(os.path.realpath(path))
    h = hashlib.sha256()
    for path in sorted(files):
        try:
            data = open(path, "rb").read()
        except OSError:
            return None
        h.update(os.path.basename(path).encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()[:24]


def _takes_program(fn) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if not params:
        return False
    first = params[0]
    return "ExportedProgram" in str(first.annotation) or first.name in ("ep", "program", "exported_program")


def fuse(fusion: Fusion, vcase, qdq_case, timeout: Optional[float] = 120.0, use_cache: bool = True) -> FusionRun:
    """Run ``fusion`` on a private copy of the case's Q/DQ edge program, cached when it has a cache key.

    The copy is seeded with synthetic metadata first (``harness.check.metadata``,
    as the core runner does), so the meta checks hold fused nodes to the
    same bar as the nodes they replace.
    """
    from harness.check.metadata import seed_metadata, snapshot
    from vulkan.cases import lowering

    handed = qdq_case.program("edge")
    seed_metadata(handed.graph_module)
    before = snapshot(handed.graph_module)
    if use_cache and fusion.cacheable:
        hit = lowering.load_fused(vcase.spec, fusion.cache_key)
        if hit is not None:
            return FusionRun(fusion.mode, hit["outcome"], hit.get("program"), hit["seconds"], hit.get("stages", {}),
                             hit.get("error", ""), hit.get("traceback", ""), from_cache=True, before_meta=before)
    keep = copy.deepcopy(handed) if (use_cache and fusion.cacheable) else None
    run = fusion.run(handed, timeout)
    run.before_meta = before
    if use_cache and fusion.cacheable and run.outcome != "timeout":
        run.program = lowering.store_fused(vcase.spec, fusion.cache_key, run.info(), keep, run.program)
    return run


@contextlib.contextmanager
def pattern_graphs_memoized():
    """Within the block, each pattern's ``get_graphs_fn`` runs once instead of on every FusePatternsPass call.

    ``replace_all_fusable_subgraphs`` calls every registered pattern's
    ``get_graphs_fn`` on each call, and the two RoPE patterns ``torch.export``
    their pattern graphs each time (~1.3 s each, see the module docstring):
    a search judging hundreds of cases would spend most of its time there.
    The graphs are a pure function of the installed executorch and are only
    read (``SubgraphMatcher``), so one export per process gives the very same
    matches; the detectors and replacements, the pass under test, are
    untouched. The registry's functions are restored on exit.
    """
    from executorch.backends.vulkan.patterns.pattern_registry import fusable_patterns

    saved = {}
    for name, entry in fusable_patterns.items():
        fn = entry.get_graphs_fn
        if fn is None:
            continue
        saved[name] = fn
        entry.get_graphs_fn = functools.lru_cache(maxsize=1)(fn)
    try:
        yield
    finally:
        for name, fn in saved.items():
            fusable_patterns[name].get_graphs_fn = fn


def prime_pattern_graphs() -> None:
    """Export every pattern graph now, inside :func:`pattern_graphs_memoized`: forked workers inherit them.

    ``passgate vulkan`` judges its cases in processes forked from the one
    that calls this; each would otherwise pay the ~3 s of RoPE exports again.
    """
    from executorch.backends.vulkan.patterns.pattern_registry import fusable_patterns

    for entry in fusable_patterns.values():
        if entry.get_graphs_fn is not None:
            entry.get_graphs_fn()


def builtin(mode: str = PREPROCESS) -> Fusion:
    return BuiltinFusion(mode)
