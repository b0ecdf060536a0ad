"""Triage rules for the violations first met on the targeted graphs written from suite 2026.11.12 on.

The second half of :mod:`passes.triage_targeted`'s table, split off to keep each module short: the rules keep
their order (``passes.triage.RULES`` lists these right after ``TARGETED_RULES``), and each was traced on the
graph its ``graphs`` names.
"""

from __future__ import annotations

from passes.triage_rule import ET, Rule

__all__ = ["LATER_RULES"]

LATER_RULES: tuple[Rule, ...] = (
    # -- targeted_exir_misc2: a torch.while_loop, a SymBool operand, a transposed constant, a dynamic length ------
    Rule(("partitioner.vulkan",), ("runs",), r"Cannot create value for node \w+ with spec of type <class 'NoneType'>",
         "targeted_exir_misc2's `d * (d.shape[0] > 3)`: the partition reads a SymBool (operator.gt of the dynamic "
         "length); VkGraphBuilder.create_node_value makes SymInt values only (is_symint_node) and a SymBool node has "
         "no TensorSpec, so lowering a partition the partitioner accepted raises",
         upstream=ET + "backends/vulkan/serialization/vulkan_graph_builder.py (create_node_value)",
         graphs=("targeted_exir_misc2",)),
    Rule(("ConvertDtypePass*", "I64toI32*"), ("val_matches_execution",),
         r"while_loop: meta\['val'\] says torch\.(int64|float32), execution gave torch\.(int32|float16)",
         "converts the tensors inside the torch.while_loop's cond and body graphs (the loop carries the new dtype "
         "when it runs) but leaves the while_loop node's meta['val'] (and its getitems') in the old dtype",
         upstream=ET + "backends/transforms/convert_dtype_pass.py; backends/transforms/i64_to_i32.py",
         graphs=("targeted_exir_misc2",)),
    Rule(("EnforceContiguousDimOrder",), ("runs",), r"Failed to map a given dim_order: \[1, 0\]",
         "maps the dim_order of every tensor it rewrites to a torch.memory_format (dim_order_utils), which knows "
         "contiguous and channels-last only: a tensor with dim_order [1, 0] (legal in the edge dialect: "
         "targeted_exir_misc2's constant stored transposed, targeted_exir_outputs' x.t() returned as it is) raises",
         upstream=ET + "backends/transforms/enforce_contiguous_dim_order.py; exir/dim_order_utils.py",
         graphs=("targeted_exir_misc2", "targeted_exir_outputs")),
    Rule(("RemoveRedundantCopyPass",), ("input_unchanged",), r"changed the shared graph case it was never handed",
         "measured on targeted_exir_misc2 in the xnnpack pipeline: the program the run keeps changed while only "
         "this step ran on its own copy. The program has a dynamic length, whose ShapeEnv every copy shares, the "
         "cause traced for RemoveMixedTypeOperators and SqueezeUnsqueezeInputs; not traced further here",
         upstream=ET + "backends/xnnpack/_passes/remove_redundant_copy_pass.py", graphs=("targeted_exir_misc2",)),
    # -- suite 2026.11.12's targeted graphs: layout2, xnnpack_qnn3, misc_tail, vulkan_cadence3 / qdq3, qnn_quant4,
    #    quant_samsung2 (each traced on the graph its rule names)
    Rule(("ConvertToLinearPass",), ("numerics",), r"not close",
         "targeted_xnnpack_qnn3's F.linear(v, w) + v: to_edge gives permute + mm + add(v); find_bias_for_mm takes the "
         "add's other operand, the linear's own input v, for a bias, so the rebuilt linear(v, w, v) + v adds v twice (reports/upstream/repro_xnnpack_convert_to_linear_input_as_bias.py)",
         upstream=ET + "backends/xnnpack/_passes/convert_to_linear.py (find_bias_for_mm)", graphs=("targeted_xnnpack_qnn3",)),
    Rule(("CadenceToOutVarPass", "ToOutVarPass"), ("runnable",),
         r"Could not run 'cadence::(idma_(load|store|wait)|quantize_per_tensor|dequantize_per_tensor|quantized_\w+)\.\w*out'",
         "the out variants of Cadence's ops (iDMA on targeted_vulkan_cadence3, the quantize / quantized conv ops on "
         "targeted_exir_misc3) have no CPU kernel (ref_implementations registers the functional ops only): a "
         "program after the out-variant pass runs on the DSP runtime, not on CPU", "precondition",
         upstream=ET + "backends/cadence/aot/ref_implementations.py",
         graphs=("targeted_vulkan_cadence3", "targeted_exir_misc3")),
    Rule(("PostponeDequantizeOpBelowUseChainPass",), ("runs",), r"Expected a value of type 'float' for argument 'scale'",
         "targeted_misc_tail's dequantize_per_tensor.tensor (scale and zero point as tensors): the pass re-creates the "
         "dequantize below its users with the .default overload and the node's tensor arguments, which that schema "
         "rejects", upstream=ET + "backends/cadence/aot/reorder_ops.py (PostponeDequantizeOpBelowUseChainPass)",
         graphs=("targeted_misc_tail",)),
    Rule(("PostponeDequantizeOpBelowUseChainPass",), ("runnable",), r"The size of tensor a \(8\) must match",
         "targeted_vulkan_qdq3's per-channel (axis 0) weight dequantize of a linear: the pass moves it below the "
         "permute_copy of the decomposed linear without remapping its axis, so scales of 4 meet a dim of 8 (reports/upstream/repro_cadence_postpone_dequantize_per_channel_axis.py)",
         upstream=ET + "backends/cadence/aot/reorder_ops.py (PostponeDequantizeOpBelowUseChainPass)",
         graphs=("targeted_vulkan_qdq3",)),
    Rule(("SimplifySliceOpPass",), ("runs",), r"shape '\[2, 20\]' is invalid for input of size 60",
         "measured on targeted_transforms_layout2 (a dynamic dimension, slices with keyword arguments): the pass "
         "rewrites a slice into a view of the wrong size and the retrace raises; not traced further",
         upstream=ET + "backends/cadence/aot/simplify_ops.py", graphs=("targeted_transforms_layout2",)),
    Rule(("partitioner.xnnpack",), ("runs",), r"Invalid partition, found dependency cycles",
         "targeted_qnn_quant4: one int8 weight dequantized for a linear and for a mul; the XNNPACK partitioner groups "
         "nodes into a partition that both feeds and reads a node left outside it, which fuse_as_graphmodule "
         "rejects", upstream=ET + "backends/xnnpack/partition/xnnpack_partitioner.py", graphs=("targeted_qnn_quant4",)),
    Rule(("AnnotateGetAttr",), ("val_matches_execution",), r"meta\['val'\] says torch\.int8, execution gave torch\.float32",
         "its prerequisite ConvertLinearToConv2d gives the weight's dequantize the int8 weight's meta['val'] when it "
         "reshapes it for the conv, while the node still computes float32", upstream=ET +
         "backends/qualcomm/_passes/convert_linear_to_conv2d.py", graphs=("targeted_qnn_quant4",)),
    Rule(("CanonicalizeConv",), ("val_matches_execution",), r"says shape \(4, 4, 3\), execution gave \(4, 4, 1, 3\)",
         "targeted_transforms_layout2's conv1d over a per-channel dequantized weight: the pass unsqueezes the weight "
         "for a conv2d but leaves the dequantize's meta['val'] 3-D", upstream=ET +
         "backends/qualcomm/_passes/canonicalize_conv.py", graphs=("targeted_transforms_layout2",)),
    Rule(("ConvertMhaToSha",), ("runs",), r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)",
         "targeted_xnnpack_qnn3's attention written with torch.bmm: the pass splits the heads, then concatenates the "
         "per-head outputs on axis 3, which a 3-D bmm output does not have", upstream=ET +
         "backends/qualcomm/_passes/convert_mha_to_sha.py", graphs=("targeted_xnnpack_qnn3",)),
    Rule(("DecomposePDist",), ("runs",), r"Currently only p=2 is supported",
         "asserts on torch.pdist with p other than 2 (targeted_misc_tail's p=1) instead of leaving it: QNN lowers the "
         "Euclidean distance only", "precondition", upstream=ET + "backends/qualcomm/_passes/decompose_pdist.py",
         graphs=("targeted_misc_tail",)),
    Rule(("FoldQDQ",), ("runs",), r"Tried to erase Node \w+ but it still had 1 users",
         "targeted_quant_samsung2's requantize chain with scales as buffers: the pass erases a scale buffer's "
         "placeholder while a second quantize_per_tensor.tensor still reads it", upstream=ET +
         "backends/qualcomm/_passes/fold_qdq.py", graphs=("targeted_quant_samsung2",)),
    Rule(("InsertCastForFpActQuantizedWeight",), ("runnable",), r"c10::Half != float",
         "casts the float activation of a weight-quantized linear to float16 for QNN's fp16 kernels; the CPU program "
         "then multiplies a half activation by a float weight (QNN runs it on HTP)", "by-design",
         upstream=ET + "backends/qualcomm/_passes/insert_cast_for_fp_act_quantized_weight.py", graphs=("targeted_qnn_quant4",)),
    Rule(("Conv1dToConv2d",), ("runs",), r"unsupported param type, call_function",
         "reads every conv1d weight as a parameter; targeted_transforms_layout2's weight is a per-channel dequantize "
         "(a call_function), on which it raises instead of leaving the conv", "precondition",
         upstream=ET + "backends/samsung/_passes/conv1d_to_conv2d.py", graphs=("targeted_transforms_layout2",)),
    Rule(("AddmmToLinearTransform",), ("val_matches_execution",), r"says shape \(6, 2\), execution gave \(2, 3, 2\)",
         "targeted_misc_tail's 3-D linear over a dequantized weight: bypassing the view_copy in front of the linear, "
         "the pass leaves the linear's meta['val'] 2-D (6, 2) while it now computes (2, 3, 2)",
         upstream=ET + "backends/transforms/addmm_mm_to_linear.py", graphs=("targeted_misc_tail",)),
    Rule(("QuantizeFusedConvBnBiasAtenPass",), ("numerics",), r"max abs err 0\.000\d+",
         "quantizes the fused conv's float bias to int32 at input scale x weight scale: the output moves by at most "
         "that step (5.7e-4 here), as the quantized kernel will compute it", "by-design",
         upstream=ET + "backends/transforms/quantize_fused_convbn_bias_pass.py", graphs=("targeted_quant_samsung2",)),
    Rule(("FuseQuantizedOpsTransform",), ("runnable",), r"expected scalar type Half but found Float",
         "measured on targeted_qnn_quant4's float16 linear over an int8 weight: the fused op's CPU implementation "
         "gets a half activation with float scales and rejects it; whether Vulkan's kernel accepts it is not checked",
         upstream=ET + "backends/vulkan/_passes/fuse_quantized_ops.py", graphs=("targeted_qnn_quant4",)),
    # -- suite 2026.11.13's targeted graphs: exir_misc3, transforms_layout3, qnn_xnnpack5, vulkan_patterns3
    Rule(("ConvertDtypePass",), ("verifier",), r"InternalError: expected int32",
         "targeted_exir_misc3's Cadence quantized convs take an int32 bias, which Cadence's fake kernel requires "
         "(ops_registrations: torch._check(bias.dtype == torch.int32)); int32 -> int64 converts every int32 tensor, "
         "that bias too: a blanket dtype conversion is for graphs whose ops take both", "precondition",
         upstream=ET + "backends/cadence/aot/ops_registrations.py", graphs=("targeted_exir_misc3",)),
    Rule(("partitioner.xnnpack",), ("runs",), r"unsupported operand type\(s\) for -: 'Node' and 'float'",
         "targeted_exir_misc3's torch.add(a, b, alpha=d.shape[0]): AddConfig.check_constraints runs np.isclose on "
         "the alpha kwarg, here a sym_size node, and raises instead of declining the add: lowering fails on the "
         "whole program (reports/upstream/repro_xnnpack_partitioner_symbolic_add_alpha.py)",
         upstream=ET + "backends/xnnpack/partition/config/generic_node_configs.py (AddConfig.check_constraints)",
         graphs=("targeted_exir_misc3",)),
    Rule(("partitioner.xnnpack",), ("runs",), r"error occurred when running the 'ChannelsLastTaggedReshapePass'",
         "targeted_transforms_layout3's avg_pool2d of an unbatched [C, H, W] tensor: the partitioner's pooling "
         "config accepts it, then XNNPACK's own preprocess (ChannelsLastTaggedReshapePass) asserts 'Attempting to "
         "convert non-NHWC compatible node to NHWC' on the rank-3 input: lowering fails on the whole program "
         "(reports/upstream/repro_xnnpack_unbatched_avg_pool2d.py)",
         upstream=ET + "backends/xnnpack/partition/config/generic_node_configs.py (AvgPoolingConfig)",
         graphs=("targeted_transforms_layout3",)),
    Rule(("ReplaceScalarWithTensorArgPass", "LiftConstantScalarOperands"), ("runs", "runnable"),
         r"aten::add\(\) takes 2 positional argument\(s\) but 3",
         "targeted_transforms_layout3's add.Scalar(t, 2.0, 3), alpha positional as the edge program records it: the "
         "pass makes add.Tensor(t, tensor(2.0), 3), whose alpha is keyword-only, and the call raises",
         upstream=ET + "backends/transforms/replace_scalar_with_tensor.py; "
                       "backends/qualcomm/_passes/lift_constant_scalar_operands.py",
         graphs=("targeted_transforms_layout3",)),
    Rule(("ReplaceOpsWithScalar",), ("numerics",), r"not close",
         "targeted_transforms_layout3's add.Scalar(t, 2.0, 3): the pass rebuilds it as add.Tensor(args[0], "
         "torch.tensor(args[1])) and drops the positional alpha, so t + 2.0 replaces t + 3 * 2.0",
         upstream=ET + "backends/samsung/_passes/replace_scalar_ops.py (ReplaceOpsWithScalar.call_operator)",
         graphs=("targeted_transforms_layout3",)),
    Rule(("CanonicalizeConv", "Conv1dToConv2d", "Conv1dUnsqueezePass"), ("runs",),
         r"Expect w1 to be parameter|unsupported param type, placeholder|Expected op for convolution weight node",
         "targeted_qnn_xnnpack5's conv1d whose weight is a program input (fed at run time): each pass reshapes the "
         "weight as a constant and raises on an input; QNN, Samsung and XNNPACK delegate only convolutions with "
         "constant weights (partitioner.xnnpack leaves this one on the CPU and passes)", "precondition",
         upstream=ET + "backends/qualcomm/_passes/canonicalize_conv.py; backends/samsung/_passes/conv1d_to_conv2d.py; "
                       "backends/xnnpack/_passes/conv1d_unsqueeze_pass.py", graphs=("targeted_qnn_xnnpack5",)),
    Rule(("ChannelsLastTaggedReshapePass",), ("runs",), r"The same constant data tensor can't be used in NCHW",
         "targeted_qnn_xnnpack5's 4-D parameter read as a convolution's input: the pass tags every 4-D placeholder "
         "NCHW, then asserts when a conv wants this one NHWC; XNNPACK's partitioner leaves a convolution with a "
         "constant input on the CPU (partitioner.xnnpack passes on this graph), so its preprocess never meets one",
         "precondition", upstream=ET + "backends/xnnpack/_passes/channels_last_tagged_reshape_pass.py (input_to_nhwc)",
         graphs=("targeted_qnn_xnnpack5",)),
    Rule(("DecomposeMaxPool3d", "RecomposePadMaxPool2d"), ("runs",), r"'immutable_list' object does not support mutation",
         "targeted_qnn_xnnpack5's one-element stride (max_pool3d) and kernel (max_pool2d): the pass widens the "
         "one-element list in place (stride *= 3, filter_size *= 2) on the list node.args holds, which torch.fx makes "
         "immutable (the cause the catalog records for targeted_qnn_samsung_ops' one-element kernel and padding)",
         upstream=ET + "backends/qualcomm/_passes/decompose_maxpool3d.py; "
                       "backends/qualcomm/_passes/recompose_pad_maxpool2d.py", graphs=("targeted_qnn_xnnpack5",)),
    Rule(("RecomposeRmsNorm",), ("numerics", "val_matches_execution"), r"torch\.float16 != torch\.float32|says torch\.float32, execution gave torch\.float16",
         "targeted_qnn_xnnpack5's Qwen-style norm, h = x.to(float32) of a float16 input, at the export stage "
         "([annotation]): the pass takes the norm's input from before the upcast it skips, so the rms_norm it "
         "makes reads float16 and returns float16 where the program returned float32 (meta['val'] still says "
         "float32)", upstream=ET + "backends/qualcomm/_passes/recompose_rms_norm.py",
         graphs=("targeted_qnn_xnnpack5",)),
    Rule(("RecomposeRmsNorm",), ("runs",), r"Failed to locate gamma argument in RMSNorm output node",
         "targeted_qnn_xnnpack5's nn.RMSNorm without a weight on a computed input (a relu): _get_gamma_node looks "
         "for a non-call_function operand of the output mul as the weight and, finding none, raises instead of "
         "recomposing a weightless norm (on a placeholder input it takes the input itself: "
         "reports/upstream/repro_samsung_rms_norm_weightless.py)",
         upstream=ET + "backends/samsung/_passes/compose_rms_norm.py (_get_gamma_node)",
         graphs=("targeted_qnn_xnnpack5",)),
    Rule(("FuseActivationPass",), ("runs",), r"Not supported aten_hardtanh_default now",
         "targeted_qnn_xnnpack5's conv -> hardtanh(0, 3): map_hardtan_relux maps only (0, 6) to relu6 and returns "
         "None for other bounds, on which _fuse asserts, though Samsung's own op_hardtanh lowers any bounds (CLIP) "
         "(the cause the catalog records for the corpus' hardtanh graphs)",
         upstream=ET + "backends/samsung/_passes/fuse_activation.py (map_hardtan_relux, FuseActivationPass._fuse)",
         graphs=("targeted_qnn_xnnpack5",)),
    Rule(("ToOutVarPass", "CadenceToOutVarPass"), ("runs",),
         r"Missing out variants: \{[^}]*'(torchao|quantized_decomposed)::",
         "targeted_vulkan_patterns3's hand-written Q/DQ and torchao dequantize_affine: no out variant of them is "
         "registered unless a quantized kernel library is loaded (the corpus loads none: it would change every "
         "graph's verdicts); a quantized program reaches to_executorch with them inside a delegate or fused by the "
         "backend", "precondition", upstream=ET + "exir/passes/__init__.py (ToOutVarPass)",
         graphs=("targeted_vulkan_patterns3",)),
    Rule(("PostponeDequantizeOpBelowUseChainPass",), ("runnable",), r"The size of tensor a \(\d+\) must match",
         "targeted_vulkan_patterns3's per-channel weight dequantizes: the pass moves a per-channel dequantize below "
         "a permute / view of its users without remapping its axis, so the scales meet another dim (the cause of "
         "reports/upstream/repro_cadence_postpone_dequantize_per_channel_axis.py)",
         upstream=ET + "backends/cadence/aot/reorder_ops.py (PostponeDequantizeOpBelowUseChainPass)",
         graphs=("targeted_vulkan_patterns3",)),
    Rule(("Rank0ToRank1Pass",), ("verifier",), r"expected bias to be 1-dimensional",
         "targeted_vulkan_patterns3's conv bias bc * 1.0, whose lifted scalar 1.0 is a 0-d placeholder: the pass "
         "rewrites that placeholder's meta['val'] to shape (1, 1) (rank 2), so shape propagation makes the bias [1, C] and the "
         "convolution's fake kernel rejects it (the catalog's cause: only meta['val'] changes)",
         upstream=ET + "backends/transforms/rank_0_to_rank_1.py", graphs=("targeted_vulkan_patterns3",)),
    Rule(("partitioner.vulkan",), ("runs",), r"raised:? AssertionError:?\s*$",
         "targeted_vulkan_patterns3's weight-only int8 linear whose bias is a cat of two parameters: the partitioner "
         "sees aten.addmm, and QuantizedLinearMatch asserts that an addmm bias traces to a placeholder instead of "
         "declining the match (the patterns' detection runs before any partition is chosen, so lowering fails on "
         "the whole program)", upstream=ET + "backends/vulkan/patterns/quantized_linear.py (QuantizedLinearMatch)",
         graphs=("targeted_vulkan_patterns3",)),
    # -- suite 2026.11.14: targeted_transforms_permutes2 (a slice / select read as a keyword, a broadcasting add
    #    before a permute) ----------------------------------------------------------------------------------------
    Rule(("PropagateViewCopyPermuteUpPass",), ("numerics", "runs"),
         r"attribute 'shape' do not match|Dimension out of range",
         "targeted_transforms_permutes2's (sigmoid(c) + relu(v)).permute(0, 2, 1), c [1, 1, 1], v [4, 5]: the Up "
         "pass's _can_move_through_elementwise lets the permute cross an add when one input only is not "
         "layout-invariant, without the base class's check of that input's rank; the permute lands on the [1, 1, 1] "
         "operand, is dropped as a no-op, and the output comes back [1, 4, 5] instead of [1, 5, 4] (with the "
         "operands swapped it lands on the rank-2 one and the retrace raises IndexError)",
         upstream="reports/upstream/repro_propagate_permute_up_broadcast_rank.py",
         graphs=("targeted_transforms_permutes2",)),
    Rule(("SimplifySliceOpPass",), ("numerics",), r"Tensor-likes are not close",
         "reads slice_copy's dim / start / end / step only from node.args (the cause of the SimplifySliceOpPass rule "
         "above): targeted_transforms_permutes2's clamp(x, min=x[:, 1:2]) gets the whole x as its bound, which "
         "broadcasts against x, so the values differ instead of the shapes",
         upstream=ET + "backends/cadence/aot/simplify_ops.py (SimplifySliceOpPass)",
         graphs=("targeted_transforms_permutes2",)),
    Rule(("CadenceMemoryPlanning", "GenerateSliceAndSelectNopConstraints"), ("verifier",),
         r"operator 'aten\._(slice|select)_copy_nop\.\w+' is not functional",
         "the out-variant program ToOutVarPass hands these entries fails torch's functional verifier at its first "
         "out op by design, and passgate skips the verifier when the handed program fails with the same message; "
         "in targeted_transforms_permutes2 that first op is the slice_copy.Tensor_out the pass turns into its _nop "
         "variant, so only the op named differs: not a violation of the pass's own", "harness",
         upstream=ET + "backends/cadence/aot/memory_constraints.py (GenerateSliceAndSelectNopConstraints)",
         graphs=("targeted_transforms_permutes2",)),
    # -- suite 2026.11.14: targeted_exir_outputs (an int, a None and a SymInt returned, an output twice, an input and
    #    its transpose returned as they are, a nonzero) ------------------------------------------------------------
    Rule(("I64toI32",), ("runs",), r"'SymInt' object has no attribute 'dtype'",
         "targeted_exir_outputs returns d.shape[0], a SymInt: _record_original_output_dtype reads meta['val'].dtype "
         "of every graph output, and a SymInt has none. QNN runs it in its capture-program passes (default on) "
         "over the whole program, so a model that returns a size fails to lower",
         upstream=ET + "backends/qualcomm/_passes/i64_to_i32.py (_record_original_output_dtype)",
         graphs=("targeted_exir_outputs",)),
    Rule(("TagQuantIO",), ("runs",), r"'int' object has no attribute 'meta'",
         "targeted_exir_outputs returns an int attribute beside its tensors: _record_output_quant_attrs_map reads "
         "arg.meta of every output argument, and a constant output is a Python int, not a Node",
         upstream=ET + "backends/qualcomm/_passes/tag_quant_io.py (_record_output_quant_attrs_map)",
         graphs=("targeted_exir_outputs",)),
    Rule(("ChannelsLastTaggedReshapePass",), ("runs",), r"'int' object has no attribute 'meta'",
         "targeted_exir_outputs returns an int attribute beside its tensors: the pass reads out_node.meta['val'] of "
         "every output; XNNPACK runs it in preprocess on a delegated partition, whose outputs are tensor nodes",
         "precondition", upstream=ET + "backends/xnnpack/_passes/channels_last_tagged_reshape_pass.py (call)",
         graphs=("targeted_exir_outputs",)),
    # -- targeted_exir_mutable: mutable buffers without control flow --------------------------------------------
    Rule(("reinplace_pass",), ("numerics",), r"output 0 \(torch\.float32, shape \(2, 6, 4\)\)",
         "writes in place into a tensor the program returns: with elementwise op sets (mul, add, ...) it rewrites "
         "`self.cache * self.cache` to mul_ on the KV-cache buffer's new value, which the program also returns "
         "(the buffer mutation), because its backward walk counts later reads among call_function nodes only, "
         "never the output node (as on targeted_exir_memory)",
         upstream=ET + "exir/passes/reinplace.py (reinplace_pass: seen_nodes); "
                       "reports/upstream/repro_reinplace_overwrites_graph_output.py",
         graphs=("targeted_exir_mutable",)),
    Rule(("DecomposeAtenApproxGeluPass",), ("verifier",), r"mismatched dtypes",
         "call_operator rewrites every operator into the tanh-GELU formula of its first argument, whatever it was "
         "called for: on targeted_exir_mutable's int64 step counter (`self.steps.add_(1)`, its cast) that mixes "
         "int64 and float32 operands, which the edge verifier rejects",
         upstream=ET + "backends/cadence/aot/decompose_ops.py (DecomposeAtenApproxGeluPass); "
                       "reports/upstream/repro_cadence_approx_gelu_pass.py",
         graphs=("targeted_exir_mutable",)),
    Rule(("TagMemoryMetaPass",), ("runs",), r"Unsupported storage type DEFAULT_STORAGE",
         "asks for the storage of a tensor the previous steps left at DEFAULT_STORAGE and raises instead of "
         "choosing one (with force_fp16, on targeted_exir_mutable's program of int64 and float buffers)",
         upstream=ET + "backends/vulkan/_passes/tag_memory_meta_pass.py", graphs=("targeted_exir_mutable",)),
    Rule(("TagMemoryMetaPass",), ("runs",), r"Unsupported storage type DEFAULT_STORAGE",
         "targeted_exir_ema's lerp_ decomposes into sub(mean, ema) and where(ge, mean, ema), two readers of one "
         "mean.dim: the pass inserts a transition for the where's read, then asks for the storage of that mean for "
         "the sub (get_arg_tensor_source_repset), which it left at DEFAULT_STORAGE, and raises instead of choosing one",
         upstream=ET + "backends/vulkan/_passes/tag_memory_meta_pass.py (constrain_op_arg_repset)",
         graphs=("targeted_exir_ema",)),
)
