"""A results document at the size of the full suite, for report.html's size and load-time figure.

A full standard run takes hours on a loaded 2-core machine, and no verdict
cache of one is kept, so the document is built rather than run: its
*failures* are real (every entry of the committed ``reports/baseline.json``,
the violations a standard run recorded, with their passes, graphs, checks
and messages), the rest is scaled up around them with a seeded generator:
263 passes (the baseline's 206, then ``padding.Pass<i>`` names) x the 104
graphs the baseline names most, each pass on about half of them (about
230,000 records, what a standard run writes), every IR check per pair,
``ensures`` not applicable where a pass has no hook, ``numerics`` skipped
where the pass did not run, a few dozen new violations, worsened ones,
harness errors with tracebacks and should-level warnings, and a pass-level
``exercised`` record per pass. The baseline's entries are the run's
``gate.known``, as a gated run records them. Same seed, same document.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from harness.core.results import CHECKS, IR_CHECK_IDS

__all__ = ["Scale", "full_size_doc"]

BASELINE = Path(__file__).resolve().parent.parent / "reports" / "baseline.json"
_TRACEBACK = "".join(f'  File "/site-packages/executorch/exir/pass_base.py", line {400 + i}, in call\n'
                     f"    result = self.call_operator(op, args, kwargs, meta)  # frame {i}\n" for i in range(24))


@dataclass(frozen=True)
class Scale:
    """How big the document is and how much of it fails beyond the baseline."""

    passes: int = 263
    graphs: int = 104
    coverage: float = 0.5  # share of the graphs each pass runs on (plus those its baseline entries name)
    new: int = 40
    worsened: int = 12
    errors: int = 20
    warning_rate: float = 0.01  # should-level checks that fail
    not_exercised: float = 0.08  # passes no case changed
    seed: int = 0


def _names(entries: list, scale: Scale) -> tuple[list, list]:
    counts: dict = {}
    for e in entries:
        counts[e["graph"]] = counts.get(e["graph"], 0) + 1
    graphs = sorted(sorted(counts, key=lambda g: (-counts[g], g))[: scale.graphs])
    passes = sorted({e["pass"] for e in entries})[: scale.passes]
    passes += [f"padding.Pass{i:03d}" for i in range(scale.passes - len(passes))]
    return passes, graphs


def _record(p: str, g: str, check: str, status: str, message: str = "", details: dict | None = None,
            seconds: float = 0.0) -> dict:
    return {"pass_name": p, "graph": g, "check": check, "status": status, "level": CHECKS[check].level.value,
            "message": message, "details": details or {}, "duration_s": round(seconds, 4)}


def _pair(rng: random.Random, p: str, g: str, known: dict, no_hook: bool, scale: Scale) -> list:
    out = []
    ran = (p, g, "runs") not in known
    for check in IR_CHECK_IDS:
        k = known.get((p, g, check))
        if k is not None:
            details = {"traceback": _TRACEBACK} if check == "runs" else {}
            out.append(_record(p, g, check, "fail", k.get("message") or "", details, rng.random()))
        elif check == "ensures" and no_hook:
            out.append(_record(p, g, check, "not_applicable", "the pass has no ensures hook"))
        elif not ran and check in ("runnable", "numerics", "val_matches_execution", "idempotent", "deterministic"):
            out.append(_record(p, g, check, "skip", "runs failed: nothing to judge"))
        elif CHECKS[check].level.value == "should" and rng.random() < scale.warning_rate:
            out.append(_record(p, g, check, "fail", f"{check}: a second run changed the graph again (node add_3)"))
        else:
            out.append(_record(p, g, check, "pass", "", None, rng.random() * 0.05))
    return out


def _inject(rng: random.Random, results: list, scale: Scale) -> list:
    """New violations and harness errors on must-level records that passed; returns those records."""
    passing = [r for r in results if r["status"] == "pass" and r["level"] == "must"]
    picked = rng.sample(passing, scale.new + scale.errors)
    for i, r in enumerate(picked):
        if i < scale.errors:
            r.update(status="error", message="passgate crashed: KeyError 'val'",
                     details={"traceback": _TRACEBACK + "KeyError: 'val'\n"})
        else:
            r.update(status="fail", message=f"{r['check']}: 3 node(s) differ from the pre-pass program: add, mul_1, cat")
    return picked


def full_size_doc(scale: Scale = Scale(), baseline: Path = BASELINE) -> dict:
    """The document (see the module docstring); ``gate.known`` holds the baseline entries in its scope."""
    rng = random.Random(scale.seed)
    entries = json.loads(Path(baseline).read_text())["entries"]
    passes, graphs = _names(entries, scale)
    in_scope = set(passes), set(graphs)
    known = {(e["pass"], e["graph"], e["check"]): e for e in entries
             if e["pass"] in in_scope[0] and e["graph"] in in_scope[1] and e["check"] in IR_CHECK_IDS}
    named = {}
    for (p, g, _) in known:
        named.setdefault(p, set()).add(g)
    results = []
    for p in passes:
        no_hook = rng.random() < 0.8
        for g in graphs:
            if g in named.get(p, ()) or rng.random() < scale.coverage:
                results += _pair(rng, p, g, known, no_hook, scale)
    new = _inject(rng, results, scale)
    worse = rng.sample(sorted(known), scale.worsened)
    for p in passes:
        nx = rng.random() < scale.not_exercised
        results.append(_record(p, "*", "exercised", "fail" if nx else "pass",
                               "no case changed the program" if nx else "",
                               {"cases_changed": 0 if nx else rng.randint(1, 40), "ran": 52}))
    return _document(results, passes, graphs, list(known.values()), worse, new, scale)


def _document(results: list, passes: list, graphs: list, known: list, worse: list, new: list, scale: Scale) -> dict:
    by: dict = {}
    for r in results:
        by[r["status"]] = by.get(r["status"], 0) + 1
    gate_known = [{k: e.get(k) for k in ("pass", "graph", "check", "message")} for e in known]
    worsened = [{"pass": p, "graph": g, "check": c, "worse": "2 more offending nodes (add_7, mul_2)"}
                for p, g, c in worse]
    return {
        "schema_version": "1.0", "tool": {"name": "passgate", "version": "scaled"},
        "environment": {"python": "3.11", "torch": "2.13", "executorch": "1.5.1"},
        "configuration": {"command": "run", "profile": "standard (scaled: benchmarks.report_scale)", "seed": scale.seed,
                          "strict": False, "graphs": graphs},
        "started_at": "2026-12-02T00:00:00Z", "duration_s": 0.0, "complete": True, "exit_status": 1,
        "summary": {"total": len(results), "by_status": by, "passes": len(passes), "graphs": len(graphs)},
        "results": results,
        "gate": {"baseline": "reports/baseline.json",
                 "regressions": [{"pass": r["pass_name"], **{k: r[k] for k in ("graph", "check", "message")}}
                                 for r in new], "known": gate_known, "worsened": worsened,
                 "fixed": [], "stale": [], "not_evaluated": []},
        "cases": [{"name": g, "source": "builtin", "from_cache": True, "lower_seconds": 0.1} for g in graphs],
    }
