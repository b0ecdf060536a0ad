"""Reports from a real run: results.json against its schema, JUnit read by a JUnit consumer,
Markdown and HTML parsed, diff, and bad inputs (exit 2, one line)."""

from __future__ import annotations

import base64
import copy
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from harness.cli.main import main
from harness.report import report_html, writers
from harness.report import summary_md as report_markdown
from harness.report import view as reports

SUB = "passes.reference:replace_add_mul_with_sub"  # fails meta_* on inplace_views, as the guide warns
SUB_NAME = "replace_add_mul_with_sub"
RELU = "passes.reference:ReplaceInPlaceReluWithOutOfPlaceReluPass"
SCHEMA = Path(__file__).resolve().parent.parent / "reports" / "schema" / "results.schema.json"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run")
    status = main(["check", "--pass", SUB, "--pass", RELU, "--graphs", "mlp", "inplace_views", "--report", str(out), "-q"])
    assert status == 1
    return out


@pytest.fixture()
def doc(run_dir) -> dict:
    return json.loads((run_dir / "results.json").read_text())


def test_every_run_writes_the_four_reports(run_dir):
    assert sorted(p.name for p in run_dir.iterdir()) == sorted(writers.REPORT_FILES)


def test_results_json_follows_the_published_schema(doc):
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["schema_version"].startswith("1.")
    assert len(doc["results"]) == 2 * 2 * 16 + 2  # + one pass-level exercised record per pass


def test_schema_rejects_what_tools_could_not_consume(doc):
    bad = copy.deepcopy(doc)
    bad["results"][3]["status"] = "passed"
    del bad["summary"]
    errors = reports.validation_errors(bad)
    assert any("results[3].status" in e for e in errors) and any("summary" in e for e in errors)


def test_junit_xml_read_by_a_junit_consumer(run_dir, doc):
    xml = JUnitXml.fromfile(str(run_dir / "junit.xml"))
    cases = [(suite.name, case) for suite in xml for case in suite]
    assert len(cases) == len(doc["results"])
    failed = {(c.classname, c.name) for _, c in cases if any(isinstance(r, Failure) for r in c.result)}
    assert failed == {(SUB_NAME, f"inplace_views::{check}") for check in ("meta_val", "meta_stack_trace", "meta_nn_module_stack")}
    assert not any(isinstance(r, Error) for _, c in cases for r in c.result)
    by_name = {(c.classname, c.name): c for _, c in cases}
    debug = by_name[(SUB_NAME, "inplace_views::meta_debug_handle")]  # should-level: does not gate without --strict
    assert isinstance(debug.result[0], Skipped) and "should-level" in debug.result[0].message
    fail = by_name[(SUB_NAME, "inplace_views::meta_val")].result[0]
    assert "meta['val']" in fail.message and fail.type == "meta_val"
    assert {s.name for s in xml} == {SUB_NAME, "ReplaceInPlaceReluWithOutOfPlaceReluPass"}
    assert xml.failures == 3 and xml.tests == len(doc["results"])


def test_junit_failure_carries_repro_path_and_shrunk_graph(tmp_path, doc):
    rec = next(r for r in doc["results"] if r["check"] == "meta_val" and r["status"] == "fail")
    rec["details"].update(repro="repro_ab12.py", shrunk_graph="def forward(x):\n    return x + x\n")
    rec["message"] = "weird <chars> & \x07 bell"
    writers.write_all(tmp_path, doc)
    xml = JUnitXml.fromfile(str(tmp_path / "junit.xml"))
    case = next(c for s in xml for c in s if c.name == "inplace_views::meta_val")
    assert "repro: repro_ab12.py" in case.result[0].text and "return x + x" in case.result[0].text
    assert case.result[0].message == "weird <chars> &  bell"


def test_markdown_summary_says_what_failed(run_dir, doc):
    md = (run_dir / "summary.md").read_text()
    assert md.startswith("## ❌ passgate check: FAIL: 3 new violations")
    for check in ("meta_val", "meta_stack_trace", "meta_nn_module_stack"):
        assert f"`{check}`" in md
    assert "Regressions" not in md  # no gate: no empty section
    assert "### Op coverage: " in md  # every run lists the ops of its graphs (session op_coverage)
    doc["gate"] = {"baseline": "reports/baseline.json", "fixed": [],
                   "regressions": [{"pass_name": SUB_NAME, "graph": "inplace_views", "check": "meta_val", "message": "a|b"}]}
    doc["op_coverage"] = {"add.Tensor": 2, "relu_.default": 1, "bmm.default": 0}
    md = report_markdown.render(doc)
    assert "### Regressions against `reports/baseline.json`: 1" in md and "a\\|b" in md and "### Fixed: 0" in md
    assert "no case exercises: `bmm.default`" in md and "`relu_.default` (1)" in md


