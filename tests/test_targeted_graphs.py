"""The hand-written targeted graphs of fixtures/corpus for the XNNPACK and transforms entries
(``targeted_xnnpack_*.py``, ``targeted_transforms_*.py``, ``targeted_quant_*.py``): each is a corpus case that
builds, exports, lowers and computes what eager does, and puts in front of its entry the pattern it was written
for."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from harness.fuzz.corpus import load_dir
from harness.graphs.cases import load_case

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
PREFIXES = ("targeted_xnnpack_", "targeted_transforms_", "targeted_quant_", "targeted_aslowered", "targeted_misc_",
            "targeted_asserts", "targeted_exir_stages", "targeted_qnn_mha", "targeted_vulkan_patterns2",
            "targeted_exir_misc2", "targeted_vulkan_cadence3", "targeted_vulkan_qdq3",
            "targeted_qnn_quant4", "targeted_exir_misc3", "targeted_qnn_xnnpack5", "targeted_vulkan_patterns3",
            "targeted_exir_outputs", "targeted_exir_mutable", "targeted_exir_running_stats",
            "targeted_exir_ema")
TARGETED = [s for s in load_dir(CORPUS) if s.name.startswith(PREFIXES)]


def _spec(name):
    return next(s for s in TARGETED if s.name == name)


def _count(ep, name: str) -> int:
    return sum(1 for n in ep.graph.nodes if n.op == "call_function" and getattr(n.target, "__name__", "") == name)


def test_targeted_graphs_are_corpus_cases_described_as_hand_written():
    assert "targeted_xnnpack_cat" in {s.name for s in TARGETED}
    for spec in TARGETED:
        assert spec.source == "corpus" and "hand-written" in spec.description, spec.name


@pytest.mark.parametrize("spec", TARGETED, ids=[s.name for s in TARGETED])
def test_targeted_graph_lowers_and_matches_eager(spec):
    case = load_case(spec)
    built = spec.build()
    model = built.model.module() if isinstance(built.model, torch.export.ExportedProgram) else built.model
    with torch.no_grad():
        expected = model(*case.sample_inputs())
        actual = case.edge.module()(*case.sample_inputs())
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = actual if isinstance(actual, tuple) else (actual,)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e)


def test_decompose_concatenate_splits_the_six_tensor_cat():
    """xnnpack.DecomposeConcatenate: the cat of 6 becomes cat(5) then cat(that, 1)."""
    import copy

    from executorch.backends.xnnpack._passes.decompose_cat import DecomposeConcatenate

    ep = copy.deepcopy(load_case(_spec("targeted_xnnpack_cat")).edge)
    assert _count(ep, "aten.cat.default") == 1
    gm = DecomposeConcatenate()(ep.graph_module).graph_module
    cats = [n for n in gm.graph.nodes if n.op == "call_function" and getattr(n.target, "__name__", "") ==
            "aten.cat.default"]
    assert sorted(len(n.args[0]) for n in cats) == [2, 5]


def test_a_graph_that_declares_it_is_quantized_is_a_quantized_case():
    """``TAGS = ("quantized", "int8")``: the quantized-edge entries apply to it, the float ones do not."""
    from harness.catalog.registry import load_catalogs

    spec = _spec("targeted_quant_pad_dyn")
    assert {"quantized", "int8", "corpus"} <= spec.tags
    xnnpack = {e.name: e for e in load_catalogs()["xnnpack"].entries}
    assert xnnpack["xnnpack.InsertPadQDQPass"].applies(spec)
    assert not xnnpack["xnnpack.DecomposeConcatenate"].applies(spec)
    assert not xnnpack["xnnpack.InsertPadQDQPass"].applies(_spec("targeted_xnnpack_cat"))


def test_user_annotations_survive_the_case_cache_and_reach_the_pass():
    """ExecuTorch's serde drops node.meta['custom']; the cache keeps it, so the annotated region of
    targeted_xnnpack_custom (a strict export) reaches PropagateCustomMetaPass, which copies it onto the Q/DQ."""
    import copy

    from executorch.backends.xnnpack._passes.propagate_custom_meta_pass import PropagateCustomMetaPass

    case = load_case(_spec("targeted_xnnpack_custom"))
    ep = copy.deepcopy(case.edge)
    annotated = {n.name for n in ep.graph.nodes if (n.meta.get("custom") or {}).get("region") == "encoder"}
    assert any("gelu" in name for name in annotated)
    qdq = [n for n in ep.graph.nodes if "quantize_per_tensor" in n.name]
    assert qdq and not any(n.meta.get("custom") for n in qdq)
    gm = PropagateCustomMetaPass(ep)(ep.graph_module).graph_module
    assert all(n.meta.get("custom") for n in gm.graph.nodes if "quantize_per_tensor" in n.name)


def test_a_case_tagged_as_lowered_gets_the_form_to_edge_returned():
    """The round trip's form (keyword arguments, dead getitems) is rewritten back for a case tagged as_lowered:
    any.dim's keepdim positional again, the unused batch-norm and max-pool getitems gone; others keep it."""
    import operator

    from harness.graphs.forms import AS_LOWERED

    spec = _spec("targeted_aslowered")
    assert AS_LOWERED in spec.tags
    ep = load_case(spec).edge
    anys = [n for n in ep.graph.nodes if n.op == "call_function" and "any.dim" in str(n.target)]
    assert anys and all(len(n.args) == 3 and not n.kwargs for n in anys)
    assert all(n.users for n in ep.graph.nodes if n.op == "call_function" and n.target is operator.getitem)
    assert AS_LOWERED not in _spec("targeted_xnnpack_cat").tags  # the others keep the loaded form


