"""report.html at the size of the suite: a summary that adds up to the headline, a matrix whose links land,
one detail per pass, the caps that keep the file small, and (with a Chromium) the script's filters.

The documents are built here record by record (the report layer reads records, it runs no pass): passes
P00.. on graphs g00.. with every outcome the headline counts, so a table that counted one differently from
the headline, or a link that pointed nowhere, fails. tests/test_reports.py renders a real run.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from harness.cli.main import main
from harness.report import headline as hl
from harness.report import html_matrix, html_passes, report_html

CHECKS = (("runs", "must"), ("verifier", "must"), ("meta_val", "must"), ("idempotent", "should"))


def _rec(p, g, check, level, status, message="", details=None):
    return {"pass_name": p, "graph": g, "check": check, "status": status, "level": level, "message": message,
            "details": details or {}, "duration_s": 0.01}


def _doc(passes: int = 12, graphs: int = 30) -> dict:
    """Pass i fails verifier on the graphs j with (i + j) % 5 == 0 (known when j is even, worsened for one of
    them), errors on runs where (i * j) % 17 == 1, warns idempotent where j % 7 == i % 7; P01 never ran on
    g00..g09, and P03 is not exercised."""
    names = [f"P{i:02d}" for i in range(passes)]
    gnames = [f"g{j:02d}" for j in range(graphs)]
    results, known = [], []
    for i, p in enumerate(names):
        for j, g in enumerate(gnames):
            if p == "P01" and j < 10:
                continue
            for check, level in CHECKS:
                status = "pass"
                if check == "verifier" and (i + j) % 5 == 0:
                    status = "fail"
                    if j % 2 == 0:
                        known.append({"pass": p, "graph": g, "check": check})
                if check == "runs" and (i * j) % 17 == 1:
                    status = "error"
                if check == "idempotent" and j % 7 == i % 7:
                    status = "fail"
                tb = "Traceback\n" + "x" * 5000 + "\nKeyError: 'val'" if status == "error" else ""
                results.append(_rec(p, g, check, level, status, f"{check} {status} on {g}",
                                    {"traceback": tb} if tb else {}))
        nx = p == "P03"
        results.append(_rec(p, "*", "exercised", "should", "fail" if nx else "pass",
                            "no case changed the program" if nx else "", {"cases_changed": 0 if nx else 3, "ran": 30}))
    worse = [{**k, "worse": "2 more offending nodes"} for k in known if k["pass"] == "P05"][:1]
    by = {s: sum(r["status"] == s for r in results) for s in hl.STATUSES}
    return {
        "schema_version": "1.0", "tool": {"name": "passgate", "version": "0"},
        "environment": {"python": "3.11", "torch": "2.13.0", "executorch": "1.5.1", "platform": "Linux",
                        "passgate": "0"},
        "configuration": {"command": "run", "strict": False, "graphs": gnames}, "started_at": "2026-12-02T00:00:00Z",
        "duration_s": 1.0, "complete": True, "cases": [], "results": results, "exit_status": 1,
        "summary": {"total": len(results), "by_status": by, "violations": 0, "passes": passes, "graphs": graphs},
        "gate": {"baseline": "reports/baseline.json", "regressions": [], "known": known, "fixed": [],
                 "worsened": worse, "not_evaluated": []},
    }


class _Page(HTMLParser):
    """ids, links, the summary's rows, the matrix's rows and cells, and which <details> holds each id."""

    def __init__(self):
        super().__init__()
        self.ids, self.links, self.details_of, self.rows, self.cells = set(), [], {}, {}, []
        self._details, self._table, self._tr, self._td = [], [], None, None

    def handle_starttag(self, tag, a):
        a = dict(a)
        if a.get("id"):
            self.ids.add(a["id"])
            self.details_of[a["id"]] = self._details[-1] if self._details else None
        if tag == "details":
            self._details.append(a.get("id"))
        if tag == "a" and a.get("href", "").startswith("#"):
            self.links.append((a["href"][1:], self._table[-1] if self._table else None, self._tr))
        if tag == "table":
            self._table.append(a.get("id") or ("matrix" if "matrix" in (a.get("class") or "") else ""))
        if tag == "tr":
            self._tr = a.get("data-p")
            self._row = []
        if tag in ("td", "th") and self._table:
            self._td = {"class": a.get("class") or "", "title": a.get("title") or "", "text": "", "row": self._tr}

    def handle_data(self, data):
        if self._td is not None:
            self._td["text"] += data

    def handle_endtag(self, tag):
        if tag == "details":
            self._details.pop()
        if tag == "table":
            self._table.pop()
        if tag in ("td", "th") and self._td is not None:
            self._row.append(self._td)
            if self._table[-1] == "matrix" and tag == "td":
                self.cells.append(self._td)
            self._td = None
        if tag == "tr" and self._table:
            self.rows.setdefault(self._table[-1], []).append(self._row)


def _page(html: str) -> _Page:
    p = _Page()
    p.feed(html)
    return p


@pytest.fixture(scope="module")
def doc() -> dict:
    return _doc()


@pytest.fixture(scope="module")
def html(doc) -> str:
    return report_html.render(doc)


def test_summary_per_pass_and_per_check_add_up_to_the_headline(doc, html):
    h = hl.compute(doc)
    page = _page(html)
    head = [c["text"] for c in page.rows["sum-pass"][0]]
    assert head[:6] == ["pass", "graphs", "new", "worsened", "known", "warnings"]
    body = page.rows["sum-pass"][1:-1]
    assert [r[0]["text"] for r in body] == [f"P{i:02d}" for i in range(12)]
    col = lambda rows, i: sum(int(r[i]["text"].split()[0]) for r in rows)  # noqa: E731
    assert (col(body, 2), col(body, 3), col(body, 4), col(body, 5)) == (h.new, h.worsened, h.known, h.warnings)
    foot = page.rows["sum-pass"][-1]
    assert [int(foot[i]["text"].split()[0]) for i in (2, 3, 4, 5)] == [h.new, h.worsened, h.known, h.warnings]
    assert h.worsened == 1 and h.known > 10 and h.new > 10 and h.warnings > 10  # every kind is there to count
    by_check = {r[0]["text"]: r for r in page.rows["sum-check"][1:]}
    assert set(by_check) == {"runs", "verifier", "meta_val", "idempotent", "exercised"}
    assert sum(int(r[2]["text"].split()[0]) for r in by_check.values()) == h.new
    assert int(by_check["runs"][2]["text"].split()[0]) == sum(r["status"] == "error" for r in doc["results"])
    p01 = next(r for r in body if r[0]["text"] == "P01")
    assert p01[1]["text"] == "20"  # graphs it ran on
    p03 = next(r for r in body if r[0]["text"] == "P03")
    assert p03[6]["text"] == "not exercised" and "warn" in p03[6]["class"]


def test_each_pass_has_one_detail_and_every_link_lands_in_its_own(doc, html):
    page = _page(html)
    passes = [f"P{i:02d}" for i in range(12)]
    details = [i for i in page.ids if i.startswith("p-")]
    assert sorted(details) == [f"p-{p}" for p in passes]
    matrix_links = [(target, row) for target, table, row in page.links if table == "matrix"]
    assert matrix_links and all(t in page.ids for t, _ in matrix_links)
    for target, row in matrix_links:  # a cell's link opens the failure inside its own pass's detail
        holder = target if target.startswith("p-") else page.details_of[target]
        assert holder == f"p-{row.upper()}"
    summary_links = {t for t, table, _ in page.links if table == "sum-pass"}
    assert summary_links == {f"p-{p}" for p in passes}
    failing = [c for c in page.cells if c["title"]]
    assert failing and all(c["text"] == str(len(c["title"].split("; "))) for c in failing)  # compact: the count


def test_a_wide_matrix_is_compact_with_readable_headers_and_a_narrow_one_spelled_out(doc, html):
    assert len(doc["configuration"]["graphs"]) > html_matrix.COMPACT_ABOVE
    assert '<div class="mbox" id="m0"><div class="mhead"><table class="matrix compact"><thead>' in html
    assert "writing-mode" not in html  # graph names slant; no column one letter wide
    assert '<th class="g" data-g="g07"><div><span title="g07">g07</span></div></th>' in html
    chunks = re.findall(r'<div class="mchunk"[^>]*><table class="matrix compact"><tbody>(.*?)</tbody>', html)
    assert [c.count("<tr ") for c in chunks] == [html_matrix.CHUNK_ROWS] * (12 // html_matrix.CHUNK_ROWS) + (
        [12 % html_matrix.CHUNK_ROWS] if 12 % html_matrix.CHUNK_ROWS else [])
    small = report_html.render(_doc(passes=3, graphs=4))
    assert '<div class="mbox" id="m0"><table class="matrix">' in small
    assert re.search(r'<span class="o-known">verifier</span> <i>known</i>', small)


def test_caps_keep_the_page_small_and_say_what_they_left_out(doc, monkeypatch):
    monkeypatch.setattr(html_passes, "MAX_CELLS_PER_PASS", 2)
    html = report_html.render(doc)
    left = [int(n) for n in re.findall(r"…and (\d+) more failing cells of this pass in results.json", html)]
    failing_cells = {(r["pass_name"], r["graph"]) for r in doc["results"] if r["status"] in ("fail", "error")}
    assert sum(left) + 2 * len(left) == len(failing_cells) and html.count('<article class="failure') == 2 * 12
    tb = max(re.findall(r"<summary>traceback</summary><pre>(.*?)</pre>", html, re.S), key=len)
    assert tb.startswith("… (") and tb.endswith("KeyError: &#x27;val&#x27;")
    assert len(tb) < html_passes.MAX_TRACEBACK + 100


def test_the_page_is_the_same_for_the_same_document(doc, html):
    assert report_html.render(json.loads(json.dumps(doc))) == html


def test_report_render_writes_it_from_a_results_json(tmp_path, doc):
    (tmp_path / "results.json").write_text(json.dumps(doc))
    assert main(["report", "render", str(tmp_path)]) == 0
    page = _page((tmp_path / "report.html").read_text())
    assert {"summary", "matrix", "failures", "filters", "f-pass", "f-graph", "f-out"} <= page.ids


CHROME = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


def _dom(url: str) -> str:
    r = subprocess.run([CHROME, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url],
                       capture_output=True, text=True, timeout=240)
    return r.stdout


@pytest.mark.skipif(CHROME is None, reason="no Chromium to run the page's script")
def test_in_chromium_a_url_filters_and_a_fragment_opens_one_pass(tmp_path, doc):
    page = tmp_path / "report.html"
    page.write_text(report_html.render(doc))
    dom = _dom(page.as_uri() + "?pass=p05&out=w#p-P05")
    rows = re.findall(r'<tr data-p="(p\d\d)" data-f="[a-z]*"( hidden="")?>', dom)
    assert rows and {p for p, hidden in rows if not hidden} == {"p05"}  # summary and matrix rows of P05 only
    assert re.search(r'<details class="pd" id="p-P05"[^>]*open=""', dom)
    assert not re.search(r'<details class="pd" id="p-P04"[^>]*open=""', dom)
    assert "1 of 12 passes shown" in dom
    dom = _dom(page.as_uri() + "?graph=g07")
    hidden = re.search(r"<style>(#m0 tr>:nth-child[^<]*)\{display:none\}</style>", dom).group(1)
    assert hidden.count("nth-child") == 29 and ":nth-child(9)" not in hidden  # every graph column but g07
