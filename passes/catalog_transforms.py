"""Catalog of ``executorch.backends.transforms``: the passes backends share.

Most are layout and view/permute clean-ups that backends run on their
delegated subgraph; several are also run by the Vulkan and XNNPACK
preprocessing (see :mod:`passes.pipelines`). Passes that take an
optional ExportedProgram get it (``Build("program")``), as their backends
construct them. Passes with options get one entry per construction the
backends use or a graph of the corpus reaches (``Name[config]``): both
directions of ``ConvertDtypePass``, Cadence's ``RemoveCloneOpsTransform``,
NXP's QAT bias quantization, ... (the table is in :mod:`passes.catalog`).
"""

from __future__ import annotations

import torch

from harness.catalog import Build, Catalog, Config, Lazy, entry, known
from passes.prerequisites import DCE

__all__ = ["CATALOGS"]

C = "transforms"
P = "executorch.backends.transforms"
PROG = Build("program")

_MUTATES = ("mutates the graph module it is handed, then returns the copy ExportPass.call retraces: the "
            "caller's program changes too, although EdgeProgramManager.transform documents that it returns "
            "'a copy'")
_LINEAR = ("emits aten.linear, which is not core ATen: the default edge verifier rejects it; ExecuTorch runs it "
           "only on delegated subgraphs whose backend consumes linear")


def _e(spec: str, **kw):
    return entry(C, f"{P}.{spec}", **kw)


def dequantize_weight_targets():
    """``ConvertConv1dToConv2dPass(graph_local_weight_targets=...)``: conv1d weights a dequantize produces (the
    int8 weights of a quantized graph), made in the worker (edge ops do not pickle)."""
    from executorch.exir.dialects._ops import ops

    q = ops.edge.quantized_decomposed
    return (q.dequantize_per_channel.default, q.dequantize_per_tensor.default)


_I64_TO_I32 = f"{P}.convert_dtype_pass:I64toI32"
_CL_VARIANTS = f"{P}.replace_ops_with_channels_last_variants:ReplaceOpsWithChannelsLastVariants"
_DEAD_GETITEMS = ("the cases' edge programs come from a serialize/deserialize round trip, whose deserializer gives "
                  "every result of a multi-output node a getitem, the unused ones too (<node>_unused_1, ...; a "
                  "program to_edge returns has none)")
_DTYPE_REPRO = "reports/upstream/repro_convert_dtype_pass_multi_output.py"
_MULTI_OUTPUT = ("rewrites meta['val'] only of nodes whose value is one tensor: multi-output ops (native_layer_norm, "
                 "native_batch_norm, split_with_sizes_copy) and the getitems unpacking them keep float32 in "
                 "meta['val'] while they now compute float16")
_DTYPE_COPY_DIM_ORDER = ("with _skip_dim_order=True it casts with aten._to_copy, which the edge verifier rejects in "
                         "dim-order mode (the default of to_edge): only valid for programs lowered with "
                         "_skip_dim_order=True")

_LAYOUT = "targeted_layout_bn"
_LAYOUT_ONLY = (_LAYOUT,)

_BIAS_ROUNDING = known(
    "numerics", "quantizing the folded float bias to int32 (scale: input scale x weight scale) rounds it; where a "
    "conv output lies on a rounding boundary of the next quantize, the rounded bias moves it by one output "
    "quantization step (0.006 on 3 of 256 outputs of one draw), more than the 1e-4 tolerance: what running the bias "
    "in int32 on the backend gives too", "backends/transforms/quantize_fused_convbn_bias_pass.py",
    graphs=("targeted_quant_convbn",), kind="by-design")

