"""report.html's pass x graph matrix: passes down, graphs across, one coloured cell per pair.

At the size of the suite (a few hundred passes x a hundred graphs) a matrix
whose cells spell out verdicts and check ids is a wall, and one with graphs
as rows squeezed every pass name into a column one letter wide. So: one
row per pass (its name readable, sticky at the left, a link to its detail),
the graph names across, slanted and sticky at the top; a matrix wider than
:data:`COMPACT_ABOVE` graphs is *compact* (colour, the count of failed
checks, a fixed layout, rows in chunks the browser lays out only when they
scroll into view: tens of thousands of cells cost the rows on screen), a
smaller one spells each cell out. The filter
bar narrows rows by pass and outcome and columns by graph name or to the
graphs where something failed. The cell's title names each failed check
and what it is (new, known, warning), its link goes to the failure.

Passes and graphs that share no cell (IR passes on the zoo, a Vulkan fusion
on its recipe cases) are separate tables, each dense, rather than one
mostly empty. Nothing here imports torch.
"""

from __future__ import annotations

import os
from html import escape

from harness.report import view as reports
from harness.report.html_summary import anchor, by_pass, tally_flags

__all__ = ["CHUNK_ROWS", "COMPACT_ABOVE", "OUT_LABEL", "OUT_TAG", "blocks", "cell_anchor", "html"]

COMPACT_ABOVE = 24  # graphs: a matrix wider than this is compact
CHUNK_ROWS = 20  # rows of a compact matrix laid out together
ROW_PX = 21  # a compact row's height (html_assets' CSS), what a chunk not laid out yet reserves
# what a failed record is, in words (failure list, cell titles) and as a short tag beside its check id in a cell
OUT_LABEL = {"fail": "new violation", "error": "harness error", "warning": "should-level: warns",
             "known": "known violation (baselined)"}
OUT_TAG = {"fail": "new", "error": "error", "warning": "warn", "known": "known"}


def _e(x) -> str:
    return escape(str(x if x is not None else ""))


def cell_anchor(pass_name: str, graph: str) -> str:
    """The id of one pass x graph's failure article."""
    return "f-" + "".join(c if c.isalnum() else "-" for c in f"{pass_name}--{graph}")


