"""The conformance suite's terminal: a progress line in units with an ETA, and each failure as it happens.

Why not pytest's own output: a standard run is some 18,000 items (one per
unit: one pass on one graph), a line of dots per 80 of them with a percent,
for over an hour on a cold cache, with no ETA and no failure until the end. This plugin, on the xdist controller (or the one
process without xdist), blanks the per-item letters and writes instead:

- a headline when the items are known: units, how many of each tier of
  :mod:`harness.run.outlook` come first, and the recorded work to do;
- every ``--passgate-progress-every`` seconds (default 30), units done,
  units left, failures so far and an ETA (:class:`harness.run.progress.Progress`);
- each failing item on its own line when its report arrives;
- a last line with the units done and the wall time.

Plain lines, no carriage returns: CI logs and tox keep them as they are.
``--passgate-dots`` (or ``-v``) gives pytest's own output back.
"""

from __future__ import annotations

import time
from typing import Callable

import pytest

__all__ = ["MAX_FAILURE_LINES", "ProgressReporter", "param_id"]

MAX_FAILURE_LINES = 50  # after these, failures are only counted (the summary lists them all)


def param_id(nodeid: str) -> str:
    """The parameter id of an item's node id (``...::test_check[ID]`` or, under loadgroup, ``[ID]@group``).

    An id holds no ``@``, but a group may hold brackets (``entry:P[config]``, a configured entry's pass): the
    id ends at the first ``]@``, else at the last ``]``."""
    start = nodeid.find("[") + 1
    end = nodeid.find("]@", start)
    return nodeid[start:end if end != -1 else nodeid.rfind("]")]


class ProgressReporter:
    """Counts item reports into units and writes the progress lines (see the module docstring).

    ``units()`` gives the plan's units in item order, ``unit_id(unit)`` the
    parameter id of a unit's item, ``outlooks()`` the unit key ->
    :class:`harness.run.outlook.Outlook` of the run: called once, when the
    items are known, so nothing is computed when the run never gets there.
    """

    def __init__(self, config, units: Callable, unit_id: Callable, outlooks: Callable, every: float):
        self.config = config
        self.units, self.unit_id, self.outlooks = units, unit_id, outlooks
        self.every = every
        self.progress = None
        self.unit_of: dict = {}  # parameter id -> unit key
        self.failures = 0
        self._with_failed_checks: set = set()  # node ids of units a failed check (subtest) was reported for
        self._last = 0.0

    @property
    def _tr(self):
        return self.config.pluginmanager.get_plugin("terminalreporter")

    def _write(self, line: str) -> None:
        tr = self._tr
        if tr is not None:
            tr.write_line(line)
            tr.flush()

    def _start(self, ids: list) -> None:
        """The run's items are known (``ids``: their parameter ids): map them to units and write the headline."""
        from harness.run.outlook import TIER_NAMES
        from harness.run.progress import Progress, duration

        wanted = set(ids)
        items_left: dict = {}
        for unit in self.units():
            pid = self.unit_id(unit)
            if pid in wanted:
                self.unit_of[pid] = unit.key
                items_left[unit.key] = 1
        outlooks = self.outlooks()
        seconds = {k: outlooks[k].seconds for k in items_left if k in outlooks}
        workers = int(getattr(self.config.option, "numprocesses", 0) or 0)
        self.progress = Progress(items_left, seconds, workers=max(1, workers))
        tiers = [0] * len(TIER_NAMES)
        for k in items_left:
            if k in outlooks:
                tiers[outlooks[k].tier] += 1
        first = ", ".join(f"{n:,} {name}" for name, n in zip(TIER_NAMES[:-1], tiers[:-1]) if n) or "none"
        work = self.progress.total_seconds
        self._write(f"passgate: {len(items_left):,} units in {len(ids):,} items; judged first: {first}; "
                    f"{tiers[-1]:,} settled (reused) | ~{duration(work)} of recorded work"
                    f"{f' over {workers} workers' if workers > 1 else ''}")

    def pytest_collection_finish(self, session) -> None:
        """Without xdist: the items are this process's."""
        if self.progress is None and not hasattr(self.config, "workerinput"):
            self._start([param_id(item.nodeid) for item in session.items])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        """With xdist: every worker collects the same items; the first to finish names them."""
        if self.progress is None:
            self._start([param_id(i) for i in ids])

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(self, report, config):
        """No letter per item: the progress line stands for them. The category still counts in the summary, and the
        word stays: the short test summary (``-r``) spells each line with it (``FAILED <node id>``)."""
        category, _letter, word = yield
        return category, "", word

    def pytest_runtest_logreport(self, report) -> None:
        if isinstance(report, pytest.SubtestReport) and report.failed:
            self._with_failed_checks.add(report.nodeid)
        elif report.when == "call" and report.nodeid in self._with_failed_checks:
            return  # the unit's own report, failed for its failed checks: each had its line
        if report.failed and report.when in ("setup", "call", "teardown"):
            self._failed(report)
        if report.when != "teardown" or self.progress is None:
            return
        now = time.monotonic()
        self.progress.item(self.unit_of.get(param_id(report.nodeid)), now)
        if now - self._last >= self.every:
            self._last = now
            self._write(self.progress.line(now))

    def _failed(self, report) -> None:
        self.failures += 1
        if self.progress is not None:
            self.progress.failed = self.failures
        if self.failures > MAX_FAILURE_LINES:
            return
        crash = getattr(report.longrepr, "reprcrash", None)  # the exception's message, without the traceback
        text = crash.message if crash is not None else str(report.longrepr or "")
        message = next((line.strip() for line in text.splitlines() if line.strip()), "").removeprefix("Failed: ")
        more = " (further failures are counted, not listed here)" if self.failures == MAX_FAILURE_LINES else ""
        where = report.when
        if isinstance(report, pytest.SubtestReport):  # a unit's failing check: its message names the check
            where = ", ".join([report.context.msg or "", *(f"{k}={v}" for k, v in report.context.kwargs.items())])
        self._write(f"passgate: FAILED {param_id(report.nodeid)} ({where}): {message[:200]}{more}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session) -> None:
        if self.progress is not None:
            self._write(self.progress.summary(time.monotonic()))
