"""The harness catches bugs: each deliberately broken pass is flagged with exactly its check id."""

from __future__ import annotations

import broken_passes
import pytest
from conftest import failing_ids

from harness.check.loading import from_object
from harness.check.runner import check_pass_on_case
from harness.core.results import CHECKS, Level, Status


def _flagged_graphs(pass_cls, builtin_cases):
    loaded = from_object(pass_cls)
    return {name: failing_ids(check_pass_on_case(loaded, case)) for name, case in builtin_cases.items()}


@pytest.mark.parametrize("pass_cls", list(broken_passes.EXPECTED), ids=lambda c: c.__name__)
def test_broken_pass_is_flagged_with_exactly_its_check(pass_cls, builtin_cases):
    expected = broken_passes.EXPECTED[pass_cls]
    flagged = _flagged_graphs(pass_cls, builtin_cases)
    hit = {g: ids for g, ids in flagged.items() if ids}
    assert hit, f"{pass_cls.__name__} was not flagged on any graph"
    for graph, ids in hit.items():
        assert ids == expected, f"{pass_cls.__name__} on {graph}: flagged {sorted(ids)}, expected {sorted(expected)}"


def test_cascading_verifier_failure_is_attributed_not_hidden(builtin_cases):
    """ExecuTorch's verifier also rejects a call_module; that is reported as explained, with its message."""
    results = check_pass_on_case(from_object(broken_passes.MoveIntoSubmodule), builtin_cases["conv_bn_relu"])
    verifier = next(r for r in results if r.check == "verifier")
    assert verifier.status is Status.SKIP
    assert verifier.details["explained_by"] == "no_call_module"
    assert "call_module is not valid" in verifier.message


def test_idempotent_is_should_level_and_fails_only_strict(builtin_cases):
    results = check_pass_on_case(from_object(broken_passes.NeverFixedPoint), builtin_cases["mlp"])
    (idem,) = [r for r in results if r.check == "idempotent"]
    assert CHECKS["idempotent"].level is Level.SHOULD
    assert idem.status is Status.FAIL
    assert not idem.is_violation(strict=False) and idem.is_violation(strict=True)


def test_numerics_failure_reports_errors(builtin_cases):
    results = check_pass_on_case(from_object(broken_passes.RetargetAddToSub), builtin_cases["residual_block"])
    (num,) = [r for r in results if r.check == "numerics"]
    assert num.status is Status.FAIL
    assert num.details["max_abs_err"] > 0.1 and "max abs err" in num.message


def test_metadata_loss_is_caught_on_nodes_that_never_had_it(builtin_cases):
    """Debugify: the export-stage inplace graph's relu_ has a real stack trace, but even a
    node without one is seeded, so dropping metadata is caught wherever it happens."""
    results = check_pass_on_case(from_object(broken_passes.RawCallFunctionNoMeta), builtin_cases["inplace_views"])
    st = next(r for r in results if r.check == "meta_stack_trace")
    assert st.status is Status.FAIL and st.details["new_without"] == ["relu_default"]


class _CountingIdentity:
    """Changes nothing and counts its calls: idempotent then needs no run of its own."""

    calls = 0

    def __call__(self, gm):
        type(self).calls += 1
        return gm


def test_a_pass_that_changed_nothing_is_run_twice_not_three_times(builtin_cases):
    _CountingIdentity.calls = 0
    results = check_pass_on_case(from_object(_CountingIdentity()), builtin_cases["mlp"])
    by_check = {r.check: r for r in results}
    assert by_check["idempotent"].status is Status.PASS and "changed nothing" in by_check["idempotent"].message
    assert by_check["deterministic"].status is Status.PASS
    assert _CountingIdentity.calls == 2  # the run and the deterministic check's run


def test_a_pass_that_changed_something_gets_its_own_idempotence_run(builtin_cases):
    results = check_pass_on_case(from_object(broken_passes.NeverFixedPoint), builtin_cases["mlp"])
    by_check = {r.check: r for r in results}
    assert by_check["idempotent"].status is Status.FAIL and "changed nothing" not in by_check["idempotent"].message
    assert by_check["deterministic"].status is Status.PASS


def _list_args(gm):
    """Sets a node's args to a list: torch.fx then holds an immutable_list, which it refuses to run or copy."""
    node = next(n for n in gm.graph.nodes if n.op == "call_function")
    node.args = list(node.args)
    gm.recompile()
    return gm


def test_a_result_torch_fx_cannot_copy_is_the_pass_fault_not_a_harness_error(builtin_cases):
    results = check_pass_on_case(from_object(_list_args), builtin_cases["mlp"])
    by_check = {r.check: r for r in results}
    assert not [r for r in results if r.status is Status.ERROR]
    assert by_check["runnable"].status is Status.FAIL and "Expected args to be tuple" in by_check["runnable"].message
    assert by_check["idempotent"].status is Status.SKIP and "cannot be copied" in by_check["idempotent"].message