class _Html(HTMLParser):
    """Just enough of the DOM: matrix cells, failure articles, images, external references."""

    def __init__(self):
        super().__init__()
        self.cells, self.articles, self.images, self.external, self.ids, self.chk = [], 0, [], [], set(), []
        self._cell, self._tags = None, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.ids.add(a.get("id"))
        if tag in ("link", "iframe", "object", "embed") or (tag == "script" and "src" in a):
            self.external.append(tag)  # an inline <script> (sort, filter) is part of the file
        for k in ("src", "href"):
            if a.get(k, "").startswith(("http:", "https:", "//")):
                self.external.append(a[k])
        if tag == "table":
            self._tags.append("matrix" in (a.get("class") or "").split())
        if tag == "td" and self._tags and self._tags[-1]:
            self._cell = {"class": a.get("class"), "text": "", "title": a.get("title", "")}
        if tag == "article":
            self.articles += 1
        if "chk" in (a.get("class") or "").split():
            self.chk.append(a["class"])
        if tag == "img":
            self.images.append(a.get("src", ""))

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data + " "

    def handle_endtag(self, tag):
        if tag == "table" and self._tags:
            self._tags.pop()
        if tag == "td" and self._cell is not None:
            self.cells.append(self._cell)
            self._cell = None


def parse_html(text: str) -> _Html:
    p = _Html()
    p.feed(text)
    return p


def test_html_report_is_self_contained_with_matrix_and_failures(run_dir, doc):
    page = parse_html((run_dir / "report.html").read_text())
    assert page.external == []  # opens offline: no linked script, stylesheet or remote resource
    assert len(page.cells) == 4  # 2 passes x 2 graphs
    failing = [c for c in page.cells if c["class"] == "fail"]
    assert len(failing) == 1 and all(x in failing[0]["text"] for x in ("meta_val", "meta_stack_trace"))
    assert sum(c["class"] == "ok" for c in page.cells) == 3
    assert page.articles == 1  # one failing pass x graph cell: 3 violations + 1 should-level warning inside
    assert page.chk == ["chk fail"] * 3 + ["chk warning"]
    assert {"matrix", "failures", "timings", "environment"} <= page.ids
    assert "vulkan" not in page.ids and "coverage" in page.ids  # op coverage: every run has its graphs' ops


def _vulkan_records(op: str, n: int, bad: bool) -> list[dict]:
    out = []
    for i in range(n):
        for check, status, details in (
            ("fusion_expected", "pass", {"op": op}),
            ("fused_vs_qdq", "fail" if bad else "pass", {"op": op, "max_lsb_err": 3.0 if bad else 1.0}),
            ("fused_vs_float", "pass", {"op": op, "sqnr_db": 30.0 + i, "sqnr_qdq_db": 31.0 + i}),
        ):
            out.append({"pass_name": "FusePatternsPass", "graph": f"{op}_{i}", "check": check, "status": status,
                        "level": "must", "message": "", "details": details, "duration_s": 0.1})
    return out


def test_html_vulkan_section_embeds_plots_and_coverage(doc):
    doc["results"] += _vulkan_records("linear_q4gsw", 3, False) + _vulkan_records("q8ta_conv2d_dw", 2, True)
    doc["op_coverage"] = {"add.Tensor": 2, "bmm.default": 0}
    doc["results"][0]["details"]["repro"] = "/abs/repro_1.py"
    html = report_html.render(doc, Path("/abs"))
    page = parse_html(html)
    assert {"vulkan", "coverage"} <= page.ids and page.external == []
    pngs = [base64.b64decode(src.split(",", 1)[1]) for src in page.images if src.startswith("data:image/png;base64,")]
    assert len(pngs) == 2 and all(p.startswith(b"\x89PNG") for p in pngs)
    assert "q8ta_conv2d_dw" in html and "1 in no case" in html
    # the IR passes and the Vulkan fusion ran on disjoint graphs: two dense matrices, not one mostly empty
    assert len(re.findall(r'<table class="matrix[ "]', html)) == 2 and '<td class="none">' not in html


def test_a_crashing_writer_costs_one_report_not_the_results(tmp_path, capsys):
    def broken(report_dir, doc):
        raise RuntimeError("boom")

    writers.guarded(broken, "x.html")(tmp_path, {})
    assert "x.html was not written: RuntimeError: boom" in capsys.readouterr().err


def test_forked_writers_write_the_same_files_as_in_process_ones(tmp_path, doc):
    """writers.start runs the forkable writers in forked children (fork=True: pytest's process may have a
    monitor thread, where the default is not to fork): the files equal those write_all writes in this
    process, results.json included."""
    from harness.report import results_json

    here, forked = tmp_path / "here", tmp_path / "forked"
    here.mkdir()
    results_json.write(here, doc)
    writers.write_all(here, doc)
    forked.mkdir()
    wait = writers.start(forked, doc, [writers.forkable(results_json.write), *writers.default_writers()], fork=True)
    wait()
    assert sorted(p.name for p in forked.iterdir()) == sorted(writers.REPORT_FILES)
    for name in writers.REPORT_FILES:
        assert (forked / name).read_bytes() == (here / name).read_bytes(), name


