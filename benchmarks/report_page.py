"""The report_html figure: report.html at the size of the full suite, its size and its load time in Chromium.

Both sides in one run, back to back: the page this checkout renders and the
one a git revision's ``harness/report/report_html.py`` renders (default
``main``; its source is loaded beside this checkout's other report modules),
on the same document, :func:`benchmarks.report_scale.full_size_doc` (the
committed baseline's real violations, scaled to 263 passes x 104 graphs).

Load time is what the page itself measures in headless Chromium: a copy of
the file gets a last script that, on the ``load`` event, forces layout and
writes ``performance.now()`` (milliseconds since navigation start: parse,
scripts, style and first layout) into the title, which ``--dump-dom``
prints; then the time to scroll to the matrix and lay it out (the page
defers that until the matrix comes into view). Chromium's own start-up is
not in either. Rounds alternate the two
pages; the median is the figure. Without a ``chromium`` binary the sizes
are still measured and the load times are None.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

from benchmarks.context import ROOT, Context, record
from benchmarks.report_scale import Scale, full_size_doc
from harness.report import view

__all__ = ["BROWSERS", "figure", "load_ms", "render_at", "screenshot"]

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions")
_PROBE = ('<script>addEventListener("load",function(){document.body.offsetHeight;var t=performance.now(),'
          'm=document.querySelector("table.matrix");if(m){m.scrollIntoView();m.rows[m.rows.length-1].offsetHeight;}'
          'document.title="LOAD_MS="+Math.round(t)+" MATRIX_MS="+Math.round(performance.now()-t);});</script>')


def browser() -> Optional[str]:
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


def render_at(rev: Optional[str]):
    """``render(doc)`` of this checkout (rev None) or of ``harness/report/report_html.py`` at a git revision."""
    if rev is None:
        from harness.report import report_html

        return report_html.render
    src = subprocess.run(["git", "show", f"{rev}:harness/report/report_html.py"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    spec = importlib.util.spec_from_loader(f"_report_html_{rev}", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(src, f"{rev}:harness/report/report_html.py", "exec"), module.__dict__)  # noqa: S102 - our own file
    return module.render


def load_ms(page: Path, chrome: str, timeout: float = 300) -> tuple[Optional[int], Optional[int]]:
    """(ms from navigation start to the load event and first layout, ms then to scroll to the matrix and lay
    it out) of ``page``, measured in a probed copy."""
    probed = page.with_name(page.stem + ".probe.html")
    probed.write_text(page.read_text().replace("</body>", _PROBE + "</body>"))
    r = subprocess.run([chrome, *_FLAGS, "--dump-dom", probed.as_uri()], capture_output=True, text=True,
                       timeout=timeout)
    m = re.search(r"<title>LOAD_MS=(\d+) MATRIX_MS=(\d+)", r.stdout)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def screenshot(page: Path, out: Path, chrome: str, fragment: str = "", size: str = "1400,1000") -> bool:
    """A PNG of ``page`` (scrolled to ``#fragment``, which opens a pass's detail) at ``size``."""
    url = page.as_uri() + (f"#{fragment}" if fragment else "")
    r = subprocess.run([chrome, *_FLAGS, "--hide-scrollbars", f"--window-size={size}", f"--screenshot={out}", url],
                       capture_output=True, text=True, timeout=300)
    return r.returncode == 0 and out.exists()


def _median(values: list) -> Optional[float]:
    got = [x for x in values if x is not None]
    return statistics.median(got) if got else None


def figure(ctx: Context, before: str = "main", rounds: int = 3, scale: Scale = Scale()) -> dict:
    """report.html of a full-size document: bytes and Chromium load time, this checkout against ``before``."""
    if ctx.tiny:
        scale = Scale(passes=6, graphs=8, new=2, worsened=1, errors=1)
    t = time.perf_counter()
    doc = full_size_doc(scale)
    built = time.perf_counter() - t
    pages, render_s = {}, {}
    for side, rev in (("this", None), ("before", before)):
        try:
            render = render_at(rev)
        except (subprocess.CalledProcessError, OSError, SyntaxError, ImportError) as exc:
            ctx.say(f"report_html: no {side} side ({rev}): {type(exc).__name__}")
            continue
        view._last.clear()  # each side digests the document itself, as a run's writer does
        t = time.perf_counter()
        html = render(doc)
        render_s[side] = round(time.perf_counter() - t, 2)
        pages[side] = ctx.scratch / f"report-{side}.html"
        pages[side].write_text(html)
    chrome = browser()
    loads: dict = {side: [] for side in pages}
    matrix: dict = {side: [] for side in pages}
    for _ in range(rounds if chrome else 0):
        for side, page in pages.items():
            load, lay = load_ms(page, chrome)
            loads[side].append(load)
            matrix[side].append(lay)
    median = {s: _median(v) for s, v in loads.items()}
    return record(median.get("this"), 2000, "ms to load (headless Chromium)", "lower",
                  bytes={s: p.stat().st_size for s, p in pages.items()}, load_ms=loads, load_ms_median=median,
                  matrix_ms=matrix, matrix_ms_median={s: _median(v) for s, v in matrix.items()}, render_s=render_s, document_s=round(built, 2), before=before, browser=chrome,
                  records=len(doc["results"]), passes=doc["summary"]["passes"], graphs=doc["summary"]["graphs"],
                  workload="benchmarks.report_scale.full_size_doc: the baseline's violations scaled to "
                           f"{scale.passes} passes x {scale.graphs} graphs, seed {scale.seed}")


if __name__ == "__main__":  # python -m benchmarks.report_page: the figure alone, printed
    import json

    c = Context()
    try:
        print(json.dumps(figure(c, *(sys.argv[1:2] or ["main"])), indent=1))
    finally:
        shutil.rmtree(c.scratch, ignore_errors=True)
        shutil.rmtree(c.cache_dir, ignore_errors=True)
