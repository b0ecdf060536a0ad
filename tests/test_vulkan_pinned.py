"""The gate's committed Vulkan shrunk failures: in the standard plan, and replayed to the failure the search recorded.

The standard profile judges the search's shrunk failures
(``fixtures/vulkan_cases/``, :func:`vulkan.search.pinned.shrunk_cases`) as units,
so a fix or a regression of a defect the search found shows in the gate.
These tests pin that the plan holds one unit per committed case, under the
fusion that failed it, and that judging one gives the check the search
recorded, with the same verdicts as ``passgate vulkan --replay`` and a
violation the triage rules explain by its cause.
"""

from __future__ import annotations

import json

import pytest

from vulkan.search import pinned

__all__: list = []


def _standard_units() -> list:
    from harness.run.plan import plugged_units
    from harness.run.profiles import profile

    return plugged_units(profile("standard"), pinned.SEED)["vulkan"]


def test_the_standard_plan_holds_one_unit_per_committed_shrunk_failure():
    from vulkan.cases import catalog
    from vulkan.entry.unit import ShrunkUnit
    from vulkan.search import space, spaces

    entries = json.loads(pinned.SHRUNK_FILE.read_text())["cases"]
    units = _standard_units()
    shrunk = [u for u in units if isinstance(u, ShrunkUnit)]
    assert len(shrunk) == len(entries) == 40
    assert [(u.name, u.graph) for u in shrunk] == [
        (e["fusion"], spaces.desc_case(space.from_json(e["case"])).name) for e in entries]
    assert all(u.graph.startswith("vulkan/search:") and u.fusion.name == u.name for u in shrunk)
    assert len({u.key for u in units}) == len(units)  # no shrunk case collides with a recipe case
    recipe_units = units[:len(units) - len(shrunk)]  # the recipe cases keep their place (and baseline names)
    assert len(recipe_units) == 2 * len(catalog.RECIPES) and not any(isinstance(u, ShrunkUnit) for u in recipe_units)


def test_shrunk_units_are_judged_on_the_checks_the_search_judges():
    from vulkan.entry.unit import SHRUNK_CHECKS
    from vulkan.search.evaluate import DEVICE_CHECK, SEARCH_CHECKS

    assert SHRUNK_CHECKS == SEARCH_CHECKS + (DEVICE_CHECK,)


@pytest.fixture(scope="module")
def alpha_unit():
    """The q8ta_add case with alpha = 2 under fuse-patterns: a wrong output, not a crash (fused_vs_qdq)."""
    found = [u for u in _standard_units() if getattr(u, "shrunk", None) is not None and u.name == "fuse-patterns"
             and u.shrunk.op == "et_vk.q8ta_add" and u.shrunk.desc.alpha == 2.0]
    assert len(found) == 1
    return found[0]


def test_replaying_a_shrunk_unit_gives_the_recorded_failing_check(alpha_unit):
    from harness.core.config import RunConfig
    from harness.core.results import Status
    from passes.triage import triage
    from vulkan.search.op_search import replay_op

    s = alpha_unit.shrunk
    assert s.check == "fused_vs_qdq"
    [(graph, name, results)] = alpha_unit.judge(None, RunConfig())
    assert (graph, name) == (alpha_unit.graph, alpha_unit.name)
    by = {r.check: r for r in results}
    assert by[s.check].status is Status.FAIL, by[s.check].message
    assert by[s.check].details["recorded_check"] == s.check and by[s.check].details["boundary"] == s.boundary
    # the --replay path (no diagnosis) gives the same verdicts on the gate's checks, and judges the IR checks too
    from vulkan.search.evaluate import IR_CHECKS

    replayed = replay_op(s.op, [s.desc], alpha_unit.fusion, None, True, 120.0).draws[0]
    gate = {c: v for c, v in replayed.statuses.items() if c in by}
    assert gate == {c: by[c].status.value for c in by if c in replayed.statuses} and s.check in gate
    assert set(replayed.statuses) - set(gate) == set(IR_CHECKS)
    # and the triage rules name the cause: q8ta_add's alpha, a keyword argument the pattern never reads
    known = triage(name, s.check, by[s.check].message)
    assert known is not None and "alpha" in known.reason and known.upstream.endswith("quantized_binary.py")