def blocks(v: reports.View) -> list[tuple[list, list]]:
    """(passes, graphs) of each connected part of the run: pairs that share a pass or a graph are one table."""
    parent: dict = {}

    def root(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p, g in v.cells:
        parent[root(("p", p))] = root(("g", g))
    groups: dict = {}
    for p in v.passes:
        if ("p", p) in parent:
            groups.setdefault(root(("p", p)), ([], []))[0].append(p)
    for g in v.graphs:
        if ("g", g) in parent:
            groups.setdefault(root(("g", g)), ([], []))[1].append(g)
    return list(groups.values())


def _label(name: str, limit: int) -> str:
    """A header that fits: long generated case names keep their head and tail; the title has it all."""
    short = name if len(name) <= limit else name[: limit - 13] + "…" + name[-12:]
    return f'<span title="{_e(name)}">{_e(short)}</span>'


def _cell(v: reports.View, p: str, g: str, compact: bool) -> str:
    """A compact cell is its colour, its failed-check count and a title naming them (two elements: at
    the size of the suite the matrix is tens of thousands of cells); a spelled-out one lists the ids."""
    c = v.cells.get((p, g))
    if c is None:
        return "<td></td>" if compact else '<td class="none"></td>'
    cls = "na" if c.verdict == "n/a" else c.verdict
    if not c.failing:
        return f'<td class="{cls}"></td>'
    checks = v.cell_checks(c)
    if compact:
        title = "; ".join(f"{x} {OUT_TAG.get(o, o)}" for o, x in checks)
        return f'<td class="{cls}" title="{_e(title)}"><a href="#{cell_anchor(p, g)}">{len(checks)}</a></td>'
    title = "; ".join(f"{x} ({OUT_LABEL.get(o, o)})" for o, x in checks)
    ids = "<br>".join(f'<span class="o-{o}">{_e(x)}</span> <i>{_e(OUT_TAG.get(o, o))}</i>' for o, x in checks)
    return (f'<td class="{cls}" title="{_e(title)}"><a href="#{cell_anchor(p, g)}">'
            f'<span class="v">{_e(c.verdict)}</span><div class="ids">{ids}</div></a></td>')


def _table(v: reports.View, n: int, passes: list, graphs: list, flags: dict, unexercised: dict) -> str:
    compact = len(graphs) > COMPACT_ABOVE
    prefix = os.path.commonprefix(graphs) if len(graphs) > 1 else ""
    prefix = prefix[: prefix.rfind("/") + 1]  # shared folder-like part of generated names, said once
    corner = f"<div class=pn>pass \\ graph{f' ({_e(prefix)}…)' if prefix else ''}</div>"
    head = (f"<thead><tr><th>{corner}</th>"
            + "".join(f'<th class="g" data-g="{_e(g.lower())}"><div>{_label(g[len(prefix):], 32)}</div></th>'
                      for g in graphs) + "</tr></thead>")
    rows = []
    for p in passes:
        r = unexercised.get(p)
        mark = f'<span class="nx" title="{_e(r.get("message"))}">not exercised</span>' if r else ""
        rows.append(f'<tr data-p="{_e(p.lower())}" data-f="{flags[p]}"><th><div class=pn><a href="#{anchor(p)}">'
                    f'{_label(p, 60)}</a>{mark}</div></th>{"".join(_cell(v, p, g, compact) for g in graphs)}</tr>')
    if not compact:
        return f'<div class="mbox" id="m{n}"><table class="matrix">{head}<tbody>{"".join(rows)}</tbody></table></div>'
    return f'<div class="mbox" id="m{n}">{"".join(_chunks(head, rows))}</div>'


def _chunks(head: str, rows: list) -> list[str]:
    """A compact matrix as a sticky header table and tables of :data:`CHUNK_ROWS` rows, each in a
    ``content-visibility:auto`` box: the browser lays out the rows in view, not tens of thousands of cells
    at once. Every cell's width is fixed by the CSS (a pass name is cut to its box), so the tables'
    columns align, and a hidden graph column takes its width away in every table."""
    table = '<table class="matrix compact">'
    out = [f'<div class="mhead">{table}{head}</table></div>']
    for i in range(0, len(rows), CHUNK_ROWS):
        part = rows[i:i + CHUNK_ROWS]
        out.append(f'<div class="mchunk" style="contain-intrinsic-size:auto {ROW_PX * len(part)}px">{table}<tbody>'
                   f'{"".join(part)}</tbody></table></div>')
    return out


_LEGEND = ('<p class="legend"><span style="background:#d4edda">ok</span>'
           '<span style="background:#f5c2c0">fail (new violation)</span><span style="background:#c9a3e6">error '
           '(harness)</span><span style="background:#ffe8a3">warn (should-level only)</span>'
           '<span style="background:#d6e4f0">known (baselined violation, waived)</span><span style="background:'
           '#eceff3">not applicable</span><span class="nx">not exercised</span> no case changed the pass\'s '
           "program. A cell takes its worst check's colour; a compact cell shows how many checks failed, its "
           "title names them (new, known or warn), a click opens the failure.</p>")


def html(v: reports.View) -> str:
    """The matrix section (``<h2 id="matrix">``): one table per connected part of the run."""
    if not v.cells:
        return '<h2 id="matrix">Pass x graph</h2><p class="muted">No checks ran.</p>'
    ex = reports.exercised(v)
    unexercised = {p: ex[p] for p in reports.not_exercised(v)}
    flags = {p: tally_flags(t, p in unexercised) for p, t in by_pass(v).items()}
    tables = [_table(v, n, passes, graphs, flags, unexercised) for n, (passes, graphs) in enumerate(blocks(v))]
    return f'<h2 id="matrix">Pass x graph ({len(v.passes)} x {len(v.graphs)})</h2>{_LEGEND}{"".join(tables)}'
