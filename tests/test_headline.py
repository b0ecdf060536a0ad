"""One headline everywhere: terminal, summary.md, report.html and junit.xml state the same numbers.

The document below holds one record of every kind the headline counts (a new
must violation, a harness error, a known baselined violation, a should-level
warning, a fixed entry, stale entries of both kinds, an entry of a pair that
did not run) plus skip and n/a records, so a format that counted any of them
differently, or twice, would disagree with the others.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html import unescape

import pytest

from harness.cli.main import main
from harness.report import headline as hl
from harness.report import terminal, view, writers

ENTRY = {"reason": "recorded upstream", "kind": "bug"}


def _rec(p, g, check, status, level="must", message=""):
    return {"pass_name": p, "graph": g, "check": check, "status": status, "message": message, "details": {},
            "duration_s": 0.01, "level": level}


def _doc() -> dict:
    results = [
        _rec("A", "mlp", "runs", "pass"), _rec("A", "mlp", "numerics", "fail", message="max abs err 0.454 on output 0 "
                                                                                       "(rtol 1e-4)\nmore detail"),
        _rec("A", "mlp", "idempotent", "fail", "should", "a second run changed the graph again"),
        _rec("A", "conv", "runs", "error", message="passgate crashed: KeyError 'x'"),
        _rec("A", "conv", "verifier", "fail", message="known dialect problem"),
        _rec("B", "mlp", "runs", "pass"), _rec("B", "mlp", "graph_lint", "pass"),
        _rec("B", "mlp", "meta_debug_handle", "skip", "should", "nothing to compare"),
        _rec("B", "mlp", "deterministic", "fail", "should", "two runs differ"),
        _rec("B", "conv", "numerics", "not_applicable", message="requires failed"),
    ]
    known = {"pass": "A", "graph": "conv", "check": "verifier", **ENTRY}
    fixed = {"pass": "B", "graph": "mlp", "check": "graph_lint", **ENTRY}
    stale_skip = {"pass": "B", "graph": "mlp", "check": "meta_debug_handle", **ENTRY}
    stale_warn = {"pass": "B", "graph": "mlp", "check": "deterministic", **ENTRY}
    elsewhere = {"pass": "C", "graph": "mlp", "check": "runs", **ENTRY}  # C never ran: neither fixed nor stale
    by = {s: sum(r["status"] == s for r in results) for s in hl.STATUSES}
    return {
        "schema_version": "1.0", "tool": {"name": "passgate", "version": "0"},
        "environment": {"python": "3.11", "torch": "2.13.0", "executorch": "1.5.1", "platform": "Linux", "passgate": "0"},
        "configuration": {"command": "run", "strict": False, "graphs": ["mlp", "conv"]},
        "started_at": "2026-11-24T00:00:00Z", "duration_s": 1.0, "complete": True, "cases": [], "results": results,
        "summary": {"total": len(results), "by_status": by, "violations": 3, "passes": 2, "graphs": 2},
        "exit_status": 1,
        "gate": {"baseline": "reports/baseline.json", "status": "fail",
                 "regressions": [{"pass": "A", "graph": "mlp", "check": "numerics", "message": "max abs err"},
                                 {"pass": "A", "graph": "conv", "check": "runs", "message": "crashed"}],
                 "known": [known], "fixed": [fixed], "not_evaluated": [stale_skip, elsewhere]},
        "known_violations": [known],
        "_stale_warn": stale_warn,  # see test_a_baselined_should_warning_is_stale_not_fixed
    }


@pytest.fixture()
def doc() -> dict:
    d = _doc()
    d.pop("_stale_warn")
    return d


def test_the_headline_counts_each_record_and_entry_once(doc):
    assert view.validation_errors(doc) == []
    h = hl.compute(doc)
    assert (h.verdict, h.new, h.known, h.fixed, h.stale, h.warnings) == ("FAIL", 2, 1, 1, 1, 2)
    assert sum(h.by_status.values()) == h.total == len(doc["results"])
    assert h.text() == ("FAIL: 2 new violations, 1 known, 1 fixed, 1 stale baseline entry, "
                        "2 should-level warnings")
    assert h.counts() == "10 checks: 3 pass, 4 fail, 1 error, 1 skip, 1 n/a"


def test_a_baselined_should_warning_is_stale_not_fixed():
    d = _doc()
    d["gate"]["fixed"].append(d.pop("_stale_warn"))  # as older gates wrote it: judged and not a violation
    h = hl.compute(d)
    assert (h.fixed, h.stale) == (1, 2)
    assert {e["check"]: e["now"] for e in h.stale_entries} == {"meta_debug_handle": "skip", "deterministic": "fail"}


def _junit_properties(xml: bytes) -> list[dict]:
    root = ET.fromstring(xml)
    return [{p.get("name"): p.get("value") for p in suite.find("properties")} for suite in root.iter("testsuite")]


def test_every_format_states_the_same_headline(tmp_path, doc):
    (tmp_path / "results.json").write_text(json.dumps(doc))
    assert main(["report", "render", str(tmp_path)]) == 0
    h = hl.compute(doc)
    text, counts = h.text(), h.counts()

    term = terminal.render(doc, tmp_path)
    assert f"passgate: {text}" in term and f"passgate: {counts}" in term

    md = (tmp_path / "summary.md").read_text()
    assert md.splitlines()[0] == f"## ❌ passgate run: {text}" and counts in md
    row = next(ln for ln in md.splitlines() if ln.startswith(f"| {h.total} |"))
    assert [c.strip(" *") for c in row.strip("|").split("|")][6:11] == ["2", "1", "1", "1", "2"]

    html = (tmp_path / "report.html").read_text()
    banner = unescape(re.search(r'<header class="banner (\w+)"><h1>passgate: (.*?)</h1>', html).group(2))
    assert banner == text and unescape(re.search(r"<title>passgate report: (.*?)</title>", html).group(1)) == text
    tiles = dict((label, int(n)) for n, label in re.findall(r'<div class="tile[^"]*"[^>]*><b>(\d+)</b><span>(.*?)</span>',
                                                            html))
    assert (tiles["new violations"], tiles["known (baselined)"], tiles["fixed"], tiles["stale baseline entries"],
            tiles["should-level warnings"]) == (h.new, h.known, h.fixed, h.stale, h.warnings)
    assert sum(tiles[s] for s in ("pass", "fail", "error", "skip", "n/a")) == tiles["checks"] == h.total

    props = _junit_properties((tmp_path / "junit.xml").read_bytes())
    assert props and all(p["passgate.headline"] == text and p["passgate.counts"] == counts for p in props)
    assert {(p["passgate.verdict"], p["passgate.new_violations"], p["passgate.known_violations"], p["passgate.fixed"],
             p["passgate.stale_baseline_entries"], p["passgate.should_warnings"]) for p in props} == {
        ("FAIL", "2", "1", "1", "1", "2")}


def test_known_violations_are_marked_known_in_the_matrix_and_failures(doc):
    from harness.report import report_html, summary_md

    html = report_html.render(doc)
    cell = re.search(r'<td class="(\w+)" title="[^"]*"><a href="#f-A--conv">(.*?)</a></td>', html)
    assert cell.group(1) == "error"  # the worst of the cell: passgate's own error
    assert '<span class="o-known">verifier</span> <i>known</i>' in cell.group(2)
    assert "known violation (baselined)" in html
    md = summary_md.render(doc)
    assert "| `A` | `conv` | `verifier` | must | known (baselined) |" in md


def test_stale_entries_are_listed_with_what_the_check_is_now(doc):
    from harness.report import summary_md

    md = summary_md.render(doc)
    assert "### Stale baseline entries: 1" in md and "| `B` | `mlp` | `meta_debug_handle` | `skip` |" in md
    assert "passgate baseline update" in md
    assert "C" not in {e["pass_name"] for e in hl.compute(doc).stale_entries}  # its pair did not run


def test_terminal_reason_lines_say_what_each_failure_is(doc):
    out = terminal.table(doc)
    assert "    [must]   numerics: max abs err 0.454 on output 0 (rtol 1e-4)\n" in out + "\n"
    assert "more detail" not in out  # the first line of the message only
    assert "    [error]  runs: passgate crashed: KeyError 'x' (passgate itself failed)" in out
    assert "    [known]  verifier: known dialect problem (baselined, waived)" in out
    assert "    [should] idempotent: a second run changed the graph again (warns; gates only with --strict)" in out


def test_a_diff_gate_has_no_baseline_entries_to_call_stale(doc):
    doc["gate"] = {"baseline": "old", "regressions": [], "unchanged": [],
                   "fixed": [{"pass": "B", "graph": "conv", "check": "numerics", "status": "fail"}]}
    h = hl.compute(doc)
    assert (h.fixed, h.stale) == (1, 0)


def test_op_count_counts_ops_not_op_dtype_keys(doc):
    from harness.report import report_html, summary_md

    doc["op_coverage"] = {"add.Tensor": 2, "add.Tensor@float32": 2, "add.Tensor@int64": 1, "relu.default": 1,
                          "relu.default@float32": 1, "bmm.default": 0}
    assert set(view.op_coverage(doc)) == {"add.Tensor", "relu.default", "bmm.default"}
    assert view.op_dtype_coverage(doc)["add.Tensor"] == {"float32": 2, "int64": 1}
    assert "### Op coverage: 2 ops in the graphs (3 op x dtype pairs)" in summary_md.render(doc)
    assert "Op coverage: 2 ops in the graphs, 1 in no case, 3 op x dtype pairs" in report_html.render(doc)


def test_writers_still_know_every_format():
    assert writers.REPORT_FILES == ("results.json", "junit.xml", "summary.md", "report.html", "blind.json")


def test_under_strict_a_gating_should_check_keeps_its_should_tag(doc):
    doc["configuration"]["strict"] = True
    out = terminal.table(doc)
    must = out.index("    [must]   numerics:")
    should = out.index("    [should] idempotent: a second run changed the graph again (gates: --strict)")
    assert must < should  # must-level first within a pair
    assert hl.compute(doc).new == 4 and hl.compute(doc).warnings == 0
