"""The hand-written graph for QNN's and Samsung's edge and export passes (fixtures/corpus/targeted_qnn_samsung_ops.py):
it lowers to what eager computes, carries the ops those passes rewrite in the form they read them (arguments
positional, aten.matmul kept whole), and the entries it names change it. Where an entry changes it without
changing a single output (DecomposeDiagonal, DecomposeAsStrided, DecomposeVar, ConvertMhaToSha, ...) the test
compares with eager; where the entry trips on it (an upstream bug its catalog records) the test pins what happens,
so that a fix shows."""

from __future__ import annotations

import copy

import pytest
import torch
from corpus_helpers import corpus_spec, eager_outputs

from harness.check.execution import flat_args
from harness.core.results import Status
from harness.graphs.cases import load_case

NAME = "targeted_qnn_samsung_ops"
SPEC = corpus_spec(NAME)
QNN = "executorch.backends.qualcomm._passes"
SAMSUNG = "executorch.backends.samsung._passes"
OUTPUTS = ("frames", "reshaped", "same", "none", "pick", "first", "spread", "centred", "var_dim", "var_pop",
           "var_all", "upper", "am", "shifted", "pooled", "pooled3", "diag_last", "diag_below", "diag_none", "hyp",
           "rem", "mm", "ang", "dv", "back", "wide", "tt", "tp", "gap", "r6", "smoothed", "edges", "out", "k_cache",
           "v_cache", "clipped")
OUT = {name: i for i, name in enumerate(OUTPUTS)}


def _count(gm, name: str) -> int:
    return sum(1 for n in gm.graph.nodes if n.op == "call_function" and getattr(n.target, "__name__", "") == name)


@pytest.fixture(scope="module")
def case():
    return load_case(SPEC)


@pytest.fixture(scope="module")
def eager(case):
    return eager_outputs(NAME, case)


def _run(case, make, stage="edge", before=()):
    """``make(ep)``'s pass run on a copy of the ``stage`` program after the passes ``before`` (made the same way);
    (the graph before, the graph after, its outputs on the sample inputs)."""
    ep = copy.deepcopy(case.program(stage))
    graph_before = copy.deepcopy(ep.graph_module)
    gm = ep.graph_module
    for step in (*before, make):
        gm = step(ep)(gm).graph_module
    with torch.no_grad():
        outputs = gm(*flat_args(ep, case.sample_inputs()))
    return graph_before, gm, outputs


def _assert_match(actual, expected, names):
    for name in names:
        a, e = actual[OUT[name]], expected[OUT[name]]
        assert a.shape == e.shape and a.dtype == e.dtype, (name, a.shape, e.shape, a.dtype, e.dtype)
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-5, msg=lambda m, name=name: f"{name}: {m}")


def test_the_graph_is_a_hand_written_case_handed_over_as_lowered():
    assert SPEC.source == "corpus" and "hand-written" in SPEC.description
    assert "as_lowered" in SPEC.tags and "quantized" not in SPEC.tags and "dynamic" not in SPEC.tags
    assert SPEC.preserve_ops == ("aten.matmul.default",)


def test_the_lowered_program_computes_what_eager_does(case, eager):
    with torch.no_grad():
        actual = case.edge.module()(*case.sample_inputs())
    assert len(actual) == len(OUTPUTS) == len(eager)
    _assert_match(actual, eager, OUTPUTS)


