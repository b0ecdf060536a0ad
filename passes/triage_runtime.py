"""Triage rules for the runtime checks: why a program fails ``runtime_runs`` or ``runtime_numerics``.

The runtime checks (``serialize_roundtrip``, ``runtime_runs``,
``runtime_numerics``: harness/check/runtime.py) judge a program as the
ExecuTorch runtime of the pinned wheel runs it, so most of what they find is
not a pass's doing: the portable kernel library's coverage (no out-variant
kernel for an op, no emitter support for a construct), kernel checks that
refuse a program ``to_executorch`` accepted, and the odd numeric divergence.
They are triaged here once, by the message the check wrote, for every program
they judge: a case's own (pass name ``runtime``), a pipeline's result
(``xnnpack/runtime``) and a partitioner's lowered program. Each rule was traced
on the standard profile's cases; the graphs a rule names are where it was met.
``passes.triage.RULES`` lists these after every pass rule.
"""

from __future__ import annotations

from passes.triage_rule import ET, Rule

__all__ = ["RUNTIME_RULES"]

_JUDGED = ("runtime", "*/runtime", "partitioner.*")  # a case's program, a pipeline's result, a lowered program
_RUNS = ("runtime_runs",)
_NUMERICS = ("runtime_numerics",)
_UPSTREAM = "reports/upstream/"
_LOWERED = ("partitioner.*",)  # the lowered program's leg (harness/pipelines/lowered_runtime.py) names no failing op
_REMAINDER = ("the portable remainder kernel computes C's truncated remainder for integer dtypes (the sign of the "
              "dividend), torch.remainder the floored one (the sign of the divisor): the int8 remainder after aminmax "
              "differs where signs differ")

