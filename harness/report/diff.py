"""``passgate report diff OLD NEW``: what changed between two runs, as a gate sees it.

Records are matched by (pass, graph, check). Each side is judged by its own
rules (its ``--strict`` and its known violations, see :mod:`harness.report.view`)
unless ``strict`` forces both:

- regression: a violation in NEW that was not one in OLD (also a pair OLD
  never ran: a new graph that breaks a pass is a new violation);
- fixed: a violation in OLD whose check holds in NEW;
- unchanged: a violation in both;
- gone: a violation in OLD that NEW did not check at all (not proof of a fix).

The result converts to the ``gate`` section of results.json
(:meth:`Diff.gate`), the shape the Markdown and HTML reports render.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from harness.report import view as reports

__all__ = ["Diff", "change", "diff"]


def change(r: dict) -> dict:
    """A gate entry, keyed like the baseline gate's (``pass``, not ``pass_name``)."""
    return {"pass": r["pass_name"], "graph": r["graph"], "check": r["check"],
            "status": r["status"], "message": r.get("message", "")}


@dataclass
class Diff:
    old_label: str
    new_label: str
    regressions: list = field(default_factory=list)  # NEW records
    fixed: list = field(default_factory=list)  # OLD records
    unchanged: list = field(default_factory=list)  # NEW records
    gone: list = field(default_factory=list)  # OLD records

    def gate(self) -> dict:
        """The ``gate`` section of results.json: what summary.md and report.html show."""
        return {"baseline": self.old_label, "regressions": [change(r) for r in self.regressions],
                "fixed": [change(r) for r in self.fixed], "unchanged": [change(r) for r in self.unchanged]}

    def text(self) -> str:
        lines = [f"passgate: {self.old_label} -> {self.new_label}: {len(self.regressions)} regression(s), "
                 f"{len(self.fixed)} fixed, {len(self.unchanged)} unchanged failure(s)"
                 + (f", {len(self.gone)} no longer checked" if self.gone else "")]
        for title, rows in (("regression", self.regressions), ("fixed", self.fixed),
                            ("unchanged", self.unchanged), ("gone", self.gone)):
            for r in rows:
                msg = " ".join(str(r.get("message") or "").split())
                lines.append(f"  {title:<10}  {r['pass_name']} x {r['graph']}: {r['check']}"
                             + (f"  ({msg[:140]})" if msg else ""))
        return "\n".join(lines)


def diff(old: dict, new: dict, strict: Optional[bool] = None, old_label: str = "OLD", new_label: str = "NEW") -> Diff:
    s_old = reports.is_strict(old) if strict is None else strict
    s_new = reports.is_strict(new) if strict is None else strict
    k_old, k_new = reports.known_set(old), reports.known_set(new)
    before = {reports.key(r): r for r in old.get("results", ())}
    after = {reports.key(r): r for r in new.get("results", ())}
    d = Diff(old_label, new_label)
    for k, r in after.items():
        bad_now = reports.is_violation(r, s_new, k_new)
        was = before.get(k)
        bad_before = was is not None and reports.is_violation(was, s_old, k_old)
        if bad_now and bad_before:
            d.unchanged.append(r)
        elif bad_now:
            d.regressions.append(r)
        elif bad_before and r["status"] in ("pass", "not_applicable"):
            d.fixed.append(was)
        elif bad_before:  # now skipped (or only a warning): not shown to hold
            d.gone.append(was)
    d.gone += [r for k, r in before.items() if k not in after and reports.is_violation(r, s_old, k_old)]
    return d
