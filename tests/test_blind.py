"""The numerics-blind report (harness/report/blind.py) on a real run of deliberately broken passes.

One ``passgate check`` on three built-in graphs runs: a pass whose result never
runs (tests/blind_passes.py), the same bug on image-shaped outputs only, a pass
that raises, a pass declared meaning-changing and a correct one. What a run
leaves (blind.json, results.json's ``blind`` key, the summary.md and
report.html sections) and ``passgate report blind`` are read from that run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.report import blind
from harness.report.baseline import Baseline, BaselineEntry, save

NEVER_RUNS = "FlattenOutputOffByOne"
RANK4 = "FlattenRank4OutputOffByOne"
RAISES = "raises"
CHANGING = "ReplaceAddWithMulSub"
CORRECT = "RemoveDetachPass"
GRAPHS = ["mlp", "conv_bn_relu", "residual_block"]
TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("blind")
    status = main(["check", "--pass", f"{TESTS}/blind_passes.py:{NEVER_RUNS}", "--pass", f"{TESTS}/blind_passes.py:{RANK4}",
                   "--pass", f"{TESTS}/data/misbehaving_passes.py:{RAISES}", "--pass", f"passes.reference:{CHANGING}",
                   "--pass", f"passes.reference:{CORRECT}", "--stage", "edge", "--graphs", *GRAPHS,
                   "--checks", "runs,runnable,val_matches_execution,numerics", "--no-isolation", "-q",
                   "--report", str(out)])
    assert status == 1  # runnable and runs fail
    return out


@pytest.fixture(scope="module")
def doc(run_dir) -> dict:
    return json.loads((run_dir / "results.json").read_text())


@pytest.fixture(scope="module")
def report(doc) -> blind.BlindReport:
    return blind.compute(doc)


def _entry(report: blind.BlindReport, name: str) -> blind.EntryBlind:
    return next(e for e in report.entries if e.pass_name == name)


def test_a_pass_whose_result_never_runs_is_judged_on_no_case_blocked_by_runnable(report):
    e = _entry(report, NEVER_RUNS)
    assert (e.flag, e.cases, e.judged, e.blocked, e.not_applicable) == ("blind", 3, 0, 3, 0)
    assert e.blockers == {"runnable": 3}
    assert [c.graph for c in e.blocked_cases] == GRAPHS
    assert all(c.checks == ["val_matches_execution", "numerics"] and c.status == "fail" for c in e.blocked_cases)
    assert "shape '[33]' is invalid for input of size 32" in e.first.message and not e.first.known
    assert NEVER_RUNS in [x.pass_name for x in report.blind]


def test_a_pass_that_raises_is_blocked_by_runs_on_every_execution_check(report):
    e = _entry(report, RAISES)
    assert (e.flag, e.judged, e.blocked) == ("blind", 0, 3) and e.blockers == {"runs": 3}
    assert e.blocked_cases[0].checks == list(blind.EXECUTION_CHECKS)


def test_a_correct_pass_is_not_listed(report):
    e = _entry(report, CORRECT)
    assert (e.flag, e.judged, e.blocked, e.blocked_cases) == ("", 3, 0, [])
    assert CORRECT not in [x.pass_name for x in report.flagged]


def test_a_semantics_changing_pass_is_not_applicable_not_blind(report):
    e = _entry(report, CHANGING)
    assert (e.flag, e.judged, e.blocked, e.not_applicable) == ("", 0, 0, 3)
    assert CHANGING not in [x.pass_name for x in report.flagged]


def test_a_meaning_changing_entry_that_did_not_run_on_a_case_is_not_blocked_there():
    """A pipeline step shares its pipeline's declaration: where it raised, numerics would not have applied
    either, so the case is not applicable and no graph could make the entry judged (not blind)."""
    rows = [("a", "runs", "pass", ""), ("a", "numerics", "skip", "the pass is declared meaning-changing"),
            ("b", "runs", "fail", "the pass raised: AssertionError"), ("b", "numerics", "skip", "the pass did not run")]
    doc = {"results": [{"pass_name": "pipe/02:Step", "graph": g, "check": c, "status": s, "message": m}
                       for g, c, s, m in rows]}
    e = _entry(blind.compute(doc), "pipe/02:Step")
    assert (e.flag, e.judged, e.blocked, e.not_applicable, e.blockers) == ("", 0, 0, 2, {})
    assert "numerics" not in e.unjudged and blind.targets(blind.compute(doc))["entries"] == []


def test_an_entry_judged_on_few_cases_is_flagged_few_under_the_threshold(doc, report):
    e = _entry(report, RANK4)
    assert (e.flag, e.judged, e.blocked) == ("few", 1, 2)
    assert [c.graph for c in e.blocked_cases] == ["conv_bn_relu", "residual_block"]
    assert _entry(blind.compute(doc, few=0), RANK4).flag == ""


def test_a_baseline_entry_makes_its_blocker_known_with_its_reason(doc, tmp_path):
    base = Baseline([BaselineEntry(NEVER_RUNS, "mlp", "runnable", "the flattened size is off by one")])
    e = _entry(blind.compute(doc, base), NEVER_RUNS)
    by_graph = {c.graph: c for c in e.blocked_cases}
    assert by_graph["mlp"].known and by_graph["mlp"].reason == "the flattened size is off by one"
    assert not by_graph["conv_bn_relu"].known and by_graph["conv_bn_relu"].reason == ""


def test_a_run_leaves_blind_json_for_the_context_generator(run_dir):
    listed = json.loads((run_dir / blind.BLIND_FILE).read_text())
    assert listed["schema"] == blind.SCHEMA and listed["few"] == blind.DEFAULT_FEW
    rows = {r["entry"]: r for r in listed["entries"]}
    assert set(rows) == {NEVER_RUNS, RAISES, RANK4}
    assert rows[NEVER_RUNS]["check"] == "runnable" and rows[NEVER_RUNS]["cases"] == GRAPHS
    assert rows[NEVER_RUNS]["message"].startswith("running the program on the sample inputs raised RuntimeError")
    assert rows[RAISES]["check"] == "runs" and rows[RANK4]["flag"] == "few"


def test_results_json_summary_and_html_carry_the_blind_section(run_dir, doc):
    assert doc["blind"]["blind"] == [NEVER_RUNS, RAISES] and doc["blind"]["few_judged"] == [RANK4]
    assert doc["blind"]["totals"]["blockers"] == {"runnable": 5, "runs": 3}
    md = (run_dir / "summary.md").read_text()
    assert "### Judged blind: entries whose numerics no case could judge: 2" in md
    assert f"| `{NEVER_RUNS}` | 0 | 3 | 0 | `runnable` | no |" in md and f"`{CORRECT}`" not in md.split("Judged")[1]
    html = (run_dir / "report.html").read_text()
    assert '<h2 id="blind">' in html and 'href="#blind"' in html


def test_cli_prints_the_table_and_exits_0(run_dir, tmp_path, capsys):
    base = tmp_path / "baseline.json"
    save(Baseline([BaselineEntry(NEVER_RUNS, "mlp", "runnable", "off by one")]), base)
    assert main(["report", "blind", str(run_dir / "results.json"), "--baseline", str(base)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("passgate: judged blind: 2 of 5 entries judged numerics on no case, 1 on at most 2")
    row = next(line for line in out.splitlines() if line.startswith(NEVER_RUNS + " "))
    assert row.split()[1:6] == ["blind", "0", "3", "0", "runnable"] and " yes " in row
    assert main(["report", "blind", str(run_dir), "--json", "--few", "0"]) == 0
    parsed = json.loads(capsys.readouterr().out)
    assert parsed["few_judged"] == [] and parsed["blind"] == [NEVER_RUNS, RAISES]


@pytest.mark.parametrize("bad", ["missing", "corrupt", "baseline", "few"])
def test_cli_bad_input_exits_2_with_one_line(bad, run_dir, tmp_path, capsys):
    results, args = str(run_dir / "results.json"), []
    if bad == "missing":
        results = str(tmp_path / "nope.json")
    elif bad == "corrupt":
        (tmp_path / "results.json").write_text('{"schema_version": "1.0", "results": [')
        results = str(tmp_path / "results.json")
    elif bad == "baseline":
        (tmp_path / "b.json").write_text("[]")
        args = ["--baseline", str(tmp_path / "b.json")]
    else:
        args = ["--few", "-1"]
    assert main(["report", "blind", results, *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("passgate")
