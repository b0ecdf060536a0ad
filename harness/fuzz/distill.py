"""Distilling a corpus: the fewest generated graphs that keep what every pass was made to do.

The candidates are the graphs a fuzz run keeps (run here for ``--budget``
seconds over the chosen catalogs), the graphs of ``--from`` folders and the
current corpus itself (so a re-distill can keep what it has). Each is
measured against every target (:mod:`harness.fuzz.measure`); the *elements*
to preserve are, per target, every arc of its own source and every change
atom the candidates reach that the baseline graphs (the ``builtin`` graphs
the gate runs anyway) do not. The corpus is a set cover of those elements.

Minimum set cover is NP-hard; this is the greedy approximation (repeatedly
take the graph covering the most uncovered elements, fewer statements
breaking ties, which is within a factor ln(n) of the optimum), followed by
a reverse-delete pass that drops any chosen graph whose elements the others
all cover. So the corpus preserves every target's branch coverage and every
part of its change signatures (each op it adds or removes, each kind of
change, each way it fails); it does not preserve every *combination* of
parts, which would need nearly every graph.

One exception, measured on the core catalogs: passes that rewrite *every* op
they meet (``ToOutVarPass``, ``MemoryPlanningPass``, ``OpReplacePass``)
add and remove a different op for nearly every graph, so their per-op atoms
are the op coverage of the random vocabulary, not something the pass does
differently (there they made 5,664 of 15,592 elements, and the cover 58
graphs). A target whose candidates change more than :data:`GENERIC_OPS`
distinct ops is such a pass: its kinds of change and its failures are kept,
its per-op atoms are not (its arcs are, like every target's).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from harness.fuzz.corpus import (
    COVERS_TITLE,
    INDEX,
    Entry,
    corpus_name,
    program_code,
    read,
    spec_from_text,
    statements_of,
    write,
    write_kept,
)
from harness.fuzz.loop import Fuzzer
from harness.fuzz.measure import Observation, observe

__all__ = ["GENERIC_OPS", "Candidate", "generic_targets", "elements", "cover", "Distilled", "distill",
           "by_catalog"]

DISTILLED = "Distilled by `passgate corpus distill`"
GENERIC_OPS = 12  # distinct ops a target's candidates add or remove, above which it rewrites "every op"
_TRIVIAL_ATOMS = frozenset({"unchanged", "not_applicable"})


@dataclass
class Candidate:
    name: str
    code: str  # the program text
    origin: str = ""
    statements: int = 0
    dynamic: bool = False
    observation: Optional[Observation] = None
    quantized: Optional[str] = None  # the flow that quantized it (harness.graphs.quantizers), None for a float graph


def _is_op(atom: str) -> bool:
    return atom[:1] in ("+", "-")


def generic_targets(observations: list) -> set:
    """Targets whose runs over ``observations`` add or remove more than :data:`GENERIC_OPS` distinct ops."""
    ops: dict = {}
    for obs in observations:
        for target, atoms in obs.atoms.items():
            ops.setdefault(target, set()).update(a[1:] for a in atoms if _is_op(a))
    return {t for t, names in ops.items() if len(names) > GENERIC_OPS}


def elements(obs: Observation, base_arcs: dict, base_atoms: dict, generic: frozenset = frozenset()) -> set:
    """What ``obs`` reaches beyond the baseline: (target, arc) and (target, atom) pairs, without the per-op
    atoms of ``generic`` targets."""
    out = set()
    for target, arcs in obs.arcs.items():
        out.update((target, "arc", a) for a in arcs - base_arcs.get(target, set()))
        atoms = obs.atoms.get(target, frozenset()) - base_atoms.get(target, set()) - _TRIVIAL_ATOMS
        out.update((target, "atom", a) for a in atoms if not (target in generic and _is_op(a)))
    return out


def cover(candidates: list[Candidate], base_arcs: dict, base_atoms: dict,
          max_graphs: Optional[int] = None) -> tuple[list[tuple[Candidate, set]], int]:
    """Greedy set cover with reverse delete: (chosen candidates with the elements each covers, elements
    left uncovered, non-zero only when ``max_graphs`` cut the cover short)."""
    measured = [c for c in candidates if c.observation is not None and c.observation.ok]
    generic = frozenset(generic_targets([c.observation for c in measured]))
    sets = [(c, elements(c.observation, base_arcs, base_atoms, generic)) for c in measured]
    left = set().union(*(s for _, s in sets)) if sets else set()
    chosen: list[tuple[Candidate, set]] = []
    while left and (max_graphs is None or len(chosen) < max_graphs):
        c, s = max(sets, key=lambda cs: (len(cs[1] & left), -cs[0].statements, cs[0].name))
        if not s & left:
            break
        chosen.append((c, s))
        left -= s
    for i in range(len(chosen) - 1, -1, -1):  # reverse delete: drop a graph the others make redundant
        others = set().union(*(s for j, (_, s) in enumerate(chosen) if j != i))
        if chosen[i][1] <= others:
            del chosen[i]
    return chosen, len(left)


@dataclass
class Distilled:
    """What a distill wrote, and the coverage it keeps."""

    folder: Path
    entries: list[Entry]
    candidates: int
    draws: int
    rows: list[dict] = field(default_factory=list)  # per target: branches, baseline, all candidates, corpus
    uncovered: int = 0
    seconds: float = 0.0


def _candidates_from(folders: list[Path], seen: set) -> list[Candidate]:
    out = []
    for folder in folders:
        for e in read(folder):
            code = program_code(e.code)
            digest = hashlib.sha256(code.encode()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            out.append(Candidate(e.name, code, e.origin or e.name, statements_of(code),
                                 "DYNAMIC_SHAPES = None" not in code, quantized=e.info.get("quantized")))
    return out


def _measure_files(fz: Fuzzer, candidates: list[Candidate]) -> None:
    """Measure the candidates read from folders (fuzz kept graphs come measured)."""
    def one(c: Candidate) -> Observation:
        return observe(c.name, spec_from_text(c.name, c.code), fz.targets, fz.config)

    todo = [c for c in candidates if c.observation is None]
    for c, obs in zip(todo, fz._measure(todo, lambda c: c.name, one)):
        c.observation = obs


def _rows(fz: Fuzzer, candidates: list[Candidate], chosen: list[Candidate]) -> list[dict]:
    counter = fz._branches
    rows = []
    for t in fz.targets:
        base = fz.base_arcs[t.name]
        every = set(base).union(*(c.observation.arcs.get(t.name, ()) for c in candidates
                                  if c.observation is not None))
        kept = set(base).union(*(c.observation.arcs.get(t.name, ()) for c in chosen))
        before, total = counter.totals(t.files, base)
        rows.append({"name": t.name, "catalog": t.catalog, "branches": total, "before": before,
                     "candidates": counter.totals(t.files, every)[0], "corpus": counter.totals(t.files, kept)[0]})
    return rows


def _fuzz(fz: Fuzzer, budget: float, baseline: tuple, max_draws: Optional[int], note: Callable) -> None:
    """Warm up, measure the baseline, and fuzz (no checks: the gate runs them) for ``budget`` seconds."""
    from harness.fuzz.campaign import warm_lowering, warm_up
    from harness.graphs import sources

    if fz.isolate:
        warm_lowering(fz.flows)
    if baseline:
        specs = sources.select(list(baseline))
        warm_up(fz, specs, fz.measure_baseline(specs))
    started = last = time.monotonic()  # the budget is for drawing, as in passgate fuzz
    while budget and time.monotonic() - started < budget:
        if max_draws is not None and fz.counts.draws >= max_draws:
            break
        fz.step(None if max_draws is None else max_draws - fz.counts.draws)
        if time.monotonic() - last >= 30:
            last = time.monotonic()
            note(f"distill: fuzz {time.monotonic() - started:.0f}/{budget:g} s: {fz.progress()}")


def _previous_draws(out: Path) -> int:
    """The draws behind the corpus already in ``out`` (its graphs are candidates again)."""
    try:
        meta = json.loads((Path(out) / INDEX).read_text()).get("distilled", {})
        return int(meta.get("draws_total", meta.get("draws", 0)))
    except (OSError, ValueError, TypeError, AttributeError):
        return 0


def distill(fz: Fuzzer, out: Path, budget: float = 0.0, from_dirs: tuple = (), baseline: tuple = ("builtin",),
            max_draws: Optional[int] = None, max_graphs: Optional[int] = None,
            note: Callable[[str], None] = lambda m: None, save_candidates: Optional[Path] = None) -> Distilled:
    """Fuzz for ``budget`` seconds, gather every candidate (``save_candidates``: the fuzzed ones written there,
    for a later ``--from``), cover, write the corpus to ``out``."""
    started = time.monotonic()
    fz.note = note
    _fuzz(fz, budget, baseline, max_draws, note)
    if save_candidates is not None:
        write_kept(Path(save_candidates), [k for k in fz.kept if k.observation.ok])
    seen: set = set()
    candidates = []
    for k in fz.kept:
        if k.observation.ok:
            seen.add(hashlib.sha256(k.draw.code.encode()).hexdigest())
            candidates.append(Candidate(k.name, k.draw.code, k.name, k.draw.program.size, k.draw.program.dynamic,
                                        k.observation, k.draw.flow or None))
    folders = [Path(d) for d in from_dirs] + ([Path(out)] if Path(out).is_dir() else [])
    candidates += _candidates_from(folders, seen)
    note(f"distill: measuring {sum(c.observation is None for c in candidates)} graph(s) read from folders")
    _measure_files(fz, candidates)
    chosen, uncovered = cover(candidates, fz.base_arcs, fz.base_atoms, max_graphs)
    entries = [_entry(c, s) for c, s in sorted(chosen, key=lambda cs: corpus_name(cs[0].code))]
    rows = _rows(fz, candidates, [c for c, _ in chosen])
    generic = generic_targets([c.observation for c in candidates if c.observation is not None and c.observation.ok])
    draws_total = fz.counts.draws + _previous_draws(out)
    meta = {"coverage": by_catalog(rows), "distilled": {
        "targets": len(fz.targets), "catalogs": sorted({t.catalog for t in fz.targets} - {""}), "seed": fz.seed,
        "budget_s": budget, "draws": fz.counts.draws, "draws_total": draws_total, "candidates": len(candidates),
        "baseline": list(baseline), "uncovered": uncovered, "generic_targets": sorted(generic),
        "method": "greedy set cover of (pass, arc) and (pass, change atom) beyond the baseline, then reverse "
                  f"delete; no per-op atoms for passes changing more than {GENERIC_OPS} distinct ops"}}
    folder = write(Path(out), entries, DISTILLED, meta, replace_all=True, title=COVERS_TITLE)
    return Distilled(folder, entries, len(candidates), draws_total, rows, uncovered, time.monotonic() - started)


def by_catalog(rows: list[dict]) -> dict:
    """Per catalog: branches of its entries' files, taken by the baseline, every candidate, the corpus."""
    out: dict = {}
    for r in rows:
        agg = out.setdefault(r["catalog"] or "-", {"branches": 0, "baseline": 0, "candidates": 0, "corpus": 0})
        for key, src in (("branches", "branches"), ("baseline", "before"), ("candidates", "candidates"),
                         ("corpus", "corpus")):
            agg[key] += r[src]
    return out


def _entry(c: Candidate, covered: set) -> Entry:
    reasons: dict = {}
    for target, kind, value in sorted(covered, key=repr):
        r = reasons.setdefault(target, {"arcs": 0, "atoms": []})
        if kind == "arc":
            r["arcs"] += 1
        else:
            r["atoms"].append(value)
    return Entry(corpus_name(c.code), c.code, c.origin, {"statements": c.statements, "dynamic": c.dynamic,
                                                          "quantized": c.quantized, "reasons": reasons})
