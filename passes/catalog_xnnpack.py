"""Catalog of ``executorch.backends.xnnpack._passes``: the XNNPACK backend's preprocessing passes.

Each is built the way ``XNNPACKPassManager.transform`` builds it: an
``XNNPACKPass`` subclass gets the program, a plain ``ExportPass`` no
arguments. Several rewrite the graph for the XNNPACK serializer rather than
for CPU execution (``FuseActivationPass`` moves the activation into node
metadata; ``ChannelsLastTaggedReshapePass`` tags layouts): those are declared
meaning-changing or carry ``by-design`` known failures, each with the reason.
"""

from __future__ import annotations

from harness.catalog import Build, Catalog, Config, entry, known
from passes.prerequisites import DCE

__all__ = ["CATALOGS"]

C = "xnnpack"
P = "executorch.backends.xnnpack._passes"
PROG = Build("program")
# The cases' edge programs come from a serialize/deserialize round trip, whose deserializer gives every result of a
# multi-output node a getitem, the unused ones too (<node>_unused_1, ...); the programs XNNPACK's preprocess hands
# its passes (to_edge, then partitioning) have none. The batch-norm passes require getitem(0) to be the only user.
PROG_LIVE = Build("program", after=(DCE,))
# RemoveRedundantCopyPass removes pairs of aten._to_copy layout copies tagged XNN_NHWC_NODE: an edge program in
# dim-order mode (to_edge's default, every case) has none until DimOrderOpsRevertPass turns its
# _to_dim_order_copy nodes back into _to_copy and ChannelsLastTaggedReshapePass inserts the tagged copies, both
# run before it in XNNPACKPassManager; so does this entry.
PROG_NHWC = Build("program", after=("executorch.exir.passes.memory_format_ops_pass:DimOrderOpsRevertPass",
                                    f"{P}.channels_last_tagged_reshape_pass:ChannelsLastTaggedReshapePass"))
_MUTATES = ("mutates the graph module it is handed, then returns the copy ExportPass.call retraces: the "
            "caller's program changes too, although EdgeProgramManager.transform documents that it returns "
            "'a copy'")