ENTRIES = (
    _e("addmm_mm_to_linear:AddmmToLinearTransform", contract="addmm/mm (+permute of the weight) -> linear",
       known=(known("verifier", _LINEAR, kind="by-design"),)),
    _e("aten_to_dialect_pass:AtenToDialectPass",
       unavailable="base class: its substitution registry is empty (_DIALECT_SUBSTITUTIONS = {}); the passes are its "
                   "subclasses, which register ops through register_dialect_substitution (cortex_m's "
                   "AtenToCortexMPass, Arm's ExirToTosaPass)"),
    _e("canonicalize_view_copy_permute_pass:CanonicalizeViewCopyPermutePass",
       contract="view_copy that only permutes -> permute_copy",
       known=(known("input_unchanged", _MUTATES),)),
    _e("collapse_view_copy:CollapseViewCopyPass", contract="chains of view_copy -> one view_copy"),
    _e("convert_conv1d_to_conv2d_pass:ConvertConv1dToConv2dPass", build=PROG,
       contract="conv1d -> unsqueeze, conv2d, squeeze",
       known=(known("meta_stack_trace", "_convert_node makes the unsqueeze of the input (and, inside a torch.cond "
                    "branch, of the weight) and the squeeze of the output with graph.call_function and no metadata",
                    "backends/transforms/convert_conv1d_to_conv2d_pass.py (_convert_node)", graphs=_LAYOUT_ONLY),
              known("meta_nn_module_stack", "same cause: the unsqueeze / squeeze nodes it inserts get no "
                    "nn_module_stack", "backends/transforms/convert_conv1d_to_conv2d_pass.py (_convert_node)",
                    graphs=_LAYOUT_ONLY),
              known("input_unchanged", _MUTATES + "; it also rewrites the weights in the handed program's state dict "
                    "(set_param_tensor)", graphs=_LAYOUT_ONLY)),
       configs={"dequantized_weights": Config(
           Build("program", kwargs=(("graph_local_weight_targets", Lazy(f"{__name__}:dequantize_weight_targets")),)),
           applies_to=("conv1d",), contract="graph_local_weight_targets=dequantize ops, on the conv1d graphs: the "
                                             "conv1d of a quantized graph (weight from a dequantize) converts too")}),
    _e("convert_dtype_pass:ConvertDtypePass", default="i64_to_i32",
       contract="every int64 tensor becomes int32 (values in range keep meaning)", configs={
           "i64_to_i32": Build("call", (torch.int64, torch.int32)),
           "i32_to_i64": Config(Build("call", (torch.int32, torch.int64), after=(_I64_TO_I32,)),
                                contract="int32 tensors -> int64; run after I64toI32, since no graph of the corpus "
                                         "has int32 tensors of its own: the int32 copies it made become int64"),
           "i64_to_i32_aten_copy": Config(Build("call", (torch.int64, torch.int32), (("_skip_dim_order", True),)),
                                          contract="int64 -> int32 casting with aten._to_copy (_skip_dim_order=True)",
                                          known=(known("verifier", _DTYPE_COPY_DIM_ORDER, kind="by-design"),)),
           "f32_to_f16": Config(Build("call", (torch.float32, torch.float16)), semantics="changing",
                                contract="float32 tensors -> float16 (placeholders cast in, outputs cast back): "
                                         "declared meaning-changing, float16 rounding moves the outputs",
                                known=(known("val_matches_execution", _MULTI_OUTPUT, _DTYPE_REPRO),
                                       known("verifier", "same cause: the getitem outputs of layer norm / split still "
                                             "claim float32, so an add of them and a float16 tensor has mismatched "
                                             "dtypes in meta['val']", _DTYPE_REPRO))),
           "f16_to_f32": Config(Build("call", (torch.float16, torch.float32)),
                                contract="float16 tensors -> float32 (reached by the random graphs' float16 "
                                         "programs; the built-in ones have none)"),
       }),
    _e("convert_dtype_pass:I64toI32", contract="int64 tensors -> int32",
       configs={"aten_copy": Config(Build("call", kwargs=(("_skip_dim_order", True),)),
                                    contract="int64 -> int32 casting with aten._to_copy (_skip_dim_order=True)",
                                    known=(known("verifier", _DTYPE_COPY_DIM_ORDER, kind="by-design"),))}),
    _e("decompose_channels_last_pass:DecomposeChannelsLastPass", build=Build(after=(_CL_VARIANTS,)),
       contract="channels-last variant ops -> permutes around the default op: run after "
                "ReplaceOpsWithChannelsLastVariants, which makes the channels_last dialect ops it decomposes (the "
                "fallback for the part of the graph no backend claimed; a plain edge program has none)",
       known=(known("meta_stack_trace", "inherited from the prerequisite: ReplaceOpsWithChannelsLastVariants makes the "
                    "permute_copy (and getitem) nodes around each replaced op with meta = {}, and this pass rewrites "
                    "each channels_last.permute_copy into aten.permute_copy with that empty metadata",
                    "backends/transforms/replace_ops_with_channels_last_variants.py (_permute_node_input, "
                    "_permute_node_output)"),
              known("meta_nn_module_stack", "same cause: the permutes the prerequisite inserts carry no "
                    "nn_module_stack", "backends/transforms/replace_ops_with_channels_last_variants.py"))),
    _e("decompose_sdpa:DecomposeScaledDotProductAttention", stage="export",
       contract="scaled_dot_product_attention -> matmul/softmax (before to_edge)",
       known=(known("meta_stack_trace", "the decomposed nodes get the SDPA node's nn_module_stack but no stack_trace",
                    "backends/transforms/decompose_sdpa.py (_copy_decomposed_graph)"),),
       configs={"no_fake_inputs": Config(Build("call", kwargs=(("allow_non_fake_inputs", False),)),
                                         applies_to=("attention",),
                                         contract="allow_non_fake_inputs=False, on the attention graphs, where "
                                                  "SDPA is; the argument is stored and never read (reports/upstream/"
                                                  "repro_decompose_sdpa_ignores_allow_non_fake_inputs.py), so this "
                                                  "builds what the default does")}),
    _e("duplicate_dynamic_quant_chain:DuplicateDynamicQuantChainPass", stage="export", applies_to=("quantized",),
       contract="each user of a dynamic quant chain gets its own chain (ATen, after convert)",
       known=(known("exercised", "acts only on a dynamic quantization chain (choose_qparams.tensor -> getitem -> "
                    "quantize -> dequantize with several users) whose users still carry the quantizer's annotation "
                    "(meta['quantization_annotation']): the converted GraphModule right after convert_pt2e, where the "
                    "LLM export flow runs it. passgate's cases are ExportedPrograms, re-exported after convert: the "
                    "hand-written targeted_quant_pad_dyn has the chain (one activation, two dynamically quantized "
                    "linears) but re-export drops the annotation, so the pass leaves it (measured)",
                    "backends/transforms/duplicate_dynamic_quant_chain.py (_maybe_duplicate_dynamic_quantize_chain)",
                    kind="precondition"),)),
    _e("enforce_contiguous_dim_order:EnforceContiguousDimOrder", contract="dim-order ops -> contiguous",
       known=(known("input_unchanged", _MUTATES),
              known("meta_stack_trace", "the input and output boundary _clone_dim_order nodes it inserts (after a "
                    "channels-last input, before a channels-last output) are made with graph.call_function and get "
                    "only meta['val']", "backends/transforms/enforce_contiguous_dim_order.py (call)",
                    graphs=_LAYOUT_ONLY),
              known("meta_nn_module_stack", "same cause: the boundary clones it inserts get no nn_module_stack",
                    "backends/transforms/enforce_contiguous_dim_order.py (call)", graphs=_LAYOUT_ONLY))),
    _e("fuse_batch_norm_with_conv:FuseBatchNormWithConvPass", build=PROG,
       contract="batch norm folded into the preceding conv's weight and bias",
       # no case in the loaded form can be fused (can_fuse wants getitem(0) as the batch norm's only user, and
       # the round trip adds the dead getitem(1)/(2)): targeted_aslowered (the form to_edge returns) and
       # [dce_first] exercise it
       configs={"dce_first": Config(
           Build("program", after=(DCE,)), inherit_known=False,
           contract="after dead_code_elimination_pass, which drops the unused getitems of the round trip: the program "
                    "to_edge gives, as Samsung's preprocess hands it (conv -> batch norm folded)")}),
    _e("fuse_cascaded_transpose_or_permute_ops:FuseCascadedTransposeOrPermuteOps",
       contract="permute(permute(x)) -> one permute"),
    _e("fuse_cascaded_view_ops:FuseCascadedViewOps", contract="view(view(x)) -> one view"),
    _e("fuse_conv_with_clamp:FuseClampPass",
       contract="conv + relu/hardtanh -> et_vk.conv_with_clamp (Vulkan)",
       known=(known("runnable", "relu's upper bound is sys.float_info.max (a double): et_vk.conv_with_clamp's "
                    "reference clamps a float32 tensor with it and raises 'value cannot be converted to type "
                    "float without overflow'; float('inf') would be exact",
                    "backends/transforms/fuse_conv_with_clamp.py get_output_min_max_from_activation"),
              known("meta_stack_trace", "the et_vk.conv_with_clamp node is made with graph.create_node and no "
                    "metadata; the retrace copies the (empty) meta", "backends/transforms/fuse_conv_with_clamp.py"),
              known("meta_nn_module_stack", "same cause: the fused node gets no nn_module_stack",
                    "backends/transforms/fuse_conv_with_clamp.py"),
              known("input_unchanged", _MUTATES),
              known("numerics", "reads hardtanh's bounds only from node.args (len(args) > 1): given as keywords, "
                    "hardtanh(x, min_val=0.0, max_val=6.0) as ExecuTorch's serde gives a call back (the cases' "
                    "programs), the fused conv_with_clamp clamps to the default [-1, 1] instead of the node's bounds",
                    "backends/transforms/fuse_conv_with_clamp.py (get_output_min_max_from_activation)"))),
    _e("fuse_duplicate_users_pass:FuseDuplicateUsersPass", contract="identical users of one value -> one node",
       known=(known("input_unchanged", _MUTATES + " (it erases the duplicates from the handed graph)",
                    graphs=_LAYOUT_ONLY),)),
    _e("fuse_identical_input_transforms_pass:NormalizeTransformInputPlaceholdersPass", build=PROG,
       contract="canonical placeholders for transformed inputs",
       known=(known("exercised", "renames only a placeholder named like a transform node (aten_view_copy_default, "
                    "aten_permute_copy_default, with an _N suffix) whose target differs from its name, the state a "
                    "backend's own passes leave in the graph handed to Arm's TOSA lowering (upstream's test builds "
                    "it by hand); torch.export and to_edge give every placeholder its name as target (x0, p_*, b_*, "
                    "c_*), so no exported program has one",
                    "backends/transforms/fuse_identical_input_transforms_pass.py "
                    "(_normalize_transform_user_input_placeholders)", kind="precondition"),)),
    _e("fuse_identical_input_transforms_pass:FuseIdenticalInputTransformsPass", build=PROG,
       contract="identical transforms of one input -> one",
       known=(known("input_unchanged", _MUTATES),)),
    _e("fuse_transpose_or_permute_op_pairs_pass:FuseTransposeOrPermuteOpPairsPass",
       contract="permute pairs that cancel across branches are removed"),
    _e("fuse_view_copy:FuseViewCopyTransform", contract="consecutive view_copy ops fused",
       known=(known("input_unchanged", _MUTATES),)),
    _e("mean_to_sum_div:MeanToSumDiv", contract="mean -> sum / count"),
    _e("permute_pass_utils:HierarchicalInplacePassInterface",
       unavailable="abstract base class (_apply_flat_inplace): the interface concrete passes implement"),
    _e("permute_pass_utils:RemoveOrReplacePassInterface",
       unavailable="abstract base class (targets, maybe_remove_or_replace): concrete passes implement it"),
    _e("permute_pass_utils:FuseOpPairsAcrossBranchesPass",
       unavailable="base class without call(): it provides find_and_fuse(producer, consumer op packets) for its "
                   "subclasses (FuseTransposeOrPermuteOpPairsPass, Cadence's FuseQuantDequantToRequantizePass) to "
                   "call with their pairs; run as is it would be ExportPass's identity retrace"),
    _e("postpone_permute_below_squeeze_view:PostponePermuteOpBelowSqueezeOrUnsqueezeLikeView",
       contract="permute moved below squeeze-like views",
       known=(known("input_unchanged", _MUTATES),
              known("meta_stack_trace", "_insert_nodes makes the new view_copy (now above the permute) with "
                    "graph.call_function and no metadata; only the new permute takes the old view's meta",
                    "backends/transforms/postpone_permute_below_squeeze_view.py (_insert_nodes)"),
              known("meta_nn_module_stack", "same cause: the moved view_copy gets no nn_module_stack",
                    "backends/transforms/postpone_permute_below_squeeze_view.py (_insert_nodes)"))),
    _e("propagate_view_copy_permute_pass:PropagateViewCopyPermutePass",
       unavailable="abstract base of the Up/Down passes (fuse_horizontal, _get_next_nodes, ...)"),
    _e("propagate_view_copy_permute_pass:PropagateViewCopyPermuteUpPass", build=PROG,
       contract="permutes propagated towards the inputs",
       known=(known("input_unchanged", _MUTATES + " (it moves nodes of the handed graph, then canonicalizes it in "
                    "place)", graphs=_LAYOUT_ONLY),)),
    _e("propagate_view_copy_permute_pass:PropagateViewCopyPermuteDownPass", build=PROG,
       contract="permutes propagated towards the outputs",
       known=(known("input_unchanged", _MUTATES + " (it moves nodes of the handed graph, then canonicalizes it in "
                    "place)", graphs=_LAYOUT_ONLY),)),
    _e("quantize_fused_convbn_bias_pass:QuantizeFusedConvBnBiasAtenPass", stage="export", build=PROG,
       applies_to=("quantized",), contract="quantizes the bias conv-bn fusion left in float (ATen, after convert)",
       # it reads the bias only positionally: only the as_lowered targeted_quant_convbn shows it one
       # (reports/upstream/repro_quantize_fused_convbn_bias_pass.py: every other case's fused bias is a keyword)
       known=(_BIAS_ROUNDING,
              known("meta_stack_trace", "the dequantize_per_channel it inserts for the quantized bias has no "
                    "stack_trace", "backends/transforms/quantize_fused_convbn_bias_pass.py"),
              known("meta_nn_module_stack", "the dequantize_per_channel it inserts for the quantized bias has no "
                    "nn_module_stack", "backends/transforms/quantize_fused_convbn_bias_pass.py")),
       configs={"zero_bias": Config(
           Build("program", kwargs=(("default_zero_bias", True),)), inherit_known=False,
           contract="default_zero_bias=True: convs without a bias get a zero bias, quantized",
           known=(known("runnable", "reads a conv's bias only from node.args[2]; the fused bias is a keyword "
                        "argument (conv2d(x, w, bias=b, stride=...), as ExecuTorch's serde gives it back), so the "
                        "conv counts as bias-less and gets a zero bias appended to args while bias= stays: aten.conv2d "
                        "receives its bias twice and the program no longer runs",
                        "reports/upstream/repro_quantize_fused_convbn_bias_pass.py"), _BIAS_ROUNDING)),
               "symmetric": Config(
           Build("program", kwargs=(("symmetric_quant", True),)),
           contract="symmetric_quant=True: the int32 bias is quantized to the symmetric range [-(2**31)+1, 2**31-1]")}),
    _e("rank_0_to_rank_1:Rank0ToRank1Pass", contract="rank-0 inputs become rank-1 (docstring)",
       known=(known("val_matches_execution", "rewrites only meta['val'] of rank-0 placeholders, to shape (1, 1) "
                    "(rank 2, not the rank 1 its docstring promises), while the buffer or input keeps shape (): "
                    "metadata no longer describes the tensor", "backends/transforms/rank_0_to_rank_1.py"),
              known("verifier", "same cause: shape propagation from the rank-2 meta['val'] fails where the program "
                    "expands the rank-0 value ('expand: the requested shape has too few dimensions')",
                    "backends/transforms/rank_0_to_rank_1.py", graphs=("targeted_qnn_ops",)))),
    _e("remove_clone_ops:RemoveCloneOpsTransform", contract="removes clones that do not change dim order",
       configs={
           "quantized": Config(Build(), applies_to=("quantized",),
                               contract="default construction on quantized graphs, where removing a clone after a "
                                        "dequantize leaves a dq -> q pair it then eliminates "
                                        "(eliminate_quant_dequant_pairs=True)"),
           "keep_qdq": Config(Build("call", kwargs=(("eliminate_quant_dequant_pairs", False),)),
                              applies_to=("quantized",),
                              contract="eliminate_quant_dequant_pairs=False, as Cadence builds it: clones go, Q/DQ "
                                       "pairs stay"),
       }),
    _e("remove_getitem_op:RemoveGetItemPass", contract="max_pool2d_with_indices + getitem -> max_pool2d",
       known=(known("runs", f"asserts that max_pool2d_with_indices has exactly one user, counting a dead getitem "
                    f"of the indices: {_DEAD_GETITEMS}, so a loaded program with an unused indices output crashes the "
                    "pass (as do graphs that read the indices, which XNNPACK never hands it)",
                    "backends/transforms/remove_getitem_op.py (RemoveGetItemPass.call)"),
              known("verifier", "emits aten.max_pool2d, which is not core ATen: the default edge verifier rejects "
                    "it; XNNPACK, Arm, Samsung and Cortex-M run it only on the subgraph their backend consumes",
                    "backends/transforms/remove_getitem_op.py", kind="by-design")),
       configs={"dce_first": Config(
           Build(after=(DCE,)),
           contract="after dead_code_elimination_pass, which drops the unused getitems of the round trip, so a max "
                    "pool whose indices nothing reads has the one getitem(0) user the pass expects",
           inherit_known=False,
           known=(known("verifier", "emits aten.max_pool2d, which is not core ATen: the default edge verifier rejects "
                        "it; XNNPACK, Arm, Samsung and Cortex-M run it only on the subgraph their backend consumes",
                        "backends/transforms/remove_getitem_op.py", kind="by-design"),
                  known("runs", "a max pool whose indices are read (F.max_pool2d(..., return_indices=True)), or a "
                        "max.dim read only for its indices, keeps other users than getitem(0): the pass raises "
                        "AssertionError (XNNPACK supports the values only; its partitioner never hands it such a "
                        "node)", "backends/transforms/remove_getitem_op.py (RemoveGetItemPass.call)",
                        kind="precondition")))}),
    _e("remove_permutes_around_elementwise_ops:RemovePermutesAroundElementwiseOps",
       contract="permute / elementwise / inverse permute -> elementwise",
       known=(known("input_unchanged", _MUTATES),
              known("meta_stack_trace", "the compensating permute_copy (or view_copy) it puts on a constant input of "
                    "the region (a parameter or buffer read between the two permutes) is made with "
                    "graph.create_node and no metadata",
                    "backends/transforms/remove_permutes_around_elementwise_ops.py (permute_subgraph)"),
              known("meta_nn_module_stack", "same cause: the compensating permute of a constant gets no "
                    "nn_module_stack",
                    "backends/transforms/remove_permutes_around_elementwise_ops.py (permute_subgraph)"))),
    _e("replace_channels_last_input_clones:ReplaceChannelsLastInputClones",
       contract="channels-last clones of inputs replaced"),
    _e("replace_nop_transpose_or_permute_with_view:ReplaceNopTransposeOrPermuteWithViewPass",
       contract="permutes that move only size-1 dims -> view"),
    _e("replace_ops_with_channels_last_variants:ReplaceOpsWithChannelsLastVariants", build=PROG,
       contract="ops with channels-last variants replaced, with permutes around them",
       known=(known("input_unchanged", _MUTATES),
              known("meta_stack_trace", "the permute_copy (and getitem) nodes it puts around each replaced op are "
                    "made with meta = {}", "backends/transforms/replace_ops_with_channels_last_variants.py "
                    "(_permute_node_input, _permute_node_output)", graphs=_LAYOUT_ONLY),
              known("meta_nn_module_stack", "same cause: the permutes around each replaced op get no "
                    "nn_module_stack", "backends/transforms/replace_ops_with_channels_last_variants.py",
                    graphs=_LAYOUT_ONLY))),
    _e("replace_scalar_with_tensor:ReplaceScalarWithTensorArgPass", contract="scalar overloads -> tensor overloads"),
    _e("replace_squeeze_unsqueeze_with_view:ReplaceSqueezeAndUnsqueezeWithViewPass",
       contract="squeeze/unsqueeze -> view_copy",
       known=(known("input_unchanged", _MUTATES + " (HierarchicalInplacePassInterface: it replaces the nodes in "
                    "the handed graph)", "backends/transforms/permute_pass_utils.py", graphs=_LAYOUT_ONLY),)),
    _e("view_copy_to_squeeze_unsqueeze:ViewCopyToSqueezeUnsqueezePass",
       contract="view_copy that only adds/removes size-1 dims -> squeeze/unsqueeze",
       known=(known("input_unchanged", _MUTATES + " (replace_view_copy_node erases the view_copy from the handed "
                    "graph)", graphs=_LAYOUT_ONLY),)),
)

CATALOGS = (Catalog(C, (P,), ENTRIES, "passes backends share (executorch.backends.transforms)"),)
