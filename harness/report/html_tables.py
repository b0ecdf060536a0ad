"""The report.html tables about the run's cost and reach: per-pass timings, graph cases, op coverage.

Apart from :mod:`harness.report.report_html` so that module stays about
verdicts (banner, matrix, failures) and each stays readable. Each function
returns an HTML fragment ("" when it has nothing to show), styled by
report_html's CSS. Nothing here imports torch.
"""

from __future__ import annotations

from html import escape

from harness.report import view as reports

__all__ = ["cases", "coverage", "timings"]


def _e(x) -> str:
    return escape(str(x if x is not None else ""))


def timings(v: reports.View) -> str:
    rows = reports.pass_timings(v)
    if not rows:
        return ""
    top = max(t for _, t, *_ in rows) or 1.0
    body = "".join(
        f"<tr><td>{_e(p)}</td><td>{t:.2f}</td><td><span class=\"bar\" style=\"width:{max(1, int(220 * t / top))}px\">"
        f"</span></td><td>{n}</td><td>{t / n:.3f}</td><td>{_e(g)} ({s:.2f} s)</td></tr>"
        for p, t, n, g, s in rows)
    return (f'<h2 id="timings">Per-pass timings</h2>{cases(v.doc)}<table><tr><th>pass</th><th>total s</th><th></th>'
            f"<th>graphs</th><th>s / graph</th><th>slowest graph</th></tr>{body}</table>")


def cases(doc: dict) -> str:
    """The graph cases: how many were lowered in this run, read from the cache, or only read for the report
    (``reused``: every unit on them reused its recorded verdicts), and each one's seconds."""
    cases = list(doc.get("cases", ()))
    lowered = [c for c in cases if not c.get("from_cache", True)]
    reused = [c for c in cases if c.get("reused")]
    cached = [c for c in cases if c.get("from_cache", True) and not c.get("reused")]
    secs = lambda cs: sum(float(c.get("lower_seconds") or 0) for c in cs)  # noqa: E731
    note = (f'<p class="muted">{len(cases)} graph cases: {len(lowered)} lowered in this run ({secs(lowered):.1f} s), '
            f'{len(cached)} from the cache ({secs(cached):.1f} s to read)'
            + (f", {len(reused)} whose verdicts were all reused (read for this report only)" if reused else "")
            + ".</p>")
    if not cases:
        return note
    how = lambda c: "reused" if c.get("reused") else ("cache" if c.get("from_cache", True) else "lowered")  # noqa: E731
    rows = "".join(f"<tr><td>{_e(c.get('name'))}</td><td>{_e(c.get('source', ''))}</td><td>{how(c)}</td>"
                   f"<td>{float(c.get('lower_seconds') or 0):.2f}</td></tr>"
                   for c in sorted(cases, key=lambda c: -float(c.get("lower_seconds") or 0)))
    return (f'{note}<details><summary>Graph cases, slowest first</summary><div class="scroll" style="max-height:320px;'
            f'overflow-y:auto"><table><tr><th>case</th><th>source</th><th>from</th><th>s</th></tr>{rows}</table></div>'
            "</details>")


def coverage(doc: dict) -> str:
    cov = reports.op_coverage(doc)
    if not cov:
        return ""
    items = sorted(cov.items(), key=lambda kv: (kv[1], kv[0]))
    top = max(cov.values()) or 1
    zero = [op for op, n in items if n == 0]
    dtypes = reports.op_dtype_coverage(doc)
    body = "".join(f"<tr><td><code>{_e(op)}</code></td><td>{n}</td><td><span class=\"bar{' red' if n == 0 else ''}\""
                   f" style=\"width:{max(2, int(200 * n / top))}px\"></span></td><td class=\"ids\">"
                   + ", ".join(f"{_e(d)} ({c})" for d, c in sorted(dtypes.get(op, {}).items())) + "</td></tr>"
                   for op, n in items)
    pairs = sum(len(d) for d in dtypes.values())
    head = (f'<h2 id="coverage">Op coverage: {len(cov) - len(zero)} ops in the graphs'
            f'{f", {len(zero)} in no case" if zero else ""}{f", {pairs} op x dtype pairs" if pairs else ""}</h2>'
            '<p class="muted">Cases containing each op, least covered first, and the output dtypes its nodes '
            'produce (cases per dtype).</p>')
    return f'{head}<div class="scroll" style="max-height:420px;overflow-y:auto"><table><tr><th>op</th><th>cases</th>' \
           f"<th></th><th>dtypes</th></tr>{body}</table></div>"