RUNTIME_RULES: tuple[Rule, ...] = (
    # -- what the portable runtime of the pinned wheel does not cover ----------------------------------
    Rule(_JUDGED, _RUNS, r"this runtime registers no kernel for",
         "the portable kernel library the executorch wheel's runtime registers has no kernel for this out "
         "variant (scatter_reduce.two_out, sort.values, matmul.out, im2col / col2im, max_pool3d_with_indices, "
         "remainder.Scalar_Tensor_out, Cadence's DSP ops): the program runs only where a backend or a custom "
         "kernel library registers it", "by-design", ET + "kernels/portable/functions.yaml"),
    Rule(_JUDGED, _RUNS, r"Missing out variants: \{[^}]*'(aten|torchao)::",
         "the edge program keeps ops with no out variant (ops the case preserves from decomposition, such as "
         "aten.max_pool2d, aten.pad, aten._prelu_kernel, and torchao's affine quantize ops): ToOutVarPass cannot "
         "make them runnable by the portable runtime; only a backend that takes them runs the program",
         "by-design", ET + "exir/passes/__init__.py (ToOutVarPass)"),
    Rule(_JUDGED, _RUNS, r"Unsupported control flow operator: while_loop",
         "the emitter of executorch 1.5.1 emits cond and map only: a torch.while_loop program does not reach "
         "the runtime", "by-design", ET + "exir/emit/_emitter.py"),
    Rule(_LOWERED, _RUNS, r"error: 0x14$",
         "OperatorMissing (0x14): ops the partitioner leaves outside its delegates have no kernel in the portable "
         "library the wheel's runtime registers (the graphs whose own program fails with 'this runtime registers no "
         "kernel for': scatter_reduce.two_out, sort.values, matmul.out, Cadence's DSP ops, ...)", "by-design",
         ET + "kernels/portable/functions.yaml"),
    Rule(_JUDGED, _RUNS, r"GuardOnDataDependentSymNode: Could not guard on data-dependent expression",
         "SpecPropPass (to_executorch's spec propagation, before memory planning) guards on an unbacked size (u0 < 1) "
         "that only torch._check bounds: to_executorch does not take a program whose sizes come from item() or "
         "nonzero", "precondition"),
    Rule(_JUDGED, _RUNS, r"should be contiguous or channels-last",
         "the runtime's Python bindings take input tensors in contiguous or channels-last dim order only; the "
         "case's sample input has another layout (a transposed view)", "by-design",
         ET + "extension/pybindings/pybindings.cpp"),
    Rule(("xnnpack/runtime",), _RUNS, r"memory_format that is unsupported in ExecuTorch: torch.channels_last",
         "the XNNPACK passes tag channels-last copies for the XNNPACK partitioner to take; the pipeline's result "
         "without that partitioner keeps torch.channels_last tensors, which the emitter cannot express as a dim "
         "order", "by-design", ET + "backends/xnnpack/_passes/channels_last_tagged_reshape_pass.py"),
    # -- kernels that refuse what to_executorch accepted --------------------------------------------------
    Rule(_JUDGED, _RUNS, r"error: 0x12; it stopped at op (add|clamp|div|mul|permute_copy|relu)\.out",
         "InvalidArgument (0x12): the portable kernel (add, div, mul, permute_copy, ...) checks that its inputs "
         "and output share one dim order (tensors_have_same_dim_order) and refuses the mix of channels-last and "
         "contiguous tensors the program computes and eager accepts; to_executorch does not reject it",
         upstream=_UPSTREAM + "repro_runtime_mixed_dim_order_invalid_argument.py",
         graphs=("corpus_464dc254", "corpus_7f0d7a1f", "corpus_ac0ffe7e", "corpus_cabdaeb9", "targeted_layout_bn")),
    Rule(_LOWERED, _RUNS, r"error: 0x12$",
         "InvalidArgument (0x12) from a portable kernel outside the delegates: the same graphs' own programs stop "
         "at add / mul / permute_copy, which refuse the mix of channels-last and contiguous tensors the program "
         "computes (the lowered program's leg does not name the op)",
         upstream=_UPSTREAM + "repro_runtime_mixed_dim_order_invalid_argument.py",
         graphs=("corpus_464dc254", "targeted_layout_bn")),
    Rule(_LOWERED, _RUNS, r"error: 0x1$",
         "the XNNPACK delegate fails to initialize (0x1): the pad after the quantized conv reads a dequantized "
         "tensor and is not quantized again, the partitioner still takes it, and XNNPACK refuses the "
         "StaticConstantPad node it becomes (xnn_status_invalid_parameter); the dynamically quantized linears load "
         "and run; the case's own program runs in the portable runtime and matches eager",
         upstream=_UPSTREAM + "repro_xnnpack_pad_of_dequantized_conv_fails_init.py", graphs=("targeted_quant_pad_dyn",)),
    Rule(_JUDGED, _RUNS, r"error: 0x12; it stopped at op squeeze_copy\.dims_out",
         "the portable squeeze_copy.out refuses (0x12 InvalidArgument) to resize its output to a data-dependent size "
         "(the rows of a nonzero index_select); the same program runs in torch",
         graphs=("corpus_250afd88", "corpus_353d611a", "corpus_f88eb141")),
    Rule(_JUDGED, _RUNS, r"error: 0x12; it stopped at op _native_batch_norm_legit_no_training\.out",
         "InvalidArgument (0x12): the portable batch norm kernel takes an input in contiguous dim order only "
         "(is_contiguous_dim_order) and refuses the channels-last tensor the program hands it, which eager and "
         "to_executorch accept (no repro)", graphs=("corpus_9ba8ba0b",)),
    Rule(_JUDGED, _RUNS, r"error: 0x12; it stopped at op quantize_per_tensor\.Tensor_out",
         "InvalidArgument (0x12): quantize_per_tensor.Tensor_out takes its scale as a float64 tensor only and "
         "fails the call on the float32 one torch's reference takes and to_executorch accepts (the per-channel "
         "quantize aborts on float32 scales: reports/upstream/repro_runtime_quantize_per_channel_float_scales_"
         "abort.py; this op's refusal has no repro)", graphs=("targeted_quant_samsung2",)),
    Rule(_JUDGED, _RUNS, r"killed by SIGABRT",
         "the runtime's process aborts running the program: quantize_per_channel.out checks that its scales are "
         "float64 with ET_CHECK_MSG (\"scale.scalar_type() 6 is not double type\") and aborts on the float32 "
         "scales torch's reference takes, to_executorch accepts and dequantize_per_channel.out reads; passgate "
         "keeps the abort a verdict", upstream=_UPSTREAM + "repro_runtime_quantize_per_channel_float_scales_abort.py",
         graphs=("targeted_vulkan_qdq3", "corpus_13dcdc99")),
    Rule(_LOWERED, _RUNS, r"error: 0x12$",
         "InvalidArgument (0x12) from quantize_per_tensor.Tensor_out outside the delegates: the same graph's own "
         "program stops there, the op taking its scale as a float64 tensor only and failing the call on the "
         "float32 one torch's reference takes (no repro; the lowered program's leg does not name the op)",
         graphs=("targeted_quant_samsung2",)),
    Rule(_LOWERED, _RUNS, r"mem_offset \d+ does not fit in 64 bits",
         "the graph's dynamic dim (rows of input d) is bounded only by 2**63 - 2, and ExecuTorch's memory planning "
         "plans every tensor at its upper bound: the (rows, 2) float tensors left outside the delegates (addmm, "
         "view_copy, as_strided_copy) take about 2**66 bytes each, later tensors get offsets past 2**64 and the "
         "emitter refuses them. Not an XNNPACK fault: to_edge + to_executorch of the case itself fails the same way "
         "(mem_offset near 3.7e20); its own runtime leg skips only because the case does not run in torch "
         "(runnable)",
         kind="precondition", graphs=("targeted_misc_tail",)),
    # -- numerics -------------------------------------------------------------------------------------------
    Rule(_LOWERED, _NUMERICS, r"output 0 \(torch.int8, shape \(6, 7\)\): Tensor-likes are not equal",
         _REMAINDER + " (the remainder stays outside the XNNPACK delegates)",
         upstream=_UPSTREAM + "repro_runtime_remainder_integer_truncates.py", graphs=("corpus_06c14c3d",)),
    Rule(_LOWERED, _NUMERICS, r"output \d+ \(torch.float32",
         "the XNNPACK delegate computes addmm(bias, x, w, beta, alpha) as x @ w + bias whatever beta and alpha say "
         "(its addmm config takes the op as a fully connected layer and reads neither): the beta=0.5 addmm under "
         "the max and hardswish of output 5 adds the whole bias",
         upstream=_UPSTREAM + "repro_xnnpack_addmm_ignores_beta.py", graphs=("corpus_5c0e5150",)),
    Rule(("xnnpack/runtime",), ("serialize_roundtrip",), r"does not survive executorch.exir.serde: SerializeError: "
         r"Failed serializing node",
         "ConstPropPass (step 7 of XNNPACKPassManager's list) stores each folded constant as a get_attr of a new "
         "_tensor_constant attribute, not lifted into the program's constants and signature: executorch.exir.serde "
         "(what ETRecord saves an edge program with) refuses the program; to_executorch still takes it",
         upstream=_UPSTREAM + "repro_const_prop_get_attr_breaks_exir_serde.py"),
    Rule(_JUDGED, _NUMERICS, r"output \d+ \(torch.int64, shape \(\d+, 2\)\).*no single op's ETDump output",
         "torch.nonzero: the output's TensorSpec takes the column-major dim order of torch's fake kernel while "
         "the portable nonzero.out kernel writes row-major, so the runtime returns the index pairs transposed",
         upstream=_UPSTREAM + "repro_runtime_nonzero_column_major_output.py", graphs=("targeted_exir_outputs",)),
    Rule(_JUDGED, _NUMERICS, r"dB beyond the [\d.]+ dB allowed; first diverging op: quantize_per_tensor",
         "a tie rounded the other way: the portable mean.out sums in another order than torch (1.2e-7 apart), "
         "quantize_per_tensor rounds one of the 16 pooled values one step the other way (the op named) and three "
         "of the ten int8 logits follow; judged as the XNNPACK leg judges a Q/DQ program (SQNR against its float "
         "twin, harness/check/backend_numerics.py) the ten-element output falls 0.8 dB beyond the Q/DQ program's "
         "SQNR less 1 dB on the sample (the two other draws pass): the fixed 1 dB slack cannot tell one re-rounded "
         "tie on a small output from added noise; passgate's rule, to fix in harness/check/backend_numerics.py",
         "harness", graphs=("resnet_basic_q8",)),
    Rule(_JUDGED, _NUMERICS, r"first diverging op: ",
         "the runtime computes otherwise than eager from the op named on (int8 remainder after aminmax, an "
         "index_put_ into a bool buffer, a view of a mutated buffer); each is a divergence of the portable "
         "kernels or the flow, not traced to its cause yet (no repro)",
         graphs=("corpus_06c14c3d", "corpus_c7b3bbba", "targeted_exir_memory")),
)
