"""Every unit of the suite, one item per unit, its failing checks as subtests (see conftest.py)."""

from __future__ import annotations

import json

import pytest

from conformance.conftest import KNOWN_VIOLATIONS, incremental, unit_results, verdicts


def test_unit(conformance_unit, request, subtests):
    """Judge one unit (one pass, pipeline, partitioner or fusion on one graph) and report its checks.

    Why one item per unit, not per check: each item costs its setup, call and teardown reports, which under
    xdist travel to the controller one by one; a check that holds says nothing pytest must print. A check that
    fails (a new or worsened violation, or a lost rewrite) is a failing subtest named by its check and pass. A
    unit whose only violations are known xfails, naming their checks. Every check's CheckResult rides on the
    item's ``user_properties`` for the passgate report, which names pass, graph and check for each verdict
    (results.json, junit.xml).
    """
    unit = conformance_unit
    config = request.config
    results = unit_results(config, unit)
    state = incremental(config).states.get(unit.key)
    if state:  # ran / reused / not_affected: the controller counts units for the summary
        request.node.user_properties.append(("passgate_unit", json.dumps([unit.key, state])))
    if state == "not_affected":
        pytest.skip("not affected: no file its recorded dependencies include changed")
    request.node.user_properties.append(
        ("passgate_results", json.dumps([r.to_json() for r in results.values()], default=str)))
    found = verdicts(config, unit, results)
    for v in found:
        if not v.known:
            with subtests.test(msg=v.check, **({"pass": v.pass_name} if v.pass_name != unit.name else {})):
                pytest.fail(v.message, pytrace=False)
    known = [v for v in found if v.known]
    if known and len(known) == len(found):  # the xfail is set on the report (conftest.pytest_runtest_makereport)
        request.node.stash[KNOWN_VIOLATIONS] = f"{len(known)} known violation(s): " + "; ".join(
            v.message if v.pass_name == unit.name else f"{v.pass_name}: {v.message}" for v in known)
    if not results:
        pytest.skip("no check was judged here (it does not apply)")
