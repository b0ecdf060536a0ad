"""report.html's lead: per pass and per check, how many new, worsened, known, warnings; what was not exercised.

At the size of the suite (a few hundred passes x a hundred graphs, some
230,000 records) the first question is which passes and which checks to
look at, not which cell is red. So the page opens with two sortable tables
counting each failed record once, the way :mod:`harness.report.headline`
counts it (new, harness errors among them, worsened, known, warning), so
their totals are the headline's numbers; a pass's name links to its
collapsed detail. "Not exercised" is, for a pass, its pass-level
``exercised`` verdict (no case made it change the program); for a check,
the passes on which it judged no case (every record skip or n/a): in both
a green that says nothing. Nothing here imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from harness.report import view as reports

__all__ = ["Tally", "anchor", "by_check", "by_pass", "html", "tally_flags"]


@dataclass
class Tally:
    """What one pass's (or one check's) records add up to."""

    name: str
    records: int = 0
    new: int = 0  # gating and in no baseline: harness errors included, as the headline counts them
    errors: int = 0  # of new: passgate itself failed
    worsened: int = 0
    known: int = 0
    warnings: int = 0
    judged: int = 0  # pass or fail: the check said something
    cells: set = field(default_factory=set)  # graphs (per pass) or passes (per check) it ran on
    judged_on: set = field(default_factory=set)  # of those, where it judged at least one record
    checks: dict = field(default_factory=dict)  # (per pass) failed check id -> its worst outcome


def anchor(pass_name: str) -> str:
    """The id of a pass's detail: what the summary and the matrix link to."""
    return "p-" + "".join(c if c.isalnum() else "-" for c in pass_name)


def _classify(t: Tally, v: reports.View, r: dict) -> None:
    """Count one failed or errored record as the headline does: worsened, new (errors among them), known, warning."""
    o = v.outcome(r)
    if o in ("fail", "error") and reports.key(r) in v.worsened:
        t.worsened += 1
    elif o in ("fail", "error"):
        t.new += 1
        t.errors += o == "error"
    elif o == "known":
        t.known += 1
    elif o == "warning":
        t.warnings += 1


_JUDGED = ("pass", "fail")


def by_pass(v: reports.View) -> dict[str, Tally]:
    """pass -> its tally, in the order the run visited the passes (pass-level records included); computed
    once per view (the summary, the matrix and the details all read it)."""
    if "tally_by_pass" not in v.derived:
        v.derived["tally_by_pass"] = _by_pass(v)
    return v.derived["tally_by_pass"]


def _by_pass(v: reports.View) -> dict[str, Tally]:
    out = {p: Tally(p) for p in v.passes}
    for (p, g), cell in v.cells.items():
        t = out[p]
        t.cells.add(g)
        t.records += len(cell.records)
        t.judged += sum(r["status"] in _JUDGED for r in cell.records)
    for p, records in v.pass_level.items():
        out[p].records += len(records)
        out[p].judged += sum(r["status"] in _JUDGED for r in records)
    for r in v.problems:  # the few failed records: each classified once (walking every record costs seconds)
        t = out[r["pass_name"]]
        _classify(t, v, r)
        o = v.outcome(r)
        if reports.OUTCOMES.index(o) < reports.OUTCOMES.index(t.checks.get(r["check"], "pass")):
            t.checks[r["check"]] = o
    return out


def by_check(v: reports.View) -> dict[str, Tally]:
    """check id -> its tally, sorted by id."""
    statuses: dict[tuple, int] = {}
    ran, judged = set(), set()
    for r in v.doc.get("results", ()):
        k = (r["check"], r["status"])
        statuses[k] = statuses.get(k, 0) + 1
        ran.add((r["check"], r["pass_name"]))
        if r["status"] != "skip" and r["status"] != "not_applicable":
            judged.add((r["check"], r["pass_name"]))
    out: dict[str, Tally] = {}
    for (c, status), n in statuses.items():
        t = out.setdefault(c, Tally(c))
        t.records += n
        t.judged += n if status in _JUDGED else 0
    for c, p in ran:
        out[c].cells.add(p)
    for c, p in judged:
        out[c].judged_on.add(p)
    for r in v.problems:
        _classify(out[r["check"]], v, r)
    return dict(sorted(out.items()))


def tally_flags(t: Tally, unexercised: bool) -> str:
    """The filter bar's outcome flags of a pass (see :data:`harness.report.html_assets.JS`)."""
    return "".join(f for f, n in (("n", t.new - t.errors), ("e", t.errors), ("w", t.worsened), ("k", t.known),
                                  ("a", t.warnings), ("x", unexercised)) if n)


def _e(x) -> str:
    return escape(str(x if x is not None else ""))


