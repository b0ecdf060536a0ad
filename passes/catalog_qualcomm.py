"""Catalog of ``executorch.backends.qualcomm._passes`` (QNN): imports and runs without the QNN SDK.

Stages follow ``QnnPassManager``: the annotation and export pipelines run on
the ATen program (``export``), the capture-program passes on the edge
program (``edge``), the passes that read Q/DQ information
(``Annotate*``, ``FoldQDQ``, ``InsertRequantize``, ``InsertIOQDQ``, ...) on
quantized edge programs. Passes whose constructor takes ``edge_program``
get the program, as ``get_to_edge_transform_passes`` injects it. The other
constructions ``QnnPassManager`` uses get an entry each (``Name[config]``):
``transform_for_preprocess_pipeline``'s ``force_fold`` / ``insert_permute``,
``transform_for_annotation_pipeline``'s ``quantization_capture`` (ATen ops,
before quantization), ``AnnotateQuantAttrs``' ``skip_advanced_requant``. The
edge passes that pipeline also runs on the ATen program (their
``torch.ops.aten`` branches) get an ``[annotation]`` configuration at the
``export`` stage.
"""

from __future__ import annotations

from harness.catalog import ANY_GRAPH, Build, Catalog, Config, entry, known

__all__ = ["CATALOGS"]

C = "qualcomm"
P = "executorch.backends.qualcomm._passes"
PROG = Build("program")
_MUTATES = ("mutates the graph module it is handed, then returns the copy ExportPass.call retraces: the "
            "caller's program changes too")


def no_quant_io(node):
    """TagQuantIO's ``get_quant_io_dtype_fn`` for a float program: no input or output is quantized."""
    return None


def uint8_io(node):
    """TagQuantIO's ``get_quant_io_dtype_fn`` of a model whose inputs and outputs are uint8 (what a caller
    passes when the app feeds quantized tensors): every input placeholder and every node feeding the output."""
    import torch

    if node.op == "placeholder" or any(u.op == "output" for u in node.users):
        return torch.uint8
    return None


# The passes that read AnnotateQuantAttrs' records run after it and FoldQDQ, as QNN runs them: AnnotateQuantAttrs ->
# FoldQDQ -> ... -> LayoutTransform -> InsertCastForFpActQuantizedWeight in the capture program
# (get_passes_dependency_for_capture_program), then FoldQDQ(force_fold) -> InsertRequantize -> InsertIOQDQ in
# QnnBackend.preprocess, on the delegated subgraph that keeps the capture program's node metadata. FoldQDQ is
# built as the capture program builds it (force_fold=False): its parameter dequantizes stay, so the program
# still runs on CPU; the preprocess fold of them changes nothing these passes read (InsertIOQDQ skips
# parameters, InsertRequantize reads QCOM_REQUANTIZE only).
ANNOTATE_QUANT_ATTRS = f"{P}.annotate_quant_attrs:AnnotateQuantAttrs"
FOLD_QDQ = f"{P}.fold_qdq:FoldQDQ"
LAYOUT_TRANSFORM = f"{P}.layout_transform:LayoutTransform"
INSERT_REQUANTIZE = f"{P}.insert_requantize:InsertRequantize"
REMOVE_REDUNDANCY = f"{P}.remove_redundancy:RemoveRedundancy"
_PREPROCESS = "as QnnPassManager.transform_for_preprocess_pipeline builds it"
_ANNOTATION = ("on the ATen program, as QnnPassManager.transform_for_annotation_pipeline runs it (QnnQuantizer."
               "transform_for_annotation, on the exported model before PT2E annotation)")
_CAPTURE = Build("call", kwargs=(("quantization_capture", True),))


def _annotation(contract: str, build: Build = Build(), known_=()) -> Config:
    """An edge entry as the annotation pipeline also runs it: on ATen ops, built with quantization_capture=True
    where its __init__ takes it (QnnPassManager._instantiate_passes passes it to every pass that accepts it)."""
    return Config(build, stage="export", contract=f"{contract}, {_ANNOTATION}", known=tuple(known_))


_DIAGONAL_KEYWORDS = ("reads diagonal's offset / dim1 / dim2 only from node.args: as keywords (exir.serde save/load "
                      "leaves arguments that have defaults as keywords) it takes the defaults and takes the wrong "
                      "diagonal, on the ATen program as on the edge one")
_ATAN2_SCALARS = ("on ATen ops it builds the piecewise formula with the Tensor overloads (eq.Tensor, lt.Tensor, "
                  "where.self, ...) but passes its constants (0, pi, pi/2) as Python floats, which only the edge "
                  "path turns into constant nodes: aten::eq() rejects the float 'other', so the program no longer "
                  "runs (the annotation pipeline's graph is what PT2E then prepares and calibrates)")