def test_the_programs_hold_the_ops_in_the_form_the_passes_read(case):
    edge, exported = case.edge.graph_module, case.exported.graph_module
    assert _count(exported, "as_strided.default") == 7  # 6 on x / the signal, 1 over the row mean
    assert _count(exported, "var.dim") == 1 and _count(exported, "var.correction") == 2
    assert [n.args[1] for n in exported.graph.nodes if getattr(n.target, "__name__", "") == "triu.default"] == [1]
    diagonals = [n for n in edge.graph.nodes if getattr(n.target, "__name__", "") == "aten.diagonal_copy.default"]
    assert [tuple(n.args[1:]) for n in diagonals] == [(0, -2, -1), (-1, 1, 2), (5, 1, 2)]
    pools = [n for n in edge.graph.nodes if "max_pool" in getattr(n.target, "__name__", "")]
    assert [list(n.args[1]) for n in pools] == [[3], [2]]  # one-element kernels, as the module was written
    assert _count(edge, "aten.matmul.default") == 2  # preserved, as QNN's partitioner keeps it
    hyperbolic = [n.target.__name__ for n in edge.graph.nodes if n.op == "call_function"
                  and n.target.__name__ in ("aten.atanh.default", "aten.acosh.default")]
    assert hyperbolic == ["aten.atanh.default", "aten.acosh.default"]  # atanh first: it makes the constants


def test_decompose_diagonal_covers_negative_dims_negative_offsets_and_an_empty_diagonal(case, eager):
    from executorch.backends.qualcomm._passes.decompose_diagonal import DecomposeDiagonal

    before, gm, outputs = _run(case, lambda ep: DecomposeDiagonal())
    assert _count(before, "aten.diagonal_copy.default") == 3 and _count(gm, "aten.diagonal_copy.default") == 0
    assert _count(gm, "aten.full.default") == _count(before, "aten.full.default") + 1  # the empty diagonal
    _assert_match(outputs, eager, ("diag_last", "diag_below", "diag_none"))


def test_decompose_as_strided_takes_the_view_identity_and_gather_paths(case, eager):
    from executorch.backends.qualcomm._passes.decompose_as_strided import DecomposeAsStrided

    before, gm, outputs = _run(case, lambda ep: DecomposeAsStrided(), stage="export")
    # the empty one is left alone; the other six are gone (a view, the identity, four gathers)
    assert _count(before, "as_strided.default") == 7 and _count(gm, "as_strided.default") == 1
    assert _count(gm, "index_select.default") == _count(before, "index_select.default") + 4
    _assert_match(outputs, eager, ("frames", "reshaped", "same", "none", "pick", "first", "spread"))


def test_decompose_var_and_hyperbolic_variants_keep_every_output(case, eager):
    from executorch.backends.qualcomm._passes.decompose_hyperbolic_variants import DecomposeHyperbolicVariants
    from executorch.backends.qualcomm._passes.decompose_var import DecomposeVar

    before, gm, outputs = _run(case, lambda ep: DecomposeVar(), stage="export")
    assert _count(gm, "var.dim") == 0 and _count(gm, "var.correction") == 0
    _assert_match(outputs, eager, ("var_dim", "var_pop", "var_all"))
    _, gm, outputs = _run(case, lambda ep: DecomposeHyperbolicVariants())
    assert _count(gm, "aten.atanh.default") == 0 and _count(gm, "aten.acosh.default") == 0
    _assert_match(outputs, eager, ("hyp",))


def test_convert_mha_to_sha_splits_the_grouped_query_attention_into_single_heads(case, eager):
    from executorch.backends.qualcomm._passes.convert_mha_to_sha import ConvertMhaToSha
    from executorch.backends.qualcomm._passes.remove_redundancy import RemoveRedundancy

    before, gm, outputs = _run(case, lambda ep: ConvertMhaToSha(ep), before=(lambda ep: RemoveRedundancy(),))
    assert _count(before, "aten.matmul.default") == 2 and _count(gm, "aten.matmul.default") == 4  # 2 per head
    assert _count(before, "aten._softmax.default") == 1 and _count(gm, "aten._softmax.default") == 2
    # the split q projection: one 1x1 convolution per head, its weight sliced from the 8 output channels
    assert _count(gm, "aten.convolution.default") == _count(before, "aten.convolution.default") + 1
    _assert_match(outputs, eager, ("out", "k_cache", "v_cache"))
    # the per-head copies of the KV-cache cats take their Tensor[] as a tuple (the verifier known of the entry)
    cats = [n for n in gm.graph.nodes if getattr(n.target, "__name__", "") == "aten.cat.default"
            and n.name.endswith("_h_0") and isinstance(n.args[0], tuple)]
    assert cats


