"""The baseline gate: known violations waived with reasons, a new one fails, fixed ones reported."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.core.errors import UsageError
from harness.core.results import Status, result
from harness.report import baseline as bl

TESTS = Path(__file__).parent

# Two catalogs a vendor might register: the upstream passes, and the same plus a new broken pass.
VENDOR = f'''
import sys
sys.path.insert(0, {str(TESTS)!r})
from harness.catalog import Catalog, entry, known
from broken_passes import RetargetAddToSub  # noqa: F401 (resolved by spec below)

UPSTREAM = (
    entry("vendor", "executorch.backends.transforms.rank_0_to_rank_1:Rank0ToRank1Pass",
          contract="rank-0 inputs become rank 1",
          known=(known("val_matches_execution", "rewrites meta['val'] only", "rank_0_to_rank_1.py"),)),
    entry("vendor", "executorch.exir.passes.remove_noop_pass:RemoveNoopPass", contract="removes no-ops"),
)
CATALOG = Catalog("vendor", (), UPSTREAM)
WITH_BROKEN = Catalog("vendor", (), UPSTREAM + (
    entry("vendor", "broken_passes:RetargetAddToSub", contract="a regression someone is about to merge"),))
'''


def _run(tmp_path, attr, *extra):
    plugin = tmp_path / "vendor.py"
    plugin.write_text(VENDOR)
    report = tmp_path / f"report_{attr}"
    status = main(["run", "--catalog", f"{plugin}:{attr}", "--graphs", "conv_bn_relu", "residual_block",
                   "--report", str(report), "--no-isolation", "-q", *extra])
    return status, json.loads((report / "results.json").read_text()), report


def test_gate_baseline_from_one_run_then_a_new_broken_pass_is_the_only_regression(tmp_path, capsys):
    status, doc, report = _run(tmp_path, "CATALOG")
    assert status == 1  # Rank0ToRank1Pass violates val_matches_execution: without a baseline the run is red
    baseline = tmp_path / "baseline.json"
    assert main(["baseline", "update", "--baseline", str(baseline), "--from", str(report)]) == 0
    recorded = bl.load(baseline)
    assert {e.key for e in recorded.entries} == {("vendor.Rank0ToRank1Pass", g, "val_matches_execution")
                                                 for g in ("conv_bn_relu", "residual_block")}
    assert all(e.reason == "rewrites meta['val'] only" and e.kind == "bug" for e in recorded.entries)

    status, doc, _ = _run(tmp_path, "CATALOG", "--baseline", str(baseline))
    assert status == 0 and doc["exit_status"] == 0
    assert doc["gate"]["regressions"] == [] and len(doc["gate"]["known"]) == 2 and doc["gate"]["status"] == "pass"

    capsys.readouterr()
    status, doc, _ = _run(tmp_path, "WITH_BROKEN", "--baseline", str(baseline))
    assert status == 1
    assert [(r["pass"], r["graph"], r["check"]) for r in doc["gate"]["regressions"]] == [
        ("vendor.RetargetAddToSub", "residual_block", "numerics")]
    assert len(doc["gate"]["known"]) == 2 and doc["gate"]["fixed"] == []
    err = capsys.readouterr()
    assert "REGRESSION vendor.RetargetAddToSub x residual_block x numerics" in err.out + err.err


def test_fixed_violations_are_reported_not_failed(tmp_path):
    baseline = tmp_path / "baseline.json"
    fixed_entry = bl.BaselineEntry("vendor.RemoveNoopPass", "conv_bn_relu", "numerics", "was wrong once", "#123")
    bl.save(bl.Baseline([fixed_entry]), baseline)
    status, doc, _ = _run(tmp_path, "CATALOG", "--baseline", str(baseline))
    assert status == 1  # Rank0ToRank1Pass is not in this baseline: a regression
    assert [d["pass"] for d in doc["gate"]["fixed"]] == ["vendor.RemoveNoopPass"]
    assert {d["pass"] for d in doc["gate"]["regressions"]} == {"vendor.Rank0ToRank1Pass"}


def test_gate_logic():
    rs = [result("p", "g", "numerics", Status.FAIL, "off by 1"), result("p", "g", "runs", Status.PASS),
          result("q", "g", "idempotent", Status.FAIL, "again"), result("p", "h", "verifier", Status.SKIP)]
    base = bl.Baseline([bl.BaselineEntry("p", "g", "runs", "flaky once"), bl.BaselineEntry("p", "h", "verifier", "x"),
                        bl.BaselineEntry("p", "g", "numerics", "known")])
    g = bl.gate(rs, base)
    assert g.passed and [d["check"] for d in g.known] == ["numerics"]
    assert [d["check"] for d in g.fixed] == ["runs"] and [d["check"] for d in g.not_evaluated] == ["verifier"]
    assert not bl.gate(rs, base, strict=True).passed  # idempotent is should-level: a regression only with --strict
    updated = bl.updated(rs, base)
    assert [(e.key, e.reason) for e in updated.entries] == [(("p", "g", "numerics"), "known")]


@pytest.mark.parametrize("content, message", [
    (None, "baseline not found"),
    ('{"schema": "passgate-baseline", "schema_version": 1, "entries": [', "not valid JSON"),
    ('{"schema": "something-else", "entries": []}', "'schema' must be"),
    ('{"schema": "passgate-baseline", "schema_version": 1, "entries": {}}', "'entries' must be a list"),
    ('{"schema": "passgate-baseline", "schema_version": 1, "entries": [{"pass": "p", "graph": "g", "check": "c"}]}',
     "needs a non-empty string 'reason'"),
    ('{"schema": "passgate-baseline", "schema_version": 7, "entries": []}', "unsupported schema_version"),
])
def test_bad_baseline_is_a_usage_error(tmp_path, capsys, content, message):
    path = tmp_path / "baseline.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UsageError, match=message):
        bl.load(path)
    assert main(["run", "--catalog", "exir", "--only", "exir.CSEPass", "--graphs", "mlp", "--baseline", str(path),
                 "--report", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("passgate: error: ") and message.split("'")[0] in err[0]


def test_committed_baseline_is_valid_and_every_entry_has_a_reason():
    path = TESTS.parent / "reports" / "baseline.json"
    b = bl.load(path)
    assert b.entries and all(e.reason.strip() for e in b.entries)
    assert not [e for e in b.entries if e.kind == "untriaged"], "triage every known violation: name its reason"


def test_update_keep_unrun_records_added_graphs_and_keeps_every_other_entry(tmp_path, capsys):
    """A run over one added graph, recorded with --keep-unrun: that graph's violations are added, the entries of
    pairs it did not run stay as they were; without the flag they are dropped (and the update says so)."""
    status, doc, report = _run(tmp_path, "CATALOG")
    baseline = tmp_path / "baseline.json"
    other = bl.BaselineEntry("vendor.Rank0ToRank1Pass", "mlp", "val_matches_execution", "kept as it was", "#9")
    bl.save(bl.Baseline([other]), baseline)
    assert main(["baseline", "update", "--baseline", str(baseline), "--from", str(report), "--keep-unrun"]) == 0
    kept = bl.load(baseline).by_key()
    assert set(kept) == {other.key} | {("vendor.Rank0ToRank1Pass", g, "val_matches_execution")
                                        for g in ("conv_bn_relu", "residual_block")}
    assert kept[other.key].reason == "kept as it was"
    capsys.readouterr()
    assert main(["baseline", "update", "--baseline", str(baseline), "--from", str(report)]) == 0
    assert other.key not in bl.load(baseline).by_key()
    assert "dropped 1 entry of pairs this run did not run" in capsys.readouterr().out


EDITED = '''
import torch
from torch.fx.passes.infra.pass_base import PassBase, PassResult


class ReluToClamp(PassBase):
    """The subject pass after an edit whose guard never matches: it rewrites nothing, every IR check holds."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        return PassResult(graph_module, False)