# module:Class -> the constructions QnnPassManager uses beside the capture-program one
_CONFIGS = {
    "decompose_acos:DecomposeAcos": {"annotation": _annotation("aten.acos -> pi/2 - asin")},
    "decompose_atan2:DecomposeAtan2": {"annotation": _annotation("aten.atan2 -> piecewise atan", known_=(
        known("runnable", _ATAN2_SCALARS, "backends/qualcomm/_passes/decompose_atan2.py (_get_constants, _get_op)",
              graphs=("corpus_9ad618be", "corpus_c994b397", "targeted_qnn_samsung_ops")),))},
    "decompose_diagonal:DecomposeDiagonal": {"annotation": _annotation(
        "aten.diagonal -> permute/view/index_select", known_=tuple(
            known(check, _DIAGONAL_KEYWORDS, "backends/qualcomm/_passes/decompose_diagonal.py (_decompose_diagonal)",
                  graphs=("targeted_qnn_decompose",)) for check in ("numerics", "val_matches_execution")))},
    "decompose_hyperbolic_variants:DecomposeHyperbolicVariants": {
        "annotation": _annotation("aten sinh/cosh/asinh/acosh/atanh -> exp/log")},
    "decompose_log_variants:DecomposeLogVariants": {"annotation": _annotation("aten log10/log2/log1p -> log")},
    "decompose_maxpool3d:DecomposeMaxPool3d": {
        "annotation": _annotation("quantization_capture=True: aten max_pool3d -> max_pool2d sequence (the "
                                  "decomposition exported, not lowered with to_edge)", _CAPTURE, known_=(
            known("numerics", "ModelMaxPool3D never hands the dilation it is given to its two nn.MaxPool2d, so a "
                  "dilated max_pool3d (F.max_pool3d(x, 2, 1, 0, 2)) is decomposed as an undilated one: output "
                  "(1, 2, 3, 4, 5) instead of (1, 2, 2, 3, 4) (at the edge stage the batch-0 getitem bug of the entry "
                  "comes first)", "backends/qualcomm/_passes/decompose_maxpool3d.py (ModelMaxPool3D.__init__)",
                  graphs=("targeted_qnn_ops",)),))},
    "decompose_linalg_vector_norm:DecomposeLinalgVectorNorm": {
        "quantization_capture": Config(
            _CAPTURE, contract="quantization_capture=True, as QnnPassManager's export and annotation pipelines "
                               "build it (the only construction upstream uses): the decomposition is merged as "
                               "exported ATen ops, not lowered with to_edge")},
    "recompose_rms_norm:RecomposeRmsNorm": {
        "annotation": _annotation("quantization_capture=True: decomposed RMSNorm recomposed into aten.rms_norm",
                                  _CAPTURE)},
    "annotate_quant_attrs:AnnotateQuantAttrs": {
        "skip_advanced_requant": Config(Build("program", kwargs=(("skip_advanced_requant", True),)),
                                        contract="skip_advanced_requant=True: requantize only where the dtype "
                                                 "changes, not the scale or zero point")},
    "fold_qdq:FoldQDQ": {
        "force_fold": Config(
            Build("program", kwargs=(("force_fold", True),)),
            contract=f"force_fold=True ({_PREPROCESS}): the dequantize of parameters folds too",
            known=(known("runnable", "folds the dequantize of the int8 weights too, so the float conv/linear reads "
                         "int8 weights: QNN takes them with the quant_attrs AnnotateQuantAttrs recorded, CPU cannot "
                         "run the result", kind="by-design"),
                   known("verifier", "same cause: ops take the int8 weights and float activations together "
                         "(mismatched dtypes), which only the QNN serializer consumes", kind="by-design")))},
    "layout_transform:LayoutTransform": {
        "insert_permute": Config(
            Build("program", kwargs=(("insert_permute", True),)),
            contract=f"insert_permute=True ({_PREPROCESS}): the permutes are inserted, not only tagged",
            known=(known("runnable", "the layout-sensitive ops (convolutions, pools) now read channel-last (NHWC) "
                         "activations, the layout QNN's op builders take; the ATen kernels on CPU read NCHW, so the "
                         "program no longer runs", kind="by-design", graphs=("conv", "targeted_qnn_ops")),
                   known("verifier", "same cause: shape propagation of those ops over the NHWC input fails",
                         kind="by-design", graphs=("conv", "targeted_qnn_ops"))))},
    "remove_redundancy:RemoveRedundancy": {
        "annotation": Config(Build("call", kwargs=(("quantization_capture", True),)), stage="export",
                             applies_to=(ANY_GRAPH,),
                             contract="quantization_capture=True, on the ATen program (QnnPassManager."
                                      "transform_for_annotation_pipeline): removes _assert_tensor_metadata only")},
    "tag_quant_io:TagQuantIO": {
        "uint8_io": Config(Build("call", (uint8_io,)), contract="a get_quant_io_dtype_fn tagging every input and "
                                                                 "output uint8 (node metadata only)")},
}


