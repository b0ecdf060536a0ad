"""Garbage collection paused around bulk bookkeeping, resumed wherever graphs are made.

A warm gate reads, reuses and reports ~230,000 verdict records: acyclic
dicts and dataclasses that reference counting frees on its own. CPython's
cycle collector still scans them, again and again as they age through its
generations: 4.5 s of a 19 s warm run, measured with ``gc.callbacks``.
Pausing it for a block only defers that work (the allocation counts keep
growing, and the first allocation after the block pays for a collection
of everything made inside it), so the pause has to cover the whole run of
a one-shot process: ``passgate run`` pauses around its session, and the
places that make FX graphs, which are cyclic, resume it: loading cases and
judging units (:mod:`harness.run.incremental`, :class:`harness.run.session.Session`).
Workers forked while judging inherit a running collector. What a pause made
is frozen when the collector resumes (:func:`collection_resumed`), after one
collection of it, so only live objects are frozen: records, cases and
imports that stay alive to the end of the run anyway (the acyclic ones
are still freed by reference counting when they die).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

__all__ = ["collection_paused", "collection_resumed"]


@contextmanager
def collection_paused() -> Iterator[None]:
    """The cycle collector off inside the block (as it was after it); reference counting still frees."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def collection_resumed() -> Iterator[None]:
    """The cycle collector on inside the block, where graphs are made and their cycles must die as they go.

    Resuming from a pause first collects, then freezes what is alive (:func:`gc.freeze`: records, imports),
    so neither this process nor a worker forked inside the block scans it again: without that, every forked
    worker's first collection walked the parent's young objects, copying their pages (a cold catalog run
    was 20% slower). Leaving collects what the block left (cycles of dead graphs, the objects made since the
    freeze only) and pauses again. A no-op where nothing paused the collector.
    """
    if gc.isenabled():
        yield
        return
    gc.collect()  # first what the pause left dead (so no garbage is frozen): it scans only what is not frozen
    gc.freeze()
    gc.enable()
    try:
        yield
    finally:
        gc.collect()
        gc.disable()
