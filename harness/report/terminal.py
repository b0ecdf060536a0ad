"""What a run prints when it ends: the pass x graph table with each failure's reason, the counts, the headline.

A developer reads the terminal before any file. ``FAIL numerics`` alone sent
them to results.json to learn that the error was 0.454 against a tolerance
of 1e-4, and ``FAIL runs`` hid the exception a crashing pass raised; a count
line that left the n/a records out did not add up. So each failing pair
gets one indented line per failed check, the first line of its message,
marked by what it is (``[must]`` a new violation, ``[should]`` a should-level
failure, a warning unless --strict makes it gate,
``[known]`` a baselined violation, ``[worsened]`` a baselined violation
that got worse than its entry records, so it gates, ``[error]`` passgate itself failed); the
counts name every status (they add up to the total); the headline is
:mod:`harness.report.headline`'s, the same sentence summary.md, report.html
and junit.xml state; and the last line names the report files to open.

Works on results.json records (dicts), so a run, a merged report and a test
render the same lines. Nothing here imports torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional

from harness.core.results import PASS_LEVEL
from harness.report import headline as hl
from harness.report import view as reports

__all__ = ["MAX_REASON", "TAG", "closing", "pair_reasons", "reason_lines", "render", "table"]

MAX_REASON = 240
TAG = {"fail": "[must]", "error": "[error]", "warning": "[should]", "known": "[known]"}
_SUFFIX = {"warning": " (warns; gates only with --strict)", "known": " (baselined, waived)",
           "error": " (passgate itself failed)"}
_VERDICT = {"fail": "FAIL", "error": "ERROR", "warn": "warn", "known": "known", "ok": "ok", "n/a": "n/a"}


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in str(text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 1] + "…"


def reason_lines(v: reports.View, records: Iterable[dict], indent: str = "    ") -> list[str]:
    """One line per failed check of a pair, worst first: its tag, its id and the first line of its message.

    ``[must]`` marks a new (gating) must-level violation; a should-level check
    that gates because of --strict keeps its ``[should]`` tag, with "gates: --strict".
    """
    return pair_reasons(records, v.strict, v.known, indent, v.worsened)


def pair_reasons(records: Iterable[dict], strict: bool = False, known=frozenset(), indent: str = "    ",
                 worsened: Optional[dict] = None) -> list[str]:
    """:func:`reason_lines` without a document: for a run's progress lines, as each pair finishes."""
    bad = sorted((r for r in records if r["status"] in ("fail", "error")),
                 key=lambda r: (reports.OUTCOMES.index(reports.outcome(r, strict, known)), r.get("level") != "must",
                                r["check"]))
    out = []
    for r in bad:
        o = reports.outcome(r, strict, known)
        why = _first_line(r.get("message")) or r["status"]
        tag, suffix = TAG.get(o, f"[{o}]"), _SUFFIX.get(o, "")
        if o == "fail" and r.get("level") == "should":  # gating only because of --strict: say so
            tag, suffix = "[should]", " (gates: --strict)"
        if o in ("fail", "error") and worsened and reports.key(r) in worsened:
            tag, suffix = "[worsened]", f" (baselined, but worse: {worsened[reports.key(r)] or 'see the gate'})"
        out.append(f"{indent}{tag:<8} {r['check']}: {why}{suffix}")
    return out


def _pair_verdict(v: reports.View, records: list) -> str:
    outs = [v.outcome(r) for r in records]
    if outs and all(o == "not_applicable" for o in outs):
        return "n/a"
    worst = min(outs, key=reports.OUTCOMES.index) if outs else "pass"
    return _VERDICT[reports.CELL_VERDICT[worst]]


def table(doc: dict) -> str:
    """pass x graph, one line each (failing check ids and op changes), each failure's reason indented below."""
    v = reports.view(doc)
    pairs: dict[tuple[str, str], list] = {}
    for r in doc.get("results", ()):
        pairs.setdefault((r["pass_name"], r["graph"]), []).append(r)
    if not pairs:
        return "(no checks ran)"
    pw = max(len("pass"), *(len(p) for p, _ in pairs))
    gw = max(len("graph"), *(len(g) for _, g in pairs))
    lines = [f"{'pass':<{pw}}  {'graph':<{gw}}  verdict  failing checks / changes"]
    for (p, g), rs in pairs.items():
        failing = ", ".join(sorted({r["check"] for r in rs if r["status"] in ("fail", "error")}))
        runs = next((r for r in rs if r["check"] == "runs" and r["status"] == "pass"), None)
        changed = f"[{runs['message']}]" if runs is not None and (runs.get("details") or {}).get("ops_changed") else ""
        verdict = _pair_verdict(v, rs)
        if g == PASS_LEVEL and not failing:  # the pass over all its cases: reason lines say why when it failed
            skipped = [r for r in rs if r["status"] == "skip"]
            verdict, changed = ("skip", f"{skipped[0]['check']}: {_first_line(skipped[0].get('message'))}") \
                if skipped and len(skipped) == len(rs) else (verdict, "")
        lines.append(f"{p:<{pw}}  {g:<{gw}}  {verdict:<7}  "
                     f"{' '.join(x for x in (failing, changed) if x)}".rstrip())
        lines += reason_lines(v, rs)
    return "\n".join(lines)


def closing(doc: dict, report_dir: Optional[Path] = None) -> list[str]:
    """The counts (every status), the headline, and where the reports are."""
    h = hl.compute(doc)
    lines = [f"passgate: {h.counts()} ({h.scope()})", f"passgate: {h.text()}"]
    if report_dir is not None:
        d = Path(report_dir)
        names = [n for n in ("report.html", "summary.md", "junit.xml", "results.json") if (d / n).exists()]
        if names:
            lines.append(f"passgate: report: {d / names[0]}"
                         + (f" ({', '.join(names[1:])} beside it)" if len(names) > 1 else ""))
    return lines


def render(doc: dict, report_dir: Optional[Path] = None, with_table: bool = True) -> str:
    return "\n".join(([table(doc)] if with_table else []) + closing(doc, report_dir))