# (module:Class, stage, build, contract)
_TABLE = (
    ("annotate_avg_pool1d:AnnotateAvgPool1D", "quantized-edge", PROG, "quant_attrs for decomposed avg_pool1d"),
    ("annotate_get_attr:AnnotateGetAttr", "quantized-edge",
     Build("program", after=(f"{P}.convert_linear_to_conv2d:ConvertLinearToConv2d",
                             f"{P}.canonicalize_conv:CanonicalizeConv")),
     "quant_attrs for get_attr nodes; run after ConvertLinearToConv2d and CanonicalizeConv, which insert the "
     "get_attr weights it annotates (QnnPassManager's dependencies)"),
    ("annotate_quant_attrs:AnnotateQuantAttrs", "quantized-edge", PROG, "quant_attrs from the Q/DQ nodes"),
    ("annotate_stack:AnnotateStack", "quantized-edge", PROG, "quant_attrs for stack"),
    ("annotate_unbind:AnnotateUnbind", "quantized-edge", PROG, "quant_attrs for unbind"),
    ("build_quant_io:BuildQuantIo", "quantized-edge", Build(), "quantized dtype on the delegate call's spec"),
    ("canonicalize_conv:CanonicalizeConv", "edge", PROG, "conv1d -> conv2d; dilated transposed conv kernels"),
    ("convert_bmm_to_matmul:ConvertBmmToMatmul", "edge", Build(), "bmm -> matmul (off by default upstream)"),
    ("convert_linear_to_conv2d:ConvertLinearToConv2d", "edge", PROG, "linear -> 1x1 conv2d (off by default)"),
    ("convert_mha_to_sha:ConvertMhaToSha", "edge", Build("program", after=(REMOVE_REDUNDANCY,)),
     "multi-head attention -> single-head attentions; run after RemoveRedundancy (capture program), which drops "
     "the clone between the permute and the view of the merged heads, as QnnBackend.preprocess gets the program"),
    ("convert_square_to_pow:ConvertSquareToPow", "export", Build(), "square -> pow(x, 2)"),
    ("decompose_acos:DecomposeAcos", "edge", Build(), "acos -> pi/2 - asin"),
    ("decompose_addmm:DecomposeAddmm", "edge", Build(), "addmm -> mm + add"),
    ("decompose_any:DecomposeAny", "edge", Build(), "any -> math equivalent"),
    ("decompose_as_strided:DecomposeAsStrided", "export", Build(), "as_strided -> supported primitives"),
    ("decompose_atan2:DecomposeAtan2", "edge", Build(), "atan2 -> piecewise atan"),
    ("decompose_binary_alpha:DecomposeBinaryAlpha", "export", Build(), "add/sub alpha -> mul + add/sub"),
    ("decompose_cdist:DecomposeCDist", "export", Build(), "cdist -> primitives"),
    ("decompose_col_im:DecomposeColIm", "edge", Build(), "im2col/col2im -> pixel (un)shuffle + views"),
    ("decompose_diagonal:DecomposeDiagonal", "edge", Build(), "diagonal -> permute/view/index_select"),
    ("decompose_div_mode:DecomposeDivMode", "edge", Build(), "div with rounding mode -> div + trunc/floor"),
    ("decompose_einsum:DecomposeEinsum", "export", Build(), "einsum -> primitives"),
    ("decompose_expm1:DecomposeExpM1", "export", Build(), "expm1 -> exp - 1"),
    ("decompose_fill:DecomposeFill", "export", Build(), "fill.Scalar -> full"),
    ("decompose_floor_divide:DecomposeFloorDivide", "export", Build(), "floor_divide -> div + floor"),
    ("decompose_glu:DecomposeGlu", "export", Build(), "glu -> split, sigmoid, mul"),
    ("decompose_hardsigmoid:DecomposeHardsigmoid", "export", Build(), "hardsigmoid -> core ATen"),
    ("decompose_hyperbolic_variants:DecomposeHyperbolicVariants", "edge", Build(), "sinh/cosh/asinh/... -> exp/log"),
    ("decompose_linalg_vector_norm:DecomposeLinalgVectorNorm", "export", Build(), "vector_norm -> primitives"),
    ("decompose_log_variants:DecomposeLogVariants", "edge", Build(), "log10/log2/log1p -> log"),
    ("decompose_maxpool3d:DecomposeMaxPool3d", "edge", Build(), "max_pool3d -> max_pool2d sequence"),
    ("decompose_minmaxdim:DecomposeMinMaxDim", "edge", Build(), "min/max with dim -> two single-output ops"),
    ("decompose_pad:DecomposePad", "export", Build(), "pad with non-constant mode -> specific pad ops"),
    ("decompose_pdist:DecomposePDist", "export", Build(), "pdist -> primitives"),
    ("decompose_reciprocal:DecomposeReciprocal", "export", Build(),
     "aten.reciprocal -> div(1, x), on the ATen program, as the HTP, GPU and LPAI pass managers' export and "
     "annotation pipelines run it (their capture programs also activate it at the edge stage, where by their own "
     "comment 'Reciprocal no longer appears': it matches only the ATen target, so it finds nothing there)"),
    ("decompose_remainder:DecomposeRemainder", "edge", Build(), "remainder -> x - floor(x / y) * y"),
    ("decompose_roll:DecomposeRoll", "export", Build(), "roll -> slice + cat"),
    ("decompose_select_scatter:DecomposeSelectScatter", "export", Build(), "select_scatter -> slice_scatter"),
    ("decompose_silu:DecomposeSilu", "export", Build(), "silu -> x * sigmoid(x)"),
    ("decompose_tan:DecomposeTan", "edge", Build(), "tan -> sin / cos"),
    ("decompose_threshold:DecomposeThreshold", "export", Build(), "threshold -> le + where"),
    ("decompose_triu:DecomposeTriu", "export", Build(), "triu -> mask multiply"),
    ("decompose_trunc:DecomposeTrunc", "edge", Build(), "trunc -> sign * floor(abs)"),
    ("decompose_var:DecomposeVar", "export", Build(), "var -> mean of squared deviations"),
    ("decompose_wrap_with_autocast:DecomposeWrapWithAutocast", "export", Build(), "inlines wrap_with_autocast"),
    ("expand_broadcast_tensor_shape:ExpandBroadcastTensorShape", "edge", Build(),
     "broadcast operands reshaped to the same rank"),
    ("fixed_linear_keep_dim:FixedLinearKeepDim", "edge", PROG, "squeeze/unsqueeze around linear"),
    ("fold_qdq:FoldQDQ", "quantized-edge", PROG, "erases Q/DQ once annotated"),
    ("fuse_consecutive_cast:FuseConsecutiveCast", "edge", Build(), "consecutive casts fused"),
    ("fuse_consecutive_transpose:FuseConsecutiveTranspose", "edge", Build(), "consecutive permutes fused"),
    ("i64_to_i32:I64toI32", "edge", PROG, "int64 tensors -> int32 with casts"),
    ("insert_cast_for_fp_act_quantized_weight:InsertCastForFpActQuantizedWeight", "quantized-edge",
     Build("program", after=(ANNOTATE_QUANT_ATTRS, FOLD_QDQ, LAYOUT_TRANSFORM)),
     "fp32/fp16 casts around float-activation quantized-weight ops; run after AnnotateQuantAttrs, FoldQDQ and "
     "LayoutTransform, as QnnPassManager's capture-program dependencies order it (on the XNNPACK-quantized cases "
     "it acts on the convolutions fused with a relu, whose own output that quantizer leaves unquantized)"),
    ("insert_io_qdq:InsertIOQDQ", "quantized-edge",
     Build("program", after=(ANNOTATE_QUANT_ATTRS, FOLD_QDQ, INSERT_REQUANTIZE)),
     "Q/DQ at the delegated subgraph's IO; run after AnnotateQuantAttrs and FoldQDQ (capture program) and "
     "InsertRequantize (QnnBackend.preprocess), which give it the Q/DQ-free graph with quant_attrs it reads"),
    ("insert_requantize:InsertRequantize", "quantized-edge", Build(after=(ANNOTATE_QUANT_ATTRS, FOLD_QDQ)),
     "convert ops where qspecs differ; run after AnnotateQuantAttrs (which writes the QCOM_REQUANTIZE records it "
     "reads, on a q -> dq -> q -> dq chain) and FoldQDQ (which makes the consumer a user of the source), as "
     "QnnPassManager's capture program then QnnBackend.preprocess order them (targeted_quant_requant has the chain)"),
    ("insert_reshape_for_reduce_ops:InsertReshapeForReduceOps", "export", Build(), "argmax(dim=None) -> reshape + argmax"),
    ("layout_transform:LayoutTransform", "edge", PROG, "channel-last layout with the fewest permutes"),
    ("lift_constant_scalar_operands:LiftConstantScalarOperands", "export", Build(), "scalar operands -> constants"),
    ("lpai_partition_fallback_support:LpaiPartitionFallbackSupport", "edge", PROG,
     "LPAI fallback Q/DQ handling (no compiler specs: a no-op)"),
    ("recompose_hadamard:RecomposeHadamard", "edge", Build(), "Hadamard-matrix matmuls -> hadamard_transform"),
    ("recompose_pad_maxpool2d:RecomposePadMaxPool2d", "edge", Build(), "pad + max_pool2d recomposed"),
    ("recompose_pixel_unshuffle:RecomposePixelUnshuffle", "edge", Build(), "decomposed pixel_unshuffle recomposed"),
    ("recompose_rms_norm:RecomposeRmsNorm", "edge", Build(), "decomposed RMSNorm recomposed"),
    ("remove_0d_tensor:Remove0DTensor", "edge", Build(), "removes nodes producing 0-D tensors"),
    ("remove_redundancy:RemoveRedundancy", "edge", Build(), "trims redundant ops"),
    ("replace_arange_args:ReplaceArangeArgs", "export", Build(), "arange gets its dtype back"),
    ("resolve_debug_handle:ResolveDebugHandle", "edge", Build(), "debug handles renumbered (last edge pass)"),
    ("tag_quant_io:TagQuantIO", "edge", Build("call", (f"{__name__}:no_quant_io",)),
     "tags quantized IO nodes (none in a float program)"),
)

