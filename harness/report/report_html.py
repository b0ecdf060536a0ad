"""``report.html``: one self-contained file a developer opens to see why their pass failed.

No external stylesheet, script, fonts or images: CSS and a small script are
inline (:mod:`harness.report.html_assets`) and plots are base64 PNG, so the
file opens offline, from a CI artifact, from a certification bundle, years
later. It has to read at the size of the suite (a few hundred passes x a
hundred graphs), so it leads with what to look at and keeps the rest one
click away. Sections, each left out when it has nothing to show: verdict
banner and counts; a filter bar (pass, graph, outcome) over everything
below; the summary per pass and per check (:mod:`~harness.report.html_summary`,
sortable); gate (regressions / fixed, a long list folded); the pass x graph matrix
(:mod:`~harness.report.html_matrix`: coloured cells, filterable, a link
from each failing cell to its failure); how many cases changed each pass's
program (``exercised``); the failures, one collapsed ``<details>`` per pass
(:mod:`~harness.report.html_passes`); per-pass timings and op coverage
(:mod:`~harness.report.html_tables`); the sections content adds;
environment.

The engine knows no backend: content adds sections (Vulkan's per-op table
and plots, ``vulkan.reports.plots:report_section``) through the
``passgate.report_sections`` entry-point group. Each entry point is a
callable ``report_section(doc) -> str`` returning an HTML fragment, "" when
it has nothing to show; they appear sorted by entry-point name, after op
coverage. The fragment's first ``<h2 id="...">`` is linked from the
navigation bar, under the callable's ``nav_label`` attribute (else the
entry-point name). A section that fails to load or render becomes a one-line
note in its place (and a warning on stderr), never a lost report.

The verdict colours come from :mod:`harness.report.view`, the same
classification the JUnit and Markdown reports and the exit status use, and
the banner and the first row of cards are :mod:`harness.report.headline`'s
numbers (new, known, fixed, stale, warnings), stated once for every format:
the raw status cards below them add up to the check count, and the summary
tables' totals are the headline's numbers.
"""

from __future__ import annotations

import re
import sys
from html import escape
from pathlib import Path
from typing import Callable, Optional

from harness.core import plugins
from harness.core.io import atomic_write_bytes
from harness.report import blind_sections, html_matrix, html_passes, html_summary, html_tables
from harness.report import headline as hl
from harness.report import view as reports
from harness.report.html_assets import CSS, JS
from harness.report.html_passes import MAX_FAILURES

__all__ = ["CSS", "FILE", "MAX_FAILURES", "render", "write"]

FILE = "report.html"
_H2_ID = re.compile(r'<h2 id="([^"]+)"')
_GATE_ROWS_OPEN = 10  # a gate table longer than this is folded into a <details>


def _e(x) -> str:
    return escape(str(x if x is not None else ""))


def _header(v: reports.View, h: hl.Headline) -> str:
    doc = v.doc
    cfg = doc.get("configuration") or {}
    env = doc.get("environment") or {}
    sub = (f"{_e(h.counts())} ({_e(h.scope())}) · {_e(cfg.get('command', ''))} · seed {_e(cfg.get('seed', '-'))} · "
           f"started {_e(doc.get('started_at'))} · {_e(doc.get('duration_s'))} s · torch {_e(env.get('torch'))} · "
           f"executorch {_e(env.get('executorch'))}")
    return (f'<header class="banner {h.verdict}"><h1>passgate: {_e(h.text())}</h1>'
            f'<div class="sub">{sub}</div></header>')


def _notices(doc: dict) -> str:
    out = []
    cert = doc.get("certification")
    if cert:
        out.append(f'<div class="notice">Certification run: suite {_e(cert.get("suite_version"))}, profile '
                   f'<b>{_e(cert.get("profile"))}</b>, backend {_e(cert.get("backend") or "none (reference passes)")}.'
                   + ("" if cert.get("profile") == "full" else
                      f' NOT A FULL CERTIFICATION: the {_e(cert.get("profile"))} profile runs a subset of the suite.')
                   + "</div>")
    if not doc.get("complete", True):
        out.append('<div class="notice">The run was interrupted: these results cover only what finished.</div>')
    shard = (doc.get("configuration") or {}).get("shard")
    if shard:
        out.append(f'<div class="notice">Shard {_e(shard)} only: merge the shards with '
                   f'<code>passgate report merge</code> for the whole run.</div>')
    inc = doc.get("incremental")
    if inc and (inc.get("reused") or inc.get("not_affected")):  # results reused from the verdict cache carry details.reused
        out.append(f'<div class="notice">Incremental run: {_e(inc.get("ran"))} units ran, {_e(inc.get("reused"))} '
                   f'reused from earlier runs (unchanged files, case, checks and versions), '
                   f'{_e(inc.get("not_affected"))} not affected by the change and not run.</div>')
    return "".join(out)