def test_trailing_arguments_equal_to_their_default_are_left_out():
    import torch

    from harness.graphs.forms import _positional

    schema = torch.ops.aten.any.dim._schema
    assert _positional(schema, (1, 2), {"keepdim": True}) == ((1, 2, True), {})
    assert _positional(schema, (1, 2), {"keepdim": False}) == ((1, 2), {})
    schema = torch.ops.aten.mean.dim._schema  # dtype is keyword-only: it stays a keyword
    assert _positional(schema, ("x", [1]), {"keepdim": True, "dtype": None}) == (("x", [1], True), {"dtype": None})


def _lifted_constants_known(ep) -> dict:
    """Per buffer / constant input of ``ep``: does its placeholder's fake value hold its value?"""
    vals = {n.name: n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"}
    return {s.target: getattr(vals[s.arg.name], "constant", None) is not None
            for s in ep.graph_signature.input_specs if s.kind.name in ("BUFFER", "CONSTANT_TENSOR")}


def test_a_case_tagged_as_lowered_knows_its_lifted_constants_values_and_only_theirs():
    """to_edge's program gives each lifted one-element constant a fake value that holds its value
    (FakeTensor.constant); the load drops it, as_lowered restores it, and a module's own buffers (the mask of
    targeted_aslowered) keep none, as in to_edge's program."""
    from harness.graphs.cases import export_and_lower
    from harness.graphs.forms import LIFTED_PREFIX

    by_name = {s.name: s for s in load_dir(CORPUS)}
    for name in ("targeted_rms_norm", "targeted_aslowered"):
        _, _, fresh = export_and_lower(by_name[name])
        assert _lifted_constants_known(load_case(by_name[name]).program("edge")) == _lifted_constants_known(fresh)
    lifted = _lifted_constants_known(load_case(by_name["targeted_rms_norm"]).program("edge"))
    assert lifted and all(known for target, known in lifted.items() if target.startswith(LIFTED_PREFIX))


@pytest.mark.parametrize("name", ["samsung.FuseActivationPass", "qualcomm.RecomposePixelUnshuffle",
                                  "qualcomm.DecomposeFloorDivide", "qualcomm.DecomposeReciprocal"])
def test_targeted_misc_ops_exercises_the_entries_it_names(name):
    """Each region of targeted_misc_ops is the one plain op its entry needs: the entry changes the case (the
    conv's fused activation is recorded as metadata), and the result still computes what eager does."""
    from harness.catalog.registry import load_catalogs
    from harness.check.runner import check_pass_on_case

    catalog = load_catalogs()[name.split(".")[0]]
    loaded = next(e for e in catalog.entries if e.name == name).loaded()
    got = {r.check: r for r in check_pass_on_case(loaded, load_case(_spec("targeted_misc_ops")))}
    assert any(got["runs"].details["changed"].values()), got["runs"].message
    assert got["numerics"].status.value == "pass", got["numerics"].message


@pytest.mark.parametrize("name, graph, numerics", [
    ("exir.RemoveNoopPass", "targeted_exir_stages", "pass"), ("exir.RemoveToCopyPass", "targeted_exir_stages", "pass"),
    ("exir.FoldRedundantDequantizeQuantizePass", "targeted_exir_stages", "pass"),
    # its rewrite of the 4-head linear attention copies each projection's full weight per head (a known bug): the
    # result no longer runs, so there is no numerics verdict; what matters here is that the pass now matches
    ("qualcomm.ConvertMhaToSha", "targeted_qnn_mha", "skip")])
def test_entries_to_edge_or_a_backend_runs_first_change_the_graph_written_for_them(name, graph, numerics):
    """On the core ATen program to_edge hands them (targeted_exir_stages), the no-op removers and the dq -> q
    folder remove what they exist for; ConvertMhaToSha, after QNN's RemoveRedundancy on an attention lowered with
    matmul and linear kept whole as QNN keeps them, splits the heads."""
    from harness.catalog.registry import load_catalogs
    from harness.check.runner import check_pass_on_case

    catalog = load_catalogs()[name.split(".")[0]]
    loaded = next(e for e in catalog.entries if e.name == name).loaded()
    got = {r.check: r for r in check_pass_on_case(loaded, load_case(_spec(graph)))}
    assert got["runs"].status.value == "pass" and got["runs"].details["changed"]["ops"], got["runs"].message
    assert got["numerics"].status.value == numerics, got["numerics"].message


@pytest.mark.parametrize("name", ["exir.RemoveGraphAssertsPass", "vulkan.RemoveAssertsTransform", "vulkan.remove_asserts"])
def test_targeted_asserts_gives_the_assert_removers_their_assertions(name):
    """The runtime assertions a data-dependent value leaves (aten._assert_scalar) are what these entries remove:
    each removes both and the program still computes what eager does."""
    from harness.catalog.registry import load_catalogs
    from harness.check.runner import check_pass_on_case

    case = load_case(_spec("targeted_asserts"))
    assert _count(case.edge, "_assert_scalar.default") == 2
    catalog = load_catalogs()[name.split(".")[0]]
    loaded = next(e for e in catalog.entries if e.name == name).loaded()
    got = {r.check: r for r in check_pass_on_case(loaded, case)}
    assert got["runs"].details["changed"]["ops"], got["runs"].message
    assert "_assert_scalar.default" in got["runs"].message
    assert got["numerics"].status.value == "pass", got["numerics"].message


def test_a_loaded_case_keeps_val_none_on_ops_without_outputs():
    """to_edge records meta['val'] = None on aten._assert_scalar; the cache's load gives the key back (serde
    drops it), so a pass that reads node.meta["val"] on every node sees what it sees in to_edge's program."""
    from harness.graphs.cases import export_and_lower

    spec = _spec("targeted_asserts")
    _, _, fresh = export_and_lower(spec)
    loaded = load_case(spec).program("edge")
    for ep in (fresh, loaded):
        asserts = [n for n in ep.graph.nodes if getattr(n.target, "__name__", "") == "_assert_scalar.default"]
        assert len(asserts) == 2 and all("val" in n.meta and n.meta["val"] is None for n in asserts)