_INT_FLOOR_DIV = ("corpus_95d5c773", "targeted_misc_ops")  # the graphs with an integer floor division
_KNOWN = {
    "decompose_wrap_with_autocast:DecomposeWrapWithAutocast": (
        known("exercised", "raises KeyError on every autocast region, so no case records a change: _replace keys its "
              "remap by the outer operand names (x, p_w) while merge_decomposed_graph looks up the submodule's "
              "placeholder names (arg0_1, arg1_1, ...) (reports/upstream/repro_qnn_decompose_wrap_with_autocast_"
              "keyerror.py). Checked on torch.autocast('cpu', enabled=False) (targeted_qnn_ops), "
              "torch.autocast('cpu', dtype=torch.bfloat16), @torch.autocast as a forward decorator, a region "
              "nested in another and a one-operand region, each exported strictly and non-strictly, fresh and "
              "loaded from disk: all raise. Only a region whose operands are themselves named arg0_1, ... "
              "passes, as in upstream's own test, whose forward argument is named arg0_1",
              "backends/qualcomm/_passes/decompose_wrap_with_autocast.py (_replace); "
              "backends/qualcomm/tests/rework/src/pattern.py (DecomposeWrapWithAutocast)"),),
    "convert_bmm_to_matmul:ConvertBmmToMatmul": (
        known("runs", "asserts 'Found a new pattern needed be converted to linear op' on the bmm of a plain "
              "self-attention (q @ k^T): an assertion on valid input", "backends/qualcomm/_passes/convert_bmm_to_matmul.py",
              graphs=("attention",)),
        known("runs", "asserts 'Found a new pattern needed be converted to linear op' on an aten.matmul kept whole, as "
              "QNN's own partitioner keeps it (get_skip_decomp_table): the matmul's source partition is {matmul: 1}, "
              "which is not among its patterns (all of them hold a bmm), so on a program lowered the way QNN lowers "
              "it the pass (off by default, switched on by passes_job) raises instead of leaving the matmul alone",
              "backends/qualcomm/_passes/convert_bmm_to_matmul.py (call)",
              graphs=("targeted_qnn_mha", "targeted_qnn_samsung_ops"))),
    "convert_linear_to_conv2d:ConvertLinearToConv2d": (
        known("numerics", "reads the bias only from node.args[2]: given as a keyword, linear(x, w, bias=b) as "
              "ExecuTorch's serde gives a call back (the cases' programs), the 1x1 convolution it builds gets no "
              "bias, so the output of targeted_qnn_mha's nn.Linear attention differs from eager (max abs err 0.47); "
              "on the program to_edge returns (bias positional) it matches eager",
              "backends/qualcomm/_passes/convert_linear_to_conv2d.py (call)", graphs=("targeted_qnn_mha",)),),
    "i64_to_i32:I64toI32": (
        known("input_unchanged", _MUTATES),
        known("val_matches_execution", "_cast_constant_to_int32 rewrites the meta['val'] of an int64 constant (the "
              "lifted 1 of an int32 tensor + 1) to float32 (_update_meta: 'This trick seems to use in mobilebert'), "
              "while the constant itself stays int64", "backends/qualcomm/_passes/i64_to_i32.py (_update_meta)",
              graphs=("targeted_qnn_samsung_ops",)),
        known("runs", "raises 'tensors used as indices must be long, int, byte or bool tensors' in the retrace of the "
              "program to_edge returns (checked on a fresh to_edge, not only the handed form): _cast_constant_to_int32 "
              "re-types the reflect pad's lifted int64 index constant, whose fake value still holds its int64 value "
              "(FakeTensor.constant), and aten.index.Tensor's propagation fails; a program loaded from disk, without "
              "that value, passes", "backends/qualcomm/_passes/i64_to_i32.py (_cast_constant_to_int32, call)",
              graphs=("targeted_qnn_ops",))),
    "layout_transform:LayoutTransform": (
        known("input_unchanged", _MUTATES, graphs=("conv",)),
        known("runs", "with a dynamic batch dimension native_group_norm takes N as a sym_size node; traverse "
              "annotates every arg of the layout-sensitive op and is_edge_condition calls .shape on that node's "
              "meta['val'], a SymInt: AttributeError (QNN's flow accepts dynamic_shapes)",
              "backends/qualcomm/_passes/layout_transform.py (is_edge_condition)", graphs=("corpus_f25443a2",))),
    "decompose_atan2:DecomposeAtan2": (
        known("verifier", "casts an integer atan2 operand to float with aten._to_copy, which the edge verifier rejects "
              "in dim-order mode; QNN lowers with EdgeCompileConfig(_check_ir_validity=False) (qnn_edge_config), "
              "so its capture program is never verified", "backends/qualcomm/_passes/decompose_atan2.py "
              "(_cast_to_float); backends/qualcomm/utils/utils.py (qnn_edge_config)",
              graphs=("targeted_qnn_samsung_ops",), kind="by-design"),),
    "recompose_pad_maxpool2d:RecomposePadMaxPool2d": (
        known("runs", "raises TypeError \"'immutable_list' object does not support mutation\" on a max_pool2d whose "
              "padding, kernel or stride is a one-element list (nn.MaxPool2d((3,), (1,), (1,)), which ATen expands): "
              "it widens it in place (padding *= 2, filter_size *= 2, stride *= 2) on the list node.args holds, which "
              "torch.fx makes immutable, so every len == 1 branch raises",
              "backends/qualcomm/_passes/recompose_pad_maxpool2d.py (call)", graphs=("targeted_qnn_samsung_ops",)),),
    "decompose_maxpool3d:DecomposeMaxPool3d": (
        known("runs", "raises TypeError \"'immutable_list' object does not support mutation\" on a max_pool3d whose "
              "kernel, stride or padding is a one-element list (F.max_pool3d(x, (2,), (1,), (1,)), which ATen "
              "expands): it widens it in place (filter_size *= 3, ...) on the list node.args holds, which torch.fx "
              "makes immutable; the same at the edge stage and on the ATen program (annotation pipeline)",
              "backends/qualcomm/_passes/decompose_maxpool3d.py (call)", graphs=("targeted_qnn_samsung_ops",)),),
    "convert_mha_to_sha:ConvertMhaToSha": (
        known("verifier", "the per-head copies of a concatenation on the attention path (the KV-cache cats) get "
              "their Tensor[] operand as a tuple (_visit_cat zips the per-head inputs), which ExecuTorch's edge "
              "verifier does not read as a tensor list: 'taking Tensor inputs with mismatched dtypes' on aten.cat "
              "(the split program computes exactly what eager does)",
              "backends/qualcomm/_passes/convert_mha_to_sha.py (_visit_cat)", graphs=("targeted_qnn_samsung_ops",)),
        known("runs", "asserts 'mismatching num_heads, 2 % 5 != 0' on a plain self-attention (q @ k^T, softmax, "
              "@ v): passgate's to_edge decomposes the 4-D matmuls into expand/view/bmm over [b*h, s, d], and the "
              "pattern accepts a bmm (softmax -> ... -> matmul or bmm -> ... -> permute -> view) but takes the head "
              "count from dim 1 of its operand as if it were [b, h, s, d], here s = 5. QNN's partitioner keeps "
              "aten.matmul (get_skip_decomp_table), so this attention reaches the pass as matmul there "
              "(targeted_qnn_mha has that form), but an attention written with torch.bmm over [b*h, s, d] stays bmm "
              "there and asserts the same way (checked: 'mismatching num_heads, 4 % 5 != 0')",
              "backends/qualcomm/_passes/convert_mha_to_sha.py (_get_attention_output)", graphs=("attention_block",)),
        known("runnable", "an attention whose q/k/v projections are nn.Linear (kept as aten.linear, as QNN's "
              "partitioner keeps it): the pass's docstring names 'static Linear/Conv2D' projections, but "
              "_visit_linear_conv splits the weight of a convolution only; each linear goes through _visit_default, "
              "which copies it per head with the full weight and only the head's slice of its meta['val'], so the "
              "next view_copy gets 4x the elements it asks for ('shape [1, 5, 1, 2] is invalid for input of size "
              "40'); the 1x1-conv attention of the same graph is split correctly",
              "backends/qualcomm/_passes/convert_mha_to_sha.py (_visit_linear_conv, _visit_default)",
              graphs=("targeted_qnn_mha",)),
        known("verifier", "same cause: the per-head copies of each aten.linear claim [b, s, e/h] but compute "
              "[b, s, e], and the view_copy after them cannot be propagated",
              "backends/qualcomm/_passes/convert_mha_to_sha.py (_visit_default)", graphs=("targeted_qnn_mha",))),
    "annotate_get_attr:AnnotateGetAttr": (
        known("val_matches_execution", "its prerequisite CanonicalizeConv (conv1d -> conv2d) unsqueezes the int8 "
              "weight but leaves the 3-D meta['val'] on the dequantize_per_channel of it (CanonicalizeConv alone "
              "on wav2letter_q8 fails the same way)", "backends/qualcomm/_passes/canonicalize_conv.py",
              graphs=("wav2letter_q8",)),),
    "expand_broadcast_tensor_shape:ExpandBroadcastTensorShape": (
        known("meta_stack_trace", "the view_copy nodes it inserts to equalize ranks carry no stack_trace",
              "backends/qualcomm/_passes/expand_broadcast_tensor_shape.py"),
        known("meta_nn_module_stack", "the inserted view_copy nodes carry no nn_module_stack",
              "backends/qualcomm/_passes/expand_broadcast_tensor_shape.py")),
    "decompose_addmm:DecomposeAddmm": (
        known("val_matches_execution", "with beta != 1 the beta * bias mul gets a copy of the addmm's meta, so its "
              "meta['val'] claims the (M, N) output shape while it computes the broadcastable bias's shape (here (7,))",
              "backends/qualcomm/_passes/decompose_addmm.py", graphs=("corpus_5c0e5150",)),),
    "decompose_any:DecomposeAny": (
        known("val_matches_execution", "its Any module compares the int32 sum with torch.zeros(1), not a 0-d zero, so "
              "an any that reduces to a 0-d tensor (any.default, or any.dim over a 1-D input, as all() lowers) yields "
              "shape (1,) while its users' meta['val'] keep shape ()",
              "backends/qualcomm/_passes/decompose_any.py (Any.forward)",
              graphs=("corpus_77799166", "corpus_ac0ffe7e")),
        known("numerics", "same cause: the 0-d any(x) result becomes shape (1,), so the logical_not of it the program "
              "returns has shape (1,) instead of ()", "backends/qualcomm/_passes/decompose_any.py (Any.forward)",
              graphs=("corpus_ac0ffe7e",))),
    "decompose_div_mode:DecomposeDivMode": (
        known("numerics", "decomposes an integer div(x, y, rounding_mode='floor') (torch.floor_divide lowers to it) into div.Tensor + floor with no "
              "cast back: div.Tensor is true division, so the int32 result becomes float32",
              "backends/qualcomm/_passes/decompose_div_mode.py", graphs=_INT_FLOOR_DIV),
        known("val_matches_execution", "same cause: the new div and floor copy the int32 meta['val'] of the div "
              "they replace but compute float32", "backends/qualcomm/_passes/decompose_div_mode.py",
              graphs=_INT_FLOOR_DIV),
        known("verifier", "same cause: the edge verifier rejects div.Tensor with int32 inputs and an int32 result, "
              "and floor with a float32 input and an int32 result", "backends/qualcomm/_passes/decompose_div_mode.py",
              graphs=_INT_FLOOR_DIV)),
    "decompose_remainder:DecomposeRemainder": (
        known("numerics", "decomposes an integer remainder into x - floor(x / y) * y with div.Tensor, which is true "
              "division, and no cast back: the int8/int32 remainder becomes a float32 tensor",
              "backends/qualcomm/_passes/decompose_remainder.py", graphs=("corpus_06c14c3d", "corpus_a4e73bfe")),
        known("val_matches_execution", "same cause: div/floor/mul/sub copy the integer meta['val'] of the remainder "
              "but compute float32", "backends/qualcomm/_passes/decompose_remainder.py",
              graphs=("corpus_06c14c3d", "corpus_a4e73bfe")),
        known("verifier", "same cause: the edge verifier rejects div.Tensor with integer inputs and result and the "
              "float ops claiming integer results (on corpus_f25443a2 fake propagation of the gather fails instead)",
              "backends/qualcomm/_passes/decompose_remainder.py",
              graphs=("corpus_06c14c3d", "corpus_a4e73bfe", "corpus_f25443a2")),
        known("runnable", "same cause: take_along_dim lowers to gather(x, d, remainder(index, size)); the decomposed "
              "int64 remainder yields a float32 index, which gather rejects",
              "backends/qualcomm/_passes/decompose_remainder.py", graphs=("corpus_f25443a2",))),
    "decompose_triu:DecomposeTriu": (
        known("numerics", "reads diagonal only from node.args[1]: given as a keyword, triu(x, diagonal=1) as "
              "ExecuTorch's serde gives a call back (the cases' programs), it traces the decomposition with the "
              "default diagonal 0, so the main diagonal is kept instead of zeroed",
              "backends/qualcomm/_passes/decompose_triu.py", graphs=("corpus_6c801e7c",)),),
    "fuse_consecutive_cast:FuseConsecutiveCast": (
        known("verifier", "_canonicalize_cast replaces an int64 cast feeding a non-output user with an "
              "aten._to_copy(dtype=int32), a non-dim_order op; it runs in QnnBackend.preprocess "
              "(transform_for_preprocess_pipeline), whose graph goes to the QNN op builders (op_to.py takes "
              "aten._to_copy), not to the edge verifier", "backends/qualcomm/qnn_preprocess.py (_build_op_wrappers)",
              graphs=("corpus_58026ce9",), kind="by-design"),),
    "insert_reshape_for_reduce_ops:InsertReshapeForReduceOps": (
        known("runnable", "reads dim only from node.args[1]: argmin(x, dim=0) with dim as a keyword, as ExecuTorch's "
              "serde gives a call back (the cases' programs), counts as dim=None, so x is flattened and dim=0 is "
              "added positionally while dim= stays: the op receives dim twice and no longer runs",
              "backends/qualcomm/_passes/insert_reshape_for_reduce_ops.py", graphs=("corpus_5c0e5150",)),),
    "lift_constant_scalar_operands:LiftConstantScalarOperands": (
        known("runnable", "reads leaky_relu's negative_slope only from node.args: given as a keyword, as ExecuTorch's "
              "serde gives a call back (the cases' programs), it builds the prelu weight from the schema default "
              "0.01 and keeps negative_slope=, so aten.prelu receives 3 arguments and the program no longer runs",
              "backends/qualcomm/_passes/lift_constant_scalar_operands.py (_create_tensor_args)",
              graphs=("corpus_0bb73498", "corpus_ac0ffe7e")),),
}