def _tile(n, label: str, cls: str = "", title: str = "") -> str:
    return f'<div class="tile {cls}" title="{_e(title)}"><b>{_e(n)}</b><span>{_e(label)}</span></div>'


def _tiles(v: reports.View, h: hl.Headline) -> str:
    """The headline's numbers (gate), then every status (adding up to the checks) and the run's scope."""
    gate = [(h.new, "new violations", "new", "gating failures no baseline records"),
            *([(h.worsened, "worsened", "new", "baselined violations that got worse than their entry: they gate")]
              if h.worsened or h.gated else []),
            (h.known, "known (baselined)", "known", "violations the baseline or the suite records: waived"),
            (h.fixed, "fixed", "", "baseline entries whose check now holds"),
            (h.stale, "stale baseline entries", "stale", "their pair ran, they matched no violation"),
            (h.warnings, "should-level warnings", "warn", "should-level fails; gate only with --strict")]
    by = h.by_status
    fails = f"{by['fail']} fail = {h.new} new + {h.known} known + {h.warnings} warnings (errors apart)"
    counts = [(h.total, "checks", "", ""), (by["pass"], "pass", "", ""), (by["fail"], "fail", "", fails),
              (by["error"], "error", "", ""), (by["skip"], "skip", "", ""), (by["not_applicable"], "n/a", "", ""),
              (len(v.passes), "passes", "", ""), (len(v.graphs), "graphs", "", "")]
    if reports.exercised(v):
        counts.append((len(reports.not_exercised(v)), "not exercised", "", ""))
    row = "".join(_tile(n, t, c + (" zero" if not n else ""), why) for n, t, c, why in gate)
    return (f'<div class="tiles gate">{row}</div><div class="tiles">'
            + "".join(_tile(n, t, c, why) for n, t, c, why in counts) + "</div>")


def _gate(doc: dict, h: hl.Headline) -> str:
    if not doc.get("gate"):
        return ""
    g = reports.gate(doc)
    parts = [f'<h2 id="gate">Gate{" against " + _e(g["baseline"]) if g.get("baseline") else ""}: '
             f'{len(g["regressions"])} regression(s), {len(g["worsened"])} worsened, {h.known} known, {h.fixed} fixed, '
             f'{h.stale} stale</h2>']
    if g["worsened"]:
        parts.append('<p class="muted">Worsened: a known violation that got worse than its baseline entry records '
                     '(more or other offending nodes, another exception, a larger error) fails the gate; <code>'
                     'passgate baseline update</code> accepts it.</p>')
    if h.stale:
        parts.append('<p class="muted">Stale: the entry\'s pass x graph ran but it matched no violation (the check '
                     'was not judged, or fails only as a should-level warning); <code>passgate baseline update'
                     '</code> drops it.</p>')
    worse = [{**c, "message": f"{c.get('worse')} (now: {c.get('now')})"} for c in g["worsened"]]
    for title, rows in (("Regressions", g["regressions"]), ("Worsened", worse), ("Fixed", h.fixed_entries),
                        ("Stale", h.stale_entries)):
        if rows:  # a long list opens on demand: the summary below says which passes they are
            fold = len(rows) > _GATE_ROWS_OPEN
            parts.append((f"<details><summary><b>{title}: {len(rows)}</b></summary>" if fold else f"<h3>{title}</h3>")
                         + "<table><tr><th>pass</th><th>graph</th><th>check</th><th>"
                         f"{'reason' if title == 'Stale' else 'message'}</th></tr>")
            parts += [f"<tr><td>{_e(c.get('pass_name'))}</td><td>{_e(c.get('graph'))}</td><td>{_e(c.get('check'))}"
                      f"{'' if title != 'Stale' else ' (now ' + _e(c.get('now')) + ')'}</td><td>"
                      f"{_e((c.get('reason') if title == 'Stale' else None) or c.get('message') or c.get('reason'))}"
                      "</td></tr>" for c in rows]
            parts.append("</table></details>" if fold else "</table>")
    return "".join(parts)


def _exercised(v: reports.View) -> str:
    """Per pass judged: how many of its cases changed the program, and how; not exercised ones first."""
    ex = reports.exercised(v)
    if not ex:
        return ""
    order = {"fail": 0, "error": 0, "skip": 1, "not_applicable": 2, "pass": 3}
    rows = []
    for p, r in sorted(ex.items(), key=lambda kv: order.get(kv[1]["status"], 1)):
        d = r.get("details") or {}
        cls = "none" if r["status"] == "skip" else reports.CELL_VERDICT[v.outcome(r)].replace("n/a", "na")
        rows.append(f'<tr data-p="{_e(p.lower())}"><td>{_e(p)}</td><td class="{cls}">{_e(r["status"])}</td><td>{_e(d.get("cases_changed", ""))} / '
                    f'{_e(d.get("ran", ""))}</td><td>{_e(d.get("ops", ""))}</td><td>{_e(d.get("structure_only", ""))}'
                    f'</td><td>{_e(d.get("metadata_only", ""))}</td><td>{_e(r.get("message"))}</td></tr>')
    missing = len(reports.not_exercised(v))
    return (f'<h2 id="exercised">Exercised: {len(ex) - missing} of {len(ex)} passes changed the program on some case'
            f'</h2><p class="muted">A check can only flag what a graph makes the pass do: a pass no case changed was '
            f'not tested by this run (level {_e(next(iter(ex.values())).get("level"))}).</p><div class="scroll" '
            'style="max-height:420px;overflow-y:auto"><table><tr><th>pass</th><th>exercised</th><th>cases changed / '
            'ran</th><th>ops</th><th>structure only</th><th>metadata only</th><th>message</th></tr>'
            f'{"".join(rows)}</table></div>')


