"""Which report files a run leaves, and the one place that knows every renderer.

The renderers (:mod:`~harness.report.junit_xml`, :mod:`~harness.report.summary_md`,
:mod:`~harness.report.report_html`) read a results document through
:mod:`harness.report.view`; the view must not know them back, or the two
import each other. So the list of formats lives here, above both:
:func:`default_writers` is what :class:`harness.run.session.Session` calls, so
every run leaves results.json, junit.xml, summary.md and report.html side by
side, and :func:`write_all` is what ``passgate report render|merge|diff``
call to rewrite them from a results.json. Nothing here imports torch.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Callable, Iterable, Optional

from harness.report import blind, blind_sections, junit_xml, report_html, summary_md
from harness.report import results_json as report_json
from harness.report.headline import compute as compute_headline

__all__ = ["REPORT_FILES", "Writer", "default_writers", "forkable", "guarded", "start", "write_all", "write_results"]

Writer = Callable[[Path, dict], None]
REPORT_FILES = ("results.json", "junit.xml", "summary.md", "report.html", "blind.json")


def write_all(report_dir, doc: dict, writers: Optional[Iterable[Writer]] = None) -> list[Path]:
    """Render every report of ``doc`` into ``report_dir`` (results.json excepted)."""
    report_dir = Path(report_dir)
    paths = []
    for w in writers or (junit_xml.write, report_html.write, summary_md.write, blind.write):
        paths.append(w(report_dir, doc))
    return paths


def write_results(report_dir, doc: dict) -> Path:
    """``doc`` as results.json with the sections computed from its records (``blind``): here and not in
    :mod:`~harness.report.results_json`, whose serializer the view (and so every section) reads back."""
    return report_json.write(report_dir, {**doc, "blind": _blind(doc)})


def _blind(doc: dict) -> Optional[dict]:
    """The numerics-blind report of ``doc``; None (and a warning) if it cannot be made: never the results' loss."""
    try:
        return blind_sections.document_key(doc)
    except Exception as exc:  # noqa: BLE001 - one section must not cost the run its results.json
        print(f"passgate: warning: results.json's blind section was not computed: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return None


def guarded(writer: Writer, name: str) -> Writer:
    """A writer that cannot cost the run its results.json: a crash is said on stderr, never silent."""

    def run(report_dir, doc):
        try:
            return writer(Path(report_dir), doc)
        except Exception as exc:  # noqa: BLE001 - the run's verdicts outrank one report format
            print(f"passgate: warning: {name} was not written: {type(exc).__name__}: {exc}", file=sys.stderr)
            return None

    run.__name__ = f"write_{name.replace('.', '_')}"
    run.forkable = True  # writes one file and nothing else: it may run in a forked child (see start)
    return run


def forkable(writer: Writer) -> Writer:
    """``writer``, marked safe to run in a forked child (it writes its file and changes nothing in memory).

    Unguarded: a child that fails exits non-zero, and :func:`start`'s wait runs the writer again here,
    where its exception reaches the caller (results.json's writer must never fail silently)."""

    def run(report_dir, doc):
        return writer(Path(report_dir), doc)

    run.__name__ = getattr(writer, "__name__", "write")
    run.forkable = True
    return run


def default_writers() -> list[Writer]:
    """junit.xml, summary.md, report.html and blind.json, each guarded: what a run writes beside its results.json."""
    return [guarded(junit_xml.write, junit_xml.FILE), guarded(report_html.write, report_html.FILE),
            guarded(summary_md.write, summary_md.FILE), guarded(blind.write, blind.BLIND_FILE)]


def start(report_dir, doc: dict, writers: Iterable[Writer], fork: Optional[bool] = None) -> Callable[[], None]:
    """Start ``writers`` on ``doc`` and return the call that waits for them.

    Why: a warm gate spends a third of its wall time rendering a standard
    run's ~230,000 records into JUnit, HTML and Markdown, one after the
    other, while the second core idles. Writers marked ``forkable`` (the
    guarded file writers) run in forked children, which inherit the
    document and its digested view without pickling it (a process pool
    would copy it); the parent meanwhile renders the terminal table. A
    child ignores Ctrl-C, so an interrupt does not cost
    a report, and a child that dies is redone here. Anything else (a
    caller's own writer, a platform without fork, a process with other
    threads, where a fork may inherit a held lock) runs here, in order.
    ``fork`` True or False decides instead of that rule (where fork exists).
    """
    writers = list(writers)
    if fork is None:
        fork = threading.active_count() == 1 and len(writers) > 1
    forking = hasattr(os, "fork") and fork
    children: list[tuple[int, Writer]] = []
    if forking:
        compute_headline(doc)  # digested once, here: each child inherits the view instead of redoing it
        gc.freeze()  # the heap as it is now is never collected in a child: a collection would write every
        # object's header and copy the parent's pages into each child (gc.freeze's documented use before fork)
    for w in writers:
        if not (forking and getattr(w, "forkable", False)):
            w(report_dir, doc)
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: one report file, then out without running the parent's exit handlers
            code = 1
            try:
                gc.disable()
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                w(report_dir, doc)
                code = 0
            finally:
                sys.stderr.flush()
                os._exit(code)
        children.append((pid, w))
    if forking:
        gc.unfreeze()

    def wait() -> None:
        for pid, w in children:
            _, status = os.waitpid(pid, 0)
            if status != 0:  # killed (out of memory?) or crashed past its guard: write it here after all
                w(report_dir, doc)

    return wait
