"""Why upstream passes violate the IR spec: triage rules for violations no catalog entry names.

A catalog entry's ``known`` records a failure its author investigated for
that one pass. Many violations on the pinned executorch share one cause
across passes (new nodes made with ``graph.create_node`` and no metadata, a
pass that edits the program it was handed, ops the edge verifier only
accepts after backend preprocessing), so they are triaged here once, by the
pass's class name, the check and the violation's message. ``passgate
baseline update`` uses these rules (through the ``passgate.triage`` entry
point group, where pyproject.toml registers :func:`triage`) for every
violation the run did not already annotate; a violation no rule explains
stays ``untriaged`` and the tests refuse a committed baseline that holds one.

Pipeline steps (``vulkan/06:FusePatternsPass``) match by their class name,
like catalog entries (``vulkan.FusePatternsPass``) and their configurations
(``vulkan.TagMemoryMetaPass[buffer]``).
"""

from __future__ import annotations

import re
from typing import Optional

from harness.catalog import KnownFailure, split_config
from harness.core.results import check_ids
from passes.triage_rule import ET, Rule
from passes.triage_runtime import RUNTIME_RULES
from passes.triage_steps import STEP_RULES
from passes.triage_targeted import TARGETED_RULES
from passes.triage_targeted2 import LATER_RULES

VK_META = ET + "backends/vulkan/patterns"

__all__ = ["Rule", "RULES", "VULKAN_CHECKS", "attr_of", "triage"]

_META = ("meta_stack_trace", "meta_nn_module_stack")
_FUSIONS = ("vulkan-preprocess", "fuse-patterns")  # vulkan.backend.fusion's built-in fusions, as the Vulkan checks name them
VULKAN_CHECKS = check_ids("vulkan")
_DIAGNOSED = ""  # reason: the diagnosis passgate's Vulkan checks wrote into the message ("Fault: ...")

