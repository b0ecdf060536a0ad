"""The campaign's report: ``mutation.json`` (every mutant, its outcome, the sample) and ``mutation.md``.

The score is given per catalog and per entry beside the whole, with the
sample it was measured on, because a mutation score without its sample is
not a figure. Survivors are listed by entry with their change and the cases
that reached them: a survivor is the description of a graph (or a check)
the suite lacks.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.core.io import atomic_write_bytes
from harness.mutate.campaign import group_scores, score

__all__ = ["SCHEMA", "document", "render", "write"]

SCHEMA = "passgate-mutation"


def document(camp) -> dict:
    outcomes = camp.judged()
    settings = camp.settings
    return {
        "schema": SCHEMA, "schema_version": 1, "complete": camp.complete, "seconds": round(camp.seconds, 1),
        "sample": {"mutants": settings.sample, "entries": settings.entries, "seed": settings.seed,
                   "operators": list(settings.operators) or "all", "timeout_floor": settings.timeout,
                   "entries_drawn": camp.entries, "cases": camp.cases},
        "score": score(outcomes),
        "generated_alone": {**score(outcomes, alone=True), "by_catalog": group_scores(outcomes, lambda o: o.catalog, True)},
        "by_catalog": group_scores(outcomes, lambda o: o.catalog),
        "by_entry": group_scores(outcomes, lambda o: o.entry),
        "by_operator": group_scores(outcomes, lambda o: o.mutant.site.operator),
        "references": {name: {"cases": len(r.runs), "timeout": round(r.timeout, 2), "error": r.error}
                       for name, r in camp.references.items()},
        "mutants": [o.to_json() for o in outcomes],
    }


def _row(name: str, s: dict) -> str:
    shown = "n/a" if s["score"] is None else f"{s['score']:.1f}%"
    return (f"| {name} | {s['mutants']} | {s['killed']} | {s['timed_out']} | {s['survived']} | {s['not_reached']} "
            f"| {s['equivalent']} | {s['not_applied']} | {s.get('unreachable', 0)} | {shown} |")


_HEAD = ("| | mutants | killed | timed out | survived | not reached | equivalent | not applied | unreachable | score |\n"
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")


def _judged(s: dict) -> int:
    return s["mutants"] - s["equivalent"] - s["not_applied"] - s.get("unreachable", 0)


def _declared(doc: dict) -> list[str]:
    """The mutants left out as declared unreachable, with the reason their entry gives, and the score with them
    counted as not reached (so the exclusion is never hidden in the figure)."""
    gone = [m for m in doc["mutants"] if m["status"] == "unreachable"]
    if not gone:
        return []
    s = doc["score"]
    counted = 100.0 * (s["killed"] + s["timed_out"]) / (_judged(s) + len(gone)) if _judged(s) + len(gone) else 0.0
    lines = ["## Declared unreachable", "",
             f"{len(gone)} mutants lie in code declared unreachable (`passgate.unreachable`, the coverage report's exclusions; counted as "
             f"not reached instead, the score would be {counted:.1f}%):", ""]
    reasons: dict = {}
    for m in gone:
        reasons.setdefault((m["entry"], m["function"], m["note"]), []).append(m["line"])
    for (entry, function, why), where in sorted(reasons.items()):
        lines.append(f"- `{entry}` `{function}` lines {', '.join(map(str, sorted(set(where))))}: {why}")
    return lines + [""]


def _alone(doc: dict) -> list[str]:
    """The generated cases' own score, beside the whole (absent from reports made before the split)."""
    g = doc.get("generated_alone")
    if not g or g["score"] is None:
        return []
    return [f"The generated graphs alone (drawn, distilled and context graphs; no hand-written one) detect "
            f"**{g['score']:.1f}%** of their {_judged(g)} non-equivalent "
            f"mutants ({g['killed']} killed, {g['timed_out']} timed out, {g['survived']} survived, "
            f"{g['not_reached']} reached by none of them).", ""]


def render(doc: dict, survivors_shown: int = 400) -> str:
    s = doc["score"]
    sample = doc["sample"]
    shown = "n/a" if s["score"] is None else f"{s['score']:.1f}%"
    lines = [
        "# Mutation score",
        "",
        f"**{shown}** of {_judged(s)} non-equivalent mutants detected "
        f"({s['killed']} killed, {s['timed_out']} timed out; {s['survived']} survived, {s['not_reached']} reached by "
        f"no case; {s['equivalent']} equivalent, {s['not_applied']} not applied and {s.get('unreachable', 0)} "
        "declared unreachable, left out).",
        "",
        f"Sample: {s['mutants']} mutants of {len(sample['entries_drawn'])} entries (asked: {sample['mutants']} / "
        f"{sample['entries']}, seed {sample['seed']}), on {len(sample['cases'])} cases; "
        f"{'complete' if doc['complete'] else 'INCOMPLETE (interrupted)'}, {doc['seconds']:.0f} s.",
        "",
        *_alone(doc),
        "## By catalog", "", _HEAD, *(_row(k, v) for k, v in doc["by_catalog"].items()), "",
        "## By operator", "", _HEAD, *(_row(k, v) for k, v in doc["by_operator"].items()), "",
        "## By entry", "", _HEAD, *(_row(k, v) for k, v in doc["by_entry"].items()), "",
        *_declared(doc),
        "## Survivors", "",
        "Each changed a program on some case and no must-level check noticed; `not reached`: no case ran the line.", "",
    ]
    inert = sum(1 for m in doc["mutants"] if m["status"] == "survived" and m["note"].startswith("inert"))
    lines.insert(lines.index("## Survivors") + 2, f"{inert} of the {s['survived']} survivors are inert (the mutated pass "
                 "changed no reached program: out of reach of every must-level check).")
    lines.insert(lines.index("## Survivors") + 3, "")
    survivors = [m for m in doc["mutants"] if m["status"] in ("survived", "not_reached")]
    for m in survivors[:survivors_shown]:
        where = ", ".join(m["cases"][:6]) + (f" (+{len(m['cases']) - 6})" if len(m["cases"]) > 6 else "")
        status = "survived (inert)" if m["note"].startswith("inert") else m["status"]
        lines.append(f"- `{m['entry']}` {status}: `{m['function']}` {m['operator']} `{m['diff']}`"
                     + (f" — reached by {where}" if where else ""))
    if len(survivors) > survivors_shown:
        lines.append(f"- ... and {len(survivors) - survivors_shown} more (mutation.json)")
    return "\n".join(lines) + "\n"


def write(camp, folder) -> Path:
    """``mutation.json`` and ``mutation.md`` in ``folder`` (atomically: an interrupted write leaves the old ones)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    doc = document(camp)
    atomic_write_bytes(out / "mutation.json", (json.dumps(doc, indent=1) + "\n").encode())
    atomic_write_bytes(out / "mutation.md", render(doc).encode())
    return out / "mutation.md"
