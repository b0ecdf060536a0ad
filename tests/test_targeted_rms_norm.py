"""The hand-written targeted graph for the RMSNorm recomposition passes (fixtures/corpus/targeted_rms_norm.py):
it lowers to what eager computes, and each pass rebuilds the forms it is written for and leaves the others alone:
samsung.RecomposeRmsNorm the nn.RMSNorm modules, qualcomm.RecomposeRmsNorm the modules and the Llama form, the
Vulkan rms_norm pattern (FusePatternsPass) the two (1 + weight) forms and none of the near misses."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from harness.fuzz.corpus import load_dir
from harness.graphs.cases import export_and_lower, load_case

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
SPEC = next(s for s in load_dir(CORPUS) if s.name == "targeted_rms_norm")
RMS_NORM = "aten.rms_norm.default"
VK_RMS_NORM = "et_vk.rms_norm.default"


def _calls(gm, name: str) -> list:
    return [n for n in gm.graph.nodes if n.op == "call_function" and getattr(n.target, "__name__", "") == name]


def _names(args) -> list:
    return [a.name if isinstance(a, torch.fx.Node) else a for a in args]


def _by_input(nodes) -> dict:
    return {n.args[0].name: n for n in nodes}


@pytest.fixture(scope="module")
def case():
    return load_case(SPEC)


@pytest.fixture(scope="module")
def expected(case):
    with torch.no_grad():
        return SPEC.build().model.module()(*case.sample_inputs())


def _run(ep, case) -> tuple:
    with torch.no_grad():
        return tuple(ep.module()(*case.sample_inputs()))


def test_the_graph_is_a_hand_written_case_lowered_to_what_eager_computes(case, expected):
    assert SPEC.source == "corpus" and "hand-written" in SPEC.description
    assert len(expected) == 16
    for actual, want in zip(_run(case.edge, case), expected):
        torch.testing.assert_close(actual, want)
    # the strict export records the module each decomposed node comes from: what Samsung's pass looks for
    from_modules = [n for n in case.edge.graph.nodes if n.op == "call_function"
                    and (n.meta.get("source_fn_stack") or [(None, None)])[-1][1] is torch.nn.RMSNorm]
    assert len(from_modules) == 11  # pow, mean, add, rsqrt, mul (and mul by the weight) of the two modules


def test_samsung_recomposes_the_rmsnorm_modules(case, expected):
    """Both nn.RMSNorm partitions become aten.rms_norm; the weighted one computes what eager does. The one
    without a weight takes its input for the weight (upstream: _get_gamma_node returns the first
    non-call_function argument of the partition's output mul, here the input itself), and its
    normalized_shape is then the whole input shape; a second run raises, since the new rms_norm node copies
    the output node's meta (source_fn_stack included) and forms an RMSNorm partition without an add."""
    from executorch.backends.samsung._passes.compose_rms_norm import RecomposeRmsNorm

    ep = copy.deepcopy(case.edge)
    rsqrts = len(_calls(ep.graph_module, "aten.rsqrt.default"))
    gm = RecomposeRmsNorm()(ep.graph_module).graph_module
    fused = _by_input(_calls(gm, RMS_NORM))
    assert set(fused) == {"x", "y"}
    assert _names(fused["x"].args) == ["x", [8], "p_norm_weight", 1e-5]
    assert fused["y"].args[2] is fused["y"].args[0] and fused["y"].args[1] == [2, 4, 8]
    assert len(_calls(gm, "aten.rsqrt.default")) == rsqrts - 2  # the manual forms are not modules: left alone
    actual = _run(ep, case)
    torch.testing.assert_close(actual[0], expected[0])
    assert not torch.allclose(actual[1], expected[1], atol=1e-3)
    for a, e in zip(actual[2:], expected[2:]):
        torch.testing.assert_close(a, e)
    with pytest.raises(RuntimeError, match="Failed to locate add node"):
        RecomposeRmsNorm()(gm)


def test_qualcomm_recomposes_the_weighted_forms_it_matches(case, expected):
    """The weighted nn.RMSNorm (its pow pattern, eps from add.Scalar) and the Llama form (its mul pattern)
    become aten.rms_norm; the module without a weight has no second mul, and the (1 + weight) forms have no
    placeholder gamma, so they stay decomposed. The program still computes what eager does."""
    from executorch.backends.qualcomm._passes.recompose_rms_norm import RecomposeRmsNorm

    ep = copy.deepcopy(case.edge)
    rsqrts = len(_calls(ep.graph_module, "aten.rsqrt.default"))
    gm = RecomposeRmsNorm()(ep.graph_module).graph_module
    fused = _by_input(_calls(gm, RMS_NORM))
    assert set(fused) == {"x", "y"}
    assert _names(fused["x"].args) == ["x", [8], "p_norm_weight", 1e-5]
    assert _names(fused["y"].args) == ["y", [8], "p_w", 1e-6]
    assert len(_calls(gm, "aten.rsqrt.default")) == rsqrts - 2
    for actual, want in zip(_run(ep, case), expected):
        torch.testing.assert_close(actual, want)


def test_vulkan_fuses_the_two_rmsnorm_forms_of_the_to_edge_program(case, expected):
    """On the program as to_edge returns it (keepdim positional, the lifted eps's fake value still holding the
    constant) the pattern fuses v0 and v1, weight first or last, into et_vk.rms_norm and none of the near
    misses; the fused program computes what eager does (et_vk.rms_norm has a CPU implementation)."""
    import executorch.backends.vulkan.patterns as vk_patterns

    _, _, ep = export_and_lower(SPEC)
    rsqrts = len(_calls(ep.graph_module, "aten.rsqrt.default"))
    assert vk_patterns.replace_all_fusable_subgraphs(ep, ep.graph_module) == 2
    ep.graph_module.recompile()
    fused = _calls(ep.graph_module, VK_RMS_NORM)
    assert [n.args[0].name for n in fused] == ["y", "y"]
    assert {n.args[1].target.__name__ for n in fused} == {"aten.add.Tensor"}  # the 1 + gamma scale
    assert sorted(n.args[2] for n in fused) == pytest.approx([1e-6, 1e-5])
    assert len(_calls(ep.graph_module, "aten.rsqrt.default")) == rsqrts - 2
    for actual, want in zip(_run(ep, case), expected):
        torch.testing.assert_close(actual, want)


def test_the_vulkan_pipeline_is_handed_the_form_its_pattern_reads(case):
    """A program loaded from ExecuTorch's serde has mean.dim's keepdim as a keyword, and RmsNormMatch reads it
    only as args[2] (len(mean_node.args) < 3: no match). The graph carries the tag as_lowered, so its passes
    are handed the form to_edge returns: keepdim positional, both (1 + weight) forms found, and the lifted eps
    constants' fake values know their value again (FakeTensor.constant, which the load drops), so the
    replacement reads eps as a number instead of guarding on a data-dependent symbol."""
    import executorch.backends.vulkan.patterns as vk_patterns
    from executorch.backends.vulkan.patterns.rms_norm import RmsNormMatch

    handed = case.program("edge").graph_module
    means = _calls(handed, "aten.mean.dim")
    assert means and not any("keepdim" in n.kwargs for n in means)
    assert len([m for m in vk_patterns.get_all_fusable_subgraphs(handed) if isinstance(m, RmsNormMatch)]) == 2
    ep = case.program("edge")
    assert vk_patterns.replace_all_fusable_subgraphs(ep, ep.graph_module) == 2
    assert sorted(n.args[2] for n in _calls(ep.graph_module, VK_RMS_NORM)) == pytest.approx([1e-6, 1e-5])
