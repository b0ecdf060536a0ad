"""``--shard I/N``: one run split over N CI machines (joined again by :mod:`harness.report.merge`).

The work items are the pass x graph pairs (every check of a pair runs in
one process, because the checks share the pass's output). Pairs are sorted
graph first, then pass, and cut into N contiguous runs of near-equal length
(sizes differ by at most one). Sorting makes the split independent of the
order passes and graphs were named on the command line; cutting graph-major
keeps each graph on as few shards as possible, because lowering a graph
(seconds for zoo and quantized models) is what a fresh CI machine pays per
graph it touches, while a pass costs nothing to load. Every machine must see
the same pass and graph lists (same commit, same seed), which ``merge``
verifies.

``passgate run`` cuts its units the same way; with ``--shard-costs`` the
blocks are of near-equal recorded time instead of count
(:mod:`harness.run.costs`), so the slowest machine of a CI matrix waits
about as long as the others.

Merging puts the records back in the order an unsharded run writes them
(the configuration's pass order, then its graph order, checks as the runner
emitted them), so a merged results.json equals the unsharded one apart from
timings. A missing, repeated or foreign part is a one-line usage error.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from harness.core.shards import Shard
from harness.run.scheduler import check_all

__all__ = ["work_items", "assigned", "ShardPlan", "plan", "split"]


def work_items(pass_names: Iterable[str], graph_names: Iterable[str]) -> list[tuple[str, str]]:
    """(pass, graph) pairs in the order shards cut them: graph-major."""
    return sorted({(p, g) for p in pass_names for g in graph_names}, key=lambda pg: (pg[1], pg[0]))


def assigned(shard: Optional[Shard], pass_names: Sequence[str], graph_names: Sequence[str]) -> set:
    """The (pass, graph) pairs ``shard`` runs; all of them without a shard."""
    items = work_items(pass_names, graph_names)
    if shard is None:
        return set(items)
    start, end = shard.bounds(len(items))
    return set(items[start:end])


@dataclass
class ShardPlan:
    """What one shard runs: its (pass, graph) pairs and the graph specs they need.

    Computed from the whole selection, never from the cases a shard loads,
    so every machine deals the same items the same way.
    """

    shard: Optional[Shard]
    pairs: set
    specs: list  # only the graph cases this shard uses: a shard should not lower graphs it never runs

    def check(self, passes: Sequence, cases: Sequence, config, tally=None) -> list:
        """:func:`harness.run.scheduler.check_all` over this shard's pairs, ``tally`` counting over the shard."""

        if self.shard is None:
            return check_all(passes, cases, config, tally)
        if tally is not None and tally.total is None:
            tally.total = sum(1 for p in passes for c in cases if (p.name, c.name) in self.pairs)
        results = []
        for p in passes:
            subset = [c for c in cases if (p.name, c.name) in self.pairs]
            if subset:
                results.extend(check_all([p], subset, config, tally))
        return results

def plan(shard: Optional[Shard], pass_names: Sequence[str], specs: Sequence) -> ShardPlan:
    pairs = assigned(shard, pass_names, [s.name for s in specs])
    used = {g for _, g in pairs}
    return ShardPlan(shard, pairs, [s for s in specs if s.name in used])


def split(units: list, shard: Optional[Shard], key, costs: Optional[Callable[[list], list]] = None) -> list:
    """Shard ``shard``'s contiguous block of ``units`` sorted by ``key`` (all of them without a shard).

    Blocks of near-equal count, or with ``costs`` (units -> seconds each, :func:`harness.run.costs.unit_costs`)
    of near-equal cost: a unit goes to the shard its cost's midpoint falls in, so a shard's total is within
    one unit of the mean."""
    if shard is None:
        return list(units)
    ordered = sorted(units, key=key)
    weights = costs(ordered) if costs is not None else None
    total = sum(weights) if weights else 0.0
    if not total > 0:
        lo, hi = shard.bounds(len(ordered))
        return ordered[lo:hi]
    out, before = [], 0.0
    for unit, weight in zip(ordered, weights):
        if min(shard.count, int((before + weight / 2) * shard.count / total) + 1) == shard.index:
            out.append(unit)
        before += weight
    return out
