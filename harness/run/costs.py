"""Recorded unit costs: what each pass x graph pair took in an earlier run, so ``--shard`` cuts by time, not count.

Units differ in cost by two orders of magnitude (a reference pass on a small
graph: a fraction of a second; a backend partitioner: a minute), so shards
of equal unit counts are not equal in time, and a CI matrix waits for its
slowest shard. The costs come from a file every shard reads alike (a
committed one, or a results.json handed to every job): the split must be
the same on every machine, so a machine's own verdict cache, which differs
from shard to shard, cannot be the source.

A costs file is either a passgate results.json (the seconds of each pair's
checks, summed) or the compact form :func:`write` makes
(``passgate report costs``): ``{"schema": "passgate-pair-costs/1",
"pairs": [[pass, graph, seconds], ...]}``. A unit's cost is the sum over the
(pass, graph) pairs it reports; a unit the file does not know costs the
median of the known units of its kind (else of all known units).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from harness.core.errors import UsageError
from harness.core.results import PASS_LEVEL

__all__ = ["SCHEMA", "from_results", "read", "write", "unit_costs", "priors"]

SCHEMA = "passgate-pair-costs/1"


def from_results(doc: dict) -> dict[tuple[str, str], float]:
    """(pass, graph) -> seconds of its checks, from a results document (pass-level records left out)."""
    out: dict[tuple[str, str], float] = {}
    for r in doc.get("results") or ():
        if r["graph"] == PASS_LEVEL:
            continue
        key = (r["pass_name"], r["graph"])
        out[key] = out.get(key, 0.0) + float(r.get("duration_s") or 0.0)
    return out


def read(path) -> dict[tuple[str, str], float]:
    """The pair costs in ``path`` (a results.json or a costs file); a one-line UsageError when unreadable."""
    try:
        doc = json.loads(Path(path).read_text())
        if isinstance(doc, dict) and doc.get("schema") == SCHEMA:
            return {(p, g): float(s) for p, g, s in doc["pairs"]}
        if isinstance(doc, dict) and isinstance(doc.get("results"), list):
            return from_results(doc)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot read unit costs from {path}: {type(exc).__name__}: {exc}") from None
    raise UsageError(f"{path} is neither a passgate results.json nor a costs file ({SCHEMA})")


def write(costs: dict[tuple[str, str], float], path) -> None:
    """The compact costs file, sorted, seconds to the millisecond (small enough to commit)."""
    rows = ",\n".join(json.dumps([p, g, round(s, 3)]) for (p, g), s in sorted(costs.items()))
    Path(path).write_text(f'{{"schema": "{SCHEMA}", "pairs": [\n{rows}\n]}}\n')  # a pair a line: short diffs


def unit_costs(units: list, costs: dict[tuple[str, str], float]) -> list[float]:
    """Each unit's cost in seconds, in the order of ``units`` (estimated where ``costs`` does not know it)."""
    known: list = []
    for u in units:
        seen = [costs[(p, u.graph)] for p in dict.fromkeys(p for p, _ in u.items()) if (p, u.graph) in costs]
        known.append(sum(seen) if seen else None)
    by_kind: dict[str, list[float]] = {}
    for u, c in zip(units, known):
        if c is not None:
            by_kind.setdefault(u.kind, []).append(c)
    everything = [c for c in known if c is not None]
    fallback = statistics.median(everything) if everything else 1.0
    return [c if c is not None else (statistics.median(by_kind[u.kind]) if u.kind in by_kind else fallback)
            for u, c in zip(units, known)]


def priors(units: list, path) -> dict[str, float]:
    """Unit key -> seconds from the costs file ``path`` (the committed ``reports/unit-costs.json``): what a unit
    the verdict cache has no record of should cost, for an ETA; {} when the file is absent or unreadable (an
    ETA is never worth an error)."""
    try:
        known = read(path) if Path(path).is_file() else {}
    except UsageError:
        return {}
    return dict(zip((u.key for u in units), unit_costs(units, known))) if known else {}