# Passes that do their work only with the QNN SDK (QNN_SDK_ROOT, unset on a machine without it): built from the
# program alone they return it unchanged, so running them here would test nothing. Listed with why, as the
# catalogs list abstract bases, instead of as entries whose green says nothing.
_NEEDS_SDK = {
    "build_quant_io:BuildQuantIo":
        "needs a QNN-lowered program: it re-specs only nodes TagQuantIO tagged QCOM_QUANTIZED_IO and the "
        "executorch_call_delegate nodes of the QNN delegate that consumes and produces the quantized tensors "
        "(upstream runs it in to_executorch: ExecutorchBackendConfig(passes=[BuildQuantIo()])); lowering to QNN "
        "runs QnnBackend.preprocess, which needs the QNN SDK (backends/qualcomm/_passes/build_quant_io.py)",
    "lpai_partition_fallback_support:LpaiPartitionFallbackSupport":
        "needs LPAI compiler specs and the QNN SDK's LPAI backend: without compiler_specs (a program alone) call "
        "returns at once; with them it validates every op through a QnnManager that loads the SDK and wraps the "
        "rejected ones in Q/DQ (backends/qualcomm/_passes/lpai_partition_fallback_support.py)",
    "recompose_hadamard:RecomposeHadamard":
        "needs the QNN SDK >= 2.47: call returns the program unchanged unless QNN_SDK_ROOT names one; past that "
        "gate it matches ATen linear/matmul/conv2d without bias whose weight is a get_attr holding a scaled "
        "Hadamard matrix (backends/qualcomm/_passes/recompose_hadamard.py)",
}


def _build(b: Build) -> Build:
    if b.how == "call" and b.args and isinstance(b.args[0], str) and ":" in b.args[0]:
        from harness.catalog import resolve

        return Build("call", (resolve(b.args[0]),))  # a module-level function: picklable by reference
    return b


ENTRIES = tuple(
    entry(C, f"{P}.{spec}", stage=stage, build=_build(build), contract=contract, known=_KNOWN.get(spec, ()),
          configs=_CONFIGS.get(spec), unavailable=_NEEDS_SDK.get(spec, ""))
    for spec, stage, build, contract in _TABLE
) + (
    entry(C, f"{P}.seq_mse:InsertSeqMse",
          unavailable="inserts Seq-MSE observers into a prepared (observed) model during PT2E calibration; "
                      "passgate's quantized cases are already converted"),
    entry(C, f"{P}.seq_mse:RemoveSeqMse",
          unavailable="removes the Seq-MSE observers InsertSeqMse put into a prepared model: same stage"),
)

CATALOGS = (Catalog(C, (P,), ENTRIES, "Qualcomm QNN passes (run without the QNN SDK)"),)
