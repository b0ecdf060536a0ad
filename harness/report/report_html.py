"""``report.html``: one self-contained file a developer opens to see why their pass failed.

No scripts, no external stylesheet, fonts or images: CSS is inline and
plots are base64 PNG, so the file opens offline, from a CI artifact, from a
certification bundle, years later. Sections, each left out when it has
nothing to show: verdict banner and counts; gate (regressions / fixed);
the pass x graph matrix coloured by verdict with the failing check ids in
each cell (a cell links to its failures), a pass no case made change the
program marked "not exercised" beside its name; how many cases changed each
pass's program (``exercised``); the failure list with message,
shrunk graph and reproducer link; per-pass timings; op coverage; the
sections content adds; environment.

The engine knows no backend: content adds sections (Vulkan's per-op table
and plots, ``vulkan.plots:report_section``) through the
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
the raw status cards below them add up to the check count, and a matrix
cell names each failed check with what it is (new, known, warning).
"""

from __future__ import annotations

import os
import re
import sys
from html import escape
from pathlib import Path
from typing import Callable, Optional

from harness.core import plugins
from harness.core.io import atomic_write_bytes
from harness.report import blind_sections, html_tables
from harness.report import headline as hl
from harness.report import view as reports

__all__ = ["CSS", "FILE", "MAX_FAILURES", "render", "write"]

FILE = "report.html"
_H2_ID = re.compile(r'<h2 id="([^"]+)"')
MAX_FAILURES = 200  # pass x graph cells listed; results.json has them all
# what a failed record is, in words (failure list, cell titles) and as a short tag beside its check id in a cell
_OUT_LABEL = {"fail": "new violation", "error": "harness error", "warning": "should-level: warns",
              "known": "known violation (baselined)"}
