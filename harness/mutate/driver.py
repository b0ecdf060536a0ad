"""A whole campaign: entries and mutants drawn, cases loaded once, references and mutants judged in forked children.

The parent loads every case the drawn entries apply to and computes what
every check needs whatever the pass (reference outputs, fingerprints:
:func:`harness.check.runner.prepare_case`) before the first fork, so each
child starts warm and judges one thing: one entry's reference, or one
mutant. That child is also what makes a mutant private: the swapped code
object lives and dies with it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from harness.core.config import RunConfig
from harness.mutate.campaign import Outcome, Reference, Settings, failed_outcome, judge, reference
from harness.mutate.sampling import declared_unreachable, sample_entries, sample_mutants

__all__ = ["Campaign", "run_campaign", "extend_campaign"]


@dataclass
class Campaign:
    """Everything a mutation report says: the sample, the references, the outcomes."""

    settings: Settings
    entries: list = field(default_factory=list)  # entry names drawn
    cases: list = field(default_factory=list)  # graph names loaded
    references: dict = field(default_factory=dict)  # entry -> Reference
    outcomes: list = field(default_factory=list)  # Outcome, in sample order (None while not judged)
    catalogs: dict = field(default_factory=dict)  # entry -> catalog
    seconds: float = 0.0
    complete: bool = False

    def judged(self) -> list[Outcome]:
        return [o for o in self.outcomes if o is not None]


def _generated(specs: list) -> frozenset:
    """The names of the generated cases among ``specs`` (judged first; their verdict alone is kept apart)."""
    from harness.fuzz.corpus import is_generated

    return frozenset(s.name for s in specs if is_generated(s))


def _cases_for(target, specs: list, by_name: dict) -> list:
    return [by_name[s.name] for s in specs if target.applies(s)]


def _failed_reference(target, why: str) -> Reference:
    return Reference(target.name, error=why)


def _load_and_measure(chosen: list, specs: list, settings: Settings, config: RunConfig, workers: int, isolate: bool,
                      note: Callable[[str], None]) -> tuple[dict, dict]:
    """(case name -> case, entry -> Reference): the cases of ``specs`` the drawn entries apply to, loaded and prepared
    here before any fork, and each entry's unmutated run on them in a forked child."""
    from harness.check.runner import prepare_case
    from harness.fuzz.workers import evaluate
    from harness.graphs.cases import load_cases

    wanted = [s for s in specs if any(t.applies(s) for t in chosen)]
    note(f"mutate: loading {len(wanted)} cases")
    by_name = {s.name: c for s, c in zip(wanted, load_cases(wanted))}
    for t in chosen:
        for case in _cases_for(t, wanted, by_name):
            prepare_case(case, t.loaded.stage, config)

    def done(i: int, ref: Reference) -> None:
        note(f"reference {i + 1}/{len(chosen)} {ref.entry}: {len(ref.runs)} cases"
             + (f" (error: {ref.error})" if ref.error else ""))

    refs = evaluate(chosen, lambda t: reference(t, _cases_for(t, wanted, by_name), config, settings),
                    _failed_reference, workers=workers, isolate=isolate, limit=3600.0, done=done)
    return by_name, {r.entry: r for r in refs}


def run_campaign(targets: list, specs: list, settings: Settings, config: RunConfig, *, workers: int = 1,
                 isolate: bool = True, note: Callable[[str], None] = lambda s: None,
                 saved: Optional[Callable[[Campaign], None]] = None) -> Campaign:
    """Draw, load, measure the references, judge the mutants; ``saved(campaign)`` after each batch of outcomes."""
    from harness.fuzz.workers import evaluate

    started = time.perf_counter()
    chosen = sample_entries(targets, settings.entries, settings.seed)
    camp = Campaign(settings, [t.name for t in chosen], catalogs={t.name: t.catalog or "pass" for t in chosen})
    note(f"mutate: {len(chosen)} entries drawn")
    by_name, camp.references = _load_and_measure(chosen, specs, settings, config, workers, isolate, note)
    camp.cases = list(by_name)

    pairs = sample_mutants(chosen, settings.sample, settings.seed, settings.operators)
    camp.outcomes = [None] * len(pairs)
    todo = []
    for i, (t, m) in enumerate(pairs):
        if camp.references[t.name].reaching(m):
            todo.append(i)  # judged, declared unreachable or not (a declaration a case contradicts is wrong)
        elif why := declared_unreachable(m):
            camp.outcomes[i] = Outcome(m, t.name, t.catalog or "pass", "unreachable", note=why, alone="unreachable")
        else:
            camp.outcomes[i] = Outcome(m, t.name, t.catalog or "pass", "not_reached")
    note(f"mutate: {len(pairs)} mutants drawn, {len(todo)} reached by a case, {len(pairs) - len(todo)} by none")

    count = [0]

    def done(k: int, outcome: Outcome) -> None:
        target, mutant = pairs[todo[k]]
        if declared_unreachable(mutant) and outcome.status != "not_reached":
            outcome.note = (outcome.note + "; " if outcome.note else "") + \
                "declared unreachable (passgate.unreachable), yet a case reached it: the declaration is wrong"
        camp.outcomes[todo[k]] = outcome
        count[0] += 1
        where = f" on {outcome.killed_by.get('graph')} ({outcome.killed_by.get('check')})" if outcome.killed_by else ""
        note(f"[{count[0]}/{len(todo)}] {outcome.entry} {outcome.mutant.diff()[:90]} ({outcome.mutant.site.operator}):"
             f" {outcome.status}{where}")
        if saved is not None and count[0] % 20 == 0:
            camp.seconds = time.perf_counter() - started
            saved(camp)

    generated = _generated(specs)
    evaluate([pairs[i] for i in todo],
             lambda p: judge(p[1], p[0], camp.references[p[0].name], by_name, config, generated),
             failed_outcome, workers=workers, isolate=isolate, limit=900.0, done=done)
    camp.complete = True
    camp.seconds = time.perf_counter() - started
    return camp


