"""Private copies of a case's program made before the processes that use them are forked.

Every pass x case pair is handed two private copies of the case's program:
one for the pass's run and one for the ``deterministic`` check's run on a
second copy. A copy costs what the case is: a deep copy (~3 ms) for a
static program, a load from its serialized form (~33 ms, and a third of a
cold worker's time on dynamic cases) for one with symbolic shapes, which
needs a ShapeEnv of its own (:meth:`harness.graphs.cases.GraphCase.program`).
That cost is the same for every pass, and the pairs run in forked workers
(:mod:`harness.run.isolation`), the warm server's children among them.

So the process that forks makes the copies once (:func:`stock`), and every
process forked after that gets its own copy-on-write view of them: each
such process can take each spare once (:func:`take`), its pass editing
pages only it sees; after that, copies are made as before. A process that
takes one itself (an in-process run) leaves fewer for the forks after it,
and the next :func:`stock` tops them up.

A spare is what a copy made now would be only while the shared program is
what it was when the spares were made, so one is handed out only while the
shared program's exact fingerprint is still the one taken then (the
equality ``input_unchanged`` trusts): after a pass changed the shared case it
was never handed, the next copies are copies of the changed case, as
without spares.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from harness.check import fingerprint

__all__ = ["COPIES", "stock", "take", "fresh", "count", "drop"]

COPIES = 2
"""Spares per case and stage: the two fresh inputs of one pass on the case (its run and the
``deterministic`` check's run on a second copy)."""


@dataclass
class _Stock:
    case: weakref.ref  # the case, weakly: a stock never keeps a case alive, and its id is checked against it
    seal: str  # exact fingerprint of the shared program when the copies were made
    copies: list = field(default_factory=list)  # taken from the end


_STOCKS: dict = {}  # (id(case), stage) -> _Stock


def _stock_of(case, stage: str):
    entry = _STOCKS.get((id(case), stage))
    if entry is not None and entry.case() is not case:  # another case that got a dead one's id
        del _STOCKS[(id(case), stage)]
        return None
    return entry


def stock(case, stage: str, copies: int = COPIES) -> int:
    """Top up ``case``'s spares at ``stage`` to ``copies``; how many were made.

    The seal is taken when the stock is first made and not re-read on a top-up
    (re-reading it costs a fingerprint of the shared program every time a pool
    forks): :func:`take` checks it, so a stale stock is only a wasted one. A
    case whose program cannot be copied gets no spares: its checks say why.
    """
    entry = _stock_of(case, stage)
    try:
        if entry is None:
            entry = _Stock(weakref.ref(case), fingerprint.of_shared(case, stage))
            key = (id(case), stage)
            _STOCKS[key] = entry
            weakref.finalize(case, _STOCKS.pop, key, None)
        made = 0
        while len(entry.copies) < copies:
            entry.copies.append(case.program(stage))
            made += 1
        return made
    except Exception:  # noqa: BLE001 - the pair's own copy will raise it again, where it is reported
        _STOCKS.pop((id(case), stage), None)
        return 0


def take(case, stage: str):
    """A spare private copy of ``case``'s program at ``stage``, or None when there is none left or it is stale."""
    entry = _stock_of(case, stage)
    if entry is None or not entry.copies:
        return None
    if fingerprint.of_shared(case, stage) != entry.seal:
        _STOCKS.pop((id(case), stage), None)  # the shared case changed: its spares are not copies of it any more
        return None
    return entry.copies.pop()


def fresh(case, stage: str):
    """A private copy of ``case``'s program at ``stage``: a spare while any is left, else one made now."""
    spare = take(case, stage)
    return spare if spare is not None else case.program(stage)


def count(case, stage: str) -> int:
    """How many spares ``case`` has at ``stage`` in this process."""
    entry = _stock_of(case, stage)
    return len(entry.copies) if entry is not None else 0


def drop(case) -> None:
    """Forget the spares of ``case``."""
    for key in [k for k in _STOCKS if k[0] == id(case)]:
        del _STOCKS[key]