def test_a_forked_writer_that_dies_is_redone_in_the_parent_where_its_error_is_raised(tmp_path, doc):
    """A child that fails (here: every time) exits non-zero; the wait runs the writer again in this process,
    so an unguarded writer (results.json's) raises to the caller instead of leaving no file silently."""
    calls = []

    def broken(report_dir, d):
        calls.append(report_dir)  # in the child this list is the child's copy: only the parent's call shows
        raise OSError("disk full")

    wait = writers.start(tmp_path, doc, [writers.forkable(broken), writers.forkable(lambda d, x: None)], fork=True)
    with pytest.raises(OSError, match="disk full"):
        wait()
    assert calls == [tmp_path]


def test_the_view_of_a_document_is_digested_once_until_the_document_changes(doc):
    """Every renderer asks for the view; the second ask of the same document is the same object, and a document
    whose gate section was set afterwards (run --baseline) or another document gets a fresh one."""
    v = reports.view(doc)
    assert reports.view(doc) is v
    doc["gate"] = {"known": [{"pass_name": SUB_NAME, "graph": "mlp", "check": "meta_val"}]}
    v2 = reports.view(doc)
    assert v2 is not v and (SUB_NAME, "mlp", "meta_val") in v2.known
    assert reports.view(copy.deepcopy(doc)) is not v2


def test_report_diff_lists_regressions_fixes_and_unchanged(tmp_path, run_dir, doc, capsys):
    old = copy.deepcopy(doc)
    for r in old["results"]:
        if r["check"] == "meta_val" and r["status"] == "fail":
            r["status"] = "pass"  # OLD: meta_val held
        if r["pass_name"].startswith("ReplaceInPlace") and r["graph"] == "mlp" and r["check"] == "numerics":
            r["status"] = "fail"  # OLD: a violation NEW fixed
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "results.json").write_text(json.dumps(old))
    assert main(["report", "diff", str(tmp_path / "old"), str(run_dir), "--gate-into", str(tmp_path / "g")]) == 1
    out = capsys.readouterr().out
    assert "1 regression(s), 1 fixed, 2 unchanged failure(s)" in out
    assert f"regression  {SUB_NAME} x inplace_views: meta_val" in out
    assert main(["report", "diff", str(run_dir), str(run_dir)]) == 0
    capsys.readouterr()
    assert "### Regressions against" in (tmp_path / "g" / "summary.md").read_text()
    assert main(["report", "diff", str(run_dir), str(tmp_path / "old"), "--format", "json"]) == 1
    gate = json.loads(capsys.readouterr().out)
    assert [c["check"] for c in gate["fixed"]] == ["meta_val"] and [c["check"] for c in gate["regressions"]] == ["numerics"]


@pytest.mark.parametrize("damage, expect", [
    (lambda text: text[: len(text) // 2], "not valid JSON"),
    (lambda text: text.replace('"status": "pass"', '"status": "passed"', 1), "does not follow the passgate results schema"),
    (lambda text: text.replace('"schema_version": "1.0"', '"schema_version": "2.0"'), "this passgate reads 1.x"),
    (lambda text: "[1, 2]", "does not follow the passgate results schema"),
])
def test_bad_results_files_exit_2_with_one_line(tmp_path, run_dir, capsys, damage, expect):
    (tmp_path / "results.json").write_text(damage((run_dir / "results.json").read_text()))
    for argv in (["report", "render", str(tmp_path)], ["report", "diff", str(run_dir), str(tmp_path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("passgate: error:") and expect in err[0], err
    assert main(["report", "render", str(tmp_path / "missing")]) == 2
    assert "results file not found" in capsys.readouterr().err


def test_baseline_gate_section_is_rendered_and_its_known_violations_waived(tmp_path, doc):
    """The gate of `passgate run --baseline` (entries keyed `pass`): valid, shown, and its known
    violations are not failures in JUnit, so a green gate is green in the CI test view too."""
    violations = [r for r in doc["results"] if r["status"] == "fail" and r["level"] == "must"]
    known = [{"pass": r["pass_name"], "graph": r["graph"], "check": r["check"], "reason": "upstream bug",
              "now": r["message"]} for r in violations[1:]]
    regression = violations[0]
    doc["gate"] = {"regressions": [{"pass": regression["pass_name"], "graph": regression["graph"],
                                    "check": regression["check"], "status": "fail", "message": regression["message"]}],
                   "fixed": [{"pass": "Old", "graph": "mlp", "check": "meta_val", "reason": "fixed upstream"}],
                   "known": known, "not_evaluated": [], "baseline": "reports/baseline.json", "status": "fail"}
    assert reports.validation_errors(doc) == []
    writers.write_all(tmp_path, doc)
    xml = JUnitXml.fromfile(str(tmp_path / "junit.xml"))
    failed = [c.name for s in xml for c in s if any(isinstance(r, Failure) for r in c.result)]
    assert failed == [f"{regression['graph']}::{regression['check']}"]
    md = (tmp_path / "summary.md").read_text()
    assert "### Regressions against `reports/baseline.json`: 1" in md and "fixed upstream" in md
    assert f"FAIL: 1 new violation, {len(known)} known, 1 fixed" in md
