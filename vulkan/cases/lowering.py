"""Lowering Vulkan cases, and caching both the Q/DQ program and the fused one.

Why not :func:`harness.graphs.cases.load_case`: a Vulkan case must be edge-lowered
the way ``to_edge_transform_and_lower(..., partitioner=[VulkanPartitioner()])``
lowers it, i.e. with the partitioner's ``ops_to_not_decompose`` preserved
(``aten.pixel_shuffle`` above all: the ``q8ta_pixel_shuffle`` pattern only
exists if it survives ``to_edge``). ``harness.graphs.cases`` lowers with a plain
``EdgeCompileConfig``, so this module does the same job with that config and
stores the result through the same :class:`harness.graphs.cache.CaseCache`.

What is cached is the quantized *exported* program (quantizing is the slow
step, up to ~3 s); ``to_edge`` is re-run from it on every load (0.3-0.7 s).
A serde round trip of an *edge* program moves defaulted schema arguments to
kwargs (``dequantize_affine(..., quant_min=-8, quant_max=7)``), and the
Vulkan matchers read ``node.args[i]`` positionally: on a round-tripped edge
program the torchao embedding pattern is silently not fused. Re-lowering the
round-tripped exported program gives exactly the fresh edge graph (checked
node by node on every recipe family).

The fused program of a *built-in* fusion (ExecuTorch's own passes) is a pure
function of the case and the installed versions, and producing it costs
3-4 s (``FusePatternsPass`` re-exports its RoPE pattern graphs on every
call), so it is cached too, under a key derived from the case key and the
fusion mode; its outcome and timings go in a sidecar JSON beside it. A
vendor's ``--pass`` is cached the same way under a key that holds the
SHA-256 of its source (:func:`vulkan.backend.fusion.source_digest`): rerunning
after an edit elsewhere reuses its fused programs, editing the pass's own
source misses. An entry that does not read back whole (bad JSON, a key that
does not match, a program that fails its checksum) is a miss, never trusted.
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import replace
from typing import Optional

from harness.core.io import atomic_write_bytes
from harness.graphs.cache import default_cache, roundtrip
from harness.graphs.cases import CaseSpec, GraphCase

__all__ = ["LOWERING_DEFINITION", "TIMINGS", "preserve_ops", "build_exported", "to_edge", "export_and_lower", "load",
           "fused_spec", "load_fused", "store_fused"]

LOWERING_DEFINITION = "exported cached; to_edge(EdgeCompileConfig(_check_ir_validity=False, preserve_ops=VulkanPartitioner ops_not_to_decompose)) v2"

_MEMO: dict[str, GraphCase] = {}
TIMINGS: dict[str, dict] = {}  # case key -> {"quantize_s", "to_edge_s", "from_cache"}: for the report


def preserve_ops() -> list:
    from executorch.backends.vulkan.partitioner.vulkan_partitioner import ops_not_to_decompose

    return list(ops_not_to_decompose)


def build_exported(spec: CaseSpec):
    """Build (quantize) and export ``spec``: (inputs, exported program)."""
    import torch

    built = spec.build()
    exported = built.model
    if not isinstance(exported, torch.export.ExportedProgram):
        with torch.no_grad():
            exported = torch.export.export(built.model.eval(), tuple(built.inputs), strict=False)
    return tuple(built.inputs), exported


def to_edge(spec: CaseSpec, exported):
    """Edge-lower as ``to_edge_transform_and_lower`` with the VulkanPartitioner would (its ops kept)."""
    from executorch.exir import EdgeCompileConfig
    from executorch.exir import to_edge as exir_to_edge

    config = EdgeCompileConfig(_check_ir_validity=spec.check_ir_validity, preserve_ops=preserve_ops())
    return exir_to_edge(copy.deepcopy(exported), compile_config=config).exported_program()


def export_and_lower(spec: CaseSpec):
    inputs, exported = build_exported(spec)
    return inputs, exported, to_edge(spec, exported)


def load(spec: CaseSpec, cache=None) -> GraphCase:
    """The lowered Q/DQ case: from this process's memo, or the cached exported program re-lowered."""
    import executorch.backends.vulkan.custom_ops_lib  # noqa: F401 - et_vk ops must exist for lowering/serde

    cache = cache if cache is not None else default_cache()
    memo_key = f"{spec.key}:{cache.root if cache else ''}"
    if memo_key in _MEMO:
        return _MEMO[memo_key]
    started = time.perf_counter()
    entry = cache.load(spec) if cache else None
    from_cache = entry is not None
    if entry is None:
        inputs, exported = build_exported(spec)
        # The edge slot holds the exported program too: the edge program is re-lowered on load.
        entry = cache.store(spec, inputs, exported, exported) if cache else (inputs, roundtrip(exported), None)
    inputs, exported, _ = entry
    quantized = time.perf_counter()
    edge = to_edge(spec, exported)
    done = time.perf_counter()
    TIMINGS[spec.key] = {"quantize_s": round(quantized - started, 4), "to_edge_s": round(done - quantized, 4),
                         "from_cache": from_cache}
    case = GraphCase(spec, inputs, exported, edge, done - started, from_cache)
    _MEMO[memo_key] = case
    return case


# --- the fused program cache ----------------------------------------------------------------


def fused_spec(spec: CaseSpec, key: str) -> CaseSpec:
    """The cache entry of ``spec`` fused by the fusion whose :attr:`~vulkan.backend.fusion.Fusion.cache_key` is ``key``.

    A built-in fusion's key is its mode, so its entries keep the names and
    keys they had before vendor fusions were cached.
    """
    label = key if "@" not in key else key.split("@")[0].rpartition(":")[2]
    return replace(spec, name=f"{spec.name}#{label}", source="vulkan-fused",
                   definition=f"{spec.definition}|fusion={key}|seeded-meta|v4")


def _sidecar(cache, spec: CaseSpec):
    path = cache.path_for(spec)
    return path.with_name(path.name + ".json")


def load_fused(spec: CaseSpec, key: str, cache=None) -> Optional[dict]:
    """A cached fusion outcome ``{"outcome", "seconds", "stages", "error", "program"?}`` or None (a miss)."""
    cache = cache if cache is not None else default_cache()
    if cache is None:
        return None
    fspec = fused_spec(spec, key)
    side = _sidecar(cache, fspec)
    if not side.exists():
        return None
    try:
        info = json.loads(side.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or info.get("key") != fspec.key or info.get("outcome") not in _OUTCOMES:
        return None
    if not isinstance(info.get("seconds"), (int, float)):
        return None
    if info["outcome"] == "ok":
        entry = cache.load(fspec)
        if entry is None:
            return None
        info["program"] = entry[2]
    return info


_OUTCOMES = ("ok", "raised")  # a timeout is never stored: the next run may be on a quieter machine


def store_fused(spec: CaseSpec, key: str, info: dict, handed, program, cache=None):
    """Cache one fusion outcome; ``handed`` is the program the fusion was given.

    Returns the fused program as the cache gives it back (a serde round trip),
    so a cold run and a warm run judge the very same graph; or ``program``
    itself when it cannot be cached.
    """
    cache = cache if cache is not None else default_cache()
    if cache is None:
        return program
    fspec = fused_spec(spec, key)
    meta = {k: v for k, v in info.items() if k != "program"}
    meta["key"] = fspec.key
    if info["outcome"] == "ok":
        try:
            program = cache.store(fspec, (), handed, program)[2]
        except Exception:  # noqa: BLE001 - a program serde cannot write is simply not cached
            return program
    try:
        atomic_write_bytes(_sidecar(cache, fspec), json.dumps(meta).encode())
    except OSError:
        pass
    return program