RULES: tuple[Rule, ...] = (
    # -- metadata -----------------------------------------------------------------------------------
    Rule(("*",), _META, r"new node\(s\) lack",
         "creates nodes with graph.create_node / call_function and copies no stack_trace or nn_module_stack from "
         "the node(s) they replace (the pass-writing guide asks every new node to carry them)"),
    Rule(("*",), _META, r"surviving node\(s\) lost",
         "rebuilds nodes it keeps (unsqueeze/squeeze around conv1d) and drops their stack_trace and "
         "nn_module_stack"),
    # results recorded before passgate fixed these false positives of its own (a re-run no longer reports them;
    # delete this rule once no results document predates the fixes)
    Rule(("*",), ("meta_val",), r"lack meta\['val'\]: _assert_tensor_metadata\w*(, _assert_tensor_metadata\w*)*$",
         "stale passgate false positive (fixed in harness/check/metadata.py nodes_without_val): the only nodes named "
         "are aten._assert_tensor_metadata, whose schema returns nothing, so torch.export gives them no meta['val']",
         "harness"),
    Rule(("MemoryPlanningPass", "ToOutVarPass", "to_scratch_op_pass", "CadenceToOutVarPass"), ("val_matches_execution",),
         r"alloc(_\d+)?: meta\['val'\] says shape \(s\d+",
         "stale passgate false positive (fixed in harness/check/verifiers.py val_matches_execution): memory.alloc "
         "evaluates each symbolic dim to its upper bound (exir.sym_util.eval_shape), so the planned buffer of a "
         "dynamic-batch tensor is (64, ...) by design and the out-variant op resizes it; the check compared it "
         "with the sample's batch", "harness"),
    Rule(("*",), ("meta_val",), r"lack meta\['val'\]",
         "inserts nodes without meta['val'] (no FakeTensor propagation), so later passes that read val see none"),
    # -- the program it was handed ------------------------------------------------------------------
    Rule(("*",), ("input_unchanged",), r"returned a new program but also edited",
         "half in place: returns a new graph module but also edits the one it is handed, so a caller that keeps "
         "its input (verify-each, bisection, a pass manager that falls back) sees it change"),
    # -- meta['val'] against execution -------------------------------------------------------------
    Rule(("MemoryPlanningPass", "to_scratch_op_pass", "CadenceToOutVarPass", "ToOutVarPass"),
         ("val_matches_execution",), r"split_with_sizes_copy.*sequence",
         "out-variant form: split_with_sizes_copy.out writes into its out tensors and returns None while "
         "meta['val'] keeps the functional result (a list); the ExecuTorch dialect is not run op by op",
         "by-design"),
    Rule(("QuantFusionPass", "quant_fusion_and_const_prop_pass"), ("val_matches_execution",),
         r"says torch.float32, execution gave torch.int8",
         "fuses the q/dq pair around cat into an int8 cat but leaves the float32 meta['val'] on it"),
    Rule(("ConvertDtypePass", "I64toI32"), ("val_matches_execution",),
         r"(argmax|argmin|nonzero)\w*: meta\['val'\] says torch.int32, execution gave torch.int64",
         "converts meta['val'] of every int64 node to int32 but casts nothing after ops whose result is int64 "
         "whatever their inputs (argmax, argmin, nonzero): they keep computing int64 under an int32 meta['val']",
         upstream=ET + "backends/transforms/convert_dtype_pass.py"),
    Rule(("ConvertDtypePass", "I64toI32"), ("val_matches_execution",),
         r"(sort|topk|min_dim|max_dim|split\w*|cat|view_copy|permute_copy|sub_tensor)\w*: meta\['val'\] says "
         r"torch.int(32|64), execution "
         r"gave torch.int(64|32)",
         "rewrites meta['val'] only of nodes holding one tensor: multi-output ops (sort, min.dim) and their getitems "
         "keep the old integer dtype in meta['val'] while they compute the new one, and ops fed by their indices "
         "(always int64 at run time) get a converted meta['val'] they do not compute",
         upstream=ET + "backends/transforms/convert_dtype_pass.py"),
    Rule(("LayoutTransform",), ("val_matches_execution",), r"aten_permute_copy",
         "insert_permute=True: the permutes it inserts around layout-sensitive ops (convolution, group norm) keep the "
         "NCHW meta['val'] of the tensor they transpose (QNN's op builders read the axis-order tag instead), so meta "
         "describes the NCHW tensor while the node computes the channel-last one", "by-design"),
    Rule(("Conv1dToConv2d",), ("val_matches_execution",), r"aten_convolution\w*: meta\['val'\] says shape",
         "rewrites the conv1d in place into unsqueeze -> 4-D convolution -> squeeze but leaves the convolution's "
         "3-D meta['val']: the ExportPass retrace that would recompute it runs on the result and is thrown away "
         "(`_ = super().call(graph_module)`)", upstream=ET + "backends/samsung/_passes/conv1d_to_conv2d.py"),
    Rule(("DecomposeAtan2",), ("val_matches_execution",), r"aten_(eq|lt|ge|gt)_tensor|aten_where_self",
         "every node of the piecewise decomposition copies the atan2 node's meta['val'] (only the dtype fixed to "
         "bool for comparisons), but the comparisons of one operand with 0 and the wheres over them have that "
         "operand's shape, not the broadcast output shape", upstream=ET + "backends/qualcomm/_passes/decompose_atan2.py"),
    Rule(("DecomposeVar",), ("val_matches_execution", "numerics"), r"mean_dim|attribute 'shape' do not match",
         "reads var.correction's dim only from the positional args; a program that passes it as a keyword "
         "(ExecuTorch's program serde, exir.serde save/load, which passgate's case cache goes through, gives "
         "dim=[1] as a kwarg) is decomposed as a variance over every dim, so shape and values change (see "
         "reports/upstream/repro_decompose_var_keyword_dim.py)",
         upstream=ET + "backends/qualcomm/_passes/decompose_var.py"),
    Rule(("EnforceContiguousDimOrder",), ("runnable", "verifier", "runs"),
         r"bool tensor is not supported|does not support bool input|mismatched dtypes|cannot be safely cast",
         "removes every _to_dim_order_copy that is not an IO boundary clone, the dtype casts too: the ops reading a "
         "cast value get the uncast dtype (a bool mask subtracted, argmax over bool, operands of mismatched dtypes, "
         "elu over an int tensor, which the retrace refuses) (see "
         "reports/upstream/repro_enforce_contiguous_dim_order_drops_casts.py)",
         upstream=ET + "backends/transforms/enforce_contiguous_dim_order.py"),
    Rule(("constant_prop_pass", "ConstantPropPass"), ("verifier",), r"aten.clone.default.*should not be used in dim_order mode",
         "an output that folds to a constant gets a clone; the op is aten.clone unless the caller passes "
         "_skip_dim_order=False, and the default is True, while to_edge's default programs are in dim-order mode: "
         "called with its defaults on such a program it leaves an op the edge verifier rejects (Samsung's "
         "ConstantPropPass calls it so)",
         upstream=ET + "exir/passes/constant_prop_pass.py (_update_output_node_and_specs)"),
    Rule(("RemoveMixedTypeOperators",), ("input_unchanged",),
         r"changed the shared graph case it was never handed",
         "on a dynamic-batch program it specializes the batch symbol (evaluating it concretely while it retraces), "
         "and the ShapeEnv is shared by every deepcopy of the program: the caller's own program then has meta['val'] "
         "shapes with the concrete size where the symbol was (measured: s4 -> 3 on the copy the harness keeps)"),
    Rule(("SqueezeUnsqueezeInputs",), ("input_unchanged",), r"changed the shared graph case it was never handed",
         "on a dynamic-batch program should_squeeze tests `shape[0] == shape[1] == shape[2] == 1` on meta['val'] "
         "sizes, which guards on the batch symbol and specializes it (s6 -> 3, measured) in the ShapeEnv every copy "
         "of the caller's program shares: the caller's meta['val'] shapes then carry the concrete size",
         upstream=ET + "backends/vulkan/_passes/squeeze_unsqueeze_inputs.py (should_squeeze)"),
    Rule(("ChannelsLastTaggedReshapePass",), ("runs",), r"x must be Tensor or scalar, got SymInt",
         "on a dynamic-batch program it inserts its memory-format _to_copy on every input of a node it converts, a "
         "sym_size SymInt too: the retrace asserts", upstream=ET + "backends/xnnpack/_passes/channels_last_tagged_reshape_pass.py"),
    Rule(("partitioner.vulkan",), ("runs",), r"graph_output_allocated not set",
         "lowering to Vulkan asserts in MemoryPlanningPass.verify_graph_input_output: the output node of a delegated "
         "subgraph of this dynamic-batch program yields no tensor spec (seen on a graph whose outputs include a size "
         "scaled by x.shape[0]; the partition at fault was not narrowed further)",
         upstream=ET + "exir/memory_planning.py (verify_graph_input_output)"),
    # -- numerics ----------------------------------------------------------------------------------
    Rule(("EnforceContiguousDimOrder",), ("numerics",), r"attribute 'dtype' do not match|not close",
         "removes every _to_dim_order_copy that is not an IO boundary clone, including the ones that change dtype "
         "(x.int(), x.to(torch.int64)): the cast disappears and the output keeps the input's dtype, or (a float -> "
         "int32 -> float round trip, targeted_qnn_samsung_ops) loses the truncation "
         "(see reports/upstream/repro_enforce_contiguous_dim_order_drops_casts.py)",
         upstream=ET + "backends/transforms/enforce_contiguous_dim_order.py"),
    Rule(("ConvertToLinearPass",), ("numerics",), r"not close",
         "a linear over a channels-last rank-4 input is decomposed as expand/clone/view/bmm/view + add(bias); the "
         "pass rebuilds aten.linear from the bmm with the weight only (find_bias_for_mm looks at mm, not bmm) and "
         "erases the partition's add: the bias is dropped (see reports/upstream/repro_convert_to_linear_drops_bias.py)",
         upstream=ET + "backends/xnnpack/_passes/convert_to_linear.py"),
    Rule(("reinplace_pass", "NativeReinplacePass"), ("numerics",), r"not close",
         "counts later uses of a value only among call_function nodes, never the output node: a tensor the program "
         "returns (max_pool2d's output) that feeds gelu is overwritten by gelu_, so the returned value changes "
         "(see reports/upstream/repro_reinplace_pass_overwrites_output.py)",
         upstream=ET + "exir/passes/reinplace.py"),
    Rule(("DecomposeAtan2",), ("numerics",), r"^draw edge",
         "the piecewise formula ignores signed zeros: it treats x = -0.0 as x = 0 (atan2(+0, -0) is pi in torch, "
         "the decomposition gives 0) and reads y = -0.0 as y >= 0; only the edge-value draw (signed zeros) shows it",
         upstream=ET + "backends/qualcomm/_passes/decompose_atan2.py"),
    Rule(("LayoutTransform",), ("numerics", "runnable", "verifier"),
         r"not close|attribute 'shape' do not match|Given groups|must match the size|Attempting to broadcast",
         "insert_permute=True: convolutions and group norms now read channel-last (NHWC) activations, the layout "
         "QNN's op builders take, while aten ops on CPU (and shape propagation) read NCHW: the program no longer "
         "runs or computes the model as ATen (as for the conv graphs, where the catalog records it)", "by-design"),
    # -- the dialect verifier ------------------------------------------------------------------------
    Rule(("QuantFusionPass", "quant_fusion_and_const_prop_pass", "FoldQDQPass", "DecomposeAtenApproxGeluPass"),
         ("verifier",), r"mismatched dtypes",
         "leaves an op taking int8 and float32 tensors together (a q/dq pair removed on one input only); the edge "
         "verifier rejects mixed dtypes"),
    Rule(("NativeReinplacePass",), ("verifier",), r"not in Core ATen",
         "emits in-place ops (relu_, gelu_, ...) that the edge dialect verifier rejects: it belongs after "
         "to_edge, in a backend's own lowering", "by-design"),
    Rule(("RemoveGetItemPass", "AddmmToLinearTransform", "ConvertToLinearPass"), ("verifier",), r"not in Core ATen",
         "emits a non-core ATen op (aten.linear / aten.max_pool2d) that the backend delegates; valid only inside "
         "that backend's preprocessing, not as an edge program", "by-design"),
    Rule(("I64toI32", "ChannelsLastTaggedReshapePass", "TagMemoryMetaPass", "DimOrderOpsRevertPass"), ("verifier",),
         r"should not be used in dim_order mode",
         "inserts aten._to_copy / aten.clone with memory_format, which the edge verifier rejects in dim_order mode "
         "(it wants dim_order_ops); these passes run inside backend preprocessing after the verifier",
         "by-design"),
    Rule(("ConvertDtypePass", "I64toI32"), ("verifier",), r"mismatched dtypes",
         "same cause as its val_matches_execution failure: multi-output ops (min.dim) keep their old integer dtype "
         "in meta['val'] while the other input of the cat they feed was converted, so the cat takes int32 and int64",
         upstream=ET + "backends/transforms/convert_dtype_pass.py"),
    Rule(("reinplace_pass",), ("verifier",), r"not in Core ATen",
         "emits in-place ops (index_put_) that the edge verifier rejects: to_executorch runs it "
         "(ExecutorchBackendConfig.run_reinplace_pass) after the edge dialect is left", "by-design"),
    Rule(("DecomposeAsStrided",), ("verifier",), r"Invalid get_attr type",
         "stores the gather indices it builds as a plain tensor attribute read by get_attr, not as a lifted "
         "constant of the ExportedProgram; the program verifier rejects it"),
    Rule(("LiftConstantScalarOperands",), ("verifier",), r"Invalid get_attr type",
         "lifts scalar operands into plain tensor attributes read by get_attr instead of registering them as "
         "lifted constants of the ExportedProgram; the program verifier rejects them"),
    Rule(("ReplaceViewCopyWithViewPass",), ("verifier",), r"AssertionError",
         "turns view_copy into aten.view, which only the memory-planned ExecuTorch dialect accepts; the edge "
         "verifier asserts on it (the pass belongs to to_executorch, after memory planning)", "by-design"),
    # -- Vulkan fusions on the search's committed shrunk failures (vulkan/search/pinned.py SHRUNK_FILE) ----------
    # Ahead of the two generic rules below on purpose (the first matching rule wins): a crash's "Fault:" only
    # says that the pass raised, and "fused a pattern it must decline" was first seen on q8ta_add; these say
    # which check in which pattern fails, read from the pass's traceback and the search's boundary.
    Rule(_FUSIONS, ("fusion_expected",), r"RuntimeError: shape '\[\d+, \d+\]' is invalid for input of size",
         "output channels % 4 != 0 on linear_q4gsw / linear_dq8ca_q4gsw: the pattern transposes the group scales "
         "to (groups, N) and pads N to a multiple of 4 (align_width_and_update_state_dict) while the packed weight "
         "keeps N rows, so the et_vk op's CPU implementation, which the pass runs when it re-traces the graph, "
         "cannot dequantize them together (N = 1: shape '[1, 1]' is invalid for input of size 4); the pass crashes "
         "instead of declining or padding both", upstream=VK_META + "/quantized_linear.py"),
    Rule(_FUSIONS, ("fusion_expected",), r"a and b must have same reduction dim",
         "an odd K on linear_qcs4w: FuseQuantizedOpsTransform packs the 4-bit weight two values a byte and pads an "
         "odd K with a zero column (pack_4bit_weight_tensor), and the fused op's CPU implementation, run while the "
         "pass re-traces the graph, multiplies the K-wide input by the K+1-wide unpacked weight",
         upstream=ET + "backends/vulkan/_passes/fuse_quantized_ops.py"),
    Rule(_FUSIONS, ("fusion_expected",), r"(crashed|not crash): (Exception: in FusePatternsPass: )?AssertionError: \. ",
         "a per-tensor quantized weight: QuantizedLinearMatch / QuantizedConvolutionMatch take the weight's "
         "dequantize_per_tensor, whose scale is a float argument, not a node, and `assert self.weight_scales_node "
         "is not None` fires in the matcher (quantized_linear.py:78, quantized_convolution.py:94) instead of the "
         "pattern declining the match", upstream=VK_META),
    Rule(_FUSIONS, ("fusion_expected",), r"depthwise conv requires that OC is divisible by 4",
         "the q8ta_conv2d_dw pattern matches a depthwise conv whose output channels are not a multiple of 4, then "
         "make_q8ta_conv2d_custom_op asserts OC % 4 == 0 while replacing it: the pass raises instead of declining",
         upstream=VK_META + "/quantized_convolution.py"),
    Rule(_FUSIONS, ("fusion_expected",), r"embedding_q4gsw requires symmetric quantization",
         "the embedding_q4gsw pattern matches an asymmetric int4 embedding (non-zero zero points), then "
         "replace_torchao_quantized_embedding_patterns asserts zero_point == 0 while replacing it: the pass raises "
         "instead of leaving the embedding unfused", upstream=VK_META + "/quantized_embedding.py"),
    Rule(_FUSIONS, ("fusion_expected",), r"must decline \((linear_q4gsw|linear_dq8ca_q4gsw) takes no weight zero point",
         "fuses an asymmetric int4 group-quantized weight (torchao int4 asym) into an op that takes no weight zero "
         "point: the zero points are dropped (the same case's fused_vs_qdq diagnosis: the fused program matches "
         "if the weight zero points are ignored)", upstream=VK_META + "/quantized_linear.py"),
    Rule(_FUSIONS, ("fusion_expected",), r"must decline \(q8ta_linear .*\): emitted \d+ et_vk\.q8ta_linear",
         "fuses a linear with an asymmetric per-channel int8 weight into et_vk.q8ta_linear(_gemv), which takes no "
         "weight zero point: the zero points are dropped", upstream=VK_META + "/quantized_linear.py"),
    Rule(_FUSIONS, ("fusion_expected",), r"must decline \((q8ta_linear|linear_q8ta_q8csw) .*\): emitted \d+ "
         r"_weight_int8pack_mm",
         "a statically quantized linear on a 3-D input (exported as view_copy -> mm) that the Vulkan patterns "
         "decline is taken by FuseQuantizedOpsTransform's weight-only int8 fusion: its check that the activation "
         "is not a dequantize sees the view_copy, so the linear becomes _weight_int8pack_mm, which computes in "
         "float and drops the activation and output quantization (the fused_vs_qdq diagnosis: it matches the "
         "program with every quantize -> dequantize pair removed)",
         upstream=ET + "backends/vulkan/_passes/fuse_quantized_ops.py"),
    Rule(_FUSIONS, ("fused_vs_qdq",), r"Fault undetermined: neither our reading of the fused et_vk\.q8ta_add ",
         "add's alpha is a keyword in the exported graph (aten.add.Tensor(a, b, alpha=2.0)) but the q8ta_add "
         "pattern reads it only from args[2], so et_vk.q8ta_add is given alpha = 1.0 and computes a + b instead of "
         "a + alpha * b (the search's boundary: fails when alpha != 1)", upstream=VK_META + "/quantized_binary.py"),
    Rule(_FUSIONS, ("fused_vs_qdq",), r"has shape .*Fault undetermined: neither our reading of the fused "
         r"et_vk\.q8ta_linear_gemv ",
         "two faults at once, each diagnosed alone on a neighbouring case: et_vk.q8ta_linear_gemv returns its "
         "output with N padded to a multiple of 4 ((1, 4) for N = 1) and the asymmetric weight's zero points are "
         "dropped (see fusion_expected), so no single reading of the fused arguments matches",
         upstream=VK_META + "/quantized_linear.py"),
    # -- Vulkan Q/DQ fusions: vulkan.judging.diagnose already says which op, by how much and why ----------------
    Rule(_FUSIONS, VULKAN_CHECKS, r"Fault:", _DIAGNOSED),
    Rule(_FUSIONS, VULKAN_CHECKS, r"SQNR vs float",
         "the fused program's SQNR against the float model is far below the Q/DQ program's: the fusion computes "
         "something else than the pattern it replaced (see the same case's fused_vs_qdq diagnosis)"),
    Rule(_FUSIONS, ("fused_vs_float",), r"fused outputs have shapes",
         "the fused op returns its output with N padded to a multiple of 4 ((2, 4) for N = 1) and nothing slices "
         "it back: the fused program's output shape differs from the model's"),
    Rule(_FUSIONS, ("fusion_expected",), r"fused a pattern it must decline",
         "fuses add -> relu into et_vk.q8ta_add, which has no activation argument: the relu is dropped (it only "
         "holds by accident when the output zero point clamps at 0)"),
    Rule(_FUSIONS, ("fusion_expected",), r"emits ops the Vulkan partitioner rejects: .*linear_q8ta_q8csw",
         "feeds et_vk.linear_q8ta_q8csw an int8 activation (the quantize before it is kept) while the op registry "
         "only accepts float16/float32 activations (the op quantizes inside): the runtime cannot run the result"),
    Rule(_FUSIONS, ("val_matches_execution",), r"et_vk_",
         "the fused et_vk node's meta['val'] (taken from the pattern it replaced) disagrees with what the op "
         "computes (dtype, or an output padded to a multiple of 4): memory planning reads the wrong size"),
    # -- crashes ----------------------------------------------------------------------------------
    Rule(("DecomposeAtenApproxGeluPass",), ("runs", "numerics", "verifier", "runnable"), r".",
         "call_operator never checks which operator it was called for: it rewrites every operator of the graph "
         "into the tanh-GELU formula of its first argument (see reports/upstream/repro_cadence_approx_gelu_pass.py)"),
    Rule(("MergeToDimPass",), ("runs",), r"'Node' object is not subscriptable",
         "reads node.kwargs['dim_order'] of the producer node itself (a Node), not of its kwargs: crashes on any "
         "graph with two chained _to_dim_order_copy ops"),
    Rule(("PermuteMemoryFormatsPass",), ("runnable", "meta_val", "idempotent"), r".",
         "converts every tensor input to channels_last, including rank-1 conv biases (dim_order [0, 2, 3, 1] on a "
         "rank-1 tensor), so the program no longer runs; the inserted copies carry no meta['val']"),
    Rule(("FoldQDQPass", "FoldQDQ"), ("numerics",), r"not close",
         "folds the q/dq pairs around ops it does not fuse, so those ops compute in float where the quantized "
         "program rounded: outputs move by more than the numerics tolerance", "by-design"),
    # FusePatternsPass folds no q/dq of its own (it only replaces the subgraphs its patterns match): what moves
    # the outputs is the fused et_vk ops' CPU references, which `passgate vulkan` diagnoses op by op
    Rule(("FusePatternsPass",), ("numerics",), r"not close",
         "the CPU reference implementations of the et_vk ops it fuses to do not compute what the Q/DQ program "
         "computes: q8ta_conv2d reads the weight the conv pattern packs as (OC, KH*KW*IC) back as (OC, IC, KH, KW), "
         "so a fused KxK convolution (K > 1) uses a scrambled kernel (1x1 ones match; `passgate vulkan --ops "
         "q8ta_conv2d` diagnoses it: CPU reference), and linear_dq8ca_q4gsw leaves out the 8-bit quantization of "
         "its activation", upstream=VK_META + "/quantized_convolution.py; backends/vulkan/custom_ops_lib.py"),
    Rule(("FusePatternsPass",), ("runnable",), r"must match the size of tensor",
         "the fused et_vk.q8ta_linear_gemv is given the weight sums / scales of a padded output size (12 for 10 "
         "outputs): its CPU reference implementation then fails on the program it emits",
         upstream=VK_META + "/quantized_linear.py"),
    Rule(("FusePatternsPass",), ("runs",), r"not enough values to unpack \(expected 4, got 3\)",
         "make_q8ta_conv2d_custom_op unpacks a 4-D weight (OC, IC, H, W) from every quantized convolution, so a "
         "quantized conv1d (3-D weight) crashes the pass instead of being declined",
         upstream=VK_META + "/quantized_convolution.py"),
    Rule(("partitioner.vulkan",), ("runs",), r"FusePatternsPass",
         "lowering with the Vulkan partitioner runs FusePatternsPass, which crashes on a quantized conv1d (see "
         "vulkan.FusePatternsPass x wav2letter_q8)", upstream=VK_META + "/quantized_convolution.py"),
    Rule(("TagMemoryMetaPass",), ("runs",), r"Unsupported storage type",
         "asks for the storage of a tensor the previous steps left at DEFAULT_STORAGE (an embedding index tensor) "
         "and raises instead of choosing one"),
    Rule(("ToOutVarPass",), ("runs",), r"Missing out variants: \{[^}]*'quantized_decomposed::",
         "quantized_decomposed q/dq ops have no out variants registered unless the quantized kernels library is "
         "loaded; to_executorch of a quantized program needs a backend to consume them first", "precondition"),
    Rule(("RemoveRedundantCopyPass",), ("runs",), r"Expecting input to have dtype torch.float32",
         "removes a copy that converted a bool tensor to float, so the following quantize op receives a bool "
         "tensor"),
    Rule(("FuseClampPass", "FuseClampPass#*"), ("runnable",), r"without overflow",
         "the fused conv_with_clamp gets output_max = sys.float_info.max, which does not fit float32: the op's "
         "reference raises (see reports/upstream/repro_fuse_clamp_pass.py)"),
    Rule(("ConvertBmmToMatmul",), ("runs",), r"Found a new pattern",
         "asserts on any bmm whose producers are not the one pattern it knows, instead of leaving it alone"),
    Rule(("SqueezeUnsqueezeInputs",), ("runnable",), r"SymIntArrayRef expected",
         "computes the squeezed shape from meta['val'].shape and puts the symbolic batch dim into view_copy's size "
         "list as a FakeTensor SymInt instead of a sym_size node: with a dynamic batch the program cannot run",
         upstream=ET + "backends/vulkan/_passes/squeeze_unsqueeze_inputs.py"),
    Rule(("PropagateViewCopyPermuteDownPass",), ("runs",), r"'Node' object has no attribute 'node'",
         "dim_maps._simplify_dim takes every entry of a view_copy size list for an int or SymInt; with a dynamic "
         "batch the edge program passes the size as a sym_size node, and dim.node fails",
         upstream=ET + "backends/transforms/dim_maps.py"),
    Rule(("RemoveGetItemPass",), ("runs",), r"Invalid number of users for aten.max_pool2d_with_indices",
         "asserts that max_pool2d_with_indices has exactly one user, counting a dead getitem of the indices: "
         "export deserialization (exir.serde load, passgate's case cache round trip) materializes a getitem for "
         "every output, so a loaded program with an unused indices output crashes the pass",
         upstream=ET + "backends/transforms/remove_getitem_op.py"),
    Rule(("SimplifySliceOpPass",), ("runs",), r"Given groups",
         "reads slice_copy's dim / start / end only from the positional args; a program that passes them as "
         "keywords (exir.serde save/load, which passgate's case cache goes through) is 'simplified' to a full "
         "slice of dim 0, so the next op gets the whole tensor", upstream=ET + "backends/cadence/aot/simplify_ops.py"),
    Rule(("I64toI32",), ("runs",), r"Multi output nodes currently don't support casting dtype back",
         "qualcomm I64toI32: a multi-output op whose int64 output is a graph output (sort's indices) would need a "
         "cast back to int64, which the pass does not implement (a TODO) and raises instead of leaving it alone",
         upstream=ET + "backends/qualcomm/_passes/i64_to_i32.py"),
    Rule(("to_scratch_op_pass",), ("runs",), r"Schema of kind SchemaKind.functional already exist",
         "set_mapping_for_op groups every schema of aten::pow by signature with the returns dropped, and "
         "aten::pow.int (-> float) and pow.int_to_int (-> int) then collide: any program with pow / square crashes",
         upstream=ET + "exir/operator/convert.py"),
    Rule(("ChannelsLastTaggedReshapePass",), ("runs",), r"non-NHWC compatible node",
         "lays out the input of every op in memory_sensitive_ops_nhwc (convolution, max/avg_pool2d, mean.dim, "
         "amax, max.dim, upsample_bilinear2d, prelu) channels-last and asserts that it is 4-D (and no constant "
         "already read channels-first): on most cases a reduction or pooling of a rank-1/2/3/5 tensor (amax, "
         "max.dim or mean.dim over a sequence, an unbatched avg_pool2d), or a conv1d where the pass runs alone "
         "(in the pipeline Conv1dUnsqueezePass makes it a conv2d first). "
         "It runs on the subgraph XNNPACK's partitioner delegated, which takes none of these off 4-D (MeanDimConfig, "
         "MaxDimConfig, ...; amax not at all)", "precondition",
         upstream=ET + "backends/xnnpack/_passes/channels_last_tagged_reshape_pass.py (can_be_converted_to_nhwc)"),
    Rule(("TagMemoryMetaPass",), ("runs",), r"AssertionError:\s*$",
         "the graph holds an op with no Vulkan implementation (aten.min.dim): tracing a getitem of it to its "
         "producer asserts is_valid_op_node; VulkanBackend.preprocess only receives partitions of supported ops",
         "precondition"),
    Rule(("insert_prepack_nodes",), ("runs",), r"KeyError: '(aten::|cadence::|cond'|while_loop')",
         "a constant feeds an op with no Vulkan implementation (the KeyError names it: index_put, scatter, atan2, "
         "_prelu_kernel, a Cadence op, ..., or the higher-order torch.cond / while_loop), which get_op_features looks up and raises on; the "
         "Vulkan partitioner never delegates such an op, nor control flow", "precondition"),
    Rule(("FoldQDQPass",), ("runs", "runnable"),
         r"expected scalar type|weight type \(torch.CharTensor\)|(must|to) have the same dtype",
         "removes q/dq pairs around ops it does not fold too, so a float op receives int8 tensors"),
    *TARGETED_RULES,
    *LATER_RULES,
    *RUNTIME_RULES,
    *STEP_RULES,
)