_OPEN = ("survived", "not_reached", "equivalent", "unreachable")


def _reopened(old: dict, targets: list, settings: Settings) -> tuple[list, list]:
    """(the drawn targets, the (target, mutant) pairs) of an earlier campaign, drawn again from its settings and
    checked against its mutant ids (UsageError when the catalogs or sources changed under it)."""
    from harness.core.errors import UsageError

    chosen = sample_entries(targets, settings.entries, settings.seed)
    pairs = sample_mutants(chosen, settings.sample, settings.seed, settings.operators)
    if [m.id for _, m in pairs] != [m["id"] for m in old["mutants"]]:
        raise UsageError("the earlier mutation report was drawn from other catalogs or sources: its sample cannot "
                         "be drawn again here (run the whole campaign)")
    return chosen, pairs


def extend_campaign(old: dict, targets: list, added: list, config: RunConfig, *, workers: int = 1,
                    isolate: bool = True, note: Callable[[str], None] = lambda s: None) -> Campaign:
    """An earlier campaign (its mutation.json) with graphs ``added``: only its undetected mutants are judged again,
    on the added cases alone. Sound because adding cases changes no verdict on the old ones: a detected mutant stays
    detected; a survivor is killed when an added case kills it; an equivalent one survives when an added case
    shows its program changed. The same holds of the generated cases' own verdict (:attr:`Outcome.alone`): a
    mutant only the hand-written graphs detected is judged again for it."""
    from harness.fuzz.workers import evaluate
    from harness.mutate.campaign import INERT, Outcome, merged

    started = time.perf_counter()
    s = old["sample"]
    settings = Settings(s["mutants"], s["entries"], s["seed"], tuple(s["operators"]) if s["operators"] != "all" else (),
                        s["timeout_floor"])
    chosen, pairs = _reopened(old, targets, settings)
    camp = Campaign(settings, [t.name for t in chosen], catalogs={t.name: t.catalog or "pass" for t in chosen})
    by_name, camp.references = _load_and_measure(chosen, added, settings, config, workers, isolate, note)
    camp.cases = list(s["cases"]) + [n for n in by_name if n not in s["cases"]]
    camp.outcomes, todo = [], []
    for (t, m), before in zip(pairs, old["mutants"]):
        kept = Outcome(m, t.name, t.catalog or "pass", before["status"], list(before["cases"]),
                       dict(before["killed_by"]), before["seconds"], before["note"], before.get("alone", ""),
                       before.get("alone_by", ""))
        camp.outcomes.append(kept)
        open_ = before["status"] in _OPEN or (kept.alone or "not_reached") in _OPEN
        if open_ and before["status"] != "not_applied" and camp.references[t.name].reaching(m):
            todo.append(len(camp.outcomes) - 1)
    note(f"mutate: {len(todo)} undetected mutants reached by the {len(by_name)} added cases")

    def done(k: int, now: Outcome) -> None:
        was = camp.outcomes[todo[k]]
        now.cases = was.cases + [c for c in now.cases if c not in was.cases]
        now.alone = merged(was.alone or "not_reached", now.alone)
        now.alone_by = was.alone_by or now.alone_by
        if was.status not in _OPEN:  # detected before: judged again only for the generated cases' verdict
            now.status, now.killed_by, now.note = was.status, was.killed_by, was.note
        else:
            now.status = merged(was.status, now.status)
            if now.status == "survived":  # an old difference still counts; inert only where inert wherever it survived
                now.note = INERT if all(o.note == INERT for o in (was, now) if o.status == "survived") else ""
        camp.outcomes[todo[k]] = now
        note(f"[{k + 1}/{len(todo)}] {now.entry} {now.mutant.diff()[:90]}: {was.status} -> {now.status}")

    generated = _generated(added)
    evaluate([pairs[i] for i in todo],
             lambda p: judge(p[1], p[0], camp.references[p[0].name], by_name, config, generated),
             failed_outcome, workers=workers, isolate=isolate, limit=900.0, done=done)
    camp.complete = bool(old.get("complete"))
    camp.seconds = float(old.get("seconds", 0.0)) + time.perf_counter() - started
    return camp
