"""Vulkan checks on real recipes, real ExecuTorch fusion passes, and deliberately broken fusions.

FusePatternsPass costs 3-4 s per call, so each pinned case is lowered and
fused once per module (and cached on disk across runs and workers by
vulkan.cases.lowering); broken fusions are never cached and run once each.
"""

from __future__ import annotations

import functools

import pytest
import torch
from executorch.backends.vulkan._passes.fuse_patterns import FusePatternsPass

from harness.check.loading import from_object
from harness.core.results import Status
from vulkan.backend import fusion
from vulkan.cases import recipes
from vulkan.cases.catalog import BY_NAME
from vulkan.cases.recipes import FUSE_PATTERNS, PREPROCESS
from vulkan.judging import suite
from vulkan.reports import table

CASES = {
    "linear": ("q8ta_linear[xnnpack]", {"K": 16, "N": 8, "lead": [4], "bias": True}),
    "embedding": ("embedding_q4gsw[torchao-int4-sym]", {"vocab": 12, "dim": 64, "G": 32, "n_idx": 5}),
    "dw": ("q8ta_conv2d_dw[xnnpack]", {"C_in": 8, "C_out": 8, "k": 3, "stride": 1, "padding": 1, "dilation": 1,
                                       "groups": 8, "H": 5, "W": 7, "bias": True}),
    "conv3x3": ("q8ta_conv2d[xnnpack]", {"C_in": 3, "C_out": 8, "k": 3, "stride": 1, "padding": 1, "dilation": 1,
                                         "groups": 1, "H": 5, "W": 5, "bias": False}),
    "dw_c6": ("decline:conv2d_dw-C%4[xnnpack]", {"C_in": 6, "C_out": 6, "k": 3, "stride": 1, "padding": 1,
                                                 "dilation": 1, "groups": 6, "H": 5, "W": 5, "bias": False}),
    "k_unaligned": ("decline:linear-K%4[torchao-int4-sym]", {"K": 18, "N": 8, "lead": [3], "bias": False}),
}
NUMERIC = ("fusion_expected", "fused_vs_qdq", "fused_vs_float")


def case(key: str) -> recipes.VulkanCase:
    name, shape = CASES[key]
    return recipes.case(BY_NAME[name], shape, seed=0)


@functools.lru_cache(maxsize=None)
def checked(key: str, mode: str = FUSE_PATTERNS):
    res, rec = suite.check_case(case(key), fusion.builtin(mode))
    return {r.check: r for r in res}, rec


def statuses(res: dict, ids=NUMERIC) -> dict:
    return {c: res[c].status for c in ids}


# --- real recipes, ExecuTorch's own passes ---------------------------------------------------------


@pytest.mark.parametrize("key", ["linear", "embedding", "dw"])
def test_real_recipes_fuse_and_match_qdq_and_float(key):
    res, rec = checked(key)
    assert statuses(res) == dict.fromkeys(NUMERIC, Status.PASS), {c: res[c].message for c in NUMERIC}
    assert rec.fused == 1
    assert res["fused_vs_qdq"].details["worst_lsb"] <= 1.0
    assert res["fused_vs_float"].details["sqnr_fused_db"] >= res["fused_vs_float"].details["sqnr_qdq_db"] - 1.0
    assert res["device_vs_reference"].status is Status.SKIP


def test_preprocess_pipeline_fuses_the_same_and_times_every_pass():
    res, rec = checked("linear", PREPROCESS)
    assert statuses(res) == dict.fromkeys(NUMERIC, Status.PASS), {c: res[c].message for c in NUMERIC}
    stages = res["fusion_expected"].details["fusion_stages"]
    assert set(stages) >= {"FusePatternsPass", "FoldQDQPass", "TagMemoryMetaPass", "MemoryPlanningPass"}


def test_declined_pattern_is_left_unfused():
    res, rec = checked("k_unaligned")
    assert res["fusion_expected"].status is Status.PASS, res["fusion_expected"].message
    assert rec.fused == 0 and res["fused_vs_qdq"].status is Status.PASS


def test_a_pattern_that_must_be_declined_but_crashes_the_pass_fails_fusion_expected():
    res, _ = checked("dw_c6")
    r = res["fusion_expected"]
    assert r.status is Status.FAIL and "must decline it, not crash" in r.message
    assert "depthwise conv requires that OC is divisible by 4" in r.message
    assert res["fused_vs_qdq"].status is Status.SKIP


def test_cpu_reference_misreading_the_weight_layout_is_caught_and_blamed_on_the_reference():
    """executorch 1.5.1: the pass writes conv weights as (OC, KH, KW, IC); the CPU impl reads (OC, IC, KH, KW)."""
    res, rec = checked("conv3x3")
    r = res["fused_vs_qdq"]
    assert res["fusion_expected"].status is Status.PASS
    assert r.status is Status.FAIL and r.details["worst_lsb"] > 1
    assert rec.fault == "cpu-reference"
    assert "(OC, IC/g, KH, KW)" in r.message


def test_fused_cache_gives_the_same_verdicts():
    first, _ = checked("dw")
    res, rec = suite.check_case(case("dw"), fusion.builtin(FUSE_PATTERNS))
    again = {r.check: r for r in res}
    assert rec.timings["fusion_from_cache"] is True
    assert statuses(again) == statuses(first)


