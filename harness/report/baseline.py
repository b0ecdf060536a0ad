"""The baseline gate: known violations of upstream passes, recorded with their reasons.

A pre-merge job cannot demand that every upstream pass be clean: on the
pinned executorch some violate the IR spec, and the job must stay green on
them while turning red on anything new. ``reports/baseline.json`` records
each known violation (pass x graph x check) with the reason or upstream
issue, like the waivers of the Vulkan CTS. A run compared to it yields:

- ``regressions``: violations not in the baseline; they fail the run;
- ``known``: violations the baseline records; they do not;
- ``worsened``: violations the baseline records whose fingerprint got worse
  (offending nodes not a subset of the recorded ones, another exception type,
  a larger error: :func:`harness.report.violation_fingerprint.worse`); they
  fail the run like regressions, since a known issue may only get better.
  An entry without a fingerprint (none stored, no message to derive one
  from) is judged by pass x graph x check only, and the gate counts them;
- ``fixed``: recorded violations whose check now ran and held; reported so
  the baseline can be tightened (``passgate baseline update``);
- ``not_evaluated``: recorded ones this run did not judge (other graphs,
  other catalogs, or the check was skipped);
- ``stale``: recorded ones whose pass x graph pair *did* run but which no
  longer match a violation: the check was not judged (skipped, not
  applicable, absent), or it fails only as a should-level warning. A subset
  of ``not_evaluated`` plus those warnings (never counted as ``fixed``): the
  baseline names something this run cannot confirm, so the entry is reported,
  and ``passgate baseline update`` drops it (see :func:`entry_state`).

A known violation getting worse is one way a broken pass hides behind the
baseline; a pass that stops doing its work is another, and no check of the
run sees it: a fusion whose pattern no longer matches leaves a program that
holds every IR check. So the baseline also records, per pass, the graphs on
which it changed the program (``exercised``), and a pass x graph it records
that now ran and left the program as handed (or no longer applied) is a
regression of the gate's own check ``still_exercised``: listed and failing
with the others. ``passgate baseline update`` accepts the change.

An unreadable, truncated or wrong-schema baseline is bad input: a one-line
:class:`UsageError` (exit 2), never a silently empty gate. Schema version 2
adds each entry's ``fingerprint``; version 1 files load, every entry's
fingerprint derived from its recorded ``message``. Version 3 adds
``exercised``; earlier files load with none recorded (nothing to compare).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from harness.check.exercised import rewrote
from harness.core.errors import UsageError
from harness.core.io import atomic_write_bytes
from harness.core.results import CheckResult, Status
from harness.report import violation_fingerprint as vf

__all__ = [
    "DEFAULT_PATH", "ENTRY_STATES", "SCHEMA", "SCHEMA_VERSION", "SCHEMA_VERSIONS", "Baseline", "BaselineEntry", "Gate",
    "STILL_EXERCISED", "entry_state", "exercised_pairs", "fingerprint_of", "gate", "lost_rewrite", "load", "render", "save", "updated", "worse",
]

SCHEMA = "passgate-baseline"
SCHEMA_VERSION = 3
SCHEMA_VERSIONS = (1, 2, 3)  # what load() reads: version 1 entries carry no fingerprint, 1 and 2 no exercised map
STILL_EXERCISED = "still_exercised"
DEFAULT_PATH = "reports/baseline.json"
_JUDGED = (Status.PASS, Status.FAIL, Status.ERROR)
ENTRY_STATES = ("known", "fixed", "stale", "not_evaluated")


def entry_state(status: Optional[str], level: str, pair_ran: bool, strict: bool = False) -> str:
    """What a baseline entry is in a run: one of :data:`ENTRY_STATES`.

    ``status`` / ``level`` are those of the entry's own record in the run
    (None when there is none); ``pair_ran`` says whether its pass x graph ran
    at all. The one classification both the gate (over CheckResults) and the
    report headline (over a results.json) use, so they never disagree:

    - ``known``: the check is a violation again (error, must fail, should fail under --strict);
    - ``fixed``: the check ran and held;
    - ``stale``: the pair ran but the check was not judged, or fails only as a should-level warning;
    - ``not_evaluated``: the pair did not run (other graphs, catalogs, shards): nothing to say.
    """
    if status == "error" or (status == "fail" and (level == "must" or strict)):
        return "known"
    if status == "pass":
        return "fixed"
    if status == "fail":
        return "stale"  # recorded as a violation, now only a should-level warning
    return "stale" if pair_ran else "not_evaluated"


@dataclass(frozen=True)
class BaselineEntry:
    pass_name: str
    graph: str
    check: str
    reason: str
    upstream: str = ""
    kind: str = "bug"  # bug | by-design | precondition | untriaged
    message: str = ""  # the first line of the violation when it was recorded
    fingerprint: Optional[vf.Fingerprint] = None  # what the violation knew (None: judged by its key only)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.pass_name, self.graph, self.check)

    def to_json(self, with_fingerprint: bool = True) -> dict:
        d = {"pass": self.pass_name, "graph": self.graph, "check": self.check, "reason": self.reason}
        d.update({k: v for k, v in (("upstream", self.upstream), ("kind", self.kind), ("message", self.message)) if v})
        if with_fingerprint and self.fingerprint is not None:
            d["fingerprint"] = self.fingerprint.to_json()
        return d


@dataclass
class Baseline:
    entries: list[BaselineEntry] = field(default_factory=list)
    generated: dict = field(default_factory=dict)
    strict: bool = False
    exercised: dict = field(default_factory=dict)
    """pass -> the sorted graphs on which it changed the program when recorded (``still_exercised`` compares)."""

    def by_key(self) -> dict:
        return {e.key: e for e in self.entries}

    def to_json(self) -> dict:
        return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "generated": self.generated,
                "strict": self.strict,
                "entries": [e.to_json() for e in sorted(self.entries, key=lambda e: e.key)],
                "exercised": {p: sorted(g) for p, g in sorted(self.exercised.items()) if g}}


def _bad(path: Path, what: str) -> UsageError:
    return UsageError(f"baseline {path} does not follow the passgate baseline schema: {what}")


def load(path) -> Baseline:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"baseline not found: {p} (create it with `passgate baseline update`)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read baseline {p}: {exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"baseline {p} is not valid JSON (line {exc.lineno}): truncated or corrupt") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise _bad(p, f"'schema' must be {SCHEMA!r}")
    if doc.get("schema_version") not in SCHEMA_VERSIONS:
        raise _bad(p, f"unsupported schema_version {doc.get('schema_version')!r} (expected one of "
                      f"{', '.join(map(str, SCHEMA_VERSIONS))})")
    raw = doc.get("entries")
    if not isinstance(raw, list):
        raise _bad(p, "'entries' must be a list")
    entries, seen = [], set()
    for i, d in enumerate(raw):
        if not isinstance(d, dict):
            raise _bad(p, f"entry {i} is not an object")
        for key in ("pass", "graph", "check", "reason"):
            if not isinstance(d.get(key), str) or not d[key].strip():
                raise _bad(p, f"entry {i} needs a non-empty string {key!r} (every known violation names its reason)")
        if "fingerprint" in d and not isinstance(d["fingerprint"], dict):
            raise _bad(p, f"entry {i}'s 'fingerprint' must be an object")
        message = str(d.get("message", ""))
        # stored, else derived from the recorded message (version 1 entries, hand-written ones)
        fingerprint = vf.from_json(d["fingerprint"]) if "fingerprint" in d else vf.from_message(message)
        e = BaselineEntry(d["pass"], d["graph"], d["check"], d["reason"], str(d.get("upstream", "")),
                          str(d.get("kind", "bug")), message, fingerprint)
        if e.key in seen:
            raise _bad(p, f"entry {i} repeats {e.pass_name} x {e.graph} x {e.check}")
        seen.add(e.key)
        entries.append(e)
    generated = doc.get("generated", {})
    exercised = doc.get("exercised", {})
    if not isinstance(exercised, dict) or not all(isinstance(g, list) and all(isinstance(x, str) for x in g)
                                                  for g in exercised.values()):
        raise _bad(p, "'exercised' must map each pass to a list of graph names")
    return Baseline(entries, generated if isinstance(generated, dict) else {}, bool(doc.get("strict", False)),
                    {k: sorted(v) for k, v in exercised.items()})


def save(baseline: Baseline, path) -> Path:

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(p, (json.dumps(baseline.to_json(), indent=1) + "\n").encode())
    return p


@dataclass
class Gate:
    regressions: list[dict]
    fixed: list[dict]
    known: list[dict]
    not_evaluated: list[dict]
    baseline: str = ""
    stale: list[dict] = field(default_factory=list)  # see entry_state: the pair ran, the entry matched nothing
    worsened: list[dict] = field(default_factory=list)  # known violations whose fingerprint got worse: they fail
    without_fingerprint: int = 0  # known violations judged by pass x graph x check only (their entry has none)

    @property
    def passed(self) -> bool:
        return not self.regressions and not self.worsened

    def waived(self) -> set:
        return {(d["pass"], d["graph"], d["check"]) for d in self.known}

    def to_json(self) -> dict:
        d = asdict(self)
        d["status"] = "pass" if self.passed else "fail"
        return d


_first_line = vf.first_line


def fingerprint_of(r: CheckResult) -> Optional[vf.Fingerprint]:
    """What a violation knows: its details' node lists and error where recorded, else its message's."""
    return vf.from_result(r.message, r.details)


def worse(entry: BaselineEntry, r: CheckResult) -> str:
    """How the violation ``r`` is worse than its baseline ``entry`` recorded ("" when it is not, or when the
    entry has no fingerprint to compare with)."""
    return vf.worse(fingerprint_of(r), entry.fingerprint) if entry.fingerprint is not None else ""


def exercised_pairs(results: Iterable[CheckResult]) -> dict:
    """pass -> the sorted graphs whose ``runs`` record says the pass changed the program (what a baseline keeps)."""
    out: dict = {}
    for r in results:
        if rewrote(r):
            out.setdefault(r.pass_name, set()).add(r.graph)
    return {p: sorted(g) for p, g in out.items()}


def lost_rewrite(r: CheckResult, baseline: Baseline) -> str:
    """Why ``r``, a ``runs`` record, fails ``still_exercised`` against ``baseline`` ("" when it does not): the
    baseline records that its pass changed this graph, and now it ran and changed nothing, or no longer applied."""
    if r.graph not in baseline.exercised.get(r.pass_name, ()) or rewrote(r) is not False:
        return ""
    why = ("no longer applies (its requires hook failed)" if r.status is Status.NOT_APPLICABLE else
           "left the program as it was handed (ops, structure and metadata)")
    return f"the pass {why}; the baseline records that it changed this graph (`passgate baseline update` accepts it)"


def _lost(results: list, baseline: Baseline) -> list[dict]:
    """``still_exercised`` regressions: pairs the baseline records as exercised that now ran and changed nothing."""
    return [{"pass": r.pass_name, "graph": r.graph, "check": STILL_EXERCISED, "status": "fail", "message": why}
            for r in results for why in [lost_rewrite(r, baseline)] if why]


def gate(results: Iterable[CheckResult], baseline: Baseline, strict: bool = False, path: str = "") -> Gate:
    results = list(results)
    recorded = baseline.by_key()
    by_key = {(r.pass_name, r.graph, r.check): r for r in results}
    pairs = {(r.pass_name, r.graph) for r in results}
    violations = {k: r for k, r in by_key.items() if r.is_violation(strict)}
    judged = {k for k, r in by_key.items() if r.status in _JUDGED}
    regressions = [{"pass": p, "graph": g, "check": c, "status": r.status.value, "message": _first_line(r.message)}
                   for (p, g, c), r in sorted(violations.items()) if (p, g, c) not in recorded]
    regressions += _lost(results, baseline)
    how = {k: worse(recorded[k], violations[k]) for k in violations if k in recorded}
    known = [{**recorded[k].to_json(False), "now": _first_line(violations[k].message)}
             for k in sorted(how) if not how[k]]
    worsened = [{**recorded[k].to_json(), "now": _first_line(violations[k].message), "worse": how[k],
                 "status": violations[k].status.value,
                 "fingerprint_now": (fingerprint_of(violations[k]) or vf.Fingerprint()).to_json()}
                for k in sorted(how) if how[k]]
    state = {k: entry_state(by_key[k].status.value if k in by_key else None,
                            by_key[k].level.value if k in by_key else "must", k[:2] in pairs, strict)
             for k in recorded}
    fixed = [e.to_json(False) for k, e in sorted(recorded.items()) if state[k] == "fixed"]
    not_evaluated = [e.to_json(False) for k, e in sorted(recorded.items()) if k not in judged]
    stale = [{**e.to_json(False), "now": (by_key[k].status.value if k in by_key else "absent")}
             for k, e in sorted(recorded.items()) if state[k] == "stale"]
    unprinted = sum(1 for k in how if recorded[k].fingerprint is None)
    return Gate(regressions, fixed, known, not_evaluated, path, stale, worsened, unprinted)


def updated(results: Iterable[CheckResult], previous: Optional[Baseline], reasons=None, strict: bool = False,
            generated: Optional[dict] = None) -> Baseline:
    """A baseline recording exactly the violations of ``results``.

    Reasons come from the previous baseline (kept as triaged), else from
    ``reasons(pass, graph, check)`` (the catalog's known failures), else the
    entry is marked ``untriaged`` with the violation's message. Every entry
    records the violation's fingerprint as it is now: a worsened one is accepted,
    and so is every pass x graph the run exercised, or no longer does.
    """
    previous_by_key = previous.by_key() if previous else {}
    entries = []
    for r in sorted((r for r in results if r.is_violation(strict)), key=lambda r: (r.pass_name, r.graph, r.check)):
        key = (r.pass_name, r.graph, r.check)
        message = _first_line(r.message)
        if key in previous_by_key:
            old = previous_by_key[key]
            entries.append(BaselineEntry(*key, old.reason, old.upstream, old.kind, message, fingerprint_of(r)))
            continue
        found = reasons(*key) if reasons else None
        if found is not None:
            entries.append(BaselineEntry(*key, found.reason, found.upstream, found.kind, message, fingerprint_of(r)))
        else:
            stamp = time.strftime("%Y-%m-%d", time.gmtime())
            entries.append(BaselineEntry(*key, f"recorded by `passgate baseline update` on {stamp}; not yet "
                                         f"triaged: {message}", "", "untriaged", message, fingerprint_of(r)))
    return Baseline(entries, generated or {}, strict, exercised_pairs(results))


def render(g: Gate) -> str:
    lines = [f"passgate: gate against {g.baseline or 'the baseline'}: {len(g.regressions)} regression(s), "
             f"{len(g.worsened)} worsened, {len(g.known)} known, {len(g.fixed)} fixed, {len(g.stale)} stale, "
             f"{len(g.not_evaluated)} not evaluated"]
    for d in g.regressions:
        lines.append(f"passgate: REGRESSION {d['pass']} x {d['graph']} x {d['check']}: {d['message']}")
    for d in g.worsened:
        lines.append(f"passgate: WORSENED {d['pass']} x {d['graph']} x {d['check']}: {d['worse']} (now: {d['now']}; "
                     "`passgate baseline update` accepts it)")
    if g.without_fingerprint:
        lines.append(f"passgate: {g.without_fingerprint} known violation(s) without a fingerprint: judged by pass x "
                     "graph x check only")
    for d in g.fixed:
        lines.append(f"passgate: fixed (now holds; update the baseline): {d['pass']} x {d['graph']} x {d['check']}")
    for d in g.stale:
        lines.append(f"passgate: stale baseline entry (its pair ran, the check is {d['now']}; `passgate baseline "
                     f"update` drops it): {d['pass']} x {d['graph']} x {d['check']}")
    return "\n".join(lines)
