"""Judging many pass x graph pairs: in this process or in forked workers, in a stable order.

:func:`check_all` is the one entry point every command uses; it returns the
results. Long runs also want to show and keep each pair as it finishes (a
Ctrl-C must not lose what is done), so a :class:`Tally` may be passed: it
numbers the pairs across several ``check_all`` calls (a sharded run, one call
per catalog entry) and hands each as a :class:`PairDone` to one sink.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from harness.check.loading import LoadedPass
from harness.check.runner import check_pass_on_case
from harness.core.config import RunConfig
from harness.core.results import CheckResult, Status, result
from harness.graphs.cases import GraphCase
from harness.run import deps, hashseed
from harness.run.isolation import run_isolated

__all__ = ["PairDone", "Tally", "check_all"]


@dataclass(frozen=True)
class PairDone:
    """One judged pass x graph pair."""

    pass_name: str
    graph: str
    results: list[CheckResult]
    done: int
    """Pairs done so far, this one and those skipped as already done included."""
    total: int
    """Pairs the whole run will judge."""


@dataclass
class Tally:
    """Counts judged pairs over a whole run and hands each to ``sink``."""

    sink: Callable[[PairDone], None]
    total: Optional[int] = None  # None: the first check_all call sets it to its own pair count
    done: int = 0

    def add(self, pass_name: str, graph: str, results: list[CheckResult]) -> None:
        self.done += 1
        self.sink(PairDone(pass_name, graph, results, self.done, self.total if self.total is not None else self.done))

    def skipped(self, count: int) -> None:
        """``count`` pairs a resumed run already holds: counted as done, not handed on."""
        self.done += count


def check_all(passes: Iterable[LoadedPass], cases: Iterable[GraphCase], config: RunConfig = RunConfig(),
              tally: Optional[Tally] = None) -> list[CheckResult]:
    """Every pass on every case, pass-major; the results in that order.

    Pairs come in the same order whether they run in-process or, with
    ``config.isolate``, in worker processes; pairs in ``config.skip`` count
    as done without running, so a resumed run's progress continues.
    """
    passes, cases = list(passes), list(cases)
    if config.hash_seed_check:  # before any fork: isolation workers reach the same hash-seed worker
        hashseed.ensure()
    todo = [(p, case) for p in passes for case in cases if (p.name, case.name) not in config.skip]
    if tally is not None:
        if tally.total is None:
            tally.total = len(passes) * len(cases)
        tally.skipped(len(passes) * len(cases) - len(todo))
    results: list[CheckResult] = []

    def deliver(index: int, rs: list) -> None:
        p, case = todo[index]
        rs = rs + [result(p.name, case.name, check, Status.SKIP, why) for check, why in config.skip_checks]
        results.extend(rs)
        if tally is not None:
            tally.add(p.name, case.name, rs)

    if config.isolate:

        run_isolated(todo, config, deliver, workers=config.workers)
    else:
        for index, (p, case) in enumerate(todo):
            deliver(index, _checked(p, case, config))
    return results


def _checked(p: LoadedPass, case: GraphCase, config: RunConfig) -> list[CheckResult]:
    """One pair in this process; with ``config.record_deps``, the files it executed noted for the verdict cache."""
    if not config.record_deps:
        return check_pass_on_case(p, case, config)
    rec = deps.Recorder().start()
    try:
        return check_pass_on_case(p, case, config)
    finally:
        deps.note((p.name, case.name), rec.stop())
