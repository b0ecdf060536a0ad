"""The work of ``passgate vulkan``: its items, how ``--shard I/N`` cuts them, what an interrupted run keeps.

An item is one (fusion, case) of the fixed recipe list (``--count``), or one
(fusion, fused op) of the search: the search of an op is sequential (each
draw decides whether to shrink, shrinking decides what is judged next), so
the op is the smallest unit that gives the same draws and shrinks whatever
``-j``. Items are listed in the order a ``-j 1`` run writes them, and
reports keep that order.

Shards work as ``passgate run``'s (:func:`harness.run.sharding.split`): the
case (or op) names are sorted and cut into N contiguous blocks, so the
parts are disjoint and cover the whole, and one case's fusions stay on one
machine (it quantizes the case once). A part keeps the -j 1 order among its
own items; the configuration lists every case of the run in that order
(``graphs``), so ``passgate report merge`` puts the parts' records back in
it.

Both runs (the recipe list and the search) record what was asked for the
same way (:func:`configuration`), so it lives here, below both, and neither
run imports the other.

A search budget (``--budget``, seconds of exploration) is shared out as
:func:`vulkan.search.op_search.search` does, what a quick op leaves going to the ops
after it, but decided when an item starts (:class:`Shares`): the share is
what the fusion's pool has left, after the finished ops' spending and the
running ops' shares, over the ops not started yet. With ``-j 1`` that is
exactly the sequential rule. A shard gets its items' part of the pool.
"""

from __future__ import annotations

import signal
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

from harness.core.kinds import ExitCode
from harness.run.sharding import split

__all__ = ["Item", "case_items", "search_items", "shard_items", "Shares", "Collected", "configuration", "guarded"]


@dataclass(frozen=True)
class Item:
    """One fusion (``fusions[fusion_index]``) on one case (``--count``) or one op's space (the search)."""

    fusion_index: int
    fusion: Any  # vulkan.backend.fusion.Fusion
    subject: Any  # vulkan.cases.recipes.VulkanCase | vulkan.search.space.OpSpace

    @property
    def name(self) -> str:
        return self.subject.name


def case_items(fusions: list, recipes_: list, count: int, seed: int) -> list[Item]:
    """The fixed list: every fusion on ``count`` drawn cases of each recipe, fusion-major (the -j 1 order)."""
    from vulkan.cases import recipes

    cases = [c for r in recipes_ for c in recipes.cases(r, count, seed)]
    return [Item(i, f, c) for i, f in enumerate(fusions) for c in cases]


def search_items(fusions: list, spaces: list) -> list[Item]:
    return [Item(i, f, sp) for i, f in enumerate(fusions) for sp in spaces]


def shard_items(items: list[Item], shard) -> list[Item]:
    """Shard ``shard``'s items (all without one), in the order of ``items``.

    The cut is over the sorted case (or op) names, so every fusion of one
    case lands on the same shard.
    """
    if shard is None:
        return list(items)
    mine = set(split(sorted({it.name for it in items}), shard, key=str))
    return [it for it in items if it.name in mine]


class Shares:
    """Exploration seconds per search item, decided when each item starts (see the module docstring)."""

    def __init__(self, items: list[Item], budget: Optional[float], fusions: int, everything: list[Item]):
        self.items, self.budget = items, budget
        self.pool: dict = {}
        self.waiting: dict = {}
        for it in items:
            self.waiting[it.fusion_index] = self.waiting.get(it.fusion_index, 0) + 1
        if budget is not None:
            for f, mine in self.waiting.items():
                total = sum(1 for it in everything if it.fusion_index == f)
                self.pool[f] = budget / fusions * mine / total
        self.spent: dict = dict.fromkeys(self.waiting, 0.0)
        self.running: dict = {}  # item index -> share

    def take(self, i: int) -> Optional[float]:
        if self.budget is None:
            return None
        f = self.items[i].fusion_index
        committed = sum(s for j, s in self.running.items() if self.items[j].fusion_index == f)
        share = max(0.0, (self.pool[f] - self.spent[f] - committed) / self.waiting[f])
        self.waiting[f] -= 1
        self.running[i] = share
        return share

    def done(self, i: int, explore_s: float) -> None:
        self.running.pop(i, None)
        self.spent[self.items[i].fusion_index] += explore_s


class Collected:
    """The values of finished items by index: what a report is written from, whole or interrupted."""

    def __init__(self, items: list[Item]):
        self.items = items
        self.values: dict[int, Any] = {}

    def put(self, i: int, value: Any) -> None:
        self.values[i] = value

    def in_order(self) -> list[tuple[Item, Any]]:
        return [(self.items[i], self.values[i]) for i in sorted(self.values)]

    @property
    def complete(self) -> bool:
        return len(self.values) == len(self.items)


def guarded(body: Callable[[], int], write_partial: Callable[[], None]) -> int:
    """``body()``; on Ctrl-C (exit 130) or SIGTERM (exit 1) ``write_partial()`` writes the finished items' report.

    The same contract as the engine's runs (:mod:`harness.run.session`): a
    cancelled CI job still uploads what was judged, marked ``complete:
    false``; and every fusion that finished is in the cache, so running the
    same command again judges those cases without fusing them again.
    """
    from harness.run.session import Terminated, sigterm_raises

    with sigterm_raises():
        try:
            return body()
        except KeyboardInterrupt:
            what, status = "interrupted", ExitCode.INTERRUPTED
        except Terminated:
            what, status = "terminated (SIGTERM)", ExitCode.VIOLATION
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN) if main else None  # a second one must not cut it short
    try:
        print(f"passgate: {what}: writing the report of what finished (rerunning reuses the cached fusions)",
              file=sys.stderr, flush=True)
        write_partial()
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
    return int(status)


def configuration(args, fusions, device, mode: str) -> dict:
    """What was asked for, as ``results.json`` records it; ``-j`` is not in it (it changes no verdict)."""
    shard = getattr(args, "shard", None)
    return {"command": "vulkan", "mode": mode, "ops": args.ops, "fusions": [f.name for f in fusions],
            "seed": args.seed, "executor": getattr(device, "name", "reference"), "strict": args.strict,
            "timeout": args.timeout, "shard": str(shard) if shard else None}
