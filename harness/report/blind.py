"""Judged blind: the entries whose numerics no case could judge, and what blocked them.

Why: the checks that need the pass's result to execute (``runnable``,
``val_matches_execution``, ``numerics``) are skipped on a case where the pass
did not run (``runs`` failed) or its result did not run (``runnable`` failed):
nothing was compared there. When that happens on every case of an entry, often
for a known violation the baseline waives, the entry reads green on numerics
without numerics ever having been judged. This module finds those entries in a
results document:

- per pass x case, which execution checks were not judged and the check that
  blocked them (its status, first message line, and whether the baseline or the
  suite records it as known, with the recorded reason);
- per entry, on how many cases numerics was judged (pass or fail), blocked,
  not applicable (the pass is declared meaning-changing, or not applicable to
  the case), or left unjudged for another reason (a skip no failing check
  explains, a harness error); a declaration holds for every case of the entry,
  so where a meaning-changing pass did not run its numerics is not applicable
  either, not blocked;
- entries judged on no case while blocked on some (``blind``), and on at most
  ``few`` cases while blocked on others (``few``).

A blocker is found from the records of the cell, never from message text alone:
``runs`` failed or errored blocks every execution check; ``runnable`` failed,
errored or skipped blocks the other two; a skip naming ``(see CHECK)`` whose
record in the cell did not pass is blocked by that check (a Vulkan fused
program). Nothing here imports torch.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from harness.core.io import atomic_write_bytes
from harness.report import view as reports

__all__ = ["BLIND_FILE", "DEFAULT_FEW", "EXECUTION_CHECKS", "SCHEMA", "BlindReport", "BlockedCase", "EntryBlind",
           "compute", "known_reasons", "targets", "write"]

BLIND_FILE = "blind.json"
SCHEMA = "passgate-blind"
DEFAULT_FEW = 2
EXECUTION_CHECKS = ("runnable", "val_matches_execution", "numerics")
_MEANING_CHANGING = "meaning-changing"  # the runner's skip: "the pass is declared meaning-changing"
_SEE = re.compile(r"\(see (\w+)\)")
_BLOCKING = ("fail", "error")


@dataclass
class BlockedCase:
    """One pass x case whose execution checks ``checks`` were not judged because ``blocker`` did not hold."""

    graph: str
    checks: list
    blocker: str
    status: str  # the blocker's status: fail, error, or skip (runnable skipped after prerequisites)
    message: str  # its first line
    known: bool = False
    reason: str = ""  # the baseline's (or the suite's) reason when known


@dataclass
class EntryBlind:
    """How one entry's numerics fared over its cases."""

    pass_name: str
    cases: int = 0  # cases with a numerics record
    judged: int = 0
    blocked: int = 0
    not_applicable: int = 0
    other: int = 0  # skipped with no failing check to explain it, or a harness error
    unjudged: dict = field(default_factory=dict)  # execution check -> cases it was blocked on
    blockers: dict = field(default_factory=dict)  # blocking check -> cases it blocked
    blocked_cases: list = field(default_factory=list)  # BlockedCase, in report order
    flag: str = ""  # "blind" | "few" | ""
    meaning_changing: bool = False  # a case skipped numerics as the pass is declared meaning-changing

    @property
    def first(self) -> Optional[BlockedCase]:
        """The blocked case of the most frequent blocker that comes first: what the entry's row names."""
        if not self.blockers:
            return self.blocked_cases[0] if self.blocked_cases else None
        top = max(self.blockers, key=lambda b: (self.blockers[b], b == "runs"))
        return next(c for c in self.blocked_cases if c.blocker == top)

    def to_json(self) -> dict:
        d = asdict(self)
        d["pass"] = d.pop("pass_name")
        return d


