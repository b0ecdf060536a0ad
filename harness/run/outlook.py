"""What the verdict cache says of each unit before a judging: how likely it is to fail, and what it will cost.

A long judging says the most in its first minutes when it judges first the
units most likely to fail, and a progress line can give an ETA only from
what each unit cost when it was last recorded. Both read the same records
(:mod:`harness.run.verdicts`), once, here. A unit falls in one *tier*,
lowest judged first:

0. ``failed``: its last recorded verdict held a violation the baseline does
   not know (recorded, so it may still hold: it is the likeliest to fail);
1. ``edited``: its pass's own module is among the edited files (the working
   tree against ``HEAD``, or the files of ``--changed-since`` / ``--affected-by``);
2. ``new``: never judged under its key: a new graph, a new entry, a changed
   definition, or new versions of Python, torch or executorch;
3. ``stale``: recorded, but a file it executed has changed since;
4. ``settled``: its record still holds: it will be reused, not judged.

The order is a pure function of the plan, the cache and the edited files,
so every pytest-xdist worker (given the controller's tiers) collects the
same items in the same order.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from harness.run import deps
from harness.run.incremental import UNRECORDED_SECONDS

__all__ = ["FAILED", "EDITED", "NEW", "STALE", "SETTLED", "TIER_NAMES", "Outlook", "survey", "group_tiers",
           "ordered", "recorded_seconds", "tier_counts"]

FAILED, EDITED, NEW, STALE, SETTLED = range(5)
TIER_NAMES = ("failed last time", "edited", "new", "stale", "settled")


@dataclass(frozen=True)
class Outlook:
    """One unit before it is judged: its tier, and the seconds judging it should take (0 when reused)."""

    tier: int
    seconds: float
    reusable: bool


def recorded_seconds(record) -> float:
    """What judging the unit took when ``record`` was written: the sum of its results' durations."""
    return sum(float(r.get("duration_s") or 0.0) for r in record.results)


def _failed(record, known: Iterable) -> bool:
    """Did the recorded verdicts hold a must-level failure the baseline does not know?"""
    for r in record.results:
        if r.get("status") == "fail" and r.get("level", "must") == "must" and \
                (r.get("pass_name"), r.get("graph"), r.get("check")) not in known:
            return True
    return False


def survey(inc, plan, units: list, config, known: Iterable = frozenset(),
           edited: Optional[set] = None, priors: Optional[dict] = None) -> dict[str, Outlook]:
    """Unit key -> :class:`Outlook` for ``units`` of ``plan`` judged under ``config`` by ``inc``
    (a :class:`harness.run.incremental.Incremental`). Units no changed file reaches (``inc.changed``) are
    settled: they will not be judged. ``known``: (pass, graph, check) of the baseline's violations.
    ``priors``: unit key -> seconds, what a unit with no record under its key should cost (a committed costs
    file, :mod:`harness.run.costs`): units differ a hundredfold, so one flat guess makes a cold ETA useless."""
    priors = priors or {}
    deps.forget_hashes()  # files may have changed since this process last hashed them
    selection = inc.selection(plan, units, config)
    out = {u.key: Outlook(SETTLED, 0.0, True) for u in selection.not_affected}
    known = set(known)
    cache = inc.cache
    for u in selection.units:
        key = inc.keys.get(u.key)
        record = cache.read(key) if (cache is not None and key) else None
        if record is None:
            tier = EDITED if edited and inc.own_files(u) & edited else NEW
            out[u.key] = Outlook(tier, priors.get(u.key, UNRECORDED_SECONDS), False)
            continue
        reusable = inc.reuse and cache.holds(record)
        seconds = 0.0 if reusable else recorded_seconds(record)
        if _failed(record, known):
            tier = FAILED
        elif reusable:
            tier = SETTLED
        else:
            tier = EDITED if edited and inc.own_files(u) & edited else STALE
        out[u.key] = Outlook(tier, seconds, reusable)
    return out


def group_tiers(units: list, outlooks: dict, group_of: Callable) -> dict[str, int]:
    """Group -> the lowest tier of its units: a group (a pass's units, judged together) goes as one."""
    tiers: dict[str, int] = {}
    for u in units:
        g = group_of(u)
        t = outlooks[u.key].tier if u.key in outlooks else NEW
        tiers[g] = min(t, tiers.get(g, SETTLED))
    return tiers


def ordered(units: list, tiers: dict, group_of: Callable, default: int = SETTLED) -> list:
    """``units`` by their group's tier, then heavier kinds first, else in the given order (a stable sort).

    Heavier kinds first within a tier: the end of the run is then many short
    units the workers share evenly, not one long unit on one worker while the
    others wait. A group's units stay together: they share a tier and a kind.
    """
    return sorted(units, key=lambda u: (tiers.get(group_of(u), default), -u.heaviness))


def tier_counts(outlooks: dict) -> Counter:
    """Tier -> how many units fall in it."""
    return Counter(o.tier for o in outlooks.values())
