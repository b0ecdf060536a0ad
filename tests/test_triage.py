"""passes/triage.py: the rules that explain violations no catalog entry names."""


def test_triage_rules_are_well_formed_and_name_their_kind():
    from passes.triage import RULES, triage

    assert all(r.kind in ("bug", "by-design", "precondition", "harness") for r in RULES)
    assert all(r.passes and r.checks for r in RULES)
    # a configuration, a pipeline step and a plain entry of the same pass share one rule
    for name in ("vulkan.TagMemoryMetaPass[fp16]", "vulkan/17:TagMemoryMetaPass"):
        assert triage(name, "runs", "the pass raised: AssertionError: ").kind == "precondition"
    k = triage("exir.MemoryPlanningPass[naive]", "val_matches_execution", "8 node(s) compute something other than "
               "meta['val'] claims; alloc: meta['val'] says shape (s77, 7, 4, 2), execution gave (64, 7, 4, 2)")
    assert k.kind == "harness" and "upper bound" in k.reason
    stale = triage("qualcomm.DecomposeCDist", "meta_val", "2 node(s) lack meta['val']: _assert_tensor_metadata_default, "
                   "_assert_tensor_metadata_default_1")
    assert stale.kind == "harness"
    assert triage("mine.MyPass", "meta_val", "1 node(s) lack meta['val']: aten_add_tensor").kind == "bug"


def test_every_violation_of_the_corpus_run_has_a_rule_and_an_honest_reason():
    """The violations the generated corpus found (one message per rule, as results.json records them)."""
    from passes.triage import triage

    cases = [
        ("qualcomm.DecomposeVar", "numerics", "draw sample: output 5 (torch.float16, shape (6, 1)): The values for "
         "attribute 'shape' do not match: torch.Size([1, 1]) != torch.Size([6, 1]).", "bug"),
        ("transforms.EnforceContiguousDimOrder", "numerics", "draw sample: output 4 (torch.int32, shape (14,)): The "
         "values for attribute 'dtype' do not match: torch.int64 != torch.int32.", "bug"),
        ("exir.reinplace_pass[elementwise]", "numerics", "draw sample: output 6 (torch.float32, shape (7, 4, 3, 2)): "
         "Tensor-likes are not close!", "bug"),
        ("qualcomm.LayoutTransform[insert_permute]", "verifier", "InternalError: Given groups=1, weight of size "
         "[3, 3, 1], expected input[4, 4, 3] to have 3 channels, but got 4 channels instead", "by-design"),
        ("xnnpack.ChannelsLastTaggedReshapePass", "runs", "the pass raised: AssertionError: Attempting to convert "
         "non-NHWC compatible node to NHWC", "precondition"),
        ("vulkan.SqueezeUnsqueezeInputs", "input_unchanged", "the pass changed the shared graph case it was never "
         "handed", "bug"),
    ]
    for pass_name, check, message, kind in cases:
        k = triage(pass_name, check, message)
        assert k is not None and k.kind == kind, (pass_name, check)
        assert message not in k.reason  # a cause, not the message again


def test_a_set_of_op_names_meets_the_same_rule_in_any_order():
    """ToOutVarPass names its missing ops as a Python set, printed in string-hash order (a new order in every
    process unless PYTHONHASHSEED is pinned): every order must meet the same rule, including an order whose first
    name is not the one the rule is about."""
    import itertools

    from passes.triage import triage

    names = ["'torchao::dequantize_affine'", "'quantized_decomposed::quantize_per_tensor'",
             "'aten::pad'"]
    for pass_name in ("exir.ToOutVarPass", "to_executorch/12:ToOutVarPass", "cadence.CadenceToOutVarPass"):
        found = {triage(pass_name, "runs", "the pass raised: RuntimeError: Missing out variants: {"
                        + ", ".join(order) + "}", "some_graph") for order in itertools.permutations(names)}
        assert len(found) == 1 and None not in found, (pass_name, found)
        assert next(iter(found)).kind == "precondition"
    # a set without a quantized op is not explained by the quantized rule, in any order
    assert triage("exir.ToOutVarPass", "runs", "Missing out variants: {'aten::foo', 'aten::bar'}", "g") is None


