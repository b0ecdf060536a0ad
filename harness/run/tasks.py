"""What an isolation worker runs: a task, and what its results are when its worker is lost.

The isolation pool (:mod:`harness.run.isolation`) forks workers and hands
them indices into a list of tasks both sides hold. A task says how to judge
itself in the worker and what stands for its results when the worker dies,
hangs or raises past the judging, so the pool needs no branch per kind of
work: :class:`PairTask` is one pass x graph pair (``passgate check``, a
catalog entry's graphs under ``passgate run``); ``passgate run -j N`` adds
whole units (:class:`harness.run.parallel.UnitTask`).

Tasks of one ``group`` may share a worker, one after the other; a worker
never runs tasks of two groups, so a pass's changes to its process never
reach another group's verdicts (each group starts in fresh forks of the
parent, as a ``-j 1`` run starts each catalog entry).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any

from harness.check import runner, spares
from harness.core.config import RunConfig
from harness.core.results import IR_CHECK_IDS, CheckResult, Status, result

__all__ = ["PairTask", "pair_failed", "strip_unpicklable"]


def pair_failed(loaded, case, config, message: str, details: dict, status: Status = Status.FAIL,
                skip_reason: str = "the pass did not run", seconds: float = 0.0) -> list[CheckResult]:
    """``runs`` = ``status`` with ``message``; every other wanted IR check skipped."""
    out = []
    for check in IR_CHECK_IDS:
        if not config.wants(check):
            continue
        if check == "runs":
            out.append(result(loaded.name, case.name, check, status, message, details, seconds))
        else:
            out.append(result(loaded.name, case.name, check, Status.SKIP, skip_reason))
    return out


def strip_unpicklable(results: list[CheckResult], exc: Exception) -> None:
    """Replace details that do not pickle by their repr: the verdicts must reach the parent anyway."""
    for r in results:
        r.details = {"unpicklable_details": f"{type(exc).__name__}: {exc}", "repr": repr(r.details)[:2000]}


@dataclass(frozen=True)
class PairTask:
    """One pass x graph pair, judged by :func:`harness.check.runner.check_pass_on_case`."""

    loaded: Any  # harness.check.loading.LoadedPass
    case: Any  # harness.graphs.cases.GraphCase
    config: RunConfig
    group: int = 0

    watched = True  # the pass calls report start / end, so a pass stuck past its timeout is killed
    keeps_memos = True  # reference outputs and fingerprints it computed go back to the parent

    @property
    def record_key(self) -> tuple:
        """Where :mod:`harness.run.deps` notes what it executed."""
        return (self.loaded.name, self.case.name)

    def before_fork(self) -> None:
        """In the parent, before workers fork: the copies of its case the pair is handed (:mod:`harness.check.spares`)."""
        spares.stock(self.case, self.config.stage or self.loaded.stage)

    def execute(self) -> list[CheckResult]:
        return runner.check_pass_on_case(self.loaded, self.case, self.config)

    def escaped(self, exc: BaseException, in_pass: bool) -> list[CheckResult]:
        """Results when judging raised past the runner (SystemExit from a pass, or a harness bug)."""
        text = f"{type(exc).__name__}: {exc}"
        details = {"outcome": "raised", "traceback": traceback.format_exc(limit=12)}
        if in_pass:
            return pair_failed(self.loaded, self.case, self.config, f"the pass raised: {text}", details)
        details["outcome"] = "harness_error"
        return pair_failed(self.loaded, self.case, self.config, f"passgate failed while checking this pair: {text}",
                           details, status=Status.ERROR, skip_reason="not checked: passgate failed on this pair")

    def lost(self, message: str, details: dict, status: Status, skip_reason: str, seconds: float,
             cause: str) -> list[CheckResult]:
        """Results when its worker died, hung or sent what cannot be read (``cause``: the same, shorter)."""
        return pair_failed(self.loaded, self.case, self.config, message, details, status, skip_reason, seconds)

    def strip(self, payload: list[CheckResult], exc: Exception) -> list[CheckResult]:
        strip_unpicklable(payload, exc)
        return payload

    def retires_worker(self, payload: list[CheckResult]) -> bool:
        """The worker's copy of the shared case may be corrupt after a failed ``input_unchanged``: start clean."""
        return any(r.check == "input_unchanged" and r.status is Status.FAIL for r in payload)