def _extra_sections() -> list[tuple[str, Callable[[dict], str]]]:
    """(name, report_section) of every ``passgate.report_sections`` entry point, sorted by name.

    A section that cannot be loaded is returned as a callable that raises, so
    :func:`_extra` reports it in the section's place like a render error.
    """
    out = []
    for ep in plugins.points(plugins.REPORT_SECTIONS):  # content's sections: callable(doc) -> HTML, or ""
        try:
            fn = ep.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin costs its section, not the report
            fn = _raiser(exc)
        out.append((ep.name, fn))
    return out


def _raiser(exc: Exception) -> Callable[[dict], str]:
    def section(doc: dict) -> str:
        raise exc

    return section


def _extra(doc: dict) -> list[tuple[str, str, str]]:
    """(anchor, nav label, HTML) of each content section with something to show; a failing one is a note."""
    out = []
    for name, fn in _extra_sections():
        try:
            html = fn(doc)
            if not isinstance(html, str):
                raise TypeError(f"returned {type(html).__name__}, not an HTML string")
        except Exception as exc:  # noqa: BLE001 - one section's bug must not cost the whole report
            why = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
            print(f"passgate: warning: report section {name} failed: {why}", file=sys.stderr)
            html = f'<p class="muted">Report section {_e(name)} could not be rendered: {_e(why)}</p>'
        if html:
            m = _H2_ID.search(html)
            label = getattr(fn, "nav_label", None) or name
            out.append((m.group(1) if m else "", str(label), html))
    return out


def _environment(doc: dict) -> str:
    env = doc.get("environment") or {}
    cfg = {k: v for k, v in (doc.get("configuration") or {}).items() if not isinstance(v, (list, dict))}
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(val)}</td></tr>" for k, val in {**env, **cfg}.items())
    return f'<h2 id="environment">Environment and configuration</h2><table>{rows}</table>'


def _filters(v: reports.View) -> str:
    """The bar that narrows the summary, the matrix and the per-pass details (the script in html_assets)."""
    if not v.cells and not v.pass_level:
        return ""
    outcomes = "".join(f'<option value="{f}">{label}</option>' for f, label in (
        ("", "any outcome"), ("n", "new violations"), ("w", "worsened"), ("e", "harness errors"), ("k", "known"),
        ("a", "should-level warnings"), ("x", "not exercised")))
    return ('<div class="filters" id="filters"><label>pass <input type="search" id="f-pass" placeholder="name '
            'contains…"></label><label>graph <input type="search" id="f-graph" placeholder="name contains…"></label>'
            f'<label>passes with <select id="f-out">{outcomes}</select></label>'
            '<label><input type="checkbox" id="f-hideok"> only graphs where a shown pass failed</label>'
            '<span class="shown" id="f-shown"></span></div>')


def render(doc: dict, report_dir: Optional[Path] = None) -> str:
    v = reports.view(doc)
    h = hl.compute(v)
    extra = _extra(doc)
    sections = [html_summary.html(v), _gate(doc, h), html_matrix.html(v), _exercised(v), blind_sections.html(doc),
                html_passes.html(v, h, report_dir), html_tables.timings(v), html_tables.coverage(doc),
                *(html for _, _, html in extra), _environment(doc)]
    body = "".join(sections)
    nav = "".join(f'<a href="#{s}">{t}</a>' for s, t in (
        ("summary", "summary"), ("gate", "gate"), ("matrix", "matrix"), ("exercised", "exercised"),
        ("blind", "judged blind"), ("failures", "failures by pass"), ("timings", "timings"),
        ("coverage", "op coverage"), *((a, _e(label)) for a, label, _ in extra if a), ("environment", "environment"))
        if f'id="{s}"' in body)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width\"><title>passgate report: {_e(h.text())}"
            f"</title><style>{CSS}</style></head><body>{_header(v, h)}<main><nav>{nav}</nav>{_notices(doc)}"
            f"{_tiles(v, h)}{_filters(v)}{body}</main><script>{JS}</script></body></html>\n")


def write(report_dir: Path, doc: dict) -> Path:
    path = Path(report_dir) / FILE
    atomic_write_bytes(path, render(doc, Path(report_dir)).encode())
    return path
