"""Catalog of ``executorch.backends.xnnpack._passes``: the XNNPACK backend's preprocessing passes.

Each is built the way ``XNNPACKPassManager.transform`` builds it: an
``XNNPACKPass`` subclass gets the program, a plain ``ExportPass`` no
arguments. Several rewrite the graph for the XNNPACK serializer rather than
for CPU execution (``FuseActivationPass`` moves the activation into node
metadata; ``ChannelsLastTaggedReshapePass`` tags layouts): those are declared
meaning-changing or carry ``by-design`` known failures, each with the reason.
"""

from __future__ import annotations

from harness.catalog import Build, Catalog, entry, known

__all__ = ["CATALOGS"]

C = "xnnpack"
P = "executorch.backends.xnnpack._passes"
PROG = Build("program")
_MUTATES = ("mutates the graph module it is handed, then returns the copy ExportPass.call retraces: the "
            "caller's program changes too, although EdgeProgramManager.transform documents that it returns "
            "'a copy'")


def _e(spec: str, **kw):
    return entry(C, f"{P}{spec}", **kw)


ENTRIES = (
    _e(":XNNPACKRemoveCloneOpsTransform", contract="removes clones, keeping those on graph inputs/outputs"),
    _e(".channels_last_tagged_reshape_pass:ChannelsLastTaggedReshapePass", build=PROG,
       contract="NHWC-tagged copies around ops XNNPACK runs channels-last (internal to XNNPACK preprocess)",
       known=(known("meta_stack_trace", "the _to_copy layout nodes it inserts carry no stack_trace",
                    "backends/xnnpack/_passes/channels_last_tagged_reshape_pass.py", graphs=("conv",)),
              known("meta_nn_module_stack", "the inserted _to_copy nodes carry no nn_module_stack",
                    "backends/xnnpack/_passes/channels_last_tagged_reshape_pass.py", graphs=("conv",)),
              known("input_unchanged", _MUTATES, graphs=("conv",)))),
    _e(".conv1d_unsqueeze_pass:Conv1dUnsqueezePass", build=PROG, contract="conv1d -> unsqueeze, conv2d, squeeze"),
    _e(".convert_to_linear:ConvertToLinearPass", contract="addmm/mm with a permuted weight -> linear",
       known=(known("verifier", "emits aten.linear (not core ATen): the default edge verifier rejects it; "
                    "XNNPACK runs it on its delegated subgraph", kind="by-design"),
              known("meta_stack_trace", "the linear nodes it creates carry no stack_trace",
                    "backends/xnnpack/_passes/convert_to_linear.py", graphs=("linear",)),
              known("meta_nn_module_stack", "the linear nodes carry no nn_module_stack",
                    "backends/xnnpack/_passes/convert_to_linear.py", graphs=("linear",)),
              known("input_unchanged", _MUTATES))),
    _e(".convert_to_sdpa:ConvertToSDPAPass", build=PROG, contract="attention patterns -> scaled_dot_product_attention"),
    _e(".convert_to_upsample_bilinear2d:ConvertToUpsampleBilinear2d", build=PROG,
       contract="decomposed bilinear upsampling -> upsample_bilinear2d"),
    _e(".decompose_batch_norm:DecomposeBatchNorm", build=PROG, contract="standalone batch norm -> 1x1 depthwise conv"),
    _e(".decompose_cat:DecomposeConcatenate", contract="cat of more than 5 tensors -> nested cats"),
    _e(".fuse_activation_pass:FuseActivationPass", build=PROG, semantics="changing",
       contract="relu/hardtanh after conv/linear/add moves into node metadata for the XNNPACK serializer: "
                "the CPU meaning of the graph drops the activation (hence declared meaning-changing)"),
    _e(".fuse_batch_norm:FuseBatchNormPass", build=PROG, contract="batch norm folded into the preceding conv/linear"),
    _e(".insert_pad_qdq:InsertPadQDQPass", stage="quantized-edge", build=PROG,
       contract="Q/DQ pairs after constant_pad_nd in quantized context",
       known=(known("val_matches_execution", "the quantize node it inserts copies the pad's meta "
                    "(q.meta = node.meta.copy()): its meta['val'] says float32, it returns int8",
                    "backends/xnnpack/_passes/insert_pad_qdq.py (InsertPadQDQPass.call)"),)),
    _e(".prelu_reshape_pass:PReLUReshapePass", build=PROG, contract="PReLU weights reshaped for XNNPACK"),
    _e(".propagate_custom_meta_pass:PropagateCustomMetaPass", build=PROG,
       contract="node.meta['custom'] copied from producers to their Q/DQ nodes"),
    _e(".remove_noop_expand_copy_pass:RemoveNoopExpandCopyPass", contract="removes expand_copy that changes nothing"),
    _e(".remove_redundant_copy_pass:RemoveRedundantCopyPass", build=PROG,
       contract="removes back-to-back layout copies"),
    _e(".xnnpack_pass:XNNPACKPass", build=PROG,
       contract="the base of XNNPACK passes: its call() must leave the graph as it was"),
)

CATALOGS = (Catalog(C, (P,), ENTRIES, "the XNNPACK backend's preprocessing passes"),)