@dataclass
class BlindReport:
    few: int
    entries: list  # EntryBlind of every entry with a numerics record, in report order

    @property
    def blind(self) -> list:
        return [e for e in self.entries if e.flag == "blind"]

    @property
    def few_judged(self) -> list:
        return [e for e in self.entries if e.flag == "few"]

    @property
    def flagged(self) -> list:
        return self.blind + self.few_judged

    def blocker_counts(self) -> dict:
        """blocking check -> how many cases (over every entry) it left numerics unjudged on."""
        out: dict[str, int] = {}
        for e in self.entries:
            for c in e.blocked_cases:
                if "numerics" in c.checks:
                    out[c.blocker] = out.get(c.blocker, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    def totals(self) -> dict:
        return {"entries": len(self.entries), "blind": len(self.blind), "few": len(self.few_judged),
                "cases_judged": sum(e.judged for e in self.entries),
                "cases_blocked": sum(e.blocked for e in self.entries),
                "cases_not_applicable": sum(e.not_applicable for e in self.entries),
                "cases_other": sum(e.other for e in self.entries), "blockers": self.blocker_counts()}

    def to_json(self) -> dict:
        return {"few": self.few, "totals": self.totals(), "blind": [e.pass_name for e in self.blind],
                "few_judged": [e.pass_name for e in self.few_judged], "entries": [e.to_json() for e in self.entries]}

    def text(self, limit: Optional[int] = None) -> str:
        """The table ``passgate report blind`` prints: the headline, then one row per flagged entry."""
        t = self.totals()
        lines = [f"passgate: judged blind: {t['blind']} of {t['entries']} entries judged numerics on no case, "
                 f"{t['few']} on at most {self.few}; numerics blocked on {t['cases_blocked']} cases ("
                 + (", ".join(f"{b} {n}" for b, n in t["blockers"].items()) or "none") + ")"]
        rows = self.flagged[:limit]
        if rows:
            width = max(len(e.pass_name) for e in rows)
            lines.append(f"{'entry':<{width}}  flag   judged  blocked  n/a  blocker         known  first message")
            for e in rows:
                c = e.first
                lines.append(f"{e.pass_name:<{width}}  {e.flag:<5}  {e.judged:>6}  {e.blocked:>7}  "
                             f"{e.not_applicable:>3}  {c.blocker:<14}  {'yes' if c.known else 'no':<5}  {c.message}")
        if limit is not None and len(self.flagged) > limit:
            lines.append(f"...and {len(self.flagged) - limit} more")
        return "\n".join(lines)


def _first_line(text) -> str:
    s = str(text or "").strip()
    return s.splitlines()[0][:300] if s else ""


def known_reasons(doc: dict, baseline=None) -> dict:
    """(pass, graph, check) -> reason of every violation recorded as known: the suite's ``known_violations``,
    the document's ``gate.known``, and ``baseline`` (a :class:`harness.report.baseline.Baseline`) when given."""
    out = {}
    for k in list(doc.get("known_violations") or ()) + list((doc.get("gate") or {}).get("known") or ()):
        out[(reports.pass_of(k), k.get("graph"), k.get("check"))] = str(k.get("reason") or "")
    for e in (baseline.entries if baseline is not None else ()):
        out[e.key] = e.reason
    return out


def _blocker(check: str, record: dict, by_check: dict) -> Optional[dict]:
    """The record of the check that left ``record`` (a skipped execution check) unjudged, or None."""
    runs = by_check.get("runs")
    if runs is not None and runs["status"] in _BLOCKING:
        return runs
    runnable = by_check.get("runnable")
    if check != "runnable" and runnable is not None and runnable["status"] in (*_BLOCKING, "skip"):
        return runnable
    m = _SEE.search(record.get("message") or "")
    named = by_check.get(m.group(1)) if m else None
    return named if named is not None and named["status"] in (*_BLOCKING, "skip") else None


def _numerics_kind(record: Optional[dict], blocked: bool) -> Optional[str]:
    """judged | blocked | not_applicable | other, for the cell's numerics record (None: it has none)."""
    if record is None:
        return None
    status = record["status"]
    if status in ("pass", "fail"):
        return "judged"
    if status == "not_applicable" or (status == "skip" and _MEANING_CHANGING in (record.get("message") or "")):
        return "not_applicable"
    return "blocked" if blocked else "other"


def _cell(entry: EntryBlind, cell: reports.Cell, known: dict) -> None:
    """Add one pass x case to ``entry``."""
    by_check = {r["check"]: r for r in cell.records}
    groups: dict[str, BlockedCase] = {}
    for check in EXECUTION_CHECKS:
        r = by_check.get(check)
        if r is None or r["status"] != "skip" or _MEANING_CHANGING in (r.get("message") or ""):
            continue
        b = _blocker(check, r, by_check)
        if b is None:
            continue
        if b["check"] not in groups:
            k = (cell.pass_name, cell.graph, b["check"])
            groups[b["check"]] = BlockedCase(cell.graph, [], b["check"], b["status"], _first_line(b.get("message")),
                                             k in known, known.get(k, ""))
        groups[b["check"]].checks.append(check)
        entry.unjudged[check] = entry.unjudged.get(check, 0) + 1
    kind = _numerics_kind(by_check.get("numerics"), any("numerics" in g.checks for g in groups.values()))
    if kind == "not_applicable" and _MEANING_CHANGING in (by_check["numerics"].get("message") or ""):
        entry.meaning_changing = True
    if kind is not None:
        entry.cases += 1
        setattr(entry, kind, getattr(entry, kind) + 1)
    for g in groups.values():
        entry.blocked_cases.append(g)
        if "numerics" in g.checks:
            entry.blockers[g.blocker] = entry.blockers.get(g.blocker, 0) + 1


def _numerics_never_apply(entry: EntryBlind) -> None:
    """A pass is declared meaning-changing for all its cases (a pipeline step by its own declaration, else by
    its pipeline's): where it did not run, numerics would not have applied either, so those cases are
    not_applicable, not blocked, and no graph could make the entry judged."""
    entry.not_applicable += entry.blocked
    entry.blocked = 0
    entry.blockers = {}
    entry.unjudged.pop("numerics", None)
    for c in entry.blocked_cases:
        if "numerics" in c.checks:
            c.checks.remove("numerics")


def compute(doc: dict, baseline=None, few: int = DEFAULT_FEW) -> BlindReport:
    """The blind report of a results document (``baseline``: a loaded Baseline whose entries count as known)."""
    v = reports.view(doc)
    known = known_reasons(doc, baseline)
    entries: dict[str, EntryBlind] = {}
    for (p, _), cell in v.cells.items():
        _cell(entries.setdefault(p, EntryBlind(p)), cell, known)
    out = [e for p in v.passes if (e := entries.get(p)) is not None and e.cases]
    for e in out:
        if e.meaning_changing:
            _numerics_never_apply(e)
        if e.blocked and not e.judged:
            e.flag = "blind"
        elif e.blocked and e.judged <= few:
            e.flag = "few"
    return BlindReport(few, out)


def targets(report: BlindReport) -> dict:
    """The ``blind.json`` document: each flagged entry, what blocked it (first message) and on which cases."""
    rows = []
    for e in report.flagged:
        by: dict[str, dict] = {}
        for c in e.blocked_cases:
            if "numerics" not in c.checks:
                continue
            b = by.setdefault(c.blocker, {"check": c.blocker, "status": c.status, "message": c.message,
                                          "known": c.known, "reason": c.reason, "cases": []})
            b["cases"].append(c.graph)
        first = e.first
        rows.append({"entry": e.pass_name, "flag": e.flag, "judged": e.judged, "blocked": e.blocked,
                     "not_applicable": e.not_applicable, "check": first.blocker, "message": first.message,
                     "cases": [c.graph for c in e.blocked_cases if "numerics" in c.checks],
                     "blockers": sorted(by.values(), key=lambda b: (-len(b["cases"]), b["check"]))})
    return {"schema": SCHEMA, "schema_version": 1, "few": report.few, "entries": rows}


def write(report_dir, doc: dict) -> Path:
    """``blind.json`` beside the other reports (the document's own known violations count as known)."""
    path = Path(report_dir) / BLIND_FILE
    atomic_write_bytes(path, (json.dumps(targets(compute(doc)), indent=1) + "\n").encode())
    return path