_LAYOUT_GRAPH = "targeted_layout_bn"  # the hand-written conv1d / batch-norm / layout graph


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
              known("input_unchanged", _MUTATES, graphs=("conv",)),
              known("runs", "expects conv1d already rewritten to conv2d: XNNPACK runs Conv1dUnsqueezePass before it "
                    "(the xnnpack pipeline runs them in that order), and alone it asserts ('Attempting to convert "
                    "non-NHWC compatible node to NHWC') on a conv1d's rank-3 input",
                    "backends/xnnpack/_passes/__init__.py (XNNPACKPassManager)", graphs=(_LAYOUT_GRAPH,),
                    kind="precondition"))),
    _e(".conv1d_unsqueeze_pass:Conv1dUnsqueezePass", build=PROG, contract="conv1d -> unsqueeze, conv2d, squeeze",
       known=(known("meta_stack_trace", "the unsqueeze before and the squeeze after each conv1d are made with "
                    "graph.create_node and no metadata", "backends/xnnpack/_passes/conv1d_unsqueeze_pass.py "
                    "(create_node)", graphs=(_LAYOUT_GRAPH,)),
              known("meta_nn_module_stack", "same cause: the unsqueeze / squeeze get no nn_module_stack",
                    "backends/xnnpack/_passes/conv1d_unsqueeze_pass.py (create_node)", graphs=(_LAYOUT_GRAPH,)),
              known("input_unchanged", _MUTATES + "; it also replaces the conv1d weights in the handed program's "
                    "state dict", graphs=(_LAYOUT_GRAPH,)))),
    _e(".convert_to_linear:ConvertToLinearPass", contract="addmm/mm with a permuted weight -> linear",
       known=(known("verifier", "emits aten.linear (not core ATen): the default edge verifier rejects it; "
                    "XNNPACK runs it on its delegated subgraph", kind="by-design"),
              known("meta_stack_trace", "the linear nodes it creates carry no stack_trace",
                    "backends/xnnpack/_passes/convert_to_linear.py", graphs=("linear", _LAYOUT_GRAPH)),
              known("meta_nn_module_stack", "the linear nodes carry no nn_module_stack",
                    "backends/xnnpack/_passes/convert_to_linear.py", graphs=("linear", _LAYOUT_GRAPH)),
              known("input_unchanged", _MUTATES))),
    _e(".convert_to_sdpa:ConvertToSDPAPass", build=PROG, contract="attention patterns -> scaled_dot_product_attention",
       # it matches to_edge's own trace of SDPA, where any.dim takes keepdim positionally: only a case in the form
       # to_edge returns (targeted_aslowered) has that, the round trip gives keepdim back as a keyword
       known=(known("verifier", "emits aten.scaled_dot_product_attention, which is not core ATen: the edge verifier "
                    "rejects it; XNNPACK runs the pass in its preprocessing, on the subgraph it delegates",
                    "backends/xnnpack/_passes/convert_to_sdpa.py", kind="by-design"),)),
    _e(".convert_to_upsample_bilinear2d:ConvertToUpsampleBilinear2d", build=PROG,
       contract="decomposed bilinear upsampling -> upsample_bilinear2d",
       known=(known("exercised", "its patterns are F.interpolate(bilinear) lowered by to_edge, which keeps "
                    "aten.upsample_bilinear2d.vec whole (core ATen): each pattern is that one node, and "
                    "create_upsample_bilinear_2d returns at once when the matched node already is "
                    "upsample_bilinear2d.vec ('Op was not decomposed, do nothing'); a hand-decomposed bilinear "
                    "never matches a one-node pattern, so it rewrites nothing on any graph",
                    "backends/xnnpack/partition/graphs/bilinear_2d.py, "
                    "backends/xnnpack/_passes/convert_to_upsample_bilinear2d.py", kind="by-design"),)),
    # after dead_code_elimination_pass: see PROG_LIVE (otherwise no batch norm of any case can be decomposed)
    _e(".decompose_batch_norm:DecomposeBatchNorm", build=PROG_LIVE, contract="standalone batch norm -> 1x1 depthwise conv",
       known=(known("numerics", "names the depthwise weight and bias after the batch norm's gamma; a batch norm "
                    "without affine parameters has none (get_tensor_name(None) is ''), so every such batch norm gets "
                    "'_decomposed_bn_weight' / '_decomposed_bn_bias', and create_constant_placeholder returns the "
                    "existing placeholder for a taken name: the second BatchNorm2d(affine=False) computes with the "
                    "first one's folded statistics (a shape error instead when the channel counts differ)",
                    "backends/xnnpack/_passes/decompose_batch_norm.py (replace_bn_node_with_conv), "
                    "backends/transforms/utils.py (create_constant_placeholder)", graphs=(_LAYOUT_GRAPH,)),
              known("meta_stack_trace", "the depthwise convolution (and the unsqueeze / squeeze around a [N, C] "
                    "input) it puts in place of a batch norm is made with graph.call_function and no metadata",
                    "backends/xnnpack/_passes/decompose_batch_norm.py", graphs=(_LAYOUT_GRAPH,)),
              known("meta_nn_module_stack", "same cause: the depthwise convolution gets no nn_module_stack",
                    "backends/xnnpack/_passes/decompose_batch_norm.py", graphs=(_LAYOUT_GRAPH,)))),
    _e(".decompose_cat:DecomposeConcatenate", contract="cat of more than 5 tensors -> nested cats"),
    _e(".fuse_activation_pass:FuseActivationPass", build=PROG, semantics="changing",
       contract="relu/hardtanh after conv/linear/add moves into node metadata for the XNNPACK serializer: "
                "the CPU meaning of the graph drops the activation (hence declared meaning-changing)"),
    # after dead_code_elimination_pass: see PROG_LIVE (otherwise no batch norm of any case can be folded)
    _e(".fuse_batch_norm:FuseBatchNormPass", build=PROG_LIVE, contract="batch norm folded into the preceding conv/linear",
       known=(known("numerics", "names the folded weight and bias after the conv's weight ('<weight>_fused_bn'); one "
                    "conv weight read by two convolutions, each followed by its own batch norm (a shared conv with a "
                    "batch norm per branch), gives both the same name, create_constant_placeholder returns the "
                    "first placeholder for it, and the second conv computes with the first batch norm folded in",
                    "backends/xnnpack/_passes/fuse_batch_norm.py (_fuse_ops), backends/transforms/utils.py "
                    "(create_constant_placeholder)", graphs=(_LAYOUT_GRAPH,)),),
       configs={"after_linear": Config(
           Build("program", after=(DCE, f"{P}.convert_to_linear:ConvertToLinearPass")), applies_to=(_LAYOUT_GRAPH,),
           contract="after ConvertToLinearPass, as XNNPACKPassManager runs it: to_edge decomposed the linears into "
                    "addmm / mm, which it does not fold into; made aten.linear again, a batch norm after one (with or "
                    "without a bias) folds into it")}),
    _e(".insert_pad_qdq:InsertPadQDQPass", stage="quantized-edge", build=PROG,
       contract="Q/DQ pairs after constant_pad_nd in quantized context",
       known=(known("val_matches_execution", "the quantize node it inserts copies the pad's meta "
                    "(q.meta = node.meta.copy()): its meta['val'] says float32, it returns int8",
                    "backends/xnnpack/_passes/insert_pad_qdq.py (InsertPadQDQPass.call)"),)),
    _e(".prelu_reshape_pass:PReLUReshapePass", build=PROG, contract="PReLU weights reshaped for XNNPACK",
       known=(known("exercised", "acts only on aten._prelu_kernel, which to_edge decomposes (gt, mul, where) "
                    "unless told to preserve it (XNNPACK's partitioner preserves aten.prelu, not _prelu_kernel); "
                    "targeted_xnnpack_preserved is lowered with preserve_ops=[_prelu_kernel] and a 4-D parameter "
                    "weight, and there the pass finds the op but changes nothing in the program it returns: a "
                    "per-channel weight it leaves as is, and a one-slope weight it repeats per channel only by "
                    "setattr on the handed graph module under the weight placeholder's name, which nothing reads "
                    "(the program's parameters are lifted: read from state_dict through the signature)",
                    "backends/xnnpack/_passes/prelu_reshape_pass.py", kind="by-design"),)),
    _e(".propagate_custom_meta_pass:PropagateCustomMetaPass", build=PROG,
       contract="node.meta['custom'] copied from producers to their Q/DQ nodes (the annotated strict export "
                "targeted_xnnpack_custom has both)"),
    _e(".remove_noop_expand_copy_pass:RemoveNoopExpandCopyPass", contract="removes expand_copy that changes nothing",
       known=(known("input_unchanged", _MUTATES, graphs=(_LAYOUT_GRAPH,)),)),
    # after XNNPACK's dim-order revert and channels-last tagging: see PROG_NHWC
    _e(".remove_redundant_copy_pass:RemoveRedundantCopyPass", build=PROG_NHWC,
       contract="removes back-to-back layout copies",
       known=(known("verifier", "its prerequisite DimOrderOpsRevertPass reverts to _to_copy/clone with "
                    "memory_format, which the edge verifier rejects in dim-order mode; XNNPACK runs the sequence on "
                    "its own delegated subgraph", kind="by-design"),
              known("numerics", "removes every _to_copy whose input and itself are both untagged (NCHW), whatever "
                    "the copy does: after DimOrderOpsRevertPass every dtype cast is a _to_copy, so back-to-back or "
                    "lone casts (x.to(int16).to(bfloat16), x.relu().to(float16)) disappear and the output keeps the "
                    "wrong dtype", "reports/upstream/repro_xnnpack_remove_redundant_copy_drops_casts.py"),
              known("runs", "same cause: with a cast removed, the retrace hands elu an integer tensor and its "
                    "float alpha / scale arguments cannot be cast ('input_scale argument of type float')",
                    "reports/upstream/repro_xnnpack_remove_redundant_copy_drops_casts.py", graphs=("corpus_95d5c773",)),
              *(known(check, f"the _to_copy layout nodes its prerequisite ChannelsLastTaggedReshapePass inserts "
                      f"(and this pass keeps) carry no {what}",
                      "backends/xnnpack/_passes/channels_last_tagged_reshape_pass.py")
                for check, what in (("meta_stack_trace", "stack_trace"), ("meta_nn_module_stack", "nn_module_stack"),
                                    ("meta_debug_handle", "debug_handle"))))),
    _e(".xnnpack_pass:XNNPACKPass",
       unavailable="abstract base of the XNNPACK passes: it stores the ExportedProgram for its subclasses and "
                   "inherits ExportPass.call, the identity retrace"),
)

CATALOGS = (Catalog(C, (P,), ENTRIES, "the XNNPACK backend's preprocessing passes"),)
