"""``passgate run -j N``: a plan's units judged N at a time, handed on in the order of a ``-j 1`` run.

At ``-j 1`` the units are judged group by group (:meth:`harness.run.plan.RunPlan.run`):
a catalog entry's graphs in one forked worker, every pipeline, partitioner or
runtime unit in a forked child of its own. ``-j N`` hands the same work to the
isolation pool ``passgate check -j`` uses (:mod:`harness.run.isolation`): a
batched unit's graph is a pair task, any other unit a :class:`UnitTask`. The
tasks of one entry form one group and every other unit a group of its own, and
a worker serves one group only, so each group starts from a fresh fork of this
process, as at ``-j 1``. The pool hands tasks back in order, and verdicts reused
from the cache are handed on at their place among them, so results.json, the
progress lines and the verdict cache read as a ``-j 1`` run's whichever worker
finished first. Interrupted, the pool still hands on what had finished.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Optional

from harness.core.config import RunConfig
from harness.core.results import CheckResult, Status, result
from harness.run import hashseed
from harness.run.isolation import Pool
from harness.run.tasks import PairTask, strip_unpicklable

__all__ = ["default_jobs", "Lost", "UnitTask", "judge"]


def default_jobs() -> int:
    """The cores this process may run on (its affinity mask, not the machine's count): ``-j``'s default."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Lost:
    """A unit whose worker died, overran or raised past its judging: ``cause`` says how."""

    cause: str


@dataclass(frozen=True)
class UnitTask:
    """A unit that is not batched (a pipeline, a partitioner, a runtime or plugged unit) on its case."""

    unit: Any  # harness.run.plan.Unit
    case: Any  # its GraphCase, or None when it builds its own
    config: RunConfig
    group: int

    watched = False  # as at -j 1 (harness.run.forking.call): only passgate's own deadline, not a pass timeout
    keeps_memos = False  # what it computed after changing process-wide state must not reach the parent

    @property
    def record_key(self) -> tuple:
        return ("unit", self.unit.key)  # harness.run.incremental.unit_record_key

    def before_fork(self) -> None:
        """Nothing: a unit's copies are of states it reaches in its own worker."""

    def execute(self) -> list:
        return self.unit.judge(self.case, self.config)

    def escaped(self, exc: BaseException, in_pass: bool) -> Lost:
        return Lost(f"{type(exc).__name__}: {exc}")

    def lost(self, message: str, details: dict, status: Status, skip_reason: str, seconds: float,
             cause: str) -> Lost:
        return Lost(cause)

    def strip(self, payload: Any, exc: Exception) -> Any:
        for _, _, rs in payload if not isinstance(payload, Lost) else ():
            strip_unpicklable(rs, exc)
        return payload

    def retires_worker(self, payload: Any) -> bool:
        return True  # its changes to process-wide state die with its worker


@dataclass
class _Order:
    """The -j 1 order: ("task", index) and ("call", fn) events; tasks are handed on as the pool returns them."""

    events: list
    tasks: list
    owners: list  # the unit of each task
    cursor: int = 0

    def add_task(self, task, unit) -> None:
        self.events.append(("task", len(self.tasks)))
        self.tasks.append(task)
        self.owners.append(unit)

    def until(self, index: Optional[int], call: Callable) -> None:
        """Run the events up to task ``index`` (None: all that are left), ``call``-ing each task event."""
        while self.cursor < len(self.events):
            kind, value = self.events[self.cursor]
            self.cursor += 1
            call(kind, value)
            if kind == "task" and value == index:
                return


def _ordered(steps: list, cases: dict, config: RunConfig, tally, step_done: Callable) -> _Order:
    """The tasks of ``steps`` with, between them, the calls a -j 1 run makes at those places."""
    order = _Order([], [], [])
    for group, step in enumerate(steps):
        if callable(step):  # reused verdicts, handed on where -j 1 hands them on
            order.events.append(("call", step))
            continue
        if step[0].batched:
            loaded, pconfig = step[0].checked_as(config)
            todo = [u for u in step if (loaded.name, u.graph) not in config.skip]
            if tally is not None and len(todo) < len(step):  # a resumed report's pairs: counted, not run
                order.events.append(("call", lambda n=len(step) - len(todo): tally.skipped(n)))
            for u in todo:
                order.add_task(PairTask(loaded, cases[u.graph], pconfig, group), u)
        else:
            for u in step:
                order.add_task(UnitTask(u, cases.get(u.graph) if u.needs_case else None, config, group), u)
        order.events.append(("call", lambda step=step: step_done(step)))
    return order


def judge(steps: list, cases: dict, config: RunConfig, tally=None, done: Optional[Callable] = None,
          on_lost: Optional[Callable] = None, step_done: Optional[Callable] = None) -> list[CheckResult]:
    """Judge ``steps`` over ``config.workers`` isolation workers; their results in the ``-j 1`` order.

    ``steps``, in the ``-j 1`` order: a list of units judged together (consecutive units of one batched
    pass, or one other unit), or a callable returning results already at hand (reused verdicts).
    ``done(unit, results)`` as each unit is handed on; ``on_lost(unit, cause)`` gives the results of a unit
    whose worker was lost; ``step_done(step)`` once a step's units are all handed on.
    """
    if config.hash_seed_check:  # before any fork: the workers reach the same hash-seed worker
        hashseed.ensure()
    out: list[CheckResult] = []
    order = _ordered(steps, cases, config, tally, step_done or (lambda step: None))

    def hand_on(kind: str, value: Any) -> None:
        if kind == "call":
            out.extend(value() or ())
            return
        out.extend(_results(order.tasks[value], order.owners[value], payloads.pop(value), tally, done, on_lost))

    payloads: dict = {}
    expected = [0]  # the pool hands tasks back in index order, but for what it hands on when interrupted

    def deliver(index: int, payload: Any) -> None:
        payloads[index] = payload
        if index == expected[0]:
            order.until(index, hand_on)
            expected[0] = index + 1
        else:  # interrupted: what finished behind a running task is handed on too (nothing judged is lost)
            hand_on("task", index)

    pool = Pool(order.tasks, config.workers, timeout=config.timeout)
    try:
        if order.tasks:
            pool.run(deliver)
    finally:
        pool.close()
    order.until(None, hand_on)
    return out


def _results(task, unit, payload, tally, done, on_lost) -> list[CheckResult]:
    """A finished task's results, counted and recorded as ``RunPlan.run`` counts and records them."""
    if isinstance(payload, Lost):
        return on_lost(unit, payload.cause) if on_lost is not None else []
    if isinstance(task, PairTask):
        skips = [result(task.loaded.name, task.case.name, c, Status.SKIP, why) for c, why in task.config.skip_checks]
        judged = [(task.case.name, task.loaded.name, payload + skips)]
    else:
        judged = payload
    mine: list[CheckResult] = []
    for graph, pass_name, rs in judged:
        mine += rs
        if tally is not None:
            tally.add(pass_name, graph, rs)
    if done is not None:
        done(unit, mine)
    return mine
