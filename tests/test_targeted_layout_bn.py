"""The hand-written targeted graph for the conv1d, batch-norm and layout passes (fixtures/corpus/targeted_layout_bn.py):
it lowers to what eager computes, with a channels-last input and the torch.cond branches in place; the conv1d
rewrite reaches into both cond branches; XNNPACK's batch-norm passes fold and decompose the batch norms they are
written for and leave the others, and each shows its name collision on the branch the graph has for it (upstream
bugs, pinned down so that a fix shows); the layout passes see the channels-last input and outputs; the SDPA
decomposition handles the explicit scale and the grouped query heads."""

from __future__ import annotations

import copy
import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from harness.fuzz.corpus import load_dir
from harness.graphs.cases import load_case

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
NAME = "targeted_layout_bn"
SPEC = next(s for s in load_dir(CORPUS) if s.name == NAME)
XNN = "executorch.backends.xnnpack._passes"
BATCH_NORM = "aten._native_batch_norm_legit_no_training.default"
CONVOLUTION = "aten.convolution.default"
OUTPUTS = 36
SHARED_CONV_SECOND_BRANCH = 8  # bn_dom_b(c_dom(relu(x))): the conv weight c_dom also feeds output 7
SECOND_PLAIN_BATCH_NORM = 10  # bn2_alone, BatchNorm2d(affine=False): the first one is output 9
XCL_OUTPUTS = (21, 22)  # xcl * 3.0 and relu(x).contiguous(memory_format=channels_last): channels-last results


def _calls(gm, name: str) -> list:
    return [n for n in gm.graph.nodes if n.op == "call_function" and getattr(n.target, "__name__", "") == name]


@pytest.fixture(scope="module")
def case():
    return load_case(SPEC)


