"""The hand-written targeted graph for the Vulkan fusion pattern registry (fixtures/corpus/targeted_vulkan_patterns.py):
it lowers to what eager computes, and FusePatternsPass (executorch.backends.vulkan.patterns) fuses the regions it is
written for into their et_vk ops and declines the others: torchao's and ExecuTorch llama's 4-bit embeddings, torchao's
4-bit weight-only and 8da4w linears, llama's and HF's rotary embeddings (with a decode-position start), the static
and dynamic VulkanQuantizer linears and XNNPACK's static convolutions."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import pytest
import torch

from harness.fuzz.corpus import load_dir
from harness.graphs.cases import load_case

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
SPEC = next(s for s in load_dir(CORPUS) if s.name == "targeted_vulkan_patterns")
OUTPUTS = 22


def _calls(gm, name: str) -> list:
    return [n for n in gm.graph.nodes if n.op == "call_function" and getattr(n.target, "__name__", "") == name]


def _et_vk(gm) -> Counter:
    return Counter(n.target.__name__ for n in gm.graph.nodes
                   if n.op == "call_function" and getattr(n.target, "__name__", "").startswith("et_vk."))


@pytest.fixture(scope="module")
def case():
    return load_case(SPEC)


@pytest.fixture(scope="module")
def fused(case):
    """The program as handed to FusePatternsPass (to_edge's positional form), after the pass."""
    from executorch.backends.vulkan._passes.fuse_patterns import FusePatternsPass

    ep = case.program("edge")
    handed = copy.deepcopy(ep.graph_module)
    fuse = FusePatternsPass()
    fuse._exported_program = ep
    result = fuse(ep.graph_module)
    assert result.modified
    return handed, result.graph_module


def test_the_graph_is_a_hand_written_quantized_case_lowered_to_what_eager_computes(case):
    assert SPEC.source == "corpus" and "hand-written" in SPEC.description
    assert {"quantized", "as_lowered"} <= set(SPEC.tags)
    with torch.no_grad():
        expected = SPEC.build().model.module()(*case.sample_inputs())
        actual = case.edge.module()(*case.sample_inputs())
    assert len(expected) == len(actual) == OUTPUTS
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e)
    # the quantization flows left the forms the patterns read
    gm = case.program("edge").graph_module
    assert len(_calls(gm, "torchao.dequantize_affine.default")) == 9  # 4 embeddings' and 3 linears' weights, 2 acts
    assert len(_calls(gm, "torchao.choose_qparams_affine.default")) == 2
    assert len(_calls(gm, "quantized_decomposed.embedding_4bit.dtype")) == 3
    assert len(_calls(gm, "quantized_decomposed.choose_qparams.tensor")) == 1  # VulkanQuantizer's dynamic linears
    assert len(_calls(gm, "aten.convolution.default")) == 2


def test_fuse_patterns_fuses_the_llm_forms(fused):
    handed, gm = fused
    assert not _et_vk(handed)
    assert _et_vk(gm) == Counter({
        "et_vk.embedding_q4gsw.default": 4,  # torchao tok (twice) and llama's grouped embedding (twice)
        "et_vk.linear_dq8ca_q4gsw.default": 2,  # torchao 8da4w, with and without a bias
        "et_vk.linear_q4gsw.default": 1,  # torchao int4 weight-only, with a bias
        "et_vk.apply_rotary_emb.default": 1,  # llama's apply_rotary_emb
        "et_vk.apply_rotary_emb_hf.default": 2,  # HF: decode-position table slice, partial rotation
        "et_vk.select_as_symint.default": 1,  # input_pos[-1].item()
        "et_vk.q8ta_conv2d.default": 1,
        "et_vk.q8ta_conv2d_pw.default": 1,
        "et_vk.linear_q8ta_q8csw.default": 1,  # static activation, float output
    })
    # declined: the int8 and the 48-wide torchao embeddings, the 48-wide llama embedding, the adds of the
    # convolutions' dequantized outputs (not quantized after), the dynamic per-tensor linears
    assert len(_calls(gm, "aten.embedding.default")) == 2
    assert len(_calls(gm, "quantized_decomposed.embedding_4bit.dtype")) == 1
    assert len(_calls(gm, "aten.add.Tensor")) >= 3
    assert len(_calls(gm, "quantized_decomposed.choose_qparams.tensor")) == 1


def test_a_weight_looked_up_twice_is_repacked_once(fused, case):
    """Both lookups of an embedding share its placeholder: the first fusion packs the int8 [-8, 7] table two
    values a byte, the second finds it already packed (register_param_mutation) and packs nothing."""
    _, gm = fused
    by_weight = Counter(n.args[0].name for n in _calls(gm, "et_vk.embedding_q4gsw.default"))
    assert sorted(by_weight.values()) == [2, 2]
    for name in by_weight:
        node = next(n for n in gm.graph.nodes if n.name == name)
        assert node.meta["val"].dtype == torch.uint8 and node.meta["val"].shape[-1] == 32  # 64 dims, packed


def test_the_hf_rope_reads_its_start_position_from_the_table_slice(fused):
    _, gm = fused
    starts = [n.args[4] for n in _calls(gm, "et_vk.apply_rotary_emb_hf.default")]
    assert 0 in starts  # cos / sin computed, no slice
    (symint,) = [s for s in starts if isinstance(s, torch.fx.Node)]
    assert symint.target.__name__ == "et_vk.select_as_symint.default"
    tables = {n.args[2].name for n in _calls(gm, "et_vk.apply_rotary_emb_hf.default")}
    assert "b_hf_cos" in tables  # the whole table, not the narrowed slice


def test_the_vulkan_pipeline_runs_to_the_end():
    """Every step of the `vulkan` pipeline (VulkanBackend.preprocess) takes the graph: FusePatternsPass raises on none
    of its regions (the forms that make it raise are left out, see the graph's docstring)."""
    from harness.core.config import RunConfig
    from harness.pipelines.pipeline import resolve_pipeline, verify_each

    pipeline = resolve_pipeline("vulkan")
    reports = verify_each(pipeline, load_case(SPEC), RunConfig(stage="edge", checks=frozenset({"runs"})))
    assert len(reports) == len(pipeline.steps)
    assert all(r.outcome == "ok" for r in reports)
