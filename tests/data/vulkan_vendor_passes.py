"""Vendor fusions for the Vulkan search tests: ExecuTorch's real FusePatternsPass, then a corruption.

Each is wrong in one region of the configuration space only, so that the
search has to find that region and shrink into it. Usable from the command
line too: ``passgate vulkan --pass tests/data/vulkan_vendor_passes.py:IgnoresAlpha --ops q8ta_add``.
"""

from __future__ import annotations

import torch
from executorch.backends.vulkan._passes.fuse_patterns import FusePatternsPass
from executorch.exir.pass_base import PassResult

from vulkan.judging.tolerance import op_short

FUSE_PATTERNS = "fuse-patterns"


def _store(ep, node):
    """(dict, key) holding a lifted constant placeholder's tensor, or None."""
    sig = ep.graph_signature
    for table in (sig.inputs_to_parameters, sig.inputs_to_buffers, sig.inputs_to_lifted_tensor_constants):
        if getattr(node, "name", None) in table:
            key = table[node.name]
            store = ep.state_dict if key in ep.state_dict else ep.constants
            return (store, key) if key in store else None
    return None


def _set(store, key, value):
    old = store[key]
    store[key] = torch.nn.Parameter(value, requires_grad=False) if isinstance(old, torch.nn.Parameter) else value


def _fused_nodes(gm, name: str):
    return [n for n in gm.graph.nodes if n.op == "call_function" and name in str(n.target)]


class AsymmetricWeightsWrong(FusePatternsPass):
    """Declines asymmetric weights, as it must, but drops their zero points while at it.

    Symmetric weights go through ExecuTorch's fusion untouched; a weight
    dequantize whose zero points are not all 0 is left unfused with its
    zero points set to 0: right op count, wrong numbers, for asymmetric
    weights only.
    """

    passgate_vulkan_mode = FUSE_PATTERNS
    _ZP_ARG = {"dequantize_affine": 3, "dequantize_per_channel": 2}

    def _asymmetric_zero_points(self, gm) -> list:
        ep, found = self._exported_program, []
        for n in gm.graph.nodes:
            i = self._ZP_ARG.get(op_short(n.target)) if n.op == "call_function" else None
            if i is None or len(n.args) <= i or _store(ep, n.args[0]) is None:
                continue
            zp = _store(ep, n.args[i]) if isinstance(n.args[i], torch.fx.Node) else None
            if zp is not None and bool((zp[0][zp[1]] != 0).any()):
                found.append(zp)
        return found

    def call(self, graph_module):
        asym = self._asymmetric_zero_points(graph_module)
        if not asym:
            return super().call(graph_module)
        for store, key in asym:
            _set(store, key, torch.zeros_like(store[key]))
        return PassResult(graph_module, True)


class OutputChannelsWrong(FusePatternsPass):
    """ExecuTorch's fusion, then weight scales x 1.05 on every fused conv/linear whose output channels % 4 != 0."""

    passgate_vulkan_mode = FUSE_PATTERNS

    def call(self, graph_module):
        out = super().call(graph_module)
        ep = self._exported_program
        for node in _fused_nodes(out.graph_module, "et_vk."):
            val = node.meta.get("val")
            if not isinstance(val, torch.Tensor) or val.dim() < 2:
                continue
            channels = val.shape[1] if "conv" in str(node.target) else val.shape[-1]
            if channels % 4 == 0:
                continue
            names = [a.name for a in node.target._schema.arguments]
            if "weight_scales" in names and names.index("weight_scales") < len(node.args):
                found = _store(ep, node.args[names.index("weight_scales")])
                if found is not None:
                    _set(found[0], found[1], found[0][found[1]].detach() * 1.05)
        return out


class FixedAlphaFusion(FusePatternsPass):
    """ExecuTorch's fusion with ``alpha`` carried over: the edge graph keeps ``add(..., alpha=k)`` as a keyword,
    which ``QuantizedBinaryMatch`` (reading ``args[2]``) never sees; this copies it onto ``et_vk.q8ta_add``."""

    passgate_vulkan_mode = FUSE_PATTERNS

    def call(self, graph_module):
        alphas = [n.kwargs.get("alpha", n.args[2] if len(n.args) > 2 else 1.0) for n in graph_module.graph.nodes
                  if n.op == "call_function" and "aten.add" in str(n.target)]
        out = super().call(graph_module)
        for node, alpha in zip(_fused_nodes(out.graph_module, "q8ta_add"), alphas):
            node.update_arg(8, float(alpha))
        out.graph_module.recompile()
        return out


class IgnoresAlpha(FixedAlphaFusion):
    """The fixed fusion above, then every ``et_vk.q8ta_add``'s alpha reset to 1: the keyword ignored."""

    def call(self, graph_module):
        out = super().call(graph_module)
        for node in _fused_nodes(out.graph_module, "q8ta_add"):
            node.update_arg(8, 1.0)
        out.graph_module.recompile()
        return out



_CARRIED = ("stack_trace", "nn_module_stack", "debug_handle")


class CarriesFusedMeta(FusePatternsPass):
    """ExecuTorch's fusion, then each node it made given the source metadata of the op it replaced.

    What a fusion should do and FusePatternsPass does not (executorch 1.5.1's
    fused nodes carry no stack trace, module stack or debug handle): the
    control for :class:`DropsFusedStackTrace`. The donor is a removed node,
    the anchor op (not a quantize / dequantize) first.
    """

    passgate_vulkan_mode = FUSE_PATTERNS

    def call(self, graph_module):
        before = [(n.name, "quantize" in str(n.target), {k: n.meta.get(k) for k in _CARRIED})
                  for n in graph_module.graph.nodes if n.op == "call_function"]
        out = super().call(graph_module)
        now = {n.name for n in out.graph_module.graph.nodes}
        # the removed nodes, the anchor op (not a Q/DQ) first
        removed = sorted(((qdq, meta) for name, qdq, meta in before if name not in now), key=lambda r: r[0])
        for node in out.graph_module.graph.nodes:
            for key in _CARRIED if node.op == "call_function" else ():
                donor = next((m[key] for _, m in removed if m[key] not in (None, "", {})), None)
                if node.meta.get(key) in (None, "", {}) and donor is not None:
                    node.meta[key] = donor
        return out


class DropsFusedStackTrace(CarriesFusedMeta):
    """The fusion above, then ``stack_trace`` dropped from every fused ``et_vk`` node: right numbers, lost metadata."""

    def call(self, graph_module):
        out = super().call(graph_module)
        for node in _fused_nodes(out.graph_module, "et_vk."):
            node.meta.pop("stack_trace", None)
        return out
