"""The hand-written targeted graph for ExecuTorch's own to_executorch passes (fixtures/corpus/targeted_exir_memory.py):
it lowers to what eager computes (mutable buffers, a data-dependent length, a dynamic length, cond / map / scan), and
the passes aimed at it do what it is there for: reinplace_pass writes the KV-cache index_put into the buffer and
leaves the other index_puts alone (but for one whose input the program returns: an upstream bug pinned down so
that a fix shows), annotates the slice assignment for storage sharing, which MemoryPlanningPass[executorch_flow]
honours; HintBasedSymShapeEvalPass bounds the data-dependent length by its range; ToOutVarPass rewrites the
control-flow submodules; PropagateDevicePass[device_copies] elides the device round trip between two delegates."""

from __future__ import annotations

import copy

import pytest
import torch
from corpus_helpers import corpus_spec, eager_outputs

from harness import catalog
from harness.check.invoke import run_pass
from harness.graphs.cases import load_case

NAME = "targeted_exir_memory"
SPEC = corpus_spec(NAME)
# user outputs, in forward's return order
ATT, SHARE, W, WI, T, S, R, OUTER, PICKED, BRANCH, ROWS, LAST, STEPS, E, TABLE, DEV, ZERO = range(17)


def _calls(gm, name: str) -> list:
    """Call nodes of ``name``: an edge op's or a function's ``__name__``, or an ATen / custom op overload's str."""
    return [n for n in gm.graph.nodes if n.op == "call_function"
            and name in (getattr(n.target, "__name__", ""), str(n.target))]


def _entry(name: str):
    return next(e for e in catalog.all_entries(catalog.select(["exir"])) if e.name == name)


def _run_entry(case, name: str):
    """The catalog entry run as the gate runs it (its prerequisites first) on a copy of the edge program."""
    run = run_pass(_entry(name).loaded(), case.program("edge"), None)
    assert run.outcome == "ok", run.error
    return run.program


def _user_outputs(ep, case) -> tuple:
    with torch.no_grad():
        return tuple(ep.module()(*case.sample_inputs()))


@pytest.fixture(scope="module")
def case():
    return load_case(SPEC)


@pytest.fixture(scope="module")
def eager(case):
    return eager_outputs(NAME, case)


def _assert_close(actual, expected, skip=()):
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        if i not in skip:
            torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-5, msg=lambda m, i=i: f"output {i}: {m}")


def test_the_graph_is_a_hand_written_dynamic_case_with_mutable_buffers():
    assert SPEC.source == "corpus" and "hand-written" in SPEC.description
    assert "buffer_mutation" in SPEC.tags and "dynamic" in SPEC.tags


def test_the_lowered_program_computes_what_eager_does(case, eager):
    _assert_close(_user_outputs(case.program("edge"), case), eager)
    signature = case.edge.graph_signature
    assert sorted(signature.buffers_to_mutate.values()) == ["cache", "peak"]
    gm = case.edge.graph_module
    for name in ("cond", "map_impl", "scan"):
        assert len(_calls(gm, name)) == 1, name
    picked = _calls(gm, "aten.index.Tensor")[0].meta["val"]
    assert not isinstance(picked.shape[0], int)  # the data-dependent length: an unbacked symbol
    assert len(_calls(gm, "aten.slice_scatter.default")) == 2
    assert len(_calls(gm, "dim_order_ops._empty_dim_order.default")) == 1


def test_reinplace_writes_the_kv_cache_into_its_buffer_and_overwrites_a_returned_tensor(case, eager):
    """index_put on the mutable cache buffer becomes index_put_; the one on the caller's y and the one on an
    intermediate read again later stay functional. The one on `w`, which the program also returns, is reinplaced
    too (reinplace_pass never counts the output node as a later reader): output W comes back with the put applied
    (reports/upstream/repro_reinplace_overwrites_graph_output.py)."""
    ep = _run_entry(case, "exir.reinplace_pass")
    gm = ep.graph_module
    inplace = _calls(gm, "aten.index_put_.default")
    assert sorted(n.args[0].name for n in inplace) == ["aten_mul_tensor_3", "b_cache"]  # w = upd * 3.0
    assert {n.args[0].name for n in _calls(gm, "aten.index_put.default")} == {"y", "aten_mul_tensor_2"}
    outputs = _user_outputs(ep, case)
    _assert_close(outputs, eager, skip=(W,))
    torch.testing.assert_close(outputs[W], eager[WI])  # w overwritten by its own index_put


