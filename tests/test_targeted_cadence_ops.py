"""The hand-written targeted graph for Cadence's reorder and simplify passes (fixtures/corpus/targeted_cadence_ops.py):
it lowers to what eager computes, is handed over as to_edge returns it, and each entry it was written for rewrites
its regions, keeping every output: the branched quantize is hoisted once above the relu, the quantize of a
slice_scatter moves onto both of its inputs only with the extra_quantizable_ops configuration, the dequantize read
by slices moves below them, the slices of views move above the views (negative bounds and dim, and a strided inner
factor), the slices of a quantize / dequantize move above them, and the slice bounds are canonicalized."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
import torch

from harness.fuzz.corpus import load_dir
from harness.graphs.cases import load_case

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
NAME = "targeted_cadence_ops"
SPEC = next(s for s in load_dir(CORPUS) if s.name == NAME)
QUANTIZE = "quantized_decomposed.quantize_per_tensor.default"
DEQUANTIZE = "quantized_decomposed.dequantize_per_tensor.default"
SLICE = "aten.slice_copy.Tensor"


def _calls(gm, name: str) -> list:
    return [n for n in gm.graph.nodes if n.op == "call_function" and getattr(n.target, "__name__", "") == name]


def _name(n) -> str:
    return getattr(n.target, "__name__", str(n.target))


@pytest.fixture(scope="module")
def case():
    return load_case(SPEC)


@pytest.fixture(scope="module")
def entries():
    """The cadence catalog as a run selects it: discovery imports every module of the package, the Cadence op
    registrations (exir_ops.edge.cadence.*, which the reorder passes name) among them."""
    from harness import catalog

    return {e.name: e for e in catalog.all_entries(catalog.select(["cadence"]))}


def _checked(entries, name, case) -> dict:
    from harness.check.runner import check_pass_on_case

    return {r.check: r for r in check_pass_on_case(entries[name].loaded(), case)}


def _run(entries, name, case):
    """The entry's pass on a copy of the case's program: the graph module it returns."""
    ep = case.program("edge")
    p = entries[name].loaded().make(ep)
    res = p(ep.graph_module)
    return res.graph_module


def test_the_graph_is_a_hand_written_case_handed_over_as_lowered(case):
    assert SPEC.source == "corpus" and "hand-written" in SPEC.description
    assert "as_lowered" in SPEC.tags and "quantized" not in SPEC.tags and "dynamic" not in SPEC.tags
    namespace = runpy.run_path(str(CORPUS / f"{NAME}.py"))
    model = namespace["Program"]().eval()
    with torch.no_grad():
        expected = model(*case.sample_inputs())
        actual = case.edge.module()(*case.sample_inputs())
    assert len(actual) == len(expected) == 28
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e)
    # handed over with every slice argument positional (the loaded form has keywords)
    handed = case.program("edge").graph_module
    assert all(not n.kwargs and len(n.args) >= 4 for n in _calls(handed, SLICE))


@pytest.mark.parametrize("name", [
    "cadence.AdvanceQuantizeOpAboveDefInBranchPass", "cadence.AdvanceQuantizeOpAboveDefChainPass",
    "cadence.AdvanceQuantizeOpAboveDefChainPass[slice_scatter]", "cadence.PostponeDequantizeOpBelowUseChainPass",
    "cadence.MoveSliceBeforeViewPass", "cadence.PropagateSlice", "cadence.SimplifySliceOpPass"])
def test_the_entries_it_names_change_it_and_keep_every_output(entries, case, name):
    got = _checked(entries, name, case)
    assert got["runs"].status.value == "pass" and any(got["runs"].details["changed"].values()), got["runs"].message
    assert got["numerics"].status.value == "pass", got["numerics"].message


def test_the_branched_quantize_is_hoisted_above_the_relu_once(entries, case):
    gm = _run(entries, "cadence.AdvanceQuantizeOpAboveDefInBranchPass", case)
    relu = next(n for n in _calls(gm, "aten.relu.default") if n.args[0].name == "x" and len(n.users) == 1
                and _name(next(iter(n.users))) == QUANTIZE)
    dom = next(iter(relu.users))
    rows = [u for u in dom.users if _name(u) == SLICE]
    assert sorted((s.args[2], s.args[3]) for s in rows) == [(0, 2), (2, 4)]
    # each slice of the quantized relu is requantized: dequantize -> quantize
    assert all(_name(next(iter(s.users))) == DEQUANTIZE for s in rows)


def test_the_kv_cache_update_is_quantized_only_with_the_slice_scatter_configuration(entries, case):
    def scatter_inputs(gm):
        (scatter,) = [n for n in _calls(gm, "aten.slice_scatter.default") if n.args[0].op != "call_function"
                      or _name(n.args[0]) != "aten.sin.default"]
        return [_name(a) for a in scatter.args[:2]], scatter.meta["val"].dtype

    assert scatter_inputs(_run(entries, "cadence.AdvanceQuantizeOpAboveDefChainPass", case)) == (
        [DEQUANTIZE, DEQUANTIZE], torch.float32)
    assert scatter_inputs(_run(entries, "cadence.AdvanceQuantizeOpAboveDefChainPass[slice_scatter]", case)) == (
        [QUANTIZE, QUANTIZE], torch.int8)


def test_the_slices_of_views_move_above_the_views(entries, case):
    gm = _run(entries, "cadence.MoveSliceBeforeViewPass", case)
    moved = sorted(tuple(s.args[1:]) for s in _calls(gm, SLICE)
                   if all(_name(u) == "aten.view_copy.default" for u in s.users) and s.users)
    # negative start, negative end, negative dim (narrow), width-1 slice of an inner factor (step 3)
    assert moved == [(1, 0, 3, 1), (1, 1, 3, 1), (1, 1, 5, 3), (1, 2, 4, 1)]


def test_the_slice_bounds_are_canonicalized(entries, case):
    gm = _run(entries, "cadence.SimplifySliceOpPass", case)
    bounds = {tuple(s.args[1:]) for s in _calls(gm, SLICE)}
    assert {(1, 1, 4, 1), (1, 0, 3, 1)} <= bounds  # [:, -3:] and [:, :-1] / [:, -10:3] of a width-4 tensor
    assert all(b[1] >= 0 and b[2] >= 0 for b in bounds)
    (empty,) = _calls(gm, "aten.full.default")  # [:, 5:1]: an empty slice becomes an empty full
    assert list(empty.args[0]) == [6, 0]
    (scatter,) = [n for n in _calls(gm, "aten.slice_scatter.default") if n.args[2] == 1]
    assert tuple(scatter.args[2:]) == (1, 6, 8, 1)


@pytest.mark.parametrize("name", ["cadence.MovePermuteAfterConcat", "cadence.MoveSliceBeforePermutePass",
                                  "cadence.SplitDequantizedCatPass"])
def test_the_near_misses_are_left_alone(entries, case, name):
    """Permutes that differ, a permute read twice or sliced on dim 0 keeping most rows, a dequantized cat with
    no quantize user: what these passes must not rewrite (targeted_cadence_reorder has what they do rewrite)."""
    got = _checked(entries, name, case)
    assert got["runs"].status.value == "pass" and not got["runs"].details["changed"]["ops"], got["runs"].message
