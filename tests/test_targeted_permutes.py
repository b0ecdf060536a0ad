"""The permute/transpose passes of ``executorch.backends.transforms`` on the hand-written graph written for them
(fixtures/corpus/targeted_transforms_permutes.py), and the upstream bugs kept out of that graph.

Each pass runs on a deep copy of the lowered edge program, as passgate hands it over; what it returns must
still compute what the program computed, with fewer permutes. The bugs are reproduced on programs of their
own, so that the graph's other checks stay meaningful; each is marked ``xfail(strict=True)`` on the exception
it raises today, so an upstream fix shows up as an XPASS.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch
from torch import nn

from harness.check.execution import flat_args
from harness.fuzz.corpus import load_dir
from harness.graphs.cases import load_case

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
NAME = "targeted_transforms_permutes"
NHWC = (0, 2, 3, 1)
NCHW = (0, 3, 1, 2)


@pytest.fixture(scope="module")
def case():
    return load_case(next(s for s in load_dir(CORPUS) if s.name == NAME))


def _target(node) -> str:
    return getattr(node.target, "__name__", "") if isinstance(node, torch.fx.Node) else ""


def _nodes(gm, name: str) -> list:
    return [n for n in gm.graph.nodes if n.op == "call_function" and _target(n) == name]


def _count(gm, name: str) -> int:
    return len(_nodes(gm, name))


def _outputs(ep, gm, inputs) -> list:
    with torch.no_grad():
        out = gm(*flat_args(ep, inputs))
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _run(make_pass, case):
    """The pass (``make_pass(ep)``) run on a deep copy of the case's edge program: (that copy, the result)."""
    ep = copy.deepcopy(case.edge)
    result = make_pass(ep)(ep.graph_module)
    return ep, result


def _assert_same_outputs(case, ep, gm):
    expected = _outputs(case.edge, case.edge.graph_module, case.sample_inputs())
    actual = _outputs(ep, gm, case.sample_inputs())
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        torch.testing.assert_close(a, e, msg=lambda m, i=i: f"output {i}: {m}")


def test_the_lowered_graph_keeps_what_the_passes_match(case):
    """PRESERVE_OPS keeps transpose_copy, expand_copy and pad whole; `as_lowered` leaves keepdim and a slice's dim
    positional, where the Propagate passes read them."""
    gm = case.edge.graph_module
    assert _count(gm, "aten.permute_copy.default") >= 80
    assert _count(gm, "aten.transpose_copy.int") == 4
    assert _count(gm, "aten.expand_copy.default") == 6
    assert {n.args[2] for n in _nodes(gm, "aten.pad.default")} == {"constant", "reflect"}
    assert _count(gm, "dim_order_ops._clone_dim_order.default") == 2  # none between expand_copy and view_copy
    assert all(n.args[2] is True for n in _nodes(gm, "aten.mean.dim") if len(n.args) > 2)
    assert all(len(n.args) >= 4 and not n.kwargs for n in _nodes(gm, "aten.slice_copy.Tensor"))


def test_remove_permutes_around_elementwise_ops(case):
    from executorch.backends.transforms.remove_permutes_around_elementwise_ops import (
        RemovePermutesAroundElementwiseOps,
    )

    before = _count(case.edge.graph_module, "aten.permute_copy.default")
    ep, result = _run(lambda ep: RemovePermutesAroundElementwiseOps(), case)
    gm = result.graph_module
    assert result.modified
    assert _count(gm, "aten.permute_copy.default") <= before - 20
    _assert_same_outputs(case, ep, gm)
    # the long NHWC region now runs in NCHW: its output is no longer a permute, the [1, 4, 5, 3] parameter gets a
    # compensating permute, the per-channel [3, 1, 1] one a view to [1, 1, 3], and the dims are remapped
    first = next(n for n in gm.graph.nodes if n.op == "output").args[0][0]
    assert _target(first) != "aten.permute_copy.default"
    consts = {n.args[0].name: n for n in gm.graph.nodes if n.op == "call_function" and n.args
              and isinstance(n.args[0], torch.fx.Node) and n.args[0].name in ("p_w", "p_c")}
    assert consts["p_w"].args[1] == list(NCHW)
    assert consts["p_c"].args[1] == [1, 1, 3]
    (cat,) = [n for n in _nodes(gm, "aten.cat.default") if _target(n.args[0][0]) == "aten.hardtanh.default"]
    assert cat.args[1] == 1  # channels: NHWC dim 3
    (cut,) = [n for n in cat.users if _target(n) == "aten.slice_copy.Tensor"]
    assert cut.args[1] == 2  # height: NHWC dim 1


