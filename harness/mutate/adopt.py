"""Graphs join the corpus for the mutants they kill: ``passgate corpus adopt``.

``passgate corpus distill`` keeps the fewest graphs that cover every entry's
branch arcs and change atoms. A graph that reaches no new arc but kills a
mutant the corpus lets survive is worth as much to the gate, and a cover of
arcs cannot see it. A campaign extended with candidate graphs
(``passgate mutate --from OLD --graphs DIR``) names, for each mutant it newly
detects, the graph that did: ``killed_by`` for the suite's verdict,
``alone_by`` for the generated graphs' own. Those graphs, and only those, are
copied into the corpus unchanged, with their kills in ``index.json`` (which
``distill`` then keeps: a cover of arcs does not drop a graph kept for kills).
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.core.errors import UsageError
from harness.core.io import atomic_write_bytes
from harness.mutate.campaign import DETECTED

__all__ = ["killers", "adopt"]


def killers(doc: dict, names: set) -> dict[str, dict[str, int]]:
    """Graph -> entry -> how many mutants of that entry it detected, for the graphs in ``names``."""
    out: dict[str, dict[str, int]] = {}
    for m in doc.get("mutants", []):
        by = set()
        if m.get("status") in DETECTED:
            by.add((m.get("killed_by") or {}).get("graph"))
        if m.get("alone") in DETECTED:
            by.add(m.get("alone_by"))
        for graph in by & names:
            per_entry = out.setdefault(graph, {})
            per_entry[m["entry"]] = per_entry.get(m["entry"], 0) + 1
    return out


def adopt(candidates: Path, mutation: dict, corpus: Path) -> dict[str, dict[str, int]]:
    """Copy the graphs of ``candidates`` that detected a mutant of ``mutation`` into ``corpus``; their kills."""
    from harness.fuzz.corpus import INDEX, read

    entries = {e.name: e for e in read(Path(candidates))}
    kills = killers(mutation, set(entries))
    if not kills:
        return {}
    corpus = Path(corpus)
    corpus.mkdir(parents=True, exist_ok=True)
    try:
        index = json.loads((corpus / INDEX).read_text())
    except FileNotFoundError:
        index = {"schema": "passgate-corpus", "schema_version": 1, "graphs": []}
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {corpus / INDEX}: {exc}") from exc
    rows = {g["name"]: g for g in index.get("graphs", [])}
    for name in sorted(kills):
        atomic_write_bytes(corpus / f"{name}.py", (Path(candidates) / f"{name}.py").read_bytes())
        e = entries[name]
        rows[name] = {"name": name, "file": f"{name}.py", "origin": e.origin, **e.info, "kills": kills[name]}
    index["graphs"] = list(rows.values())
    atomic_write_bytes(corpus / INDEX, (json.dumps(index, indent=1, default=str) + "\n").encode())
    return kills
