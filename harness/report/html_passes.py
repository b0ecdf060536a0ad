"""report.html's failures, one collapsed ``<details>`` per pass: open one pass without scrolling past the rest.

A single list of every failing pass x graph, worst first, made a reader
looking for their pass scroll past everyone else's; at the size of the
suite it was cut off after a couple of hundred. So each pass gets its own
``<details>`` (its counts in the one-line summary; closed, so the page is
as long as the pass list), opened by a link from the summary or the matrix.
Inside: whether any case exercised it, then one article per failing pass x
graph (worst first), its failed checks with message, shrunk graph,
reproducer and traceback. A pass lists at most :data:`MAX_CELLS_PER_PASS`
cells and the page :data:`MAX_FAILURES`; a traceback is cut to its last
:data:`MAX_TRACEBACK` characters: results.json has them all, and the file
stays quick to open at the size of the suite. Nothing here imports torch.
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path
from typing import Optional

from harness.report import headline as hl
from harness.report import view as reports
from harness.report.html_matrix import OUT_LABEL, cell_anchor
from harness.report.html_summary import Tally, anchor, by_pass, tally_flags

__all__ = ["MAX_CELLS_PER_PASS", "MAX_FAILURES", "MAX_TRACEBACK", "html"]

MAX_CELLS_PER_PASS = 25  # failing pass x graph cells shown in one pass's detail
MAX_FAILURES = 2000  # pass x graph cells listed in the whole page
MAX_TRACEBACK = 2000  # characters of a traceback kept: its end, where the exception is


def _e(x) -> str:
    return escape(str(x if x is not None else ""))


def _link(path: str, report_dir: Optional[Path]) -> str:
    """href for a repro path: relative to the report when it lives beside it, else a file URI."""
    p = Path(path)
    if not p.is_absolute():
        return escape(p.as_posix(), quote=True)
    if report_dir is not None:
        try:
            return escape(Path(os.path.relpath(p, report_dir)).as_posix(), quote=True)
        except ValueError:
            pass
    return escape(p.as_uri(), quote=True)


def _entry(v: reports.View, r: dict, report_dir: Optional[Path]) -> str:
    o = v.outcome(r)
    d = r.get("details") or {}
    label = OUT_LABEL.get(o, o)
    if o in ("fail", "error") and reports.key(r) in v.worsened:
        label = f"worsened: {v.worsened[reports.key(r)]}"
    body = [f'<div class="chk {o}"><code>{_e(r["check"])}</code><span class="badge">{_e(r.get("level"))}</span>'
            f'<span class="badge o-{o}">{_e(label)}</span>', f"<pre>{_e(r.get('message') or r['status'])}</pre>"]
    shrunk = reports.shrunk_graph(d)
    if shrunk:
        body.append(f"<div>Shrunk graph:</div><pre><code>{_e(shrunk)}</code></pre>")
    if d.get("repro"):
        body.append(f'<div>Reproducer: <a href="{_link(str(d["repro"]), report_dir)}">{_e(d["repro"])}</a>'
                    f' <span class="muted">(run it with python)</span></div>')
    tb = str(d.get("traceback") or "")
    if tb:
        cut = f"… ({len(tb) - MAX_TRACEBACK} characters before: results.json)\n" if len(tb) > MAX_TRACEBACK else ""
        body.append(f"<details><summary>traceback</summary><pre>{_e(cut + tb[-MAX_TRACEBACK:])}</pre></details>")
    return "".join(body) + "</div>"


def _badges(t: Tally, unexercised: bool) -> str:
    parts = [(t.new, "new", "o-fail"), (t.worsened, "worsened", "o-fail"), (t.known, "known", "o-known"),
             (t.warnings, "warnings", "o-warning")]
    out = "".join(f'<span class="badge {cls}">{n} {label}</span>' for n, label, cls in parts if n)
    if unexercised:
        out += '<span class="nx">not exercised</span>'
    return out or '<span class="badge">all checks hold</span>'


def _exercised_line(r: Optional[dict]) -> str:
    if r is None:
        return ""
    d = r.get("details") or {}
    what = "not exercised: " if r["status"] == "fail" else f"exercised ({r['status']}): "
    return (f'<p class="muted">{_e(what)}{_e(d.get("cases_changed", "?"))} of {_e(d.get("ran", "?"))} cases changed '
            f'the program. {_e(r.get("message"))}</p>')


def _pass_detail(v: reports.View, p: str, t: Tally, cells: list, budget: int, ex: dict,
                 report_dir: Optional[Path]) -> tuple[str, int]:
    """One pass's ``<details>`` and how many cells of the page's budget it used."""
    r = ex.get(p)
    nx = bool(r and r["status"] == "fail")
    shown = cells[: max(0, min(MAX_CELLS_PER_PASS, budget))]
    articles = []
    for (g, records) in shown:
        entries = "".join(_entry(v, rec, report_dir) for rec in records)
        articles.append(f'<article class="failure {v.outcome(records[0])}" id="{cell_anchor(p, g)}"><h3>{_e(p)} × '
                        f"{_e(reports.graph_label(g))}</h3>{entries}</article>")
    if len(cells) > len(shown):
        articles.append(f'<p class="muted">…and {len(cells) - len(shown)} more failing cells of this pass in '
                        "results.json.</p>")
    inner = _exercised_line(r) + ("".join(articles) if cells else
                                  f'<p class="muted">Every check held on its {len(t.cells)} graphs.</p>')
    return (f'<details class="pd" id="{anchor(p)}" data-p="{_e(p.lower())}" data-f="{tally_flags(t, nx)}"><summary>'
            f'{_e(p)} <span class="muted">({len(t.cells)} graphs)</span>{_badges(t, nx)}</summary><div>{inner}</div>'
            "</details>"), len(shown)


def html(v: reports.View, h: hl.Headline, report_dir: Optional[Path]) -> str:
    """The failures section (``<h2 id="failures">``): a ``<details>`` per pass, passes with failures first."""
    tallies = by_pass(v)
    cells: dict[str, dict[str, list]] = {p: {} for p in v.passes}
    for r in v.problems:  # already worst first
        cells[r["pass_name"]].setdefault(r["graph"], []).append(r)
    failing = sum(len(c) for c in cells.values())
    worse = f"{h.worsened} worsened, " if h.worsened or h.gated else ""
    out = [f'<h2 id="failures">Failures by pass: {_e(hl.plural(h.new, "new violation"))}, {worse}{h.known} known, '
           f'{_e(hl.plural(h.warnings, "should-level warning"))} ({len(v.problems)} failed checks in {failing} '
           "pass x graph cells)</h2>"]
    if not v.problems:
        out.append('<p class="muted">None: every check held.</p>')
    ex = reports.exercised(v)
    budget = MAX_FAILURES
    order = [p for p in v.passes if cells[p]] + [p for p in v.passes if not cells[p]]
    for p in order:
        detail, used = _pass_detail(v, p, tallies[p], list(cells[p].items()), budget, ex, report_dir)
        budget -= used
        out.append(detail)
    if budget <= 0:
        out.append(f'<p class="muted">The page lists {MAX_FAILURES} failing cells; results.json has all {failing}.</p>')
    return "".join(out)