def _num(n: int, cls: str = "", shown: str = "") -> str:
    return (f'<td class="n{" z" if not n else ""}{" " + cls if n and cls else ""}" data-v="{n}">'
            f'{f"<b>{shown or n}</b>" if n and cls else (shown or n)}</td>')


_HEAD = ("new", "worsened", "known", "warnings")
_HEAD_TITLE = {"new": "gating failures no baseline records (harness errors included, as the headline counts them)",
               "worsened": "baselined violations that got worse than their entry: they gate",
               "known": "violations the baseline or the suite records: waived",
               "warnings": "should-level fails; gate only with --strict"}


def _th(label: str, title: str = "", num: bool = True) -> str:
    return f'<th{" class=n" if num else ""} title="{_e(title)}">{_e(label)}</th>'


def _counts(t: Tally) -> str:
    new = f"{t.new} ({t.errors} error{'s' if t.errors != 1 else ''})" if t.errors else ""
    return (_num(t.new, "new", new) + _num(t.worsened, "new") + _num(t.known, "known") + _num(t.warnings, "warn"))


def _pass_table(v: reports.View, tallies: dict[str, Tally]) -> str:
    ex = reports.exercised(v)
    rows = []
    for p, t in tallies.items():
        r = ex.get(p)
        d = (r or {}).get("details") or {}
        nx = bool(r and r["status"] == "fail")
        exer = ("not exercised" if nx else f"{d.get('cases_changed', '?')} / {d.get('ran', '?')}") if r else "-"
        exv = -1 if nx else (d.get("cases_changed") if isinstance(d.get("cases_changed"), int) else "")
        checks = ", ".join(f'<span class="o-{o}">{_e(c)}</span>' for c, o in sorted(t.checks.items()))
        rows.append(f'<tr data-p="{_e(p.lower())}" data-f="{tally_flags(t, nx)}"><td><a href="#{anchor(p)}">{_e(p)}'
                    f"</a></td>{_num(len(t.cells))}{_counts(t)}"
                    f'<td class="n{" warn" if nx else ""}" data-v="{exv}">{_e(exer)}</td>'
                    f'<td class="ids">{checks}</td></tr>')
    total = Tally("total")
    for t in tallies.values():
        for k in ("new", "errors", "worsened", "known", "warnings"):
            setattr(total, k, getattr(total, k) + getattr(t, k))
    unexercised = len(reports.not_exercised(v))
    head = ("<tr>" + _th("pass", "click a column to sort; a name opens its detail", False)
            + _th("graphs", "graphs it ran on") + "".join(_th(h, _HEAD_TITLE[h]) for h in _HEAD)
            + _th("exercised", "cases that changed the program / cases run; not exercised: none did")
            + _th("failed checks", "check ids that failed, coloured by their worst outcome", False) + "</tr>")
    foot = (f"<tr><td>{len(tallies)} passes</td><td></td>{_counts(total)}<td class=n>{unexercised} not exercised"
            "</td><td></td></tr>")
    return (f'<div class="sumbox"><table class="sum sortable" id="sum-pass"><thead>{head}</thead>'
            f'<tbody>{"".join(rows)}</tbody><tfoot>{foot}</tfoot></table></div>')


def _check_table(tallies: dict[str, Tally]) -> str:
    rows = []
    for c, t in tallies.items():
        blind = len(t.cells - t.judged_on)
        rows.append(f"<tr><td><code>{_e(c)}</code></td>{_num(t.records)}{_counts(t)}{_num(t.judged)}"
                    f"{_num(t.records - t.judged - t.errors)}{_num(blind, 'warn')}</tr>")
    head = ("<tr>" + _th("check", "", False) + _th("records") + "".join(_th(h, _HEAD_TITLE[h]) for h in _HEAD)
            + _th("judged", "records that passed or failed") + _th("skip / n/a", "records that judged nothing")
            + _th("not exercised", "passes that ran this check on cases and on none did it judge (every record "
                  "skip or n/a): its green says nothing about them") + "</tr>")
    return (f'<div class="sumbox"><table class="sum sortable" id="sum-check"><thead>{head}</thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def html(v: reports.View) -> str:
    """The summary section (``<h2 id="summary">``): per pass, then per check; "" when no check ran."""
    if not v.doc.get("results"):
        return ""
    passes = by_pass(v)
    flagged = sum(1 for t in passes.values() if t.new or t.worsened)
    return (f'<h2 id="summary">Summary: {flagged} of {len(passes)} passes with new or worsened violations</h2>'
            '<p class="muted">Each failed check counted once, as the headline counts it. Click a column to sort, a '
            "pass to open its detail; the filter bar above narrows this table, the matrix and the details.</p>"
            f'<div class="sumgrid"><div><h3>Per pass</h3>{_pass_table(v, passes)}</div>'
            f"<div><h3>Per check</h3>{_check_table(by_check(v))}</div></div>")
