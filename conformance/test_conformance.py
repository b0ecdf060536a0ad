"""Every unit of the suite, one item per pass x check (see conftest.py)."""

from __future__ import annotations

import json

import pytest

from conformance.conftest import incremental, lost_rewrite, unit_results, worsened


def test_check(conformance_item, request):
    from harness.core.results import Status

    unit, pass_name, check = conformance_item
    result = unit_results(request.config, unit).get((pass_name, check))
    state = incremental(request.config).states.get(unit.key)
    if state:  # ran / reused / not_affected: the controller counts units for the summary
        request.node.user_properties.append(("passgate_unit", json.dumps([unit.key, state])))
    if state == "not_affected":
        pytest.skip("not affected: no file its recorded dependencies include changed")
    if result is None:
        pytest.skip(f"{check} was not judged here (a pipeline stopped before this step, or it does not apply)")
    request.node.user_properties.append(("passgate_result", json.dumps(result.to_json(), default=str)))
    lost = lost_rewrite(request.config, result) if check == "runs" else ""
    if lost:  # the gate's still_exercised, judged on the pair's runs item: every other check holds on such a pair
        pytest.fail(f"[still_exercised] {lost}", pytrace=False)
    if result.status in (Status.SKIP, Status.NOT_APPLICABLE):
        pytest.skip(f"{result.status.value}: {result.message}")
    how = worsened(request.config, result) if result.is_violation() else ""
    if how:  # a known violation that got worse: it fails, never xfails (pytest.fail is not what xfail's raises= takes)
        pytest.fail(f"[{check}] worsened: {how}: {result.message}", pytrace=False)
    assert not result.is_violation(), f"[{check}] {result.message}"