@pytest.fixture(scope="module")
def eager(case):
    """What the nn.Module computes (not its export): the file's Program, seeded as build() seeds it. Imported
    as a module of its own, since torch.cond compiles its branches with dynamo even in eager mode, and dynamo
    imports the module the branch functions come from."""
    spec = importlib.util.spec_from_file_location(f"passgate_test_{NAME}", CORPUS / f"{NAME}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(module.SEED)
            model = module.Program().eval()
        with torch.no_grad():
            return model(*case.sample_inputs())
    finally:
        sys.modules.pop(spec.name, None)


def _run(case, *pass_classes, dce: bool = False):
    """The passes run in order on a copy of the edge program (each built with the program); (program, outputs)."""
    from executorch.exir.passes import dead_code_elimination_pass

    ep = case.program("edge")
    if dce:
        dead_code_elimination_pass(ep.graph_module)
    for cls in pass_classes:
        try:
            instance = cls(ep)
        except TypeError:
            instance = cls()
        result = instance(ep.graph_module)
        if result is not None:
            ep._graph_module = result.graph_module
    with torch.no_grad():
        return ep, ep.module()(*case.sample_inputs())


def _mismatches(actual, expected) -> list[int]:
    return [i for i, (a, e) in enumerate(zip(actual, expected)) if not torch.allclose(a, e, atol=1e-5)]


def test_the_graph_is_a_hand_written_case_lowered_to_what_eager_computes(case, eager):
    assert SPEC.source == "corpus" and "hand-written" in SPEC.description
    assert len(eager) == OUTPUTS
    with torch.no_grad():
        assert _mismatches(case.edge.module()(*case.sample_inputs()), eager) == []
    placeholders = {n.name: n.meta["val"] for n in case.edge.graph.nodes if n.op == "placeholder"}
    assert placeholders["xcl"].is_contiguous(memory_format=torch.channels_last)
    assert not placeholders["xcl"].is_contiguous()
    assert len(_calls(case.edge.graph_module, "cond")) == 2


def test_conv1d_becomes_conv2d_at_the_root_and_inside_the_cond_branches(case, eager):
    from executorch.backends.transforms.convert_conv1d_to_conv2d_pass import ConvertConv1dToConv2dPass

    ep, outputs = _run(case, ConvertConv1dToConv2dPass)
    root_convs = _calls(ep.graph_module, CONVOLUTION)
    assert root_convs and all(len(n.args[3]) == 2 for n in root_convs)  # every root convolution is 2-D now
    branches = [m for m in ep.graph_module.children() if isinstance(m, torch.fx.GraphModule)]
    conv_branches = [m for m in branches if _calls(m, CONVOLUTION)]
    assert len(conv_branches) == 2 and len(branches) == 4
    for branch in conv_branches:
        (conv,) = _calls(branch, CONVOLUTION)
        weight = conv.args[1]  # unsqueezed inside the branch: the cond still hands it the 3-D parameter
        assert getattr(weight.target, "__name__", "") == "aten.unsqueeze_copy.default"
        assert weight.args[0].op == "placeholder" and weight.args[0].meta["val"].dim() == 3
    assert _mismatches(outputs, eager) == []


def test_decompose_batch_norm_decomposes_the_static_ones_and_reuses_one_name_for_two_plain_ones(case, eager):
    """Every batch norm with static parameters and rank 2-4 becomes a depthwise convolution; the rank-5 one and
    those with a computed scale, shift or statistics stay. Both BatchNorm2d(affine=False) get the weight named
    '_decomposed_bn_weight', and the second computes with the first one's statistics."""
    ep, outputs = _run(case, _xnn("decompose_batch_norm:DecomposeBatchNorm"), dce=True)
    assert len(_calls(ep.graph_module, BATCH_NORM)) == 4
    plain = [n for n in _calls(ep.graph_module, CONVOLUTION) if n.args[1].name == "_decomposed_bn_weight"]
    assert len(plain) == 2
    assert _mismatches(outputs, eager) == [SECOND_PLAIN_BATCH_NORM]


def test_fuse_batch_norm_folds_into_convs_and_linears_and_gives_a_shared_conv_one_folded_weight(case, eager):
    """Folded: the batch norms after the conv2d, the conv1d and the shared conv's two uses; after
    ConvertToLinearPass also those after the linears. The shared conv's second branch computes with the first
    branch's batch norm folded in ('c_dom_weight_fused_bn' names both)."""
    from executorch.backends.xnnpack._passes.convert_to_linear import ConvertToLinearPass

    before = len(_calls(case.edge.graph_module, BATCH_NORM))
    ep, outputs = _run(case, _xnn("fuse_batch_norm:FuseBatchNormPass"), dce=True)
    assert len(_calls(ep.graph_module, BATCH_NORM)) == before - 4
    shared = [n for n in _calls(ep.graph_module, CONVOLUTION) if n.args[1].name == "c_dom_weight_fused_bn"]
    assert len(shared) == 2
    assert _mismatches(outputs, eager) == [SHARED_CONV_SECOND_BRANCH]

    ep, outputs = _run(case, ConvertToLinearPass, _xnn("fuse_batch_norm:FuseBatchNormPass"), dce=True)
    assert len(_calls(ep.graph_module, BATCH_NORM)) == before - 6
    assert _mismatches(outputs, eager) == [SHARED_CONV_SECOND_BRANCH]


def test_channels_last_tagging_in_xnnpack_order_takes_the_channels_last_input_as_it_is(case, eager):
    from executorch.exir.passes.memory_format_ops_pass import DimOrderOpsRevertPass

    ep, outputs = _run(case, DimOrderOpsRevertPass, _xnn("conv1d_unsqueeze_pass:Conv1dUnsqueezePass"),
                       _xnn("channels_last_tagged_reshape_pass:ChannelsLastTaggedReshapePass"))
    convs = _calls(ep.graph_module, CONVOLUTION)
    assert any(n.args[0].name == "xcl" for n in convs)  # already NHWC: no copy in front of it
    copies = _calls(ep.graph_module, "aten._to_copy.default")
    assert any(n.kwargs.get("memory_format") == torch.channels_last for n in copies)
    assert _mismatches(outputs, eager) == []


def test_enforce_contiguous_dim_order_converts_the_channels_last_input_and_restores_the_outputs(case, eager):
    from executorch.backends.transforms.enforce_contiguous_dim_order import EnforceContiguousDimOrder

    ep, outputs = _run(case, EnforceContiguousDimOrder)
    clones = _calls(ep.graph_module, "dim_order_ops._clone_dim_order.default")
    inputs = [n for n in clones if n.args[0].op == "placeholder"]
    assert sorted(n.args[0].name for n in inputs) == ["xcl", "xcl2"]  # xcl2's .contiguous() is kept as it is
    assert all(list(n.kwargs["dim_order"]) == [0, 1, 2, 3] for n in inputs)
    returned = list(ep.graph_module.graph.output_node().args[0])
    for index in XCL_OUTPUTS:
        assert list(returned[index].kwargs["dim_order"]) == [0, 2, 3, 1]
    assert not _calls(ep.graph_module, "dim_order_ops._to_dim_order_copy.default")
    assert _mismatches(outputs, eager) == []


def test_sdpa_decomposition_handles_the_scale_and_grouped_query_heads(case, eager):
    from executorch.backends.transforms.decompose_sdpa import DecomposeScaledDotProductAttention

    ep = case.program("export")
    sdpa = torch.ops.aten.scaled_dot_product_attention.default
    assert len([n for n in ep.graph.nodes if n.target == sdpa]) == 2
    gm = DecomposeScaledDotProductAttention()(ep.graph_module).graph_module
    assert not [n for n in gm.graph.nodes if n.target == sdpa]
    with torch.no_grad():
        outputs = ep.module()(*case.sample_inputs())
    assert _mismatches(outputs, eager) == []


def _xnn(spec: str):
    module, _, name = f"{XNN}.{spec}".rpartition(":")
    return getattr(__import__(module, fromlist=[name]), name)


def test_the_dropped_regions_stay_out():
    """The regions the docstring leaves out (a conv1d weight read twice, a batch norm after a conv with a computed
    shift) would stop Conv1dUnsqueezePass, and with it the XNNPACK layout entries, or FuseBatchNormPass on the whole
    graph."""
    case = load_case(SPEC)
    ep = copy.deepcopy(case.edge)
    weights = [n.args[1] for n in _calls(ep.graph_module, CONVOLUTION) if n.args[1].meta["val"].dim() == 3]
    assert all(len(w.users) == 1 for w in weights)
