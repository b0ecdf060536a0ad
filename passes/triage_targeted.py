"""Triage rules for the violations first met on the hand-written targeted graphs (``fixtures/corpus/targeted_*.py``).

Kept apart from :mod:`passes.triage`, which holds the rule type and the causes shared across the corpus;
each rule here was traced on the graph named in its reason. The rules first met on the graphs of suite
2026.11.12 and later continue the table in :mod:`passes.triage_targeted2`.
"""

from __future__ import annotations

from passes.triage_rule import ET, Rule

__all__ = ["TARGETED_RULES"]

TARGETED_RULES: tuple[Rule, ...] = (
    # -- the quantized passes of QNN and Samsung, run after the passes that annotate the graph for them ---------
    Rule(("InsertIOQDQ", "InsertQDQPass"), ("runnable", "verifier"),
         (r"expected scalar type Char but found Float|Got: torch\.int8|mismatched dtypes|expected scalar type torch\.int8"
          r"|Expecting input to have dtype: torch\.int8"),
         "re-inserts a quantize after the graph input (and a dequantize before the output) from the annotations, for "
         "the backend's integer-domain graph: the quantize's int8 result replaces the input for every float op, so "
         "the CPU program no longer runs (the delegate runs it on quantized tensors; a dequantize before a float "
         "output is handed the float value), and the edge verifier rejects the int8 operand; QNN and Samsung lower without that verifier (qnn_edge_config, EnnBackend.preprocess)",
         "by-design", upstream=ET + "backends/qualcomm/_passes/insert_io_qdq.py; backends/samsung/_passes/insert_qdq.py"),
    Rule(("InsertQDQPass",), ("runnable", "verifier"), r"Expected a value of type 'Tensor' for argument 'scale'",
         "_create_qdq_node maps quantize_per_tensor.default to the .tensor overloads but passes the annotated float "
         "scale / zero point as they are: its float-to-tensor guard isinstance(arg.type, torch.Tensor) is never true "
         "(arg.type is a schema type), so dequantize_per_tensor.tensor gets a float where its schema takes a Tensor "
         "(the verifier rejects it; where the dequantize is on the path to an output, running the program fails too)",
         upstream=ET + "backends/samsung/_passes/insert_qdq.py (_create_qdq_node)"),
    Rule(("InsertQDQPass",), ("verifier",), r"'NoneType' object has no attribute 'numel'",
         "targeted_quant_pad_dyn (dynamic batch): the quantize it inserts after the input has no meta['val'] that "
         "fake propagation can rebuild (_create_qdq_node sets val from the annotation's shape, None for a symbolic "
         "one); Samsung's flow exports with static shapes", "precondition",
         upstream=ET + "backends/samsung/_passes/insert_qdq.py (_create_qdq_node)"),
    Rule(("InsertCastForFpActQuantizedWeight",), ("runnable",), r"expected scalar type Half but found Float",
         "casts a float activation of a conv / linear with a quantized weight to fp16 (QNN's HTP mixed precision) "
         "while the dequantized weight stays fp32: a mix only the HTP backend runs; on these XNNPACK-quantized "
         "programs it fires on the convs before a relu, whose outputs that quantizer leaves unquantized",
         "by-design", upstream=ET + "backends/qualcomm/_passes/insert_cast_for_fp_act_quantized_weight.py"),
    Rule(("InsertCastForFpActQuantizedWeight", "InsertRequantize"), ("verifier",),
         r"aten\._to_copy\.default.*should not be used in dim_order mode",
         "inserts aten._to_copy, QNN's Convert / Cast op (builders/op_to.py): QNN lowers with "
         "_check_ir_validity=False (qnn_edge_config), so its flow never runs the edge verifier that rejects it",
         "by-design", upstream=ET + "backends/qualcomm/utils/utils.py (qnn_edge_config)"),
    # -- Vulkan's weight-only quantized linears (targeted_quant_weight_only) -----------------------------------
    Rule(("FuseQuantizedOpsTransform",), ("verifier",), r"_weight_int8pack_mm\.default is not in Core ATen",
         "fuses a weight-only int8 linear into aten._weight_int8pack_mm (and a 4-bit one into et_vk.linear_qcs4w), "
         "neither core ATen: it runs inside VulkanBackend.preprocess, whose program answers to Vulkan's own "
         "any-op verifier", "by-design", upstream=ET + "backends/vulkan/vulkan_preprocess.py"),
    Rule(("FuseQuantizedOpsTransform",), ("numerics",), r"Tensor-likes are not close",
         "a 4-bit weight is packed by pack_4bit_weight_tensor with +8 per nibble, and the CPU implementation of "
         "et_vk.linear_qcs4w (custom_ops_lib) never takes the 8 off: the fused program computes the linear plus "
         "8 * s * sum(x) (reports/upstream/repro_vulkan_linear_qcs4w_cpu_offset.py)",
         upstream=ET + "backends/vulkan/custom_ops_lib.py (linear_qcs4w)"),
    Rule(("FusePatternsPass", "partitioner.vulkan"), ("runs",), r"raised:? AssertionError:?\s*$",
         "QuantizedConvolutionMatch asserts that a dequantized conv weight's scale and zero point trace to "
         "placeholders: a per-tensor quantized weight (targeted_quant_samsung, XNNPACK's per-tensor config) has them "
         "as Python floats, and the detector asserts instead of declining the match, as it does for other forms it "
         "does not support", upstream=ET + "backends/vulkan/patterns/quantized_convolution.py (QuantizedConvolutionMatch)"),
    Rule(("ToOutVarPass", "CadenceToOutVarPass"), ("runs",), r"Missing out variants: \{'aten::_assert_scalar'\}",
         "targeted_asserts keeps the runtime assertions of a data-dependent value (aten._assert_scalar, which has no "
         "out variant): to_executorch runs RemoveGraphAssertsPass right before the memory-planning passes "
         "(edge_to_executorch_passes), so ToOutVarPass never meets one", "precondition",
         upstream=ET + "exir/program/_program.py (edge_to_executorch_passes)"),
    Rule(("EdgeToBackendOpsPass",), ("verifier",), r"Could not guard on data-dependent expression",
         "turns the operator.ge / le of targeted_asserts' unbacked value into executorch_prims ops, which (upstream's "
         "comment) cannot handle unbacked symbols: the edge verifier's fake propagation of them guards on u0; "
         "to_executorch runs no interpreter-based pass after it and removes the assertions next "
         "(RemoveGraphAssertsPass)", "by-design",
         upstream=ET + "exir/program/_program.py (edge_to_executorch_passes)"),
    Rule(("ToOutVarPass", "CadenceToOutVarPass"), ("runs",), r"Missing out variants: \{'aten::pad'\}",
         "targeted_transforms_permutes keeps aten.pad whole (preserve_ops, as a backend that lowers pad itself "
         "does): no portable kernel library has an out variant for it, and in such a flow the delegate consumes it "
         "before to_executorch", "precondition"),
    Rule(("ConvertBmmToMatmul",), ("verifier",), r"aten\.matmul\.default is not in Core ATen",
         "its aten.matmul is what QNN keeps whole (get_skip_decomp_table), and QNN lowers with "
         "_check_ir_validity=False (qnn_edge_config): the edge verifier is not its contract", "by-design",
         upstream=ET + "backends/qualcomm/utils/utils.py (qnn_edge_config)"),
    Rule(("DecomposeColIm", "RecomposePixelUnshuffle"), ("verifier",),
         r"aten\.pixel_(un)?shuffle\.default is not in Core ATen",
         "emits pixel_(un)shuffle (from im2col/col2im, or recomposed), QNN ops that are not core ATen; QNN lowers with "
         "_check_ir_validity=False (qnn_edge_config)", "by-design",
         upstream=ET + "backends/qualcomm/utils/utils.py (qnn_edge_config)"),
    Rule(("RecomposeRmsNorm",), ("verifier",), r"aten\.rms_norm\.default is not in Core ATen",
         "recomposes aten.rms_norm, not a core ATen op: QNN lowers with _check_ir_validity=False (qnn_edge_config), "
         "Samsung runs it inside EnnBackend.preprocess, where nothing checks the edge dialect", "by-design",
         upstream=ET + "backends/qualcomm/utils/utils.py; backends/samsung/enn_preprocess.py"),
    Rule(("RecomposeRmsNorm",), ("numerics",), r"Tensor-likes are not close",
         "_get_gamma_node takes the first non-call_function argument of the output mul as the weight: for an "
         "nn.RMSNorm without a weight that is the input itself, so it emits rms_norm(x, <whole shape>, x, eps) "
         "(reports/upstream/repro_samsung_rms_norm_weightless.py)",
         upstream=ET + "backends/samsung/_passes/compose_rms_norm.py (_get_gamma_node)"),
    Rule(("RecomposePadMaxPool2d",), ("numerics", "val_matches_execution"), r".",
         "moves max_pool2d's padding into a constant_pad_nd(-inf) but keeps ceil_mode=True, so a window PyTorch "
         "drops (starting in the right padding) survives: (1, 2, 4, 4) instead of (1, 2, 3, 4); the new pool's "
         "meta['val'] is the padded input's (reports/upstream/repro_qnn_recompose_pad_maxpool2d_ceil_mode.py)",
         upstream=ET + "backends/qualcomm/_passes/recompose_pad_maxpool2d.py (call)"),
    Rule(("DecomposeMaxPool3d",), ("numerics", "val_matches_execution"), r".",
         "replaces the multi-output max_pool3d_with_indices by a plain tensor but keeps its getitem(., 0) user, "
         "which then selects batch 0 (reports/upstream/repro_qnn_decompose_maxpool3d_batch.py)",
         upstream=ET + "backends/qualcomm/_passes/decompose_maxpool3d.py (call)"),
    Rule(("DecomposeWrapWithAutocast",), ("runs",), r"KeyError: 'arg\d+_\d+'",
         "keys its operand remap by the outer names (x, p_w) while merge_decomposed_graph looks up the submodule's "
         "placeholder names (arg0_1, ...): KeyError on any autocast region "
         "(reports/upstream/repro_qnn_decompose_wrap_with_autocast_keyerror.py)",
         upstream=ET + "backends/qualcomm/_passes/decompose_wrap_with_autocast.py (_replace)"),
    Rule(("LiftConstantScalarOperands",), ("runs",), r"'WrapWithAutocast' object has no attribute '_schema'",
         "reads every call's _schema; a wrap_with_autocast region is a higher-order op without one, which QNN's "
         "export pipeline inlines first (DecomposeWrapWithAutocast runs before it in get_export_passes)",
         "precondition", upstream=ET + "backends/qualcomm/_passes/qnn_pass_manager.py (get_export_passes)"),
    Rule(("DecomposePDist",), ("verifier",), r"Invalid get_attr type",
         "registers its index tensors as buffers read by get_attr; QNN's export pipeline lifts them right after "
         "(lift_constant_tensor_pass in transform_for_export_pipeline)", "precondition",
         upstream=ET + "backends/qualcomm/_passes/qnn_pass_manager.py (transform_for_export_pipeline)"),
    Rule(("ConvertDtypePass",), ("runnable",), r"\"pdist\" not implemented for 'Half'",
         "the float16 program is for a backend's kernels: the CPU reference has no float16 pdist", "precondition"),
    Rule(("CadenceToOutVarPass",), ("runs",), r"Missing out variants: \{[^}]*'quantized_decomposed::",
         "a float program with quantized_decomposed quantize/dequantize called directly: those ops have no out "
         "variant, and Cadence's flow replaces them with cadence::quantize_per_tensor / dequantize_per_tensor "
         "(ReplaceOpsInGraph passes) before to_out_var; built as to_executorch builds it (raise on a missing out "
         "variant) it refuses them, as its [ignore_missing] configuration is there to show", "precondition",
         upstream=ET + "backends/cadence/aot/to_out_var_pass.py"),
    Rule(("SimplifySliceOpPass",), ("numerics", "runnable", "runs"),
         r"attribute 'shape' do not match|expected src to have a size equal to the slice|Attempting to broadcast"
         r"|cannot be broadcast to indexing result",
         "reads slice_copy's dim / start / end / step only from node.args: when they are keywords (exir.serde "
         "save/load leaves every defaulted argument one, and passgate's case cache goes through it) it takes dim 0 "
         "and the full range, so the next op gets the unsliced tensor",
         upstream=ET + "backends/cadence/aot/simplify_ops.py (SimplifySliceOpPass)"),
    Rule(("ToOutVarPass", "CadenceToOutVarPass"), ("runs",), r"Missing out variants: \{'aten::(_prelu_kernel|max_pool2d)'\}",
         "targeted_xnnpack_preserved keeps aten._prelu_kernel whole, targeted_transforms_layout3 aten.max_pool2d "
         "(preserve_ops, as XNNPACK's partitioner keeps the ops it delegates): no portable kernel library has an out "
         "variant for them (max_pool2d_with_indices.out only), and in the XNNPACK flow the delegate consumes them "
         "before to_executorch", "precondition"),
    Rule(("OpReplacePass", "DebugHandleGeneratorPass"), ("verifier",),
         r"EdgeOpOverload: aten\._to_copy\.default>.*should not (be|have)",
         "on the core-ATen joint program OpReplacePass makes edge ops, judged (as to_edge judges them) with the edge "
         "verifier in dim-order mode, to_edge's default: its _to_copy is what MemoryFormatOpsPass, the next step "
         "of to_edge, turns into _to_dim_order_copy; that entry, run after OpReplacePass, passes the verifier",
         "by-design"),
    Rule(("DecomposeLinearPass",), ("numerics",), r"Tensor-likes are not close",
         "reads linear's bias only from node.args[2]: with the bias as a keyword (exir.serde save/load leaves "
         "arguments that have defaults as keywords; passgate's case cache goes through it) it builds t + matmul "
         "without the add, so the bias is lost",
         upstream=ET + "backends/transforms/decompose_linear_pass.py (DecomposeLinearPass.call)"),
    Rule(("AnnotateGetAttr",), ("val_matches_execution",), r"dequantize_per_channel.*says shape \(\d+, \d+, \d+\)",
         "its prerequisite CanonicalizeConv (conv1d -> conv2d) unsqueezes the int8 weight but leaves the 3-D "
         "meta['val'] on the dequantize_per_channel of it: a stale shape, as on wav2letter_q8",
         upstream=ET + "backends/qualcomm/_passes/canonicalize_conv.py"),
    Rule(("AnnotateQuantAttrs",), ("runs",), r"Expect getitem to be parameter, buffer, get_attr",
         "a dynamic quantization chain: the scale and zero point are getitems of choose_qparams, computed at run "
         "time, and get_quant_attrs reads qparams only from parameters, buffers or constants; QNN's quantizer "
         "makes static qparams only", "precondition",
         upstream=ET + "backends/qualcomm/_passes/utils.py (get_quant_attrs)"),
    Rule(("DecomposeDiagonal",), ("numerics", "val_matches_execution"), r"shape|says shape",
         "reads diagonal's offset / dim1 / dim2 only from node.args: as keywords (exir.serde save/load leaves "
         "arguments that have defaults as keywords) it takes the defaults and takes the wrong diagonal, as "
         "DecomposeTriu does with diagonal", upstream=ET + "backends/qualcomm/_passes/decompose_diagonal.py"),
    Rule(("ConvertDtypePass",), ("runnable",),
         r"Argument 'dtype' specified both as positional and keyword|expected at most \d+ argument\(s\) but received",
         "sets dtype=dst as a keyword on every op yielding the source dtype whose schema has an argument named "
         "dtype: quantized_decomposed.dequantize_per_tensor's dtype is the quantized input's dtype, positional, so "
         "the call has it twice (and would have the wrong meaning as a keyword); Cadence's dequantize_per_tensor "
         "(targeted_exir_misc3) says so as too many arguments",
         upstream=ET + "backends/transforms/convert_dtype_pass.py (_convert_dtype)"),
    Rule(("PropagateViewCopyPermuteDownPass",), ("runs",), r"IndexError: tuple index out of range",
         "_maybe_swap_permute_args reads the next op's dim from next_node.args[1] only: a cat whose dim is the "
         "default (left out, or a keyword after exir.serde save/load) has no args[1]",
         upstream=ET + "backends/transforms/propagate_view_copy_permute_pass.py (_maybe_swap_permute_args)"),
    # -- first met on targeted_vulkan_patterns2, the LLM decode step (suite 2026.11.11) --------------------------
    Rule(("FusePatternsPass",), ("runs",), r"raised:? AssertionError:?\s*$",
         "patterns/sdpa.py: CausalSDPAMatch matches the llama.custom_sdpa of a KV-cache attention without finding "
         "its llama.update_cache (to_edge wraps the cache write in auto_functionalized_v2), and its replacement "
         "asserts instead of the match declining; the catalog entry runs the pass on the program to_edge returns, "
         "VulkanBackend.preprocess first runs unsafe_remove_auto_functionalized_pass (the `vulkan` pipeline's "
         "step 01, after which the same pass fuses both attentions)", "precondition",
         upstream=ET + "backends/vulkan/patterns/sdpa.py (replace_custom_sdpa_with_causal_sdpa)", graphs=("targeted_vulkan_patterns2",)),
    Rule(("partitioner.vulkan",), ("runs",), r"An error occurred when running the 'FusePatternsPass'",
         "inside the delegate's program a torchao embedding table built by a cat of two tables is a user input, "
         "not a parameter: the torchao embedding match accepts the dequantize_affine over it (outside a delegate "
         "it declines that form) and its replacement calls register_param_mutation on the cat, which raises",
         upstream=ET + "backends/vulkan/patterns/quantized_embedding.py", graphs=("targeted_vulkan_patterns2",)),
    Rule(("ToOutVarPass", "CadenceToOutVarPass"), ("runs",), r"'AutoFunctionalizedV2' object has no attribute '_schema'",
         "reads the schema of every call_function target, and the higher-order auto_functionalized_v2 a mutating "
         "custom op (llama.update_cache) is wrapped in has none: to_executorch runs "
         "unsafe_remove_auto_functionalized_pass before it (to_executorch steps 02 and 12)", "precondition",
         upstream=ET + "exir/passes/__init__.py (ToOutVarPass)"),
    Rule(("unsafe_remove_auto_functionalized_pass",), ("verifier",), r"is not functional",
         "turns auto_functionalized_v2 back into the in-place custom op (llama.update_cache) the runtime executes: "
         "the edge verifier admits only functional ops, so to_executorch and VulkanBackend.preprocess verify "
         "before this pass, never after it", "by-design",
         upstream=ET + "exir/passes/remove_auto_functionalized_pass.py"),
    Rule(("ToOutVarPass",), ("runs",), r"Missing out variants: \{'torchao::dequantize_affine'\}",
         "torchao's dequantize_affine has no ExecuTorch out variant: a torchao-quantized program reaches "
         "to_executorch with it inside a delegate (XNNPACK, Vulkan) or replaced by a backend's fused op, never "
         "on the portable CPU path", "precondition", upstream=ET + "exir/passes/__init__.py (ToOutVarPass)"),
    Rule(("quant_fusion_and_const_prop_pass",), ("runs",), r"'bool' object has no attribute 'all'",
         "the torchao embedding patterns' filter evaluates (zero_point == 0).all() on the matched zero point, and "
         "torchao's dequantize_affine takes zero_point=None (a symmetric table): the comparison gives a Python "
         "bool and the filter raises instead of treating None as zero",
         upstream=ET + "exir/passes/_quant_patterns_and_replacements.py (_filter)"),
    Rule(("AnnotateQuantAttrs",), ("runs",), r"to be parameter, buffer, get_attr, or lifted tensor constant",
         "QNN's quantized flow takes a dequantized weight to be a constant it can read: a table computed in the "
         "program (the cat of two embedding tables feeding a dequantize) is asserted on, not declined; QNN "
         "lowers models whose quantized weights are parameters", "precondition",
         upstream=ET + "backends/qualcomm/_passes/annotate_quant_attrs.py", graphs=("targeted_vulkan_patterns2",)),
    Rule(("FoldQDQ",), ("numerics", "val_matches_execution"),
         r"dtype' do not match: torch\.int(8|32) != torch\.float32|says torch\.float32, execution gave torch\.int(8|32)",
         "folds the dequantize of each quantized embedding table into QNN's annotations, so on the CPU the "
         "embedding gathers the integer rows and returns them (the QNN delegate dequantizes from the "
         "annotations): by design the program computes integers where its meta['val'] and the input program "
         "have floats", "by-design", upstream=ET + "backends/qualcomm/_passes/fold_qdq.py", graphs=("targeted_vulkan_patterns2",)),
    Rule(("ChannelsLastTaggedReshapePass",), ("runs",), r"'immutable_list' object has no attribute 'op'",
         "is_nhwc_node takes a dequantize's input to be a quantize and reads that node's args[0] as a node: a "
         "dequantize of a table built by cat (whose args[0] is the list of tables) raises",
         upstream=ET + "backends/xnnpack/_passes/channels_last_tagged_reshape_pass.py (is_nhwc_node)"),
    # -- first met on targeted_layout_bn, targeted_exir_memory, targeted_vulkan_patterns, targeted_asserts,
    #    targeted_cadence_ops and targeted_qnn_samsung_ops (suite 2026.11.10) ---------------------------------
    Rule(("ToOutVarPass", "CadenceToOutVarPass"), ("runnable",), r"'memory_format' argument is incompatible with 'out'",
         "targeted_layout_bn allocates channels-last tensors (_empty_dim_order with a dim_order): ToOutVarPass makes "
         "it _empty_dim_order.out, whose Python implementation (dim_order_ops_registry._empty_dim_order_out_impl) "
         "calls aten.empty.out with the memory_format it derives from the dim order, an argument ATen rejects "
         "beside an out tensor; the program cannot run outside the ExecuTorch runtime",
         upstream=ET + "exir/passes/dim_order_ops_registry.py (_empty_dim_order_out_impl)"),
    Rule(("ToOutVarPass", "CadenceToOutVarPass"), ("runnable",),
         r"Could not run 'quantized_decomposed::embedding_4bit\.dtype_out'",
         "[ignore_missing] turns quantized_decomposed.embedding_4bit.dtype into its out variant, whose schema is "
         "registered in Python but whose kernel only ExecuTorch's quantized kernel library has: the out-variant "
         "program runs on the runtime, not on torch's CPU kernels", "by-design"),
    Rule(("ConstPropPass",), ("verifier",), r"Tensors in Aten dialect must be contiguous",
         "folds a constant chain that ends in a channels-last conversion (targeted_layout_bn's 4-D layer scale) "
         "and stores the non-contiguous result as a constant; the edge verifier requires contiguous constants, "
         "and the pass neither makes it contiguous nor keeps the conversion",
         upstream=ET + "exir/passes/const_prop_pass.py"),
    Rule(("QuantFusionPass",), ("runs",), r"node_value_dict cannot be None",
         "built as its signature allows (node_value_dict=None), its torchao quantized-embedding filter asserts "
         "on the first match instead of declining it: a torchao int4 embedding (targeted_vulkan_patterns) makes "
         "the pass raise; quant_fusion_and_const_prop_pass, which supplies the values, gets past it",
         upstream=ET + "exir/passes/_quant_patterns_and_replacements.py (get_embedding_replacement_filter)"),
    Rule(("quant_fusion_and_const_prop_pass",), ("signature", "verifier"),
         r"^outputs \[|User output .* is not in the correct order or is not found",
         "QuantFusionPass rewrites the program's graph module in place, replacing embedding outputs by "
         "embedding_4bit / embedding_byte nodes, but the ExportedProgram's graph signature still names the old "
         "output nodes: signature and graph disagree, which the edge verifier rejects",
         upstream=ET + "exir/passes/quant_fusion_pass.py (quant_fusion_and_const_prop_pass)"),
    Rule(("ConvertReshapingNodesToViewPass",), ("runnable",), r"SymIntArrayRef expected to contain only concrete",
         "writes the reshape's size from its output's meta['val'], symbolic for targeted_exir_memory's dynamic "
         "length, so view_copy gets a SymInt the program cannot run with; NXP's Neutron flow lowers static "
         "shapes only", "precondition", upstream=ET + "backends/nxp/_passes"),
    Rule(("partitioner.vulkan", "partitioner.xnnpack"), ("runs",),
         r"PendingUnbackedSymbolNotFound|AssertionError: u\d+ -> u\d+",
         "to_edge_transform_and_lower re-traces the program with run_decompositions, which loses track of "
         "data-dependent (unbacked) sizes (.item(), a boolean-mask gather, nonzero): torch.export raises before "
         "the partitioner sees the graph; to_edge on the same program lowers it",
         upstream="https://github.com/pytorch/pytorch/blob/v2.13.0/torch/export/exported_program.py "
                  "(_decompose_exported_program)"),
    Rule(("partitioner.xnnpack",), ("runs",), r"flatc.*returned non-zero exit status",
         "XNNPACK's serializer writes a negative value (-6: a dimension not normalised) into an unsigned field of "
         "its flatbuffer schema for an op of targeted_cadence_ops, and flatc rejects the file, so lowering raises "
         "(the node visitor was not identified)", upstream=ET + "backends/xnnpack/serialization"),
    Rule(("DecomposeAny",), ("runnable", "numerics"), r"must match the size|attribute 'shape' do not match",
         "reads any.dim's keepdim only from node.args[2]: given as a keyword (keepdim=True, as export and "
         "exir.serde leave it) it takes False and the sum drops the dimension, so the where after it no longer "
         "broadcasts", upstream=ET + "backends/qualcomm/_passes/decompose_any.py"),
    Rule(("I64toI32",), ("runs",), r"KeyError: 'val'",
         "is_constant reads meta['val'] of every get_attr it meets; the graph modules of a torch.cond have none "
         "(targeted_layout_bn, targeted_exir_memory): QNN lowers no control flow", "precondition",
         upstream=ET + "backends/qualcomm/builders/utils.py (is_constant)"),
    Rule(("LiftConstantScalarOperands",), ("runs",), r"'(CondOp|WhileLoopOp)' object has no attribute '_schema'",
         "reads node.target._schema of every call_function with a scalar operand; the higher-order torch.cond "
         "(and torch.while_loop) has no schema: QNN lowers no control flow", "precondition",
         upstream=ET + "backends/qualcomm/_passes/lift_constant_scalar_operands.py"),
)
