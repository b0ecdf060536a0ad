"""The per-case memos of one process, owned by one object: :data:`MEMOS`.

Four things are worth keeping per case for the life of a process: the
lowered case itself (loading one from the disk cache costs ~50 ms, lowering
it seconds), the outputs of the pre-pass program on its input draws (every
pass's ``numerics`` compares against them), the fingerprint of the shared
case as first seen (``input_unchanged`` compares against it), and its
canonical form (what every pass's result is compared against to say whether
the pass changed the program's structure: digesting the state tensors of a
large case costs more than most passes). Many parts of
passgate need them: the runner fills them, isolation workers send theirs back
so the next worker forked inherits them, the warm server preloads and drops
them, pipelines forget the ones of derived cases. They all go through the
methods here, never through the dicts of another module.

Keys of ``references``, ``fingerprints`` and ``canonical_forms`` hold ``id(case)``, which a fork
preserves; :meth:`CaseMemos.forget` drops them with the case, so a reused
``id()`` cannot hit a stale entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

__all__ = ["CaseMemos", "MEMOS"]

_CASE_KEYED = ("references", "fingerprints", "canonical_forms", "handed_verdicts")  # keys hold id(case)


@dataclass
class CaseMemos:
    """Every per-case memo of this process."""

    cases: dict[str, Any] = field(default_factory=dict)
    """memo key (``spec.key:cache root``) -> GraphCase (:func:`harness.graphs.cases.load_case`)."""
    references: dict[tuple, Any] = field(default_factory=dict)
    """(spec key, id(case), stage, seed, draws, torch threads) -> reference outputs (:mod:`harness.check.runner`)."""
    fingerprints: dict[tuple, str] = field(default_factory=dict)
    """(id(case), stage) -> the shared case's exact fingerprint as first seen in this process."""
    canonical_forms: dict[tuple, Any] = field(default_factory=dict)  # check.changes.HandedForms
    """(id(case), stage) -> :func:`harness.check.fingerprint.canonical` of the shared case (the ``changed`` of ``runs``)."""
    handed_verdicts: dict[tuple, Any] = field(default_factory=dict)  # check.verifiers.Verdict
    """(id(case), stage, exact fingerprint) -> the dialect verifier's verdict on the program every pass on the case is
    handed: the verdict on any result that is an exact replica of it (a pass that changed nothing), judged once."""

    def clear(self, cases: bool = True) -> None:
        """Forget the references and fingerprints, and the loaded cases too unless ``cases`` is False."""
        self.references.clear()
        self.fingerprints.clear()
        self.canonical_forms.clear()
        self.handed_verdicts.clear()
        if cases:
            self.cases.clear()

    def forget(self, cases: Iterable[Any]) -> None:
        """Drop what is memoized about these case objects (not the cases themselves)."""
        ids = {id(c) for c in cases}
        for name in _CASE_KEYED:
            table = getattr(self, name)
            for key in [k for k in table if any(part in ids for part in k if isinstance(part, int))]:
                del table[key]

    def drop(self, case: Any) -> None:
        """Forget ``case`` entirely: a warm server drops a case whose definition changed on disk."""
        self.forget([case])
        for key in [k for k, v in self.cases.items() if v is case]:
            del self.cases[key]

    def mark(self) -> dict[str, set]:
        """The keys held now, to send back only what is computed after (:meth:`added_since`)."""
        return {name: set(getattr(self, name)) for name in _CASE_KEYED}

    def added_since(self, mark: dict[str, set]) -> dict[str, dict]:
        """The reference, fingerprint and canonical-form entries computed since ``mark``; ``mark`` is updated to now."""
        out = {}
        for name in _CASE_KEYED:
            table = getattr(self, name)
            out[name] = {k: v for k, v in table.items() if k not in mark[name]}
            mark[name].update(out[name])
        return out

    def merge(self, added: dict[str, dict]) -> None:
        """Keep what a worker computed (:meth:`added_since` on its side), so the next worker forked inherits it."""
        for name, entries in added.items():
            if name in _CASE_KEYED:
                getattr(self, name).update(entries)


MEMOS = CaseMemos()
"""The process's memos. A forked worker inherits them as they were at fork time."""
