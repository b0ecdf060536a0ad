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
prints; then the time to scroll to the matrix and lay out a window's worth
of its rows (the page defers that until they come into view), and to lay
out all of them. Chromium's own start-up is in none of them. Rounds alternate the two
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
import tempfile
import time
from pathlib import Path
from typing import Optional

from benchmarks.context import ROOT, Context, record
from benchmarks.report_scale import Scale, full_size_doc
from harness.report import view

__all__ = ["BROWSERS", "browser", "figure", "load_ms", "real_page", "render_at", "screenshot", "shots"]

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
          "--window-size=1400,1000")
# on load: force layout (load time); scroll to the matrix and lay out the rows a 1000-px window shows
# (reading a row's height lays out a skipped content-visibility chunk); then every row (a reader who scrolls it all)
_PROBE = ('<script>addEventListener("load",function(){document.body.offsetHeight;var t=performance.now(),'
          'm=document.querySelector("table.matrix");if(m){m.scrollIntoView();}'
          'var rows=Array.prototype.slice.call(document.querySelectorAll("table.matrix tbody tr"));'
          'rows.slice(0,48).forEach(function(r){r.offsetHeight;});var u=performance.now();'
          'rows.forEach(function(r){r.offsetHeight;});'
          'document.title="LOAD_MS="+Math.round(t)+" MATRIX_MS="+Math.round(u-t)+" ALL_MS="'
          '+Math.round(performance.now()-t);});</script>')


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


def load_ms(page: Path, chrome: str, timeout: float = 300) -> tuple:
    """(ms from navigation start to the load event and first layout; ms then to scroll to the matrix and lay
    out its first 48 rows, a window's worth; ms to lay out all its rows) of ``page``, in a probed copy."""
    probed = page.with_name(page.stem + ".probe.html")
    probed.write_text(page.read_text().replace("</body>", _PROBE + "</body>"))
    r = subprocess.run([chrome, *_FLAGS, "--dump-dom", probed.as_uri()], capture_output=True, text=True,
                       timeout=timeout)
    m = re.search(r"<title>LOAD_MS=(\d+) MATRIX_MS=(\d+) ALL_MS=(\d+)", r.stdout)
    return tuple(int(x) for x in m.groups()) if m else (None, None, None)


def screenshot(page: Path, out: Path, chrome: str, target: str = "", width: int = 1400, height: int = 1000) -> bool:
    """A ``width`` x ``height`` PNG of ``page`` from the element with id ``target`` down (its ``<details>``
    opened), or from the top.

    Headless Chromium paints nothing in a screenshot of a page scrolled to a fragment, so: a copy of the
    page whose last script opens ``target`` and puts its offset into the title (boxes sized by the window
    get fixed heights, so the layout does not depend on it), read with ``--dump-dom``; then a screenshot
    of the copy in a window tall enough to hold it, cropped there with Pillow."""
    from PIL import Image

    shot = page.with_name(page.stem + ".shot.html")
    script = ("<style>.sumbox,.mbox{max-height:700px}.filters{position:static}</style><script>"
              f'addEventListener("load",function(){{var el=document.getElementById("{target}");var y=0;'
              'if(el){for(var p=el;p;p=p.parentElement){if(p.tagName==="DETAILS"){p.open=true;}}'
              'y=Math.round(el.getBoundingClientRect().top+scrollY)-8;}document.title="TOP="+y;});</script>')
    shot.write_text(page.read_text().replace("</body>", script + "</body>"))
    flags = [chrome, *_FLAGS[:-1], "--hide-scrollbars"]
    dom = subprocess.run([*flags, f"--window-size={width},{height}", "--dump-dom", shot.as_uri()],
                         capture_output=True, text=True, timeout=300).stdout
    m = re.search(r"<title>TOP=(\d+)", dom)
    top = int(m.group(1)) if m and target else 0
    tall = out.with_suffix(".tall.png")
    subprocess.run([*flags, f"--window-size={width},{top + height}", f"--screenshot={tall}", shot.as_uri()],
                   capture_output=True, text=True, timeout=300)
    if not tall.exists():
        return False
    with Image.open(tall) as im:
        im.crop((0, top, width, top + height)).save(out, optimize=True)
    tall.unlink()
    return True


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
    whole: dict = {side: [] for side in pages}
    for _ in range(rounds if chrome else 0):
        for side, page in pages.items():
            load, lay, everything = load_ms(page, chrome)
            loads[side].append(load)
            matrix[side].append(lay)
            whole[side].append(everything)
    median = {s: _median(v) for s, v in loads.items()}
    return record(median.get("this"), 2000, "ms to load (headless Chromium)", "lower",
                  bytes={s: p.stat().st_size for s, p in pages.items()}, load_ms=loads, load_ms_median=median,
                  matrix_ms=matrix, matrix_ms_median={s: _median(v) for s, v in matrix.items()},
                  matrix_all_rows_ms=whole, matrix_all_rows_ms_median={s: _median(v) for s, v in whole.items()},
                  render_s=render_s, document_s=round(built, 2), before=before, browser=chrome,
                  records=len(doc["results"]), passes=doc["summary"]["passes"], graphs=doc["summary"]["graphs"],
                  workload="benchmarks.report_scale.full_size_doc: the baseline's violations scaled to "
                           f"{scale.passes} passes x {scale.graphs} graphs, seed {scale.seed}")