def test_qnn_poolings_raise_on_one_element_sizes(case):
    """Upstream bug (the entries' runs known): the len == 1 branches widen node.args' immutable list in place."""
    from executorch.backends.qualcomm._passes.decompose_maxpool3d import DecomposeMaxPool3d
    from executorch.backends.qualcomm._passes.recompose_pad_maxpool2d import RecomposePadMaxPool2d

    for make in (lambda ep: RecomposePadMaxPool2d(), lambda ep: DecomposeMaxPool3d()):
        with pytest.raises(TypeError, match="immutable_list"):
            _run(case, make)


def test_samsung_conv1d_to_conv2d_reshapes_a_constant_kernel_but_not_a_buffer(case):
    """Upstream bug: update_kernel handles parameters and lifted constants; a registered buffer falls through to a
    RuntimeError it builds but never raises, so the buffer stays 3-D under the 2-D convolution it now feeds."""
    from executorch.backends.samsung._passes.conv1d_to_conv2d import Conv1dToConv2d

    ep = copy.deepcopy(case.program("edge"))
    assert ep.constants["edge_kernel"].dim() == 3 and ep.state_dict["smooth"].dim() == 3
    gm = Conv1dToConv2d(ep)(ep.graph_module).graph_module
    assert ep.constants["edge_kernel"].dim() == 4  # the lifted constant: unsqueezed
    assert ep.state_dict["smooth"].dim() == 3  # the buffer: left 3-D
    with pytest.raises(RuntimeError), torch.no_grad():
        gm(*flat_args(ep, case.sample_inputs()))


def test_samsung_fuse_activation_fuses_relu6_then_asserts_on_a_default_hardtanh(case):
    """Upstream bug (a known of the entry): map_hardtan_relux accepts only hardtanh(0, 6); nn.Hardtanh()'s (-1, 1),
    which Samsung's own op builder lowers as CLIP, fails its assert."""
    from executorch.backends.samsung._passes.fuse_activation import FuseActivationPass

    gm = copy.deepcopy(case.program("edge")).graph_module
    with pytest.raises(AssertionError, match="Not supported"):
        FuseActivationPass()(gm)
    assert [n.meta.get("activation") for n in gm.graph.nodes if n.meta.get("activation")] == ["RELU6"]


@pytest.mark.parametrize("name", [
    "qualcomm.DecomposeAsStrided", "qualcomm.DecomposeVar", "qualcomm.DecomposeTriu", "qualcomm.DecomposeBinaryAlpha",
    "qualcomm.DecomposeDiagonal", "qualcomm.DecomposeHyperbolicVariants", "qualcomm.DecomposeRemainder",
    "qualcomm.DecomposeAddmm", "qualcomm.DecomposeAtan2", "qualcomm.DecomposeDivMode",
    "qualcomm.FuseConsecutiveTranspose", "qualcomm.FuseConsecutiveCast", "qualcomm.ConvertMhaToSha",
    "qualcomm.DecomposeHyperbolicVariants[annotation]", "qualcomm.DecomposeDiagonal[annotation]",
    "qualcomm.DecomposeAtan2[annotation]", "samsung.Conv1dToConv2d",
])
def test_the_entries_it_names_run_and_change_it(case, name):
    from harness import catalog
    from harness.check.runner import check_pass_on_case
    from harness.core.config import RunConfig

    entry = next(e for e in catalog.all_entries(catalog.select([name.split(".")[0]])) if e.name == name)
    assert entry.applies(SPEC), name
    results = check_pass_on_case(entry.loaded(), case, RunConfig(checks=frozenset({"runs"})))
    runs = next(r for r in results if r.check == "runs")
    assert runs.status is Status.PASS, runs.message
    assert any(runs.details["changed"].values()), runs.details