_SCOPED_FIRST = tuple(sorted(RULES, key=lambda r: not r.graphs))  # stable: each group keeps its order


def attr_of(pass_name: str) -> str:
    """``vulkan.FusePatternsPass`` / ``vulkan/06:FusePatternsPass`` / ``partitioner.vulkan`` -> the name rules use.

    A configuration entry (``transforms.ConvertDtypePass[i32_to_i64]``) is triaged as its pass: a cause
    shared by many passes does not depend on how one of them was constructed.
    """
    if pass_name.startswith("partitioner."):
        return pass_name
    return split_config(pass_name)[0].rpartition(":")[2].rpartition(".")[2].split("#")[0]


_OP_SET = re.compile(r"\{('[^'{}]*'(?:, '[^'{}]*')*)\}")


def _sorted_sets(line: str) -> str:
    """``line`` with the names of every printed set of strings sorted. A pass that names ops as a Python set
    (ToOutVarPass: "Missing out variants: {...}") prints them in string-hash order, which changes from process to
    process; sorted, the same violation meets the same rule in every ``baseline update``."""
    return _OP_SET.sub(lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", line)


def triage(pass_name: str, check: str, message: str, graph: Optional[str] = None) -> Optional[KnownFailure]:
    """The first rule explaining this violation, as a KnownFailure; None if none does. Rules scoped to the
    violation's graph come first: they were traced on it, the general ones only on their message."""
    attr = attr_of(pass_name)
    first = _sorted_sets((message or "").strip().splitlines()[0] if (message or "").strip() else "")
    for rule in _SCOPED_FIRST:
        if rule.matches(attr, check, first, graph):
            reason = rule.reason or "diagnosed by passgate: " + first.partition("Fault:")[2].strip()
            return KnownFailure(check, reason, rule.upstream, (), rule.kind)
    return None