def test_the_runtime_checks_violations_on_the_standard_cases_have_their_rule():
    """passes/triage_runtime.py: one message per rule as the runtime leg wrote it on the standard cases; a
    kernel the runtime lacks is by design, a mixed dim order refused with 0x12 is upstream's (its repro named),
    and a message no runtime rule was traced on stays untriaged."""
    from passes.triage import triage

    cases = [
        ("runtime", "runtime_runs", "this runtime registers no kernel for aten::sort.values", "corpus_33428fdd",
         "by-design"),
        ("runtime", "runtime_runs", "to_executorch raised RuntimeError: Missing out variants: {'torchao::"
         "dequantize_affine'}", "targeted_vulkan_patterns2", "by-design"),
        ("runtime", "runtime_runs", "the runtime failed (execute) on draw sample: call 1: RuntimeError: Failed to "
         "execute method forward, error: 0x12; it stopped at op mul.out (instruction 2)", "corpus_7f0d7a1f", "bug"),
        ("xnnpack/runtime", "runtime_runs", "to_executorch raised InternalError: Failed with error: Tensor has a "
         "memory_format that is unsupported in ExecuTorch: torch.channels_last", "conv_bn_relu", "by-design"),
        ("runtime", "runtime_numerics", "draw sample, call 1: output 0: SQNR vs float 42.7 dB, Q/DQ program 44.6 dB "
         "(42.6 dB vs Q/DQ): 0.8 dB beyond the 1 dB allowed; first diverging op: quantize_per_tensor.out (node "
         "quantized_decomposed_quantize_per_tensor_default_10, instruction 44)", "resnet_basic_q8", "harness"),
        ("runtime", "runtime_runs", "the runtime failed (execute) on draw sample: call 1: RuntimeError: Failed to "
         "execute method forward, error: 0x12; it stopped at op permute_copy.out (instruction 8)", "corpus_cabdaeb9",
         "bug"),
        ("runtime", "runtime_runs", "the runtime failed (execute) on draw sample: call 1: RuntimeError: Failed to "
         "execute method forward, error: 0x12; it stopped at op quantize_per_tensor.Tensor_out (instruction 1)",
         "targeted_quant_samsung2", "bug"),
        ("runtime", "runtime_runs", "the runtime failed (child) on draw sample: the runtime's process died: killed by "
         "SIGABRT (Aborted)", "targeted_vulkan_qdq3", "bug"),
    ]
    for pass_name, check, message, graph, kind in cases:
        k = triage(pass_name, check, message, graph)
        assert k is not None and k.kind == kind, (pass_name, graph)
    assert "repro_runtime_mixed_dim_order" in triage(*cases[2][:4]).upstream
    assert "repro_runtime_mixed_dim_order" in triage(*cases[-3][:4]).upstream
    assert "float64 tensor only" in triage(*cases[-2][:4]).reason
    assert "repro_runtime_quantize_per_channel_float_scales" in triage(*cases[-1][:4]).upstream
    # passgate's comparison of a joint program is fixed (its reference holds the weights to_executorch returns):
    # the count mismatch it made has no rule left to explain it
    assert triage("runtime", "runtime_numerics", "draw sample, call 1: the program returns 9 outputs, 5 in eager; "
                  "no single op's ETDump output differs from eager's", "targeted_exir_joint") is None
    assert triage("runtime", "runtime_runs", "the runtime failed (execute) on draw sample: call 1: RuntimeError: "
                  "Failed to execute method forward, error: 0x12; it stopped at op mul.out", "a_new_graph") is None


def test_the_pipeline_and_partitioner_legs_violations_have_their_rule():
    """The legs standard runs since the pipelines' results and the XNNPACK-lowered programs go through the runtime:
    ConstPropPass's unlifted constants break exir.serde (its repro named), a kernel missing outside the delegates
    (0x14) is by design, the addmm whose beta XNNPACK ignores names its repro; a bare 0x12 of the lowered leg
    (no op named) is explained only on the graphs whose own program was traced, and no rule takes another
    graph's float mismatch of the lowered program."""
    from passes.triage import triage

    serde = triage("xnnpack/runtime", "serialize_roundtrip", "the edge program does not survive executorch.exir."
                   "serde: SerializeError: Failed serializing node aten_add_tensor in graph: %aten_add_tensor",
                   "corpus_9ad618be")
    assert serde.kind == "bug" and serde.upstream.endswith("repro_const_prop_get_attr_breaks_exir_serde.py")
    missing = triage("partitioner.xnnpack", "runtime_runs", "execute: call 1: RuntimeError: Failed to execute "
                     "method forward, error: 0x14", "corpus_2b7249c3")
    assert missing.kind == "by-design"
    addmm = triage("partitioner.xnnpack", "runtime_numerics", "output 5 (torch.float32, shape (2,)): Tensor-likes "
                   "are not close!; max abs err 0.598", "corpus_5c0e5150")
    assert addmm.upstream.endswith("repro_xnnpack_addmm_ignores_beta.py")
    bare = "execute: call 1: RuntimeError: Failed to execute method forward, error: 0x12"
    assert "mixed_dim_order" in triage("partitioner.xnnpack", "runtime_runs", bare, "targeted_layout_bn").upstream
    assert triage("partitioner.xnnpack", "runtime_runs", bare, "a_new_graph") is None
    assert triage("partitioner.xnnpack", "runtime_numerics", "output 0 (torch.float32, shape (2,)): Tensor-likes "
                  "are not close!", "a_new_graph") is None
