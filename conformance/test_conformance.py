"""Every pass of the suite on every graph, one item per IR check (see conftest.py)."""

from __future__ import annotations

import json

import pytest

from conformance.conftest import pair_results


def test_check(conformance_item, request):
    from harness.results import Status

    spec, graph, check = conformance_item
    result = pair_results(spec, graph, seed=0).get(check)
    if result is None:
        pytest.skip(f"{check} does not apply here")
    request.node.user_properties.append(("passgate_result", json.dumps(result.to_json(), default=str)))
    if result.status in (Status.SKIP, Status.NOT_APPLICABLE):
        pytest.skip(f"{result.status.value}: {result.message}")
    assert not result.is_violation(), f"[{check}] {result.message}"
