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

import sys
from pathlib import Path
from typing import Callable, Iterable, Optional

from harness.report import junit_xml, report_html, summary_md

__all__ = ["REPORT_FILES", "Writer", "default_writers", "guarded", "write_all"]

Writer = Callable[[Path, dict], None]
REPORT_FILES = ("results.json", "junit.xml", "summary.md", "report.html")


def write_all(report_dir, doc: dict, writers: Optional[Iterable[Writer]] = None) -> list[Path]:
    """Render every report of ``doc`` into ``report_dir`` (results.json excepted)."""
    report_dir = Path(report_dir)
    paths = []
    for w in writers or (junit_xml.write, summary_md.write, report_html.write):
        paths.append(w(report_dir, doc))
    return paths


def guarded(writer: Writer, name: str) -> Writer:
    """A writer that cannot cost the run its results.json: a crash is said on stderr, never silent."""

    def run(report_dir, doc):
        try:
            return writer(Path(report_dir), doc)
        except Exception as exc:  # noqa: BLE001 - the run's verdicts outrank one report format
            print(f"passgate: warning: {name} was not written: {type(exc).__name__}: {exc}", file=sys.stderr)
            return None

    run.__name__ = f"write_{name.replace('.', '_')}"
    return run


def default_writers() -> list[Writer]:
    """junit.xml, summary.md and report.html, each guarded: what a run writes beside its results.json."""
    return [guarded(junit_xml.write, junit_xml.FILE), guarded(summary_md.write, summary_md.FILE),
            guarded(report_html.write, report_html.FILE)]
