"""One run of passgate: cases loaded, passes checked, report written, status decided.

Shared by every command that checks passes (``check``, ``run``, ``certify``)
so they agree on progress output, on what an interrupted run leaves behind
(a report of everything finished, ``complete: false``) and on the exit status.

Ctrl-C (exit 130) and SIGTERM (exit 1: what CI runners and ``timeout`` send)
unwind the same way, so a cancelled CI job still uploads a report. A report
is only appended to pair by pair, so an incomplete results.json holds whole
pass x graph pairs, and ``--resume`` (``Session(resume=True)``) picks up after
them: the same configuration is required, since mixing verdicts of two
configurations in one report would make it lie.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional

from harness.core.errors import UsageError
from harness.core.kinds import ExitCode
from harness.core.memory import collection_paused, collection_resumed
from harness.core.results import CheckResult, Level, Status
from harness.core.shards import SAME_ENVIRONMENT
from harness.graphs.cases import load_cases
from harness.graphs.op_coverage import case_ops, op_coverage
from harness.report import results_json as report_json
from harness.report import terminal
from harness.report.view import load as load_results
from harness.report.writers import default_writers, forkable, write_results
from harness.report.writers import start as start_writers

__all__ = ["Terminated", "sigterm_raises", "Session", "render_table"]


class Terminated(BaseException):
    """SIGTERM arrived. A BaseException, so no ``except Exception`` in a pass or verifier swallows it."""


class _Forking:
    """SIGTERM in the middle of ``os.fork``: an exception a fork hook raises (logging's ``_releaseLock`` runs
    after every fork) is printed as "Exception ignored" and dropped, so a ``Terminated`` raised there would be
    lost and the run would go on. While a fork runs, the handler only notes the signal; once every hook of the
    parent has run it is sent again a moment later, to code where it can unwind. Hooks run before-hooks in
    reverse order of registration and after-hooks in order, so these (registered on import, after logging's)
    enclose logging's."""

    active = False
    deferred = False

    @classmethod
    def before(cls) -> None:
        cls.active, cls.deferred = True, False

    @classmethod
    def after_in_parent(cls) -> None:
        cls.active = False
        if cls.deferred:
            cls.deferred = False
            threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGTERM)).start()

    @classmethod
    def after_in_child(cls) -> None:
        cls.active = cls.deferred = False  # a child does not inherit its parent's pending signals


os.register_at_fork(before=_Forking.before, after_in_parent=_Forking.after_in_parent,
                    after_in_child=_Forking.after_in_child)


