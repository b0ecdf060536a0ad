"""The "Judged blind" section of summary.md and report.html, and the ``blind`` key of results.json.

Kept apart from the renderers so each of them gains one call, not a section of
its own to maintain: summary.md and report.html show the same few lines (the
counts, then the first :data:`TOP` flagged entries with the check that blocked
their numerics and a count of the rest), computed by
:func:`harness.report.blind.compute` from the document's own records, with the
document's recorded known violations (its ``gate.known``, the suite's
``known_violations``) counted as known. Nothing here imports torch.
"""

from __future__ import annotations

from html import escape

from harness.report import blind

__all__ = ["TOP", "document_key", "html", "markdown"]

TOP = 10
_TITLE = "Judged blind: entries whose numerics no case could judge"


def _report(doc: dict) -> blind.BlindReport:
    return blind.compute(doc)


def _counts(r: blind.BlindReport) -> str:
    t = r.totals()
    by = ", ".join(f"{b} {n}" for b, n in t["blockers"].items()) or "none"
    return (f"{t['blind']} of {t['entries']} entries judged on no case, {t['few']} more on at most {r.few}; "
            f"numerics blocked on {t['cases_blocked']} cases (by {by}), judged on {t['cases_judged']}, "
            f"not applicable on {t['cases_not_applicable']}")


def _md(text, limit: int = 140) -> str:
    s = " ".join(str(text or "").split())
    s = s if len(s) <= limit else s[: limit - 1] + "…"
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def markdown(doc: dict) -> list[str]:
    """summary.md's lines: nothing when no record judged numerics or was kept from it."""
    r = _report(doc)
    if not r.entries:
        return []
    out = [f"### {_TITLE}: {len(r.blind)}", "", _counts(r) + " (the list: `blind.json`).", ""]
    if r.flagged:
        out += ["| entry | judged | blocked | n/a | blocked by | known | first message |", "|---|---|---|---|---|---|---|"]
        for e in r.flagged[:TOP]:
            c = e.first
            out.append(f"| `{_md(e.pass_name, 80)}`{' (few)' if e.flag == 'few' else ''} | {e.judged} | {e.blocked} | "
                       f"{e.not_applicable} | `{c.blocker}` | {'yes' if c.known else 'no'} | {_md(c.message)} |")
        if len(r.flagged) > TOP:
            out.append(f"\n…and {len(r.flagged) - TOP} more (see blind.json / results.json)")
        out.append("")
    return out


def html(doc: dict) -> str:
    """report.html's section (its ``<h2 id="blind">``), "" when no record judged numerics or was kept from it."""
    r = _report(doc)
    if not r.entries:
        return ""
    parts = [f'<h2 id="blind">{_TITLE}: {len(r.blind)}</h2><p class="muted">{escape(_counts(r))}. A check that needs '
             "the result to run (runnable, val_matches_execution, numerics) is skipped where the pass did not run or "
             "its result did not: such an entry is green on numerics without numerics having been judged. The list: "
             "<code>blind.json</code>.</p>"]
    if r.flagged:
        parts.append("<table><tr><th>entry</th><th>judged</th><th>blocked</th><th>n/a</th><th>blocked by</th>"
                     "<th>known</th><th>first message</th></tr>")
        for e in r.flagged[:TOP]:
            c = e.first
            parts.append(f'<tr><td>{escape(e.pass_name)}{" <i>(few)</i>" if e.flag == "few" else ""}</td>'
                         f'<td class="{"fail" if not e.judged else "warn"}">{e.judged}</td><td>{e.blocked}</td>'
                         f"<td>{e.not_applicable}</td><td><code>{escape(c.blocker)}</code></td>"
                         f'<td title="{escape(c.reason)}">{"yes" if c.known else "no"}</td><td>{escape(c.message)}</td>'
                         "</tr>")
        parts.append("</table>")
        if len(r.flagged) > TOP:
            parts.append(f'<p class="muted">…and {len(r.flagged) - TOP} more in blind.json.</p>')
    return "".join(parts)


def document_key(doc: dict) -> dict:
    """results.json's ``blind`` key: the whole report as :meth:`BlindReport.to_json` gives it."""
    return _report(doc).to_json()
