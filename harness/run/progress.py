"""Units done and left in a judging, and an ETA from what each unit cost when it was last recorded.

The conformance suite reports items (one per pass x graph x check) while
what takes time is judging a unit (one pass on one graph): the count that
means something to a reader is units, and the ETA is a sum of the units'
recorded costs (:mod:`harness.run.outlook`) more than a count of items. The
recorded costs are a prior: once some work is done, the wall time it took
calibrates the rest (workers, load, reporting overhead included).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

__all__ = ["ITEM_SECONDS", "CALIBRATE_AFTER_S", "Progress", "duration"]

# What reporting one item costs besides judging (its reports travel and are handled one at a time): the whole
# cost of a reused unit. A prior only: the observed rate replaces it once CALIBRATE_AFTER_S have passed.
ITEM_SECONDS = 0.002
CALIBRATE_AFTER_S = 20.0


def duration(seconds: float) -> str:
    """``seconds`` as ``1h02m``, ``3m05s`` or ``42s``."""
    s = max(0, int(round(seconds)))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


@dataclass
class Progress:
    """The units of one judging: the items each has left to report, and what each should cost."""

    items_left: dict  # unit key -> items not reported yet
    seconds: dict  # unit key -> estimated seconds (judging, or 0 when reused; reporting added here)
    workers: int = 1
    started: Optional[float] = None  # when the first item was reported
    done: int = 0
    done_seconds: float = 0.0
    failed: int = 0
    units_total: int = field(init=False)
    total_seconds: float = field(init=False)

    def __post_init__(self) -> None:
        for key, n in self.items_left.items():
            self.seconds[key] = self.seconds.get(key, 0.0) + n * ITEM_SECONDS
        self.units_total = len(self.items_left)
        self.total_seconds = sum(self.seconds[k] for k in self.items_left)

    @property
    def left(self) -> int:
        return self.units_total - self.done

    def item(self, unit_key: Optional[str], now: float, failed: bool = False) -> bool:
        """One item of ``unit_key`` reported; True when it was its unit's last. Unknown units are ignored."""
        if self.started is None:
            self.started = now
        self.failed += failed
        n = self.items_left.get(unit_key)
        if not n:
            return False
        self.items_left[unit_key] = n - 1
        if n > 1:
            return False
        self.done += 1
        self.done_seconds += self.seconds.get(unit_key, 0.0)
        return True

    def eta(self, now: float) -> float:
        """Seconds left: the recorded cost left, at the rate observed so far (at first, split over the workers)."""
        left = max(0.0, self.total_seconds - self.done_seconds)
        if not self.left:
            return 0.0
        elapsed = now - self.started if self.started is not None else 0.0
        if elapsed >= CALIBRATE_AFTER_S and self.done_seconds > 0:
            return left * elapsed / self.done_seconds
        return left / max(1, self.workers)

    def line(self, now: float) -> str:
        """``passgate: 120 of 3,400 units done, 3,280 left | 2 failed | 1m40s, ETA ~12m30s``."""
        elapsed = now - self.started if self.started is not None else 0.0
        failed = f" | {self.failed} failed" if self.failed else ""
        return (f"passgate: {self.done:,} of {self.units_total:,} units done, {self.left:,} left{failed} | "
                f"{duration(elapsed)}, ETA ~{duration(self.eta(now))}")

    def summary(self, now: float) -> str:
        """The last line: ``passgate: 3,400 of 3,400 units done in 12m30s | 2 failed``."""
        elapsed = now - self.started if self.started is not None else 0.0
        failed = f" | {self.failed} failed" if self.failed else ""
        return f"passgate: {self.done:,} of {self.units_total:,} units done in {duration(elapsed)}{failed}"
