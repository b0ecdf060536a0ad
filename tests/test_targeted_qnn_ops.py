"""The hand-written targeted graph for the QNN edge and export passes (fixtures/corpus/targeted_qnn_ops.py): it
lowers to what eager computes, carries the ops those passes rewrite in the form they read them (linear, im2col
and col2im kept whole, arguments positional, source partitions recorded), and DecomposeHyperbolicVariants,
ConvertLinearToConv2d and DecomposeMinMaxDim rewrite their ops away without changing a single output.
RecomposePadMaxPool2d moves max_pool2d's padding into a constant_pad_nd, which changes the output shape of the
ceil_mode pooling (an upstream bug the test pins down so that a fix shows)."""

from __future__ import annotations

import copy

import pytest
import torch
from corpus_helpers import corpus_spec, eager_outputs

from harness.check.execution import flat_args
from harness.graphs.cases import load_case

NAME = "targeted_qnn_ops"
SPEC = corpus_spec(NAME)
QNN = "executorch.backends.qualcomm._passes"
HYPERBOLIC = ("aten.sinh.default", "aten.cosh.default", "aten.asinh.default", "aten.acosh.default",
              "aten.atanh.default")
CEIL_MODE_POOL = 6  # output index of F.max_pool2d(v, 2, 2, 1, 1, True): after the six hyperbolic outputs


def _count(gm, name: str) -> int:
    return sum(1 for n in gm.graph.nodes if n.op == "call_function" and getattr(n.target, "__name__", "") == name)


@pytest.fixture(scope="module")
def case():
    return load_case(SPEC)


@pytest.fixture(scope="module")
def eager(case):
    return eager_outputs(NAME, case)


def _run(case, pass_obj):
    """``pass_obj`` run on a copy of the lowered program; (the graph before, the graph after, its outputs)."""
    ep = case.program("edge")
    before = copy.deepcopy(ep.graph_module)
    result = pass_obj(ep) if isinstance(pass_obj, type) else pass_obj
    gm = result(ep.graph_module).graph_module
    with torch.no_grad():
        outputs = gm(*flat_args(ep, case.sample_inputs()))
    return before, gm, outputs


def _assert_outputs_match(actual, expected, skip=()):
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        if i not in skip:
            torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-5, msg=lambda m, i=i: f"output {i}: {m}")


def test_the_graph_is_a_hand_written_case_handed_over_as_lowered():
    assert SPEC.source == "corpus" and "hand-written" in SPEC.description
    assert "as_lowered" in SPEC.tags and "dynamic" not in SPEC.tags
    assert set(SPEC.preserve_ops) == {"aten.linear.default", "aten.im2col.default", "aten.col2im.default"}


def test_the_lowered_program_holds_the_ops_the_passes_rewrite(case):
    edge, exported = case.edge.graph_module, case.exported.graph_module
    for name in HYPERBOLIC + ("aten.log10.default", "aten.log2.default", "aten.log1p.default", "aten.trunc.default",
                              "aten.tan.default", "aten.im2col.default", "aten.col2im.default"):
        assert _count(edge, name) >= 1, name
    assert _count(edge, "aten.linear.default") == 3
    assert _count(edge, "aten.max_pool3d_with_indices.default") == 4
    # the arguments the passes read positionally are positional (the as_lowered form)
    pools = [n for n in edge.graph.nodes if getattr(n.target, "__name__", "") == "aten.max_pool2d_with_indices.default"]
    assert [len(n.args) for n in pools] == [6, 4, 5] and not any(n.kwargs for n in pools)
    biased = [n for n in edge.graph.nodes if getattr(n.target, "__name__", "") == "aten.linear.default"
              and len(n.args) == 3]
    assert len(biased) == 2
    # a strict export: the min/max partitions DecomposeMinMaxDim looks for are recorded
    reductions = [n for n in edge.graph.nodes if getattr(n.target, "__name__", "") in ("aten.max.dim", "aten.min.dim")]
    assert len(reductions) == 3 and all(n.meta.get("source_fn_stack") for n in reductions)
    # the ATen program of the export entries (an OpOverload's __name__ has no namespace)
    for name in ("roll.default", "pdist.default", "cdist.default", "pad.default", "linalg_vector_norm.default",
                 "select_scatter.default", "threshold.default", "expm1.default", "einsum.default", "fill.Scalar",
                 "fill_.Scalar", "silu.default", "square.default", "glu.default", "arange.default"):
        assert _count(exported, name) >= 1, name
    assert any("wrap_with_autocast" in str(n.target) for n in exported.graph.nodes)


