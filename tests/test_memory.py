"""The cycle collector paused for a one-shot run's bookkeeping and resumed where graphs are made
(harness/core/memory.py): what each block leaves the collector doing."""

from __future__ import annotations

import gc
import weakref

from harness.core.memory import collection_paused, collection_resumed


class Node:
    def __init__(self):
        self.me = self  # a cycle: only the collector frees it


def test_a_pause_stops_the_collector_and_restores_it():
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
        with collection_paused():  # nested: still off, and still off after the inner block
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_resuming_inside_a_pause_freezes_what_the_pause_made_and_collects_what_the_block_left():
    try:
        with collection_paused():
            kept = [Node() for _ in range(100)]  # made while paused: frozen when the collector resumes
            with collection_resumed():
                assert gc.isenabled() and gc.get_freeze_count() >= 100
                dead = weakref.ref(Node())  # a dead cycle made while judging
            assert not gc.isenabled()  # paused again, after collecting the block's cycles
            assert dead() is None
            assert len(kept) == 100
        assert gc.isenabled()
    finally:
        gc.unfreeze()


def test_resuming_where_nothing_paused_changes_nothing():
    frozen = gc.get_freeze_count()
    with collection_resumed():
        assert gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == frozen