def shots(folder: Path, scale: Scale = Scale()) -> list[Path]:
    """The reporting guide's screenshots, of this checkout's page for the full-size document: the top (banner,
    counts, filter bar, summary), the matrix, and the detail of the pass with the most known violations among
    those with new ones."""
    from harness.report import report_html

    chrome = browser()
    if chrome is None:
        raise SystemExit("report_page: no chromium to take screenshots with")
    doc = full_size_doc(scale)
    page = Path(folder).resolve() / "report-full-size.html"
    page.write_text(report_html.render(doc))
    return _shots(page, doc, Path(folder), chrome)


def _shots(page: Path, doc: dict, folder: Path, chrome: str, prefix: str = "report") -> list[Path]:
    """Screenshots of ``page`` (rendered from ``doc``): the top, the matrix, and the detail of the pass with the
    most known violations among those with new ones (else among all); ``page`` and its copies are removed."""
    from harness.report import html_summary

    tallies = list(html_summary.by_pass(view.view(doc)).values())
    pick = max([t for t in tallies if t.new] or tallies, key=lambda t: (t.known, t.name))
    out = []
    for name, target in (("summary", ""), ("matrix", "matrix"), ("pass-detail", html_summary.anchor(pick.name))):
        png = folder / f"{prefix}-{name}.png"
        if screenshot(page, png, chrome, target):
            out.append(png)
    for p in page.parent.glob(page.stem + ".*"):  # the page and its probed copies
        p.unlink()
    return out


def real_page(report_dir: Path, shots_dir: Optional[Path] = None, rounds: int = 3) -> dict:
    """report.html of a real run, as that run wrote it: its size, its load time in headless Chromium (median
    of ``rounds``), the run's size, and (``shots_dir``) the screenshots of :func:`shots`."""
    chrome = browser()
    report_dir = Path(report_dir).resolve()
    doc = view.load(report_dir / "results.json")
    scratch = Path(tempfile.mkdtemp(prefix="passgate-page-"))
    try:
        page = scratch / "report.html"
        shutil.copy2(report_dir / "report.html", page)
        loads = [load_ms(page, chrome) for _ in range(rounds if chrome else 0)]
        got = {"page": str(report_dir / "report.html"), "bytes": page.stat().st_size, "browser": chrome,
               "records": len(doc["results"]), "passes": doc["summary"].get("passes"),
               "graphs": doc["summary"].get("graphs"), "load_ms": [x[0] for x in loads],
               "matrix_ms": [x[1] for x in loads], "matrix_all_rows_ms": [x[2] for x in loads],
               "load_ms_median": _median([x[0] for x in loads])}
        if shots_dir is not None and chrome:
            Path(shots_dir).mkdir(parents=True, exist_ok=True)
            got["shots"] = [str(p) for p in _shots(page, doc, Path(shots_dir).resolve(), chrome, "real")]
        return got
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    # python -m benchmarks.report_page [REV | --shots FOLDER | --real REPORT_DIR [SHOTS_FOLDER]]: the figure alone,
    # screenshots of the full-size page, or a real run's page measured (and shot)
    import json

    if sys.argv[1:2] == ["--shots"]:
        print("\n".join(str(p) for p in shots(Path(sys.argv[2]))))
        sys.exit(0)
    if sys.argv[1:2] == ["--real"]:
        print(json.dumps(real_page(Path(sys.argv[2]), Path(sys.argv[3]) if sys.argv[3:] else None), indent=1))
        sys.exit(0)
    c = Context()
    try:
        print(json.dumps(figure(c, *(sys.argv[1:2] or ["main"])), indent=1))
    finally:
        shutil.rmtree(c.scratch, ignore_errors=True)
        shutil.rmtree(c.cache_dir, ignore_errors=True)
