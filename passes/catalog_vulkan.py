"""Catalog of ``executorch.backends.vulkan._passes``: the Vulkan backend's preprocessing passes.

Built the way ``VulkanBackend.preprocess`` builds them: passes that read
``self._exported_program`` get the program assigned before they run
(``Build("program_attr")``), ``TagMemoryMetaPass`` gets the default texture
limits, storage type and memory layout, and the passes that come after
``SpecPropPass`` in the preprocessing run after it here too. Their output
holds ``et_vk`` ops, which Vulkan verifies with its own "any op" verifier, not
the edge verifier: where the edge verifier rejects them, that is recorded as
``by-design``. The Q/DQ fusions (``FusePatternsPass``, ``FuseQuantizedOpsTransform``,
``FoldQDQPass``) run on quantized graphs; numerics of the fused ops are the
Vulkan conformance suite's job (``passgate vulkan``), the IR checks are this one's.
``TagMemoryMetaPass`` has one entry per storage / layout / fp16 compile
option (``TagMemoryMetaPass[buffer]``, ...; the table is in :mod:`passes.catalog`).
"""

from __future__ import annotations

from harness.catalog import Build, Catalog, Config, entry, known
from passes.prerequisites import ADDMM_TO_LINEAR, SPEC_PROP

__all__ = ["CATALOGS"]

C = "vulkan"
P = "executorch.backends.vulkan._passes"
_ET_VK = ("emits et_vk custom ops; VulkanBackend.preprocess verifies its passes with an 'any op' verifier "
          "(vulkan_preprocess._any_op), the edge verifier rejects them")


def _tag_memory(storage: str = "TEXTURE_3D", layout: str = "TENSOR_WIDTH_PACKED", force_fp16: bool = False) -> Build:
    """TagMemoryMetaPass as ``VulkanBackend.preprocess`` builds it from its compile options
    (``storage_type_override``, ``memory_layout_override``, ``force_fp16``; default texture limits)."""
    from executorch.backends.vulkan.serialization.vulkan_graph_schema import VkMemoryLayout, VkStorageType
    from executorch.backends.vulkan.utils import DEFAULT_TEXTURE_LIMITS

    return Build("call", (tuple(DEFAULT_TEXTURE_LIMITS),), (
        ("default_storage_type", VkStorageType[storage]),
        ("default_memory_layout", VkMemoryLayout[layout]),
        ("force_fp16", force_fp16),
    ), after=(SPEC_PROP,))


# the Vulkan compile options TagMemoryMetaPass reads (small_texture_limits is left out: no tensor of the corpus
# comes near 2048 texels along an axis, so it would build the same program as the default limits)
_TAG_MEMORY_CONFIGS = {
    "buffer": Config(_tag_memory(storage="BUFFER"),
                     contract="storage_type_override=BUFFER: every tensor defaults to buffer storage"),
    "texture_2d": Config(_tag_memory(storage="TEXTURE_2D"),
                         contract="storage_type_override=TEXTURE_2D: tensors default to 2D textures"),
    "channels_packed": Config(_tag_memory(layout="TENSOR_CHANNELS_PACKED"),
                              contract="memory_layout_override=TENSOR_CHANNELS_PACKED"),
    "fp16": Config(_tag_memory(force_fp16=True),
                   contract="force_fp16=True: arguments constrained to texture storage, as for fp16 execution"),
}


def _e(spec: str, **kw):
    return entry(C, f"{P}.{spec}", **kw)


ENTRIES = (
    _e("fold_qdq:FoldQDQPass", stage="quantized-edge",
       contract="erases the Q/DQ chains left once every quantized pattern is fused"),
    _e("fuse_patterns:FusePatternsPass", stage="quantized-edge", build=Build("program_attr"), slow=True,
       contract="matches the Vulkan pattern registry (quantized linear/conv, rotary, SDPA, ...) and fuses to et_vk ops",
       known=(known("runnable", "the decode position input_pos[-1].item() becomes et_vk.select_as_symint, which "
                    "custom_ops_lib registers for Meta only (a value the Vulkan runtime reads): the fused program "
                    "cannot run on CPU. Behind it, et_vk.linear_q8ta_q8csw (st_lin) is handed the int8 quantized "
                    "activation, which its float-activation CPU reference cannot multiply (see the "
                    "linear_q8ta_q8csw triage rule)", "backends/vulkan/custom_ops_lib.py (select_as_symint)",
                    graphs=("targeted_vulkan_patterns",), kind="by-design"),)),
    _e("fuse_quantized_ops:FuseQuantizedOpsTransform", stage="quantized-edge",
       build=Build("program_attr", after=(ADDMM_TO_LINEAR,)),
       # matches only aten.linear (to_edge leaves permute_copy + addmm / mm; VulkanBackend.preprocess runs
       # AddmmToLinearTransform first) with a float activation and a dequantize_per_channel int8 weight:
       # the weight-only quantized linears of targeted_quant_weight_only
       contract="dequant -> linear patterns with channelwise/groupwise weights -> et_vk quantized linear"),
    _e("insert_dtype_promotion:InsertDtypePromotionPass",
       contract="_to_copy before binary ops whose inputs differ in dtype",
       # acts on a mixed-dtype comparison (torch.gt(int32, float32)): the mixed_dtype_compare rule draws them
       known=(known("verifier", "casts with aten._to_copy, which the edge verifier rejects in dim-order mode (the "
                    "default of to_edge); Vulkan verifies with its 'any op' verifier", kind="by-design"),
              known("meta_stack_trace", "the _to_copy nodes it creates get only meta['val']: no stack_trace",
                    "backends/vulkan/_passes/insert_dtype_promotion.py (InsertDtypePromotionPass.call)"),
              known("meta_nn_module_stack", "likewise: the _to_copy nodes carry no nn_module_stack",
                    "backends/vulkan/_passes/insert_dtype_promotion.py (InsertDtypePromotionPass.call)"))),
    _e("insert_prepack_nodes:insert_prepack_nodes", build=Build("program_function", after=(SPEC_PROP,)),
       contract="constant tensors get et_vk.prepack nodes (after SpecPropPass, as in preprocess)",
       known=(known("verifier", _ET_VK, kind="by-design"),)),
    _e("remove_asserts:RemoveAssertsTransform", contract="removes assertion ops (GLSL cannot abort)"),
    _e("remove_asserts:remove_asserts", build=Build("program_function"),
       contract="removes assertion ops and their range constraints"),
    _e("remove_redundant_ops:RemoveRedundantOpsTransform", contract="trims no-op clones, aliases and copies"),
    _e("squeeze_unsqueeze_inputs:SqueezeUnsqueezeInputs",
       contract="squeezes/unsqueezes inputs of ops the Vulkan kernels need in another rank"),
    _e("tag_memory_meta_pass:TagMemoryMetaPass", build=_tag_memory(), configs=_TAG_MEMORY_CONFIGS,
       contract="tags tensor storage/layout for the Vulkan kernels and inserts transitions"),
)

CATALOGS = (Catalog(C, (P,), ENTRIES, "the Vulkan backend's preprocessing passes"),)