def test_remove_permutes_leaves_a_region_it_invalidated_to_the_next_run(case):
    """By design a single sweep: the region that starts at the end permute an earlier region rewrote in place
    (relu -> permute(0, 2, 1, 3) -> neg -> permute(0, 2, 1, 3)) fails _subgraph_edges_are_current and is only
    rewritten by a second run, which removes one more permute."""
    from executorch.backends.transforms.remove_permutes_around_elementwise_ops import (
        RemovePermutesAroundElementwiseOps,
    )

    ep, result = _run(lambda ep: RemovePermutesAroundElementwiseOps(), case)
    first = _count(result.graph_module, "aten.permute_copy.default")
    again = RemovePermutesAroundElementwiseOps()(copy.deepcopy(result.graph_module))
    assert again.modified
    assert _count(again.graph_module, "aten.permute_copy.default") == first - 1
    _assert_same_outputs(case, ep, again.graph_module)


def test_fuse_cascaded_transpose_or_permute_ops(case):
    from executorch.backends.transforms.fuse_cascaded_transpose_or_permute_ops import (
        FuseCascadedTransposeOrPermuteOps,
    )

    before = case.edge.graph_module
    ep, result = _run(lambda ep: FuseCascadedTransposeOrPermuteOps(), case)
    gm = result.graph_module
    assert result.modified
    # a transpose_copy fuses with a permute next to it, or across a unit-dim view when the two cancel; the one
    # left is permute -> view(unsqueeze) -> transpose_copy(1, 3), which does not cancel
    assert _count(before, "aten.transpose_copy.int") == 4
    (left,) = _nodes(gm, "aten.transpose_copy.int")
    assert _target(left.args[0]) == "aten.view_copy.default" and left.args[1:] == (1, 3)
    assert _count(gm, "aten.permute_copy.default") <= _count(before, "aten.permute_copy.default") - 8
    _assert_same_outputs(case, ep, gm)
    # permute -> permute back is the input itself: x.permute(NHWC).permute(NCHW) * 3.0 multiplies x
    muls = [n for n in _nodes(gm, "aten.mul.Tensor") if n.args[0].op == "placeholder" and n.args[0].name == "x"]
    assert muls


def test_fuse_identical_input_transforms(case):
    from executorch.backends.transforms.fuse_identical_input_transforms_pass import (
        FuseIdenticalInputTransformsPass,
    )

    before = case.edge.graph_module
    ep, result = _run(lambda ep: FuseIdenticalInputTransformsPass(ep), case)
    gm = result.graph_module
    assert result.modified
    assert _count(gm, "aten.permute_copy.default") < _count(before, "aten.permute_copy.default")
    assert _count(gm, "aten.view_copy.default") < _count(before, "aten.view_copy.default")
    _assert_same_outputs(case, ep, gm)
    # add(permute(x), permute(y)) -> permute(add(x, y))
    assert any(n.args[0].name == "x" and n.args[1].name == "y" for n in _nodes(gm, "aten.add.Tensor")
               if all(isinstance(a, torch.fx.Node) for a in n.args[:2]))


@pytest.mark.parametrize("direction", ["Up", "Down"])
def test_propagate_view_copy_permute(case, direction):
    from executorch.backends.transforms import propagate_view_copy_permute_pass as module

    cls = getattr(module, f"PropagateViewCopyPermute{direction}Pass")
    before = _count(case.edge.graph_module, "aten.permute_copy.default")
    ep, result = _run(lambda ep: cls(ep), case)
    gm = result.graph_module
    assert result.modified
    assert _count(gm, "aten.permute_copy.default") <= before - 20
    _assert_same_outputs(case, ep, gm)


# ---- upstream bugs, each on a program of its own


def _lower(module: nn.Module, *inputs):
    from executorch.exir import EdgeCompileConfig, to_edge

    with torch.no_grad():
        exported = torch.export.export(module.eval(), inputs, strict=False)
    return to_edge(exported, compile_config=EdgeCompileConfig()).exported_program()