def test_share_alloc_annotates_the_slice_assignment_and_memory_planning_shares_its_storage(case, eager):
    """With slice_scatter in ops_to_inplace, the slice assignment t[:, 1:2] = k (nothing reads t's old value) is
    annotated to share its input's allocation; torch.slice_scatter(hh, ...) is not, hh being read again. After
    to_executorch's passes, MemoryPlanningPass plans the slice_scatter.out result into its input's storage."""
    ep = _run_entry(case, "exir.reinplace_pass[share_alloc]")
    scatters = {n.args[0].name: n for n in _calls(ep.graph_module, "aten.slice_scatter.default")}
    assert len(scatters) == 2
    annotated = {name for name, n in scatters.items() if n.meta.get("_share_alloc_with_arg_idx") == 0}
    assert len(annotated) == 1
    scatter = scatters[annotated.pop()]
    assert (scatter.args[3] if len(scatter.args) > 3 else scatter.kwargs["start"]) == 1  # t[:, 1:2]

    planned = _run_entry(case, "exir.MemoryPlanningPass[executorch_flow]")
    shared = [n for n in _calls(planned.graph_module, "aten.slice_scatter.out")
              if n.meta["spec"].storage_base is not None]
    assert len(shared) == 1
    assert shared[0].meta["spec"].storage_base is shared[0].args[0].meta["spec"]
    assert planned.graph_module.meta["non_const_buffer_sizes"][1] > 0


def test_hint_based_shape_eval_bounds_the_data_dependent_length_by_its_range(case):
    ep = _run_entry(case, "exir.HintBasedSymShapeEvalPass")
    picked = _calls(ep.graph_module, "aten.index.Tensor")[0]
    assert list(picked.meta["spec"].shape) == [4]  # the mask has 4 entries; the sample selects 3
    seq = next(n for n in ep.graph.nodes if n.name == "seq")
    assert list(seq.meta["spec"].shape) == [6, 4]  # a backed size: its hint
    ep = _run_entry(case, "exir.ConstraintBasedSymShapeEvalPass")
    seq = next(n for n in ep.graph.nodes if n.name == "seq")
    assert list(seq.meta["spec"].shape) == [8, 4]  # its upper bound, Dim("n", max=8)


def test_to_out_var_rewrites_the_control_flow_submodules(case):
    ep = _run_entry(case, "exir.ToOutVarPass")
    gm = ep.graph_module
    subs = {name: mod for name, mod in gm.named_children() if isinstance(mod, torch.fx.GraphModule)}
    assert len(subs) == 4  # cond's two branches, map's body, scan's combine function
    for name, sub in subs.items():
        assert _calls(sub, "alloc"), name
        assert not [n for n in sub.graph.nodes if n.op == "call_function" and "out" not in str(n.target)
                    and getattr(n.target, "__name__", "") not in ("alloc", "getitem")], name


def test_device_copies_between_two_delegates_are_elided(case):
    """a = p + q and a + a.relu() are two delegates (the relu runs on the host between them): the copy of a back to
    the device for the second one is a device -> host -> device round trip, and is elided."""
    ep = _run_entry(case, "exir.PropagateDevicePass[device_copies]")
    gm = ep.graph_module
    h2d, d2h = _calls(gm, "et_copy._h2d_copy.default"), _calls(gm, "et_copy._d2h_copy.default")
    assert h2d and d2h
    assert not [n for n in h2d if n.args[0] in d2h]
    delegates = _calls(gm, "executorch_call_delegate")
    assert len(delegates) == 2
    # the second delegate reads one of the first one's outputs as it is, on the device
    first_outputs = {n for n in _calls(gm, "getitem") if n.args[0] is delegates[0]}
    assert first_outputs & set(delegates[1].args[1:])


def test_the_passes_leave_the_eager_result_alone_where_they_should(case, eager):
    """The rewrites that must not change a value: constant folding (the cos table and its buffer), CSE and the
    dim-order rewrite of torch.empty."""
    for name in ("exir.constant_prop_pass", "exir.CSEPass"):
        _assert_close(_user_outputs(_run_entry(case, name), case), eager)
    folded = _run_entry(case, "exir.constant_prop_pass")
    assert "freqs" not in folded.state_dict and not _calls(folded.graph_module, "aten.cos.default")
    reverted = _run_entry(case, "exir.DimOrderOpsRevertPass")
    assert len(_calls(reverted.graph_module, "aten.empty.memory_format")) == 1
    assert copy.deepcopy(eager[E]).shape == (2, 4)
