"""The guide's reference passes run through passgate with their expected verdicts."""

from __future__ import annotations

import pytest
from conftest import failing_ids

from harness.check.loading import load_pass
from harness.check.runner import check_pass_on_case
from harness.core.results import Status

CLEAN = [
    "ReplaceInPlaceReluWithOutOfPlaceReluPass",
    "ReplaceAddWithMulSub",
    "RemoveDetachPass",
    "ScalarToTensorPass",
    "ReplaceAddMulWithSubKeepingMeta",
    "GuidePipeline",
]


def _run(name, builtin_cases):
    loaded = load_pass(f"passes.reference:{name}")
    return {g: check_pass_on_case(loaded, case) for g, case in builtin_cases.items()}


@pytest.mark.parametrize("name", CLEAN)
def test_reference_pass_keeps_the_ir_spec(name, builtin_cases):
    for graph, results in _run(name, builtin_cases).items():
        assert failing_ids(results) == set(), f"{name} on {graph}: {[r.message for r in results if r.status is Status.FAIL]}"


def test_relu_pass_replaces_relu_where_there_is_one(builtin_cases):
    runs = {g: next(r for r in rs if r.check == "runs") for g, rs in _run(CLEAN[0], builtin_cases).items()}
    assert runs["inplace_views"].details["ops_changed"] == {"relu_.default": -1, "relu.default": 1}
    assert runs["mlp"].details["ops_changed"] == {}


def test_meaning_changing_pass_skips_numerics_by_declaration(builtin_cases):
    results = _run("ReplaceAddWithMulSub", builtin_cases)["residual_block"]
    (num,) = [r for r in results if r.check == "numerics"]
    assert num.status is Status.SKIP and "meaning-changing" in num.message
    changes = next(r for r in results if r.check == "runs").details["ops_changed"]
    assert changes["aten.add.Tensor"] == -1 and changes["aten.sub.Tensor"] == 1


def test_passbase_requires_makes_graphs_without_add_not_applicable(builtin_cases):
    by_graph = _run("ReplaceAddPass", builtin_cases)
    assert all(r.status is Status.NOT_APPLICABLE for r in by_graph["mlp"])
    ensures = next(r for r in by_graph["residual_block"] if r.check == "ensures")
    assert ensures.status is Status.PASS


def test_failing_ensures_is_a_violation(builtin_cases):
    from harness.check.loading import from_object
    from passes.reference import ReplaceAddPass

    class ForgetsSomeAdds(ReplaceAddPass):
        def call(self, gm):  # replaces nothing, so ensures finds the adds
            return None

    results = check_pass_on_case(from_object(ForgetsSomeAdds), builtin_cases["residual_block"])
    ensures = next(r for r in results if r.check == "ensures")
    assert ensures.status is Status.FAIL and "add ops left" in ensures.message


def test_subgraph_rewriter_as_written_loses_metadata_as_the_guide_warns(builtin_cases):
    results = _run("replace_add_mul_with_sub", builtin_cases)
    assert failing_ids(results["inplace_views"]) == {
        "meta_val", "meta_stack_trace", "meta_nn_module_stack", "meta_debug_handle"}
    assert failing_ids(results["mlp"]) == set()  # no (a + b) * b there: nothing rewritten
