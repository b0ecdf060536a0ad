"""The pass pipelines ExecuTorch 1.5.1 runs, in its order, as :class:`harness.pipelines.pipeline.Pipeline`.

Each list mirrors one upstream source; when upstream reorders its passes,
this file is what changes (the ``source`` field says where to look):

- ``vulkan``: ``VulkanBackend.preprocess`` (backends/vulkan/vulkan_preprocess.py),
  with default compile options, verified as upstream verifies it (``_any_op``);
- ``xnnpack``: ``XNNPACKPassManager``'s default list (backends/xnnpack/_passes/__init__.py),
  each pass built the way its ``transform()`` builds it;
- ``to_executorch``: ``EdgeProgramManager.to_executorch`` with the default
  ``ExecutorchBackendConfig`` (exir/program/_program.py), up to memory planning.

The engine finds them through the ``passgate.pipelines`` entry point group
(pyproject.toml registers each function by its pipeline name), never by
importing this module.
"""

from __future__ import annotations

from functools import partial

from harness.catalog import Build, EntryFactory
from harness.pipelines.pipeline import Pipeline, Step

__all__ = ["vulkan", "xnnpack", "to_executorch", "vulkan_verifiers", "vulkan_memory_planning"]

BT = "executorch.backends.transforms"
VK = "executorch.backends.vulkan._passes"
XN = "executorch.backends.xnnpack._passes"
EX = "executorch.exir.passes"


def _step(spec: str, build: Build = Build(), name: str = "", semantics: str | None = None) -> Step:
    return Step(name or spec.rpartition(":")[2], EntryFactory(spec, build), semantics)


def vulkan_verifiers() -> list:
    """The verifier ``vulkan_preprocess`` installs on every program its passes return."""
    from executorch.backends.vulkan.vulkan_preprocess import _any_op

    return [_any_op]


def vulkan_memory_planning(graph_module):
    """``MemoryPlanningPass.run`` exactly as ``VulkanBackend.preprocess`` calls it."""
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite, greedy
    from executorch.exir.passes import MemoryPlanningPass

    graph_module.encounter_to_out_var_failure = True
    suite = MemoryPlanningAlgorithmSuite(algo_list=[partial(greedy, allow_overlapping_allocations=False)])
    return MemoryPlanningPass(memory_planning_algo=suite).run(graph_module)


def vulkan() -> Pipeline:
    from executorch.backends.vulkan.serialization.vulkan_graph_schema import VkMemoryLayout, VkStorageType
    from executorch.backends.vulkan.utils import DEFAULT_TEXTURE_LIMITS

    tag = Build("call", (tuple(DEFAULT_TEXTURE_LIMITS),), (
        ("default_storage_type", VkStorageType.TEXTURE_3D),
        ("default_memory_layout", VkMemoryLayout.TENSOR_WIDTH_PACKED),
        ("force_fp16", False),
    ))
    steps = (
        _step("torch.export._remove_auto_functionalized_pass:unsafe_remove_auto_functionalized_pass",
              Build("program_function")),
        _step(f"{BT}.addmm_mm_to_linear:AddmmToLinearTransform"),
        _step(f"{XN}.fuse_batch_norm:FuseBatchNormPass", Build("program")),
        _step(f"{BT}.addmm_mm_to_linear:AddmmToLinearTransform", name="AddmmToLinearTransform#2"),
        _step(f"{VK}.insert_dtype_promotion:InsertDtypePromotionPass"),
        _step(f"{VK}.fuse_patterns:FusePatternsPass", Build("program_attr")),
        _step(f"{BT}.fuse_conv_with_clamp:FuseClampPass"),
        _step(f"{VK}.remove_redundant_ops:RemoveRedundantOpsTransform"),
        _step(f"{VK}.fuse_quantized_ops:FuseQuantizedOpsTransform", Build("program_attr")),
        _step(f"{VK}.fold_qdq:FoldQDQPass"),
        _step(f"{VK}.squeeze_unsqueeze_inputs:SqueezeUnsqueezeInputs"),
        _step(f"{BT}.fuse_view_copy:FuseViewCopyTransform"),
        _step(f"{BT}.view_copy_to_squeeze_unsqueeze:ViewCopyToSqueezeUnsqueezePass"),
        _step("harness.pipelines.pipeline:SpecPropWithPlaceholders", name="SpecPropPass"),
        _step(f"{VK}.remove_asserts:RemoveAssertsTransform"),
        _step(f"{VK}.insert_prepack_nodes:insert_prepack_nodes", Build("program_function")),
        _step(f"{VK}.tag_memory_meta_pass:TagMemoryMetaPass", tag),
        _step(f"{EX}.sym_shape_eval_pass:ConstraintBasedSymShapeEvalPass"),
        _step("passes.pipelines:vulkan_memory_planning", Build("graph_function"), name="MemoryPlanningPass"),
    )
    return Pipeline("vulkan", steps, "edge", "VulkanBackend.preprocess, default compile options",
                    "executorch/backends/vulkan/vulkan_preprocess.py", verifiers=vulkan_verifiers)


