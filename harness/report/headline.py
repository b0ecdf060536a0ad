"""The one headline of a run: gate verdict, then new, known, fixed, stale and warning counts.

Every format used to state the verdict its own way, and they disagreed: the
conformance report.html showed a green "PASS: 0 violations in 29568 checks"
banner beside a "755 fail" card, and nothing said that 603 of those fails
were known (baselined) violations and 152 should-level warnings. A reader who
cannot make the numbers add up stops trusting all of them. So the headline
is computed here, once, from a results document, and the terminal,
``summary.md``, ``report.html`` and ``junit.xml`` all print :meth:`Headline.text`
and :meth:`Headline.counts` (``tests/test_headline.py`` holds them to it).

Each failed or errored record is counted once, as exactly one of:

- *new violation*: it gates (must fail, error, should fail under --strict) and no baseline records it;
- *worsened*: it gates and the baseline records it, but its fingerprint got worse (``gate.worsened``);
- a gate regression of ``still_exercised`` (a pass x graph the baseline records as changed, now left as
  handed) is counted new too: no record of the run fails, the gate's comparison does;
- *known*: it gates but the baseline (``gate.known``) or the suite (``known_violations``) records it;
- *warning*: a should-level fail without --strict (never gating; a baseline entry for it is stale).

And each baseline entry the run could judge once, as *known* (above), *fixed*
(the check now holds) or *stale* (its pair ran but the entry matched no
violation), by :func:`harness.report.baseline.entry_state`, the function the
gate itself uses. Entries of pairs this run did not run are in none of them.
Nothing here imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.report import view as reports
from harness.report.baseline import STILL_EXERCISED, entry_state

__all__ = ["STATUSES", "STATUS_LABEL", "Headline", "baseline_entries", "compute", "plural"]

STATUSES = ("pass", "fail", "error", "skip", "not_applicable")  # by_status keys; they add up to the total
STATUS_LABEL = {"not_applicable": "n/a"}


def plural(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


@dataclass(frozen=True)
class Headline:
    """The numbers every report format states, and the two sentences that state them."""

    verdict: str  # PASS | FAIL | INCOMPLETE
    total: int
    by_status: dict
    new: int
    known: int
    fixed: int
    stale: int
    warnings: int
    passes: int
    graphs: int
    stale_entries: list = field(default_factory=list, compare=False)
    fixed_entries: list = field(default_factory=list, compare=False)
    worsened: int = 0
    gated: bool = False  # judged against a baseline that fingerprints its entries: the worsened count is stated

    def text(self) -> str:
        """``PASS: 0 new violations, 0 worsened, 603 known, 0 fixed, 3 stale baseline entries, 152 should-level
        warnings`` (the worsened count when the run was gated against a fingerprinted baseline, or any worsened)."""
        worse = f", {self.worsened} worsened" if self.worsened or self.gated else ""
        return (f"{self.verdict}: {plural(self.new, 'new violation')}{worse}, {self.known} known, {self.fixed} fixed, "
                f"{plural(self.stale, 'stale baseline entry', 'stale baseline entries')}, "
                f"{plural(self.warnings, 'should-level warning')}")

    def counts(self) -> str:
        """``96 checks: 87 pass, 3 fail, 0 error, 0 skip, 6 n/a``: every status, so the parts add up to the total."""
        parts = ", ".join(f"{self.by_status.get(s, 0)} {STATUS_LABEL.get(s, s)}" for s in STATUSES)
        return f"{plural(self.total, 'check')}: {parts}"

    def scope(self) -> str:
        return f"{plural(self.passes, 'pass', 'passes')} x {plural(self.graphs, 'graph')}"

    def properties(self) -> list[tuple[str, str]]:
        """The headline as JUnit ``<property>`` name/value pairs (``passgate.*``)."""
        return [("passgate.verdict", self.verdict), ("passgate.new_violations", str(self.new)),
                ("passgate.worsened_violations", str(self.worsened)),
                ("passgate.known_violations", str(self.known)), ("passgate.fixed", str(self.fixed)),
                ("passgate.stale_baseline_entries", str(self.stale)),
                ("passgate.should_warnings", str(self.warnings)), ("passgate.checks", str(self.total)),
                ("passgate.headline", self.text()), ("passgate.counts", self.counts())]


def baseline_entries(doc: dict) -> list[dict]:
    """Every baseline entry the gate section names (known, worsened, fixed, stale, not evaluated), once each."""
    g = doc.get("gate") or {}
    seen, out = set(), []
    for name in ("known", "worsened", "fixed", "stale", "not_evaluated"):
        for e in g.get(name) or ():
            k = (reports.pass_of(e), e.get("graph"), e.get("check"))
            if k not in seen:
                seen.add(k)
                out.append({**e, "pass_name": k[0]})
    return out


def _entry_states(v: reports.View) -> dict[str, list]:
    """state -> the baseline entries in it, judged against this document's records."""
    records = {reports.key(r): r for r in v.doc.get("results", ())}
    pairs = {(r["pass_name"], r["graph"]) for r in v.doc.get("results", ())}
    listed_fixed = {(reports.pass_of(e), e.get("graph"), e.get("check")) for e in (v.doc.get("gate") or {}).get("fixed") or ()}
    out: dict[str, list] = {}
    for e in baseline_entries(v.doc):
        k = (e["pass_name"], e.get("graph"), e.get("check"))
        r = records.get(k)
        state = entry_state(r["status"] if r else None, (r or {}).get("level", "must"), k[:2] in pairs, v.strict)
        if state == "not_evaluated" and k in listed_fixed:
            state = "fixed"  # the gate's writer judged it (merged shards, a trimmed document): nothing here says otherwise
        out.setdefault(state, []).append({**e, "now": r["status"] if r else "absent"})
    return out


def compute(doc_or_view) -> Headline:
    """The headline of a results document (or of its :class:`~harness.report.view.View`)."""
    v = doc_or_view if isinstance(doc_or_view, reports.View) else reports.view(doc_or_view)
    if "headline" not in v.derived:
        v.derived["headline"] = _compute(v)
    return v.derived["headline"]


def _compute(v: reports.View) -> Headline:
    doc = v.doc
    outcomes = [v.outcome(r) for r in v.problems]
    gating = [reports.key(r) in v.worsened for r, o in zip(v.problems, outcomes) if o in ("fail", "error")]
    new, worsened = gating.count(False), gating.count(True)
    by = doc.get("summary", {}).get("by_status") or {}
    g = doc.get("gate") or {}
    new += sum(1 for d in g.get("regressions") or () if d.get("check") == STILL_EXERCISED)  # no record holds these
    if g and not any(k in g for k in ("known", "not_evaluated", "stale")):
        # a comparison with an earlier run (``passgate report diff``), not with a baseline: no entries to judge
        states = {"fixed": [{**e, "pass_name": reports.pass_of(e)} for e in g.get("fixed") or ()]}
    else:
        states = _entry_states(v)
    verdict = "FAIL" if new or worsened or doc.get("exit_status", 0) not in (0,) else "PASS"
    if not doc.get("complete", True):
        verdict = "INCOMPLETE"
    return Headline(
        verdict=verdict, total=int(doc.get("summary", {}).get("total", len(doc.get("results", ())))),
        by_status={s: int(by.get(s, 0)) for s in STATUSES}, new=new, known=outcomes.count("known"),
        fixed=len(states.get("fixed", ())), stale=len(states.get("stale", ())), warnings=outcomes.count("warning"),
        passes=len(v.passes), graphs=len(v.graphs), stale_entries=states.get("stale", []),
        fixed_entries=states.get("fixed", []), worsened=worsened, gated="worsened" in g)