@contextmanager
def sigterm_raises():
    """Turn SIGTERM into :class:`Terminated` in the main thread (elsewhere signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    owner = os.getpid()

    def on_term(signum, frame):
        if os.getpid() != owner:  # a child forked from this process (a worker, a report writer) before it set
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # its own handler: die of SIGTERM, as it would then
            os.kill(os.getpid(), signal.SIGTERM)
            return
        if _Forking.active:  # raised in a fork hook, it would be dropped (see _Forking)
            _Forking.deferred = True
            return
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _default_writers() -> list:
    """junit.xml, summary.md and report.html beside every results.json (harness/report/writers.py)."""

    return default_writers()


@dataclass
class Session:
    report_dir: Path
    configuration: dict
    strict: bool = False
    quiet: bool = False
    stream: object = field(default_factory=lambda: sys.stderr)
    started_at: float = field(default_factory=time.time)
    results: list = field(default_factory=list)
    cases: list = field(default_factory=list)
    # Called with the results document before it is written, so other report
    # writers (JUnit, Markdown, HTML) can add their files beside it.
    writers: list = field(default_factory=_default_writers)
    # (pass, graph, check) triples whose violation is known and recorded: they do not fail the run.
    waived: set = field(default_factory=set)
    # Continue the incomplete results.json in report_dir (see load_previous).
    resume: bool = False
    # (pass, graph) pairs a resumed report already holds: pass as RunConfig(skip=...).
    done_pairs: frozenset = frozenset()
    # case name -> the ops it contains (export + edge), for the report's op_coverage (harness/graphs/op_coverage.py)
    op_sets: dict = field(default_factory=dict)
    # result -> its results.json record when one is at hand (a reused verdict's, as recorded), else None
    json_of: Optional[Callable[[CheckResult], Optional[dict]]] = None

    def record(self, pair: "PairDone") -> None:  # noqa: F821 - harness.run.scheduler.PairDone
        """Keep a judged pair's results (so a Ctrl-C loses nothing finished) and print its progress line."""
        self.results.extend(pair.results)
        if self.quiet:
            return
        rs = pair.results
        bad = sorted({r.check for r in rs if r.status in (Status.FAIL, Status.ERROR)})
        na = rs and all(r.status is Status.NOT_APPLICABLE for r in rs)
        verdict = "FAIL " + ",".join(bad) if bad else ("n/a" if na else "ok")
        seconds = sum(r.duration_s for r in rs)
        print(f"passgate: [{pair.done}/{pair.total}] {pair.pass_name} x {pair.graph}: {verdict} ({seconds:.2f}s)",
              file=self.stream, flush=True)
        for line in terminal.pair_reasons([r.to_json() for r in rs], self.strict, self.waived) if bad else ():
            print(line, file=self.stream, flush=True)  # each failed check's reason, as the pair finishes

    def judge_exercised(self, passes: Iterable[str], level: Optional[Level] = None) -> list[CheckResult]:
        """Append the pass-level ``exercised`` verdict of each of ``passes``, judged over every pair recorded.

        Called once the pairs are done (a resumed report's own verdicts are
        judged again over the whole run); ``level`` overrides the registry's
        (``certify``: must). Only commands call it: what a run judges as a
        pass under test is theirs to say, not the session's.
        """
        from harness.check import exercised

        self.results[:] = exercised.without(self.results)
        judged = exercised.judge(self.results, passes, level)
        self.results.extend(judged)
        if len(judged) > 10:  # a catalog run: one line, the table and the run's summary name the idle ones
            self.note(f"exercised: {sum(r.status is Status.PASS for r in judged)} of {len(judged)} passes changed "
                      "the program on some case")
        else:
            for r in judged:
                self.note(f"{r.pass_name} over its cases: exercised {r.status.value}: {r.message}")
        return judged

    def note(self, message: str) -> None:
        if not self.quiet:
            print(f"passgate: {message}", file=self.stream, flush=True)

    def load_cases(self, specs) -> list:

        specs = list(specs)
        count = 0

        def loaded(i: int, case) -> None:
            nonlocal count
            count += 1
            how = "cached" if case.from_cache else "lowered"
            self.note(f"graph {count}/{len(specs)} {specs[i].name}: {how} in {case.lower_seconds:.2f}s")

        with collection_resumed():  # lowering and loading make FX graphs: cycles (harness/core/memory.py)
            cases = load_cases(specs, loaded=loaded)
        for spec, case in zip(specs, cases):
            self.op_sets[spec.name] = _case_ops(case)
            self.cases.append({
                "name": spec.name, "source": spec.source, "key": spec.key,
                "from_cache": case.from_cache, "lower_seconds": round(case.lower_seconds, 4),
            })
        return cases

    def exit_status(self) -> int:
        return ExitCode.VIOLATION if any(
            r.is_violation(self.strict) and (r.pass_name, r.graph, r.check) not in self.waived for r in self.results
        ) else ExitCode.OK

    def finish(self, complete: bool = True, extra: Optional[dict] = None) -> int:
        with collection_paused():  # building and writing the reports: records, no cycles (harness/core/memory.py)
            return self._finish(complete, extra)

    def _finish(self, complete: bool, extra: Optional[dict]) -> int:
        status = self.exit_status() if complete else ExitCode.VIOLATION
        if ((extra or {}).get("gate") or {}).get("status") == "fail":  # the gate also judges what no record fails
            status = ExitCode.VIOLATION  # (still_exercised: a pass that stopped changing a graph it changed)
        if self.op_sets and "op_coverage" not in (extra or {}):

            extra = {**(extra or {}), "op_coverage": op_coverage(self.op_sets.values())}
        doc = report_json.document(
            self.results, self.configuration, self.cases, started_at=self.started_at,
            complete=complete, exit_status=status, strict=self.strict, extra=extra, json_of=self.json_of,
        )
        Path(self.report_dir).mkdir(parents=True, exist_ok=True)
        # results.json (the largest) and the other formats at once, in forked children where possible
        wait = start_writers(self.report_dir, doc, [forkable(write_results), *self.writers])
        try:
            # the table with each failure's reason, while the files are written; then the headline and the files
            text = terminal.table(doc) if not self.quiet else ""
        finally:
            wait()  # every file written (or the failure raised) before the run reports its status
        if not self.quiet:
            print("\n".join([text, *terminal.closing(doc, Path(self.report_dir))]), file=sys.stdout)
        return status

    def load_previous(self) -> None:
        """Take the finished pairs of report_dir's results.json; UsageError if it cannot be continued."""

        path = Path(self.report_dir) / report_json.RESULTS_FILE
        if not path.exists():
            self.note(f"nothing to resume in {self.report_dir}: starting afresh")
            return
        doc = load_results(path)  # one-line UsageError when unreadable, truncated or off-schema
        mine = json.loads(json.dumps(self.configuration, default=str))
        theirs = doc.get("configuration")
        if theirs != mine:
            keys = sorted(k for k in set(mine) | set(theirs or {}) if mine.get(k) != (theirs or {}).get(k))
            raise UsageError(f"cannot --resume {path}: it was run with a different configuration "
                             f"(it differs in {', '.join(keys) or 'its layout'}); run without --resume to start over")
        env = doc.get("environment") or {}
        here = report_json.environment()
        for k in SAME_ENVIRONMENT:
            if env.get(k) != here.get(k):
                raise UsageError(f"cannot --resume {path}: it ran with {k} {env.get(k)}, this is {here.get(k)}")
        try:
            previous = [CheckResult.from_json(r) for r in doc["results"]]
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise UsageError(f"results file {path} does not follow the passgate results schema "
                             f"(a record lacks {exc})") from None
        self.results.extend(previous)
        self.done_pairs = frozenset((r.pass_name, r.graph) for r in previous)
        state = "complete" if doc.get("complete") else "incomplete"
        self.note(f"resuming {state} {path}: {len(self.done_pairs)} pass x graph pair(s) already done")

    def run(self, body: Callable[["Session"], None], extra: Optional[Callable[[], dict]] = None) -> int:
        """Run ``body``; on Ctrl-C (130) or SIGTERM (1) still write what is done, marked incomplete."""
        if self.resume:
            self.load_previous()
        with sigterm_raises():
            try:
                body(self)
            except KeyboardInterrupt:
                return self._interrupted("interrupted", extra, ExitCode.INTERRUPTED)
            except Terminated:
                return self._interrupted("terminated (SIGTERM)", extra, ExitCode.VIOLATION)
        return self.finish(extra=extra() if extra else None)

    def _interrupted(self, what: str, extra: Optional[Callable[[], dict]], status: int) -> int:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the report short
        self.note(f"{what}: writing the report of what finished (rerun with --resume to continue)")
        self.finish(complete=False, extra=extra() if extra else None)
        return status


def _case_ops(case) -> set:

    try:
        return case_ops(case)
    except Exception:  # noqa: BLE001 - a case without a readable graph has no ops to count
        return set()


def render_table(results: list[CheckResult], strict: bool = False) -> str:
    """pass x graph, one line each, with the failing check ids and, indented below, each failure's reason.

    :func:`harness.report.terminal.table` over the records, so a run's table and
    a re-rendered report's agree (known violations come from the document's gate there).
    """
    return terminal.table({"results": [r.to_json() for r in results], "configuration": {"strict": strict}})
