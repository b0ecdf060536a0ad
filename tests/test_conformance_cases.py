"""The conformance report carries the cases its xdist workers loaded (issue 16, item 3).

The report is written on the xdist controller, the cases are loaded in the
workers: each worker attaches a case's record (cache or lowered, seconds,
ops) to the next item's report as a ``passgate_case`` user property, and the
controller keeps one record per case. These tests drive the hooks the way
pytest does, without running the suite.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

# conformance/ is the suite, not an installed package: import its plugin from the checkout
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conformance import conftest  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    from harness.graphs import cache

    monkeypatch.setattr(cache, "_DEFAULT", cache.CaseCache(tmp_path / "cases"))  # no summaries of other runs
    monkeypatch.setattr(conftest, "_CASES", {})
    monkeypatch.setattr(conftest, "_PENDING_CASES", [])
    monkeypatch.setattr(conftest, "_controller_cases", {})
    monkeypatch.setattr(conftest, "_controller_results", [])


def _case(name, from_cache=True, seconds=0.02):
    spec = SimpleNamespace(name=name, source="builtin", key=f"k-{name}")
    return SimpleNamespace(name=name, spec=spec, from_cache=from_cache, lower_seconds=seconds,
                           exported=None, edge=None)  # no programs: case_ops fails, the case has no ops


def _report_of(item_props, when="call"):
    item = SimpleNamespace(user_properties=list(item_props))
    hook = conftest.pytest_runtest_makereport(item, SimpleNamespace(when=when))
    next(hook)
    with pytest.raises(StopIteration):
        next(hook)
    return SimpleNamespace(when=when, skipped=False, user_properties=item.user_properties)


def test_worker_cases_reach_the_controller_once_each():
    conftest._case_loaded(0, _case("mlp"))
    conftest._case_loaded(1, _case("conv_bn_relu", from_cache=False, seconds=1.5))
    conftest._case_loaded(0, _case("mlp"))  # the same case again in this worker: sent once
    first = _report_of([("passgate_results", json.dumps([{"pass_name": "P", "graph": "mlp", "check": "runs"},
                                                          {"pass_name": "P", "graph": "mlp", "check": "verifier"}]))])
    second = _report_of([])  # nothing new loaded: nothing attached
    assert [n for n, _ in first.user_properties].count("passgate_case") == 2
    assert not second.user_properties
    for r in (first, second):
        conftest.pytest_runtest_logreport(r)
    assert set(conftest._controller_cases) == {"mlp", "conv_bn_relu"}
    assert conftest._controller_cases["conv_bn_relu"] == {
        "name": "conv_bn_relu", "source": "builtin", "key": "k-conv_bn_relu", "from_cache": False,
        "lower_seconds": 1.5, "ops": []}
    assert len(conftest._controller_results) == 2  # the unit's every check, from its one item


def test_a_subtests_report_adds_nothing_its_items_report_carries():
    """A failing check's subtest report copies its item's properties so far: counted there, results would double."""
    props = [("passgate_results", json.dumps([{"pass_name": "P", "graph": "mlp", "check": "runs"}]))]
    sub = pytest.SubtestReport("t.py::test_unit[x]", ("t.py", 0, "test_unit"), {}, "failed", "[runs] x", "call",
                               user_properties=props)
    sub.context = _subtest_context()
    conftest.pytest_runtest_logreport(sub)
    assert conftest._controller_results == []
    conftest.pytest_runtest_logreport(SimpleNamespace(when="call", skipped=False, user_properties=props))
    assert len(conftest._controller_results) == 1


def _subtest_context():
    from _pytest.subtests import SubtestContext  # what pytest builds a SubtestReport from: not exported

    return SubtestContext(msg="runs", kwargs={})


def test_the_worker_that_lowered_a_case_wins_over_one_that_read_the_cache():
    conftest._case_record({"name": "mlp", "from_cache": True, "lower_seconds": 0.02, "ops": ["add.Tensor"]})
    conftest._case_record({"name": "mlp", "from_cache": False, "lower_seconds": 0.9, "ops": ["add.Tensor"]})
    conftest._case_record({"name": "mlp", "from_cache": True, "lower_seconds": 0.03, "ops": ["add.Tensor"]})
    assert conftest._controller_cases["mlp"]["from_cache"] is False


def test_setup_reports_carry_no_cases():
    conftest._case_loaded(0, _case("mlp"))
    assert not _report_of([], when="setup").user_properties and conftest._PENDING_CASES == ["mlp"]


def test_cases_of_fully_reused_units_are_read_on_the_controller(monkeypatch):
    """A unit whose recorded verdicts are reused loads no case: the controller reads it, marked reused."""
    from harness.graphs import cases as cases_mod

    conftest._case_record({"name": "mlp", "from_cache": False, "lower_seconds": 0.5, "ops": []})  # a worker's
    asked = []

    def fake_load(specs, loaded=None):
        asked.extend(s.name for s in specs)
        for i, s in enumerate(specs):
            loaded(i, _case(s.name))

    monkeypatch.setattr(cases_mod, "load_cases", fake_load)
    plan = SimpleNamespace(specs_by_name={g: SimpleNamespace(name=g, key=f"k-{g}") for g in ("mlp", "conv_bn_relu")})
    results = [SimpleNamespace(graph=g) for g in ("mlp", "conv_bn_relu", "*", "vulkan/x/s0")]
    conftest._read_reused_cases(plan, results)
    assert asked == ["conv_bn_relu"]  # mlp came from a worker; "*" and plugged cases are no graph specs
    assert conftest._controller_cases["conv_bn_relu"]["reused"] is True
    assert "reused" not in conftest._controller_cases["mlp"] and not conftest._PENDING_CASES


def test_a_cases_summary_is_stored_once_and_spares_the_next_reused_run_its_loading(monkeypatch):
    """A case loaded anywhere leaves its summary (ops) beside it in the lowered-graph cache; a run whose every
    verdict on it is reused reports its ops from there, without deserializing its programs."""
    from harness.graphs import cases as cases_mod
    from harness.graphs import op_coverage

    monkeypatch.setattr(op_coverage, "case_ops", lambda case: {"aten.add.Tensor": 1})
    conftest._case_loaded(0, _case("mlp"))
    spec = SimpleNamespace(name="mlp", source="builtin", key="k-mlp")
    from harness.graphs.cache import default_cache

    assert default_cache().summary(spec) == {"name": "mlp", "source": "builtin", "key": "k-mlp",
                                             "ops": ["aten.add.Tensor"]}
    monkeypatch.setattr(conftest, "_CASES", {})
    monkeypatch.setattr(conftest, "_PENDING_CASES", [])
    asked = []
    monkeypatch.setattr(cases_mod, "load_cases", lambda specs, loaded=None: asked.extend(specs))
    conftest._read_reused_cases(SimpleNamespace(specs_by_name={"mlp": spec}), [SimpleNamespace(graph="mlp")])
    assert asked == []
    assert conftest._controller_cases["mlp"]["ops"] == ["aten.add.Tensor"]
    assert conftest._controller_cases["mlp"]["reused"] is True