'''


def test_a_pass_that_stops_rewriting_a_graph_the_baseline_records_fails_still_exercised(tmp_path, monkeypatch, capsys):
    """A run is green on every IR check for a pass that no longer does anything; the baseline remembers which
    graphs the pass changed, and the gate fails each one it now leaves as handed, until an update accepts it."""
    import importlib

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "relu_subject.py").write_text((TESTS / "data" / "mutation_subject.py").read_text())
    (pkg / "vendor_relu.py").write_text("from harness.catalog import Catalog, entry\n"
                                        "CATALOG = Catalog('vendor', (), (entry('vendor', 'relu_subject:ReluToClamp', "
                                        "contract='relu -> clamp'),))\n")
    monkeypatch.syspath_prepend(str(pkg))

    def run(name, *extra):
        report = tmp_path / f"report_{name}"
        status = main(["run", "--catalog", f"{pkg / 'vendor_relu.py'}:CATALOG", "--graphs", "conv_bn_relu", "mlp",
                       "residual_block", "--report", str(report), "--no-isolation", "-q", *extra])
        return status, json.loads((report / "results.json").read_text()), report

    status, doc, report = run("working")
    assert status == 0, [r for r in doc["results"] if r["status"] == "fail"]
    baseline = tmp_path / "baseline.json"
    assert main(["baseline", "update", "--baseline", str(baseline), "--from", str(report)]) == 0
    rewritten = bl.load(baseline).exercised["vendor.ReluToClamp"]  # the graphs with a relu it rewrote
    assert rewritten and json.loads(baseline.read_text())["schema_version"] == 3
    assert run("working_again", "--baseline", str(baseline))[0] == 0

    (pkg / "relu_subject.py").write_text(EDITED)  # the edit under review
    monkeypatch.delitem(sys.modules, "relu_subject", raising=False)
    importlib.invalidate_caches()
    capsys.readouterr()
    status, doc, report = run("edited", "--baseline", str(baseline))
    assert status == 1 and not [r for r in doc["results"] if r["status"] == "fail" and r["graph"] != "*"]
    assert [(d["graph"], d["check"]) for d in doc["gate"]["regressions"]] == [(g, "still_exercised") for g in rewritten]
    assert "REGRESSION vendor.ReluToClamp x" in capsys.readouterr().err

    assert main(["baseline", "update", "--baseline", str(baseline), "--from", str(report)]) == 0
    assert "accepted no longer exercised: vendor.ReluToClamp" in capsys.readouterr().out
    assert "vendor.ReluToClamp" not in bl.load(baseline).exercised
    assert run("edited_again", "--baseline", str(baseline))[0] == 0


def test_still_exercised_gate_logic():
    changed = {"ops": True, "structure": False, "metadata": False}
    same = dict.fromkeys(changed, False)
    rs = [result("p", "g", "runs", Status.PASS, details={"changed": same}),
          result("p", "h", "runs", Status.PASS, details={"changed": changed}),
          result("p", "k", "runs", Status.NOT_APPLICABLE), result("p", "m", "runs", Status.FAIL, "raised"),
          result("q", "g", "runs", Status.PASS, details={"changed": same})]
    base = bl.Baseline(exercised={"p": ["g", "h", "k", "m", "z"]})
    g = bl.gate(rs, base)
    assert not g.passed
    assert [(d["graph"], d["check"]) for d in g.regressions] == [("m", "runs"), ("g", "still_exercised"),
                                                                  ("k", "still_exercised")]  # m: it raised
    assert "no longer applies" in g.regressions[2]["message"]
    assert bl.updated(rs, base).exercised == {"p": ["h"]}  # exactly what this run changed
    assert [d["check"] for d in bl.gate(rs, bl.Baseline()).regressions] == ["runs"]  # none recorded: none compared


def test_update_exercised_only_records_the_map_and_keeps_every_entry(tmp_path, capsys):
    """From a run that judged only ``runs`` (what each pass changed: the cheap way to record the map)."""
    status, doc, report = _run(tmp_path, "CATALOG", "--checks", "runs")
    assert {r["check"] for r in doc["results"]} <= {"runs", "exercised"} and doc["configuration"]["checks"] == ["runs"]
    baseline = tmp_path / "baseline.json"
    triaged = bl.BaselineEntry("vendor.Rank0ToRank1Pass", "mlp", "val_matches_execution", "kept as it was", "#9")
    bl.save(bl.Baseline([triaged]), baseline)
    assert main(["baseline", "update", "--baseline", str(baseline), "--from", str(report), "--exercised-only"]) == 0
    after = bl.load(baseline)
    assert [e.key for e in after.entries] == [triaged.key] and after.entries[0].reason == "kept as it was"
    changed = {(r["pass_name"], r["graph"]) for r in doc["results"]
               if r["check"] == "runs" and any((r["details"].get("changed") or {}).values())}
    assert changed and {(p, g) for p, gs in after.exercised.items() for g in gs} == changed
    assert "exercised pass x graph pair(s)" in capsys.readouterr().out
    assert main(["baseline", "update", "--baseline", str(tmp_path / "none.json"), "--from", str(report),
                 "--exercised-only"]) == 2