# --- deliberately broken fusions -----------------------------------------------------------------


def _param(ep, node):
    sig = ep.graph_signature
    for table_ in (sig.inputs_to_parameters, sig.inputs_to_buffers, sig.inputs_to_lifted_tensor_constants):
        if node.name in table_:
            target = table_[node.name]
            return (ep.state_dict if target in ep.state_dict else ep.constants), target
    raise KeyError(node.name)


class ScaledWeightScales(FusePatternsPass):
    """ExecuTorch's fusion, then every fused op's weight scales x 1.02: a wrong scale, no error anywhere."""

    passgate_vulkan_mode = FUSE_PATTERNS

    def call(self, graph_module):
        out = super().call(graph_module)
        ep = self._exported_program
        for node in out.graph_module.graph.nodes:
            if node.op == "call_function" and "et_vk" in str(node.target):
                names = [a.name for a in node.target._schema.arguments]
                for arg_name in ("weight_scales", "scales"):
                    if arg_name in names and names.index(arg_name) < len(node.args):
                        store, target = _param(ep, node.args[names.index(arg_name)])
                        scaled = store[target].detach() * 1.02
                        if isinstance(store[target], torch.nn.Parameter):
                            scaled = torch.nn.Parameter(scaled, requires_grad=False)
                        store[target] = scaled
        return out


class KeepsMetadata(FusePatternsPass):
    """ExecuTorch's fusion, then the fused nodes get stack_trace / nn_module_stack / debug_handle."""

    passgate_vulkan_mode = FUSE_PATTERNS

    def call(self, graph_module):
        out = super().call(graph_module)
        nodes = [n for n in out.graph_module.graph.nodes if n.op == "call_function"]
        handle = 1 + max((n.meta.get("debug_handle") or 0 for n in nodes), default=0)
        for node in nodes:
            donor = next((a for a in node.all_input_nodes if a.meta.get("stack_trace")), None)
            if donor is None:
                continue
            for key in ("stack_trace", "nn_module_stack"):
                node.meta.setdefault(key, donor.meta.get(key))
            if not node.meta.get("debug_handle"):
                node.meta["debug_handle"] = handle
                handle += 1
        return out


def _user(cls):
    return fusion.UserFusion(from_object(cls), mode=FUSE_PATTERNS)


@pytest.mark.parametrize("key", ["linear", "embedding"])
def test_weight_scales_times_1_02_is_caught_by_fused_vs_qdq(key):
    res, rec = suite.check_case(case(key), _user(ScaledWeightScales), wanted=("fusion_expected", "fused_vs_qdq"))
    by = {r.check: r for r in res}
    assert by["fusion_expected"].status is Status.PASS  # the right op, in the right place...
    r = by["fused_vs_qdq"]
    assert r.status is Status.FAIL, r.message  # ...computing the wrong thing
    assert "weight scales are multiplied by 1.02" in r.message
    assert rec.fault == "fusion-pass"


def test_fused_nodes_without_metadata_are_caught_by_the_meta_checks():
    """ExecuTorch 1.5.1's FusePatternsPass creates its et_vk nodes without stack_trace / nn_module_stack /
    debug_handle; a fusion that carries them over passes."""
    res, _ = checked("linear")
    for check in ("meta_stack_trace", "meta_nn_module_stack", "meta_debug_handle"):
        assert res[check].status is Status.FAIL and "et_vk_q8ta_linear" in res[check].message
    for check in ("no_call_module", "graph_lint", "meta_val", "val_matches_execution"):
        assert res[check].status is Status.PASS, res[check].message
    out, _ = suite.check_case(case("linear"), _user(KeepsMetadata),
                              wanted=("meta_stack_trace", "meta_nn_module_stack", "meta_debug_handle"))
    assert {r.check: r.status for r in out} == dict.fromkeys(
        ("meta_stack_trace", "meta_nn_module_stack", "meta_debug_handle"), Status.PASS), [r.message for r in out]


def test_per_op_table_rows():
    records = [checked(k)[1] for k in ("linear", "dw", "conv3x3", "dw_c6")]
    rows = {r["op"]: r for r in table.per_op(records)}
    assert rows["et_vk.q8ta_linear"]["verdict"] == "pass" and rows["et_vk.q8ta_linear"]["fused"] == 1
    bad = rows["et_vk.q8ta_conv2d"]
    assert bad["verdict"].startswith("FAIL") and bad["fault"] == "cpu-reference" and bad["worst_lsb"] > 1
    assert rows["decline:depthwise conv C % 4 != 0"]["crashed"] == 1
    text = table.markdown(list(rows.values()))
    assert "| et_vk.q8ta_conv2d |" in text and "Diagnoses" in text


def test_case_outputs_are_torch_tensors_and_inputs_untouched():
    c = case("dw")
    from vulkan.cases import lowering

    qdq = lowering.load(c.spec)
    before = [x.clone() for x in qdq.inputs]
    checked("dw")
    assert all(torch.equal(a, b) for a, b in zip(before, qdq.inputs))