def _rpae_outputs(module: nn.Module, *inputs):
    from executorch.backends.transforms.remove_permutes_around_elementwise_ops import (
        RemovePermutesAroundElementwiseOps,
    )

    ep = _lower(module, *inputs)
    gm = RemovePermutesAroundElementwiseOps()(copy.deepcopy(ep.graph_module)).graph_module
    return _outputs(ep, gm, inputs), list(module(*inputs))


class _Bias(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.b = nn.Parameter(torch.arange(torch.Size(shape).numel(), dtype=torch.float32).reshape(shape))

    def forward(self, x):
        return (torch.relu(x.permute(NHWC) + self.b).permute(NCHW),)


@pytest.mark.xfail(strict=True, raises=RuntimeError, reason=(
    "RemovePermutesAroundElementwiseOps.permute_subgraph compensates a constant of lower rank than the region "
    "with a view_copy to [padded[d] for d in end_permute][permute_rank - const_rank:]: for a [C] bias in an NHWC "
    "region that is [1, C, 1, 1][3:] = [1], an invalid view of C elements (the retrace raises)"))
def test_upstream_rpae_per_channel_bias_in_an_nhwc_region():
    actual, expected = _rpae_outputs(_Bias((3,)), torch.randn(1, 3, 4, 5))
    torch.testing.assert_close(actual, expected)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "same branch: a view_copy only renames the shape, it does not move data; a [4, 5, 3] constant in an NHWC "
    "region is viewed as [3, 4, 5] instead of permuted, so the region adds scrambled values"))
def test_upstream_rpae_lower_rank_constant_is_viewed_not_permuted():
    actual, expected = _rpae_outputs(_Bias((4, 5, 3)), torch.randn(1, 3, 4, 5))
    torch.testing.assert_close(actual, expected)


def test_rpae_lower_rank_constant_that_only_moves_unit_dims_is_right():
    """The branch is right when the permutation moves only size-1 dims of the constant: [3, 1, 1] in an NCHW
    region between NHWC tensors becomes [1, 1, 3] (the corpus graph has this one)."""

    class PerChannel(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = nn.Parameter(torch.tensor([[[1.0]], [[-2.0]], [[3.0]]]))

        def forward(self, z):
            return (torch.relu(z.permute(NCHW) * self.c).permute(NHWC),)

    actual, expected = _rpae_outputs(PerChannel(), torch.randn(1, 4, 5, 3))
    torch.testing.assert_close(actual, expected)


@pytest.mark.xfail(strict=True, raises=TypeError, reason=(
    "RemovePermutesAroundElementwiseOps.update_mean_dim iterates the reduction's dim, which is None for "
    "sum(x, dim=None, keepdim=True) (sum.dim_IntList over every dim): 'NoneType' object is not iterable"))
def test_upstream_rpae_sum_over_every_dim_with_keepdim():
    class SumAll(nn.Module):
        def forward(self, x):
            return (torch.sum(x.permute(NHWC) * 2.0, dim=None, keepdim=True).permute(NCHW),)

    actual, expected = _rpae_outputs(SumAll(), torch.randn(1, 3, 4, 5))
    torch.testing.assert_close(actual, expected)


@pytest.mark.xfail(strict=True, raises=IndexError, reason=(
    "PropagateViewCopyPermuteDownPass._maybe_swap_permute_args reads the next op's dim as next_node.args[1]: in "
    "a program loaded back from a .pt2 (exir.serde), slice_copy(x, dim=2, start=1, end=...) has only the input "
    "positional, so a permute followed by a slice raises IndexError (why the corpus graph is tagged as_lowered)"))
def test_upstream_propagate_down_permute_then_slice_in_a_loaded_program():
    from executorch.backends.transforms.propagate_view_copy_permute_pass import PropagateViewCopyPermuteDownPass

    from harness.graphs.cache import roundtrip

    class PermuteSlice(nn.Module):
        def forward(self, x):
            return (x.permute(NHWC)[:, :, 1:],)

    x = torch.randn(1, 3, 4, 5)
    ep = roundtrip(_lower(PermuteSlice(), x))
    (node,) = _nodes(ep.graph_module, "aten.slice_copy.Tensor")
    assert len(node.args) == 1 and "dim" in node.kwargs  # the loaded form
    gm = PropagateViewCopyPermuteDownPass(ep)(copy.deepcopy(ep.graph_module)).graph_module
    torch.testing.assert_close(_outputs(ep, gm, (x,)), [x.permute(NHWC)[:, :, 1:]])