def test_the_lowered_program_computes_what_eager_does(case, eager):
    with torch.no_grad():
        actual = case.edge.module()(*case.sample_inputs())
    _assert_outputs_match(actual, eager)


def test_decompose_hyperbolic_variants_leaves_no_hyperbolic_op_and_the_same_outputs(case, eager):
    from executorch.backends.qualcomm._passes.decompose_hyperbolic_variants import DecomposeHyperbolicVariants

    before, gm, outputs = _run(case, DecomposeHyperbolicVariants())
    assert sum(_count(before, name) for name in HYPERBOLIC) == 6
    assert sum(_count(gm, name) for name in HYPERBOLIC) == 0
    assert _count(gm, "aten.exp.default") == _count(before, "aten.exp.default") + 4  # exp(x), exp(-x) twice
    assert _count(gm, "aten.log.default") == _count(before, "aten.log.default") + 4  # asinh x2, acosh, atanh
    _assert_outputs_match(outputs, eager)


def test_convert_linear_to_conv2d_turns_every_linear_into_a_1x1_convolution(case, eager):
    from executorch.backends.qualcomm._passes.convert_linear_to_conv2d import ConvertLinearToConv2d

    before, gm, outputs = _run(case, ConvertLinearToConv2d)
    assert _count(before, "aten.linear.default") == 3
    assert _count(gm, "aten.linear.default") == 0
    convs = [n for n in gm.graph.nodes if getattr(n.target, "__name__", "") == "aten.convolution.default"]
    assert len(convs) == _count(before, "aten.convolution.default") + 3
    # the shared weight is reshaped once, to [out, in, 1, 1], and read by both of its convolutions
    weights = [n.args[1] for n in convs if n.args[1].op == "get_attr"]
    assert sorted(tuple(w.meta["val"].shape) for w in set(weights)) == [(3, 4, 1, 1), (5, 4, 1, 1)]
    assert len(weights) == 3
    _assert_outputs_match(outputs, eager)


def test_decompose_min_max_dim_computes_the_indices_with_argmax_and_argmin(case, eager):
    from executorch.backends.qualcomm._passes.decompose_minmaxdim import DecomposeMinMaxDim

    before, gm, outputs = _run(case, DecomposeMinMaxDim())
    # max(x, dim=1) with both outputs and min(x, 0)[1]: their indices; max(..., keepdim)[0] and max(x) keep theirs
    assert _count(gm, "aten.argmax.default") == _count(before, "aten.argmax.default") + 1
    assert _count(gm, "aten.argmin.default") == _count(before, "aten.argmin.default") + 1
    index_users = [n for n in gm.graph.nodes if n.op == "call_function" and n.target.__name__ == "getitem"
                   and getattr(n.args[0].target, "__name__", "") in ("aten.max.dim", "aten.min.dim")
                   and n.args[1] == 1]
    assert index_users == []
    _assert_outputs_match(outputs, eager)


def test_recompose_pad_maxpool2d_moves_padding_into_a_pad_but_changes_the_ceil_mode_output(case, eager):
    from executorch.backends.qualcomm._passes.recompose_pad_maxpool2d import RecomposePadMaxPool2d

    _, gm, outputs = _run(case, RecomposePadMaxPool2d())
    pads = [n for n in gm.graph.nodes if getattr(n.target, "__name__", "") == "aten.constant_pad_nd.default"
            and n.args[2] == float("-inf")]
    assert len(pads) == 2  # the two padded poolings; the unpadded one is left alone
    pools = [n for n in gm.graph.nodes if getattr(n.target, "__name__", "") == "aten.max_pool2d_with_indices.default"]
    assert sorted(tuple(n.args[3]) for n in pools) == [(0, 0), (0, 0), (0, 0)]
    _assert_outputs_match(outputs, eager, skip={CEIL_MODE_POOL})
    # Upstream bug: with ceil_mode a window may start in the right padding of the explicitly padded input, where
    # PyTorch's own padding drops it, so the 5-row input pools to 4 rows instead of 3.
    assert tuple(eager[CEIL_MODE_POOL].shape) == (1, 2, 3, 4)
    assert tuple(outputs[CEIL_MODE_POOL].shape) == (1, 2, 4, 4)
