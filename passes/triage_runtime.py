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

RUNTIME_RULES: tuple[Rule, ...] = (
    # -- what the portable runtime of the pinned wheel does not cover ----------------------------------
    Rule(_JUDGED, _RUNS, r"this runtime registers no kernel for",
         "the portable kernel library the executorch wheel's runtime registers has no kernel for this out "
         "variant (scatter_reduce.two_out, sort.values, matmul.out, im2col / col2im, max_pool3d_with_indices, "
         "remainder.Scalar_Tensor_out, Cadence's DSP ops): the program runs only where a backend or a custom "
         "kernel library registers it", "by-design", ET + "kernels/portable/functions.yaml"),
    Rule(_JUDGED, _RUNS, r"Missing out variants: \{'(aten|torchao)::",
         "the edge program keeps ops with no out variant (ops the case preserves from decomposition, such as "
         "aten.max_pool2d, aten.pad, aten._prelu_kernel, and torchao's affine quantize ops): ToOutVarPass cannot "
         "make them runnable by the portable runtime; only a backend that takes them runs the program",
         "by-design", ET + "exir/passes/__init__.py (ToOutVarPass)"),
    Rule(_JUDGED, _RUNS, r"Unsupported control flow operator: while_loop",
         "the emitter of executorch 1.5.1 emits cond and map only: a torch.while_loop program does not reach "
         "the runtime", "by-design", ET + "exir/emit/_emitter.py"),
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
         graphs=("targeted_vulkan_qdq3",)),
    # -- numerics -------------------------------------------------------------------------------------------
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