_OUT_TAG = {"fail": "new", "error": "error", "warning": "warn", "known": "known"}

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
main{padding:0 24px 40px;max-width:1600px}
h1{font-size:20px;margin:0}h2{font-size:17px;margin:28px 0 10px;border-bottom:1px solid #d9dde3;padding-bottom:4px}
.banner{padding:14px 24px;color:#fff}.banner.PASS{background:#1e7e34}.banner.FAIL{background:#b3261e}
.banner.INCOMPLETE{background:#8a5a00}.banner .sub{opacity:.9;font-size:13px;margin-top:4px}
.notice{background:#fff4ce;border:2px solid #c98a00;padding:10px 14px;margin:14px 0;font-weight:600}
nav{margin:10px 0;font-size:13px}nav a{margin-right:14px;color:#2450a6}
.tiles{display:flex;gap:10px;flex-wrap:wrap;margin:14px 0}
.tile{background:#fff;border:1px solid #d9dde3;border-radius:6px;padding:8px 14px;min-width:84px}
.tile b{display:block;font-size:20px}.tile span{font-size:12px;color:#5b6472}
table{border-collapse:collapse;background:#fff;font-size:13px}
th,td{border:1px solid #d9dde3;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef0f4;font-weight:600}
.scroll{overflow-x:auto;max-width:100%}
table.matrix td{min-width:56px;font-size:12px;padding:3px 6px}table.matrix th{font-size:12px;font-weight:600}
table.matrix td .ids{font-size:10.5px}
table.matrix tr>th:first-child{max-width:300px;overflow-wrap:anywhere}table.matrix th.g{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;max-height:180px}
table.matrix th.gr{font-weight:500;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px}
table.matrix td a{color:inherit;text-decoration:none;display:block}
td.ok{background:#d4edda}td.fail{background:#f5c2c0}td.error{background:#c9a3e6}td.warn{background:#ffe8a3}
td.known{background:#d6e4f0}td.na{background:#eceff3;color:#6b7280}td.none{background:#fff}
.v{font-weight:600;font-size:11px;text-transform:uppercase;letter-spacing:.03em}
.ids{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px}
.legend span{display:inline-block;padding:2px 8px;margin-right:6px;border:1px solid #d9dde3;font-size:12px}
article.failure{background:#fff;border:1px solid #d9dde3;border-left:5px solid #b3261e;margin:10px 0;padding:8px 12px}
article.failure.warning{border-left-color:#c98a00}article.failure.known{border-left-color:#5b7fa6}
article.failure.error{border-left-color:#7b3fb0}
article h3{font-size:14px;margin:0 0 4px}.chk{margin:6px 0 0}.chk code{font-weight:600}.badge{font-size:11px;padding:1px 6px;border-radius:3px;background:#eef0f4;margin-left:6px}
pre{background:#f3f4f6;padding:8px;overflow-x:auto;font-size:12px;margin:6px 0;white-space:pre-wrap}
.bar{background:#7aa2d6;height:10px;display:inline-block;vertical-align:middle}
.bar.red{background:#d9534f}
img.plot{max-width:100%;background:#fff;border:1px solid #d9dde3;margin:6px 0}
.muted{color:#6b7280}
.tiles.gate .tile{border-width:2px}.tile.new b{color:#b3261e}.tile.known b{color:#3b6491}
.tile.warn b{color:#8a5a00}.tile.stale b{color:#6b4a00}.tile.zero b{color:#1d2330}
.ids .o-fail,.ids .o-error{color:#8f1d17;font-weight:700}.ids .o-known{color:#2f557f}.ids .o-warning{color:#6b4a00}
.ids i{font-style:normal;font-size:9.5px;opacity:.8}
.badge.o-fail{background:#f5c2c0}.badge.o-error{background:#c9a3e6}.badge.o-known{background:#d6e4f0;color:#2f557f}
.badge.o-warning{background:#ffe8a3;color:#6b4a00}
.nx{font-size:10px;font-weight:600;padding:0 4px;margin-left:4px;border-radius:3px;background:#ffe8a3;color:#6b4a00;white-space:nowrap}
"""


def _e(x) -> str:
    return escape(str(x if x is not None else ""))


def _anchor(pass_name: str, graph: str) -> str:
    return "f-" + "".join(c if c.isalnum() else "-" for c in f"{pass_name}--{graph}")


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
        if rows:
            parts.append(f"<h3>{title}</h3><table><tr><th>pass</th><th>graph</th><th>check</th><th>"
                         f"{'reason' if title == 'Stale' else 'message'}</th></tr>")
            parts += [f"<tr><td>{_e(c.get('pass_name'))}</td><td>{_e(c.get('graph'))}</td><td>{_e(c.get('check'))}"
                      f"{'' if title != 'Stale' else ' (now ' + _e(c.get('now')) + ')'}</td><td>"
                      f"{_e((c.get('reason') if title == 'Stale' else None) or c.get('message') or c.get('reason'))}"
                      "</td></tr>" for c in rows]
            parts.append("</table>")
    return "".join(parts)


def _label(name: str, limit: int = 34) -> str:
    """A header that fits: long generated case names keep their head and tail; the title has it all."""
    short = name if len(name) <= limit else name[: limit - 13] + "…" + name[-12:]
    return f'<span title="{_e(name)}">{_e(short)}</span>'


def _blocks(v: reports.View) -> list[tuple[list, list]]:
    """Graphs grouped by the set of passes run on them, so disjoint runs (IR passes on the zoo, a
    Vulkan fusion on its recipe cases) get their own dense tables instead of one mostly empty one."""
    groups: dict[frozenset, list] = {}
    for g in v.graphs:
        groups.setdefault(frozenset(p for p in v.passes if (p, g) in v.cells), []).append(g)
    return [([p for p in v.passes if p in ps], gs) for ps, gs in groups.items() if ps]


def _pass_head(v: reports.View, p: str, limit: int, unexercised: dict) -> str:
    """A pass's header in the matrix; "not exercised" beside it when no case changed its program."""
    r = unexercised.get(p)
    mark = f'<span class="nx" title="{_e(r.get("message"))}">not exercised</span>' if r else ""
    return _label(p, limit) + mark


def _cell(v: reports.View, p: str, g: str) -> str:
    c = v.cells.get((p, g))
    if c is None:
        return '<td class="none"></td>'
    title = "; ".join(f"{r['check']} ({_OUT_LABEL.get(v.outcome(r), r['status'])}): {r.get('message', '')}"[:200]
                      for r in c.records if r["status"] in ("fail", "error"))
    inner = f'<span class="v">{_e(c.verdict)}</span>'
    if c.failing:
        inner += '<div class="ids">' + "<br>".join(
            f'<span class="o-{o}">{_e(x)}</span> <i>{_e(_OUT_TAG.get(o, o))}</i>' for o, x in v.cell_checks(c)) + "</div>"
        inner = f'<a href="#{_anchor(p, g)}">{inner}</a>'
    return f'<td class="{"na" if c.verdict == "n/a" else c.verdict}" title="{_e(title)}">{inner}</td>'


def _matrix(v: reports.View) -> str:
    if not v.cells:
        return '<h2 id="matrix">Pass x graph</h2><p class="muted">No checks ran.</p>'
    legend = ('<p class="legend"><span class="ok" style="background:#d4edda">ok</span>'
              '<span style="background:#f5c2c0">fail (new violation)</span><span style="background:#c9a3e6">error '
              '(harness)</span><span style="background:#ffe8a3">warn (should-level only)</span>'
              '<span style="background:#d6e4f0">known (baselined violation, waived)</span><span style="background:'
              '#eceff3">not applicable</span><span class="nx">not exercised</span> no case changed the pass\'s '
              'program. A cell takes its worst check\'s colour; each failed check id is tagged new, known or warn.</p>')
    ex = reports.exercised(v)
    unexercised = {p: ex[p] for p in reports.not_exercised(v)}
    tables = []
    for passes, graphs in _blocks(v):
        prefix = os.path.commonprefix(graphs) if len(graphs) > 1 else ""
        prefix = prefix[: prefix.rfind("/") + 1]  # shared folder-like part of generated names, said once
        name = {g: g[len(prefix):] for g in graphs}
        corner = f"graph{f' ({_e(prefix)}…)' if prefix else ''}"
        if len(graphs) > len(passes) and (len(graphs) > 12 or max(map(len, name.values())) > 34):
            # long and thin, or long names: graphs down (names readable), passes across
            head = (f"<tr><th>{corner} \\ pass</th>"
                    + "".join(f"<th>{_pass_head(v, p, 34, unexercised)}</th>" for p in passes) + "</tr>")
            rows = [f'<tr><th class="gr">{_label(name[g], 90)}</th>{"".join(_cell(v, p, g) for p in passes)}</tr>'
                    for g in graphs]
        else:
            head = (f"<tr><th>pass \\ {corner}</th>"
                    + "".join(f'<th class="g">{_label(name[g])}</th>' for g in graphs) + "</tr>")
            rows = [f"<tr><th>{_pass_head(v, p, 60, unexercised)}</th>{''.join(_cell(v, p, g) for g in graphs)}</tr>"
                    for p in passes]
        tables.append(f'<div class="scroll"><table class="matrix">{head}{"".join(rows)}</table></div>')
    return (f'<h2 id="matrix">Pass x graph ({len(v.passes)} x {len(v.graphs)})</h2>{legend}'
            + "<br>".join(tables))


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
        rows.append(f'<tr><td>{_e(p)}</td><td class="{cls}">{_e(r["status"])}</td><td>{_e(d.get("cases_changed", ""))} / '
                    f'{_e(d.get("ran", ""))}</td><td>{_e(d.get("ops", ""))}</td><td>{_e(d.get("structure_only", ""))}'
                    f'</td><td>{_e(d.get("metadata_only", ""))}</td><td>{_e(r.get("message"))}</td></tr>')
    missing = len(reports.not_exercised(v))
    return (f'<h2 id="exercised">Exercised: {len(ex) - missing} of {len(ex)} passes changed the program on some case'
            f'</h2><p class="muted">A check can only flag what a graph makes the pass do: a pass no case changed was '
            f'not tested by this run (level {_e(next(iter(ex.values())).get("level"))}).</p><div class="scroll" '
            'style="max-height:420px;overflow-y:auto"><table><tr><th>pass</th><th>exercised</th><th>cases changed / '
            'ran</th><th>ops</th><th>structure only</th><th>metadata only</th><th>message</th></tr>'
            f'{"".join(rows)}</table></div>')


def _failure_entry(v: reports.View, r: dict, report_dir: Optional[Path]) -> str:
    o = v.outcome(r)
    d = r.get("details") or {}
    label = _OUT_LABEL.get(o, o)
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
    if d.get("traceback"):
        body.append(f"<details><summary>traceback</summary><pre>{_e(d['traceback'])}</pre></details>")
    return "".join(body) + "</div>"


def _failures(v: reports.View, h: hl.Headline, report_dir: Optional[Path]) -> str:
    """One article per failing pass x graph (worst first), its failed checks inside: a pass that
    breaks five checks on a graph is one problem to read, not five."""
    if not v.problems:
        return '<h2 id="failures">Failures</h2><p class="muted">None: every check held.</p>'
    by_cell: dict[tuple[str, str], list] = {}
    for r in v.problems:  # already worst first
        by_cell.setdefault((r["pass_name"], r["graph"]), []).append(r)
    worse = f"{h.worsened} worsened, " if h.worsened or h.gated else ""
    out = [f'<h2 id="failures">Failures: {_e(hl.plural(h.new, "new violation"))}, {worse}{h.known} known, '
           f'{_e(hl.plural(h.warnings, "should-level warning"))} ({len(v.problems)} failed checks in {len(by_cell)} '
           "pass x graph cells)</h2>"]
    for (p, g), records in list(by_cell.items())[:MAX_FAILURES]:
        worst = v.outcome(records[0])
        entries = "".join(_failure_entry(v, r, report_dir) for r in records)
        out.append(f'<article class="failure {worst}" id="{_anchor(p, g)}"><h3>{_e(p)} × {_e(reports.graph_label(g))}'
                   f"</h3>{entries}</article>")
    if len(by_cell) > MAX_FAILURES:
        out.append(f'<p class="muted">…and {len(by_cell) - MAX_FAILURES} more cells in results.json.</p>')
    return "".join(out)


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


def render(doc: dict, report_dir: Optional[Path] = None) -> str:
    v = reports.view(doc)
    h = hl.compute(v)
    extra = _extra(doc)
    sections = [_gate(doc, h), _matrix(v), _exercised(v), blind_sections.html(doc), _failures(v, h, report_dir),
                html_tables.timings(v),
                html_tables.coverage(doc),
                *(html for _, _, html in extra), _environment(doc)]
    nav = "".join(f'<a href="#{s}">{t}</a>' for s, t in (
        ("gate", "gate"), ("matrix", "matrix"), ("exercised", "exercised"), ("blind", "judged blind"),
        ("failures", "failures"),
        ("timings", "timings"),
        ("coverage", "op coverage"), *((a, _e(label)) for a, label, _ in extra if a), ("environment", "environment"))
        if f'id="{s}"' in "".join(sections))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width\"><title>passgate report: {_e(h.text())}"
            f"</title><style>{CSS}</style></head><body>{_header(v, h)}<main><nav>{nav}</nav>{_notices(doc)}"
            f"{_tiles(v, h)}"
            f"{''.join(sections)}</main></body></html>\n")


def write(report_dir: Path, doc: dict) -> Path:
    path = Path(report_dir) / FILE
    atomic_write_bytes(path, render(doc, Path(report_dir)).encode())
    return path
