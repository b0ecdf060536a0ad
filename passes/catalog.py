"""passgate's own pass catalogs: every graph pass ExecuTorch ships, made runnable, each with its contract.

The catalogs are the ``catalog_*`` modules (one per upstream package or
backend), written with the engine's types (:mod:`harness.catalog`). The
engine knows them only through the ``passgate.catalogs`` entry point group,
where pyproject.toml registers :func:`builtin_catalogs` as ``passgate``;
third parties register theirs beside it.

This module imports neither torch nor executorch at import time; the
per-backend ``catalog_*`` modules it loads do. The comment block below is the
table of every pass whose constructor takes parameters and the
configurations (``Name[config]`` entries) the catalogs give it, or why none.
"""

from __future__ import annotations

import importlib

from harness.catalog import Catalog

__all__ = ["BUILTIN_MODULES", "builtin_catalogs"]

# Parameterized passes and their configurations: ``Name[config]`` entries beside the default construction,
# which keeps the bare ``Name``. Found with inspect.signature over every runnable entry; a configuration is
# added where a graph of the corpus reaches the code the argument changes. "ep" = the ExportedProgram.
# Format: Pass(parameters) -> configurations added; why none for the rest.
#
# -- exir ---------------------------------------------------------------------------------------------------
# DebugPass(msg, enable_debug_pass, show_src, show_full_path, show_all_frames, path_filter, show_spec,
#           log_filename)
#     -> default enable_debug_pass=False; [enabled]: printing on with show_src, show_all_frames, show_spec.
#        msg / show_full_path / path_filter only format the log; log_filename writes outside --report.
# ToOutVarPass(ignore_to_out_var_failure) -> [ignore_missing] on quantized graphs (Q/DQ lack out variants).
# ConstPropPass(propogate_quant) -> none: on lifted programs every argument is a FakeTensor, so neither
#     setting folds anything in the corpus (the default construction is unexercised too).
# constant_prop_pass(ep, custom_skip_targets, _skip_dim_order) -> [fold_quant] (Samsung's skip set, on
#     quantized graphs); _skip_dim_order only matters for constant graph outputs: none in the corpus.
# external_constants_pass(gm, gen_tag_fn) -> [gen_tag_fn]; both after SpecPropPass, where to_executorch runs
#     them (without meta['spec'] nothing is tagged).
# InitializedMutableBufferPass(patterns) -> none: ['running_', 'cache'] matches; other lists run the same code.
# MemoryPlanningPass(memory_planning_algo, allow_lifetime_and_storage_overlap, alloc_graph_input,
#                    alloc_graph_output, alloc_mutable_buffers, share_mutable_buffers, alignment)
#     -> [naive], [overlap], [no_io_alloc]; [no_mutable_alloc], [share_mutable] on buffer_mutation graphs
#        (zoo llama_decoder, et_llama: full profile); alignment only moves offsets.
# PropagateDevicePass(skip_h2d_for_method_inputs, skip_d2h_for_method_outputs,
#                     enable_non_cpu_memory_planning)
#     -> [device_copies] (copies on), [skip_io_copies] (all three on: the skips need the copies on); each after
#        delegating the adds to a cuda:0 device (passes.prerequisites.DelegateAddsToDevice).
# QuantFusionPass(_fix_node_meta_val, node_value_dict) -> [fix_meta_val]; both together are
#     quant_fusion_and_const_prop_pass, an entry of its own.
# reinplace_pass(ep, ops_to_inplace, inplace_overrides) -> [elementwise] (the default set, index_put, is in
#     no graph); inplace_overrides are for backend-fused in-place ops, none in the corpus.
# ToDevicePass(device) -> none: CPU is the only device here.
# -- transforms ---------------------------------------------------------------------------------------------
# ConvertDtypePass(src_dtype, dst_dtype, _skip_dim_order) -> default [i64_to_i32]; [i32_to_i64] (after
#     I64toI32: no graph has int32 of its own), [i64_to_i32_aten_copy], [f32_to_f16], [f16_to_f32] (the
#     random graphs' float16: full profile).
# I64toI32(_skip_dim_order) -> [aten_copy].
# DecomposeScaledDotProductAttention(allow_non_fake_inputs) -> [no_fake_inputs] on attention graphs; the
#     argument is never read (reports/upstream/repro_decompose_sdpa_ignores_allow_non_fake_inputs.py).
# ConvertConv1dToConv2dPass(ep, graph_local_weight_targets) -> [dequantized_weights] on conv1d graphs.
# QuantizeFusedConvBnBiasAtenPass(ep, default_zero_bias, symmetric_quant) -> [zero_bias], [symmetric]; they
#     act on targeted_quant_convbn (handed over as_lowered): in every other case the fused bias is a keyword
#     argument, which the pass does not read (reports/upstream/repro_quantize_fused_convbn_bias_pass.py).
# RemoveCloneOpsTransform(preserve_input_output_copies, eliminate_quant_dequant_pairs) -> [quantized] (the
#     default flags where the Q/DQ flag matters), [keep_qdq] (Cadence's); preserve_input_output_copies=True
#     is xnnpack.XNNPACKRemoveCloneOpsTransform, an entry of its own.
# CanonicalizeViewCopyPermutePass(permute_targets) -> none: backend-dialect permutes; the corpus has only
#     permute_copy (likewise permute_targets of the passes below).
# FuseDuplicateUsersPass(excluded_targets) -> none: no ExecuTorch caller passes exclusions.
# NormalizeTransformInputPlaceholdersPass(ep=None, permute_targets) -> none: without ep it returns at once.
# FuseIdenticalInputTransformsPass(ep=None, permute_targets) -> none: no graph has identical transforms of
#     one input (the default is unexercised), the only case where ep=None differs.
# PropagateViewCopyPermuteUpPass / DownPass(compile_spec, ep, permute_targets) -> none: compile_spec and ep
#     are stored and never read.
# RemovePermutesAroundElementwiseOps(extra_permutable_ops) -> none: no permute pair around another op.
# ReplaceOpsWithChannelsLastVariants(ep, op_map) -> none: a custom op_map only narrows the default table.
# ReplaceScalarWithTensorArgPass(scalar_to_tensor_ops) -> none: a custom map runs the same rewrite.
# AtenToDialectPass(ep), FuseBatchNormWithConvPass(ep) -> none: only the program.
# -- vulkan -------------------------------------------------------------------------------------------------
# TagMemoryMetaPass(texture_limits, default_storage_type, default_memory_layout, force_fp16)
#     -> [buffer], [texture_2d], [channels_packed], [fp16] (VulkanBackend compile options);
#        small_texture_limits: no tensor of the corpus comes near 2048 texels.
# -- xnnpack: every parameterized pass takes only ep (ChannelsLastTaggedReshapePass, FuseActivationPass, ...)
# -- qualcomm -----------------------------------------------------------------------------------------------
# AnnotateQuantAttrs(ep, skip_advanced_requant) -> [skip_advanced_requant].
# FoldQDQ(ep, force_fold) -> [force_fold]; LayoutTransform(ep, insert_permute) -> [insert_permute]
#     (both as QnnPassManager.transform_for_preprocess_pipeline builds them).
# RemoveRedundancy(quantization_capture) -> [annotation] (export stage, every graph).
# TagQuantIO(get_quant_io_dtype_fn) -> [uint8_io].
# DecomposeLinalgVectorNorm, DecomposeMaxPool3d, RecomposePixelUnshuffle, RecomposeRmsNorm
#     (quantization_capture) -> none: no vector_norm, max_pool3d, pixel_unshuffle or rms_norm in the corpus.
# Remove0DTensor, ReplaceArangeArgs(quantization_capture) -> none: the argument is ignored.
# ConvertMhaToSha(ep, verbose) -> none: verbose only logs.
# I64toI32(ep, skip_node) -> none: no caller passes skip_node; it only exempts nodes from the cast.
# LpaiPartitionFallbackSupport(ep, compiler_specs, skip_node_id_set, skip_node_op_set) -> none: with
#     compiler specs it asks QnnOperatorSupport, which needs the QNN SDK (PyQnnManager).
# AnnotateAvgPool1D, AnnotateGetAttr, AnnotateStack, AnnotateUnbind, CanonicalizeConv, ... (ep) -> none.
# -- samsung: ep only (AnnotateQparamsPass, ConstantPropPass, InsertQDQPass, ...): none
# -- cadence ------------------------------------------------------------------------------------------------
# CadenceToOutVarPass(ignore_to_out_var_failure) -> [ignore_missing] on quantized graphs.
# Generate{CatNop,MemoryView,SliceAndSelectNop,Idma}Constraints(constraint: MemConstraints(mode,
#     alloc_graph_input, alloc_graph_output)) -> none: they only record into the MemConstraints object,
#     the program is the same whatever its settings.
# AdvanceQuantizeOpAboveDefChainPass(extra_quantizable_ops) -> none: Cadence-specific ops, not in the corpus.
# -- misc, nxp: no constructor parameters

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