def xnnpack() -> Pipeline:
    prog = Build("program")
    steps = (
        _step(f"{XN}:XNNPACKRemoveCloneOpsTransform"),
        _step(f"{EX}.memory_format_ops_pass:DimOrderOpsRevertPass"),
        _step(f"{XN}.convert_to_upsample_bilinear2d:ConvertToUpsampleBilinear2d", prog),
        _step(f"{XN}.convert_to_linear:ConvertToLinearPass"),
        _step(f"{XN}.propagate_custom_meta_pass:PropagateCustomMetaPass", prog),
        _step(f"{XN}.convert_to_sdpa:ConvertToSDPAPass", prog),
        _step(f"{EX}.const_prop_pass:ConstPropPass"),
        _step(f"{XN}.fuse_batch_norm:FuseBatchNormPass", prog),
        _step(f"{XN}.decompose_batch_norm:DecomposeBatchNorm", prog),
        # records the activation in its producer's metadata for the XNNPACK serializer and drops the node: the
        # graph's own meaning loses the activation, as its catalog entry declares (the only such step)
        _step(f"{XN}.fuse_activation_pass:FuseActivationPass", prog, semantics="changing"),
        _step(f"{XN}.decompose_cat:DecomposeConcatenate"),
        _step(f"{BT}.remove_getitem_op:RemoveGetItemPass"),
        _step(f"{XN}.insert_pad_qdq:InsertPadQDQPass", prog),
        _step(f"{XN}.conv1d_unsqueeze_pass:Conv1dUnsqueezePass", prog),
        _step(f"{XN}.prelu_reshape_pass:PReLUReshapePass", prog),
        _step(f"{XN}.channels_last_tagged_reshape_pass:ChannelsLastTaggedReshapePass", prog),
        _step(f"{XN}.remove_redundant_copy_pass:RemoveRedundantCopyPass", prog),
    )
    return Pipeline("xnnpack", steps, "edge", "XNNPACKPassManager default pass list",
                    "executorch/backends/xnnpack/_passes/__init__.py")


def to_executorch() -> Pipeline:
    steps = (
        _step(f"{EX}.weights_to_outputs_pass:weights_to_outputs_pass", Build("program_function")),
        _step("torch.export._remove_auto_functionalized_pass:unsafe_remove_auto_functionalized_pass",
              Build("program_function")),
        _step(f"{EX}.legalize_portable_dim_order_pass:LegalizePortableDimOrderPass"),
        _step("harness.pipelines.pipeline:SpecPropWithPlaceholders", name="SpecPropPass"),
        _step(f"{EX}.propagate_device_pass:PropagateDevicePass"),
        _step(f"{EX}.replace_edge_with_backend_pass:EdgeToBackendOpsPass"),
        _step(f"{EX}.remove_graph_asserts_pass:RemoveGraphAssertsPass"),
        _step(f"{EX}.normalize_view_copy_base_pass:NormalizeViewCopyBasePass"),
        _step(f"{EX}:dead_code_elimination_pass", Build("graph_function")),
        _step(f"{EX}.replace_view_copy_with_view_pass:ReplaceViewCopyWithViewPass"),
        _step(f"{EX}.sym_shape_eval_pass:ConstraintBasedSymShapeEvalPass"),
        _step(f"{EX}:ToOutVarPass"),
    )
    return Pipeline("to_executorch", steps, "edge", "EdgeProgramManager.to_executorch, default config",
                    "executorch/exir/program/_program.py (edge_to_executorch_passes)")


