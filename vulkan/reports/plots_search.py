"""The search part of report.html's Vulkan section: shrunk failures and error statistics per op and configuration.

Read from ``doc["vulkan"]["search"]`` (written by :mod:`vulkan.entry.search_run`):
``tables`` (per fusion, the per-op rows of :func:`vulkan.reports.search_report.rows`)
and ``errors`` (the CSV rows, with their ``Fusion``). One figure per fusion:
for each op x configuration, the fused program's error against the Q/DQ
program in output LSBs (max and mean) and its SQNR against the float model;
red where a case of that configuration failed that comparison. Plots are base64 PNGs, as in
:mod:`vulkan.reports.plots`, so the report stays one offline file.
"""

from __future__ import annotations

import math
from html import escape
from typing import Optional

__all__ = ["ROWS_PER_FIGURE", "figures", "figure", "section"]

ROWS_PER_FIGURE = 60  # op x configuration rows per figure; more go to the next figure


def _num(text) -> Optional[float]:
    try:
        x = float(text)
    except (TypeError, ValueError):
        return None
    return x if not math.isnan(x) else None


def _pairs(rows: list) -> list[dict]:
    """One entry per op x configuration: LSB error vs Q/DQ, SQNR vs float, failed or not."""
    out: dict = {}
    for r in rows:
        key = (r["Op"], r["Configuration"])
        e = out.setdefault(key, {"label": f"{r['Op'].split('.')[-1]} [{r['Configuration']}]", "fail": False})
        e["fail"] |= r.get("Result") == "Fail"
        if r["Comparison"] == "fused_vs_qdq":
            e["max_lsb"], e["mean_lsb"] = _num(r["Output 0 Error Max (LSB)"]), _num(r["Output 0 Error Mean (LSB)"])
        else:
            e["sqnr"] = _num(r["Output 0 SNR"])
    return list(out.values())


def figures(rows: list, title: str) -> list[str]:
    """Base64 PNGs of one fusion's CSV rows, ROWS_PER_FIGURE op x configuration rows each."""
    pairs = _pairs(rows)
    chunks = [pairs[i:i + ROWS_PER_FIGURE] for i in range(0, len(pairs), ROWS_PER_FIGURE)]
    return [figure(c, f"{title} ({i}/{len(chunks)})" if len(chunks) > 1 else title)
            for i, c in enumerate(chunks, 1)]


def figure(pairs: list, title: str) -> str:
    """Base64 PNG: LSB error vs Q/DQ and SQNR vs float for each op x configuration of ``pairs``."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from vulkan.reports.png import png

    n = len(pairs)
    height = max(2.5, 0.24 * n + 1.4)
    fig, (ax1, ax2) = plt.subplots(1, 2, sharey=True, figsize=(11, height), gridspec_kw={"width_ratios": [3, 2]})
    fig.subplots_adjust(top=1 - 0.55 / height, bottom=0.8 / height)
    ys = list(range(n))
    for y, p in zip(ys, pairs):
        color = "#d62728" if p["fail"] else "#2ca02c"
        if p.get("max_lsb") is not None:
            ax1.scatter([max(p["max_lsb"], 1e-3)], [y], marker="o", s=24, color=color)
        if p.get("mean_lsb") is not None:
            ax1.scatter([max(p["mean_lsb"], 1e-3)], [y], marker="|", s=90, color="#1f77b4")
        if p.get("sqnr") is not None:
            ax2.scatter([min(p["sqnr"], 80.0)], [y], marker="o", s=24, color=color)
    ax1.set_yticks(ys, [p["label"] for p in pairs], fontsize=7)
    ax1.invert_yaxis()
    ax1.set_xscale("log")
    ax1.axvline(1.0, color="#d62728", linestyle="--", linewidth=0.8)
    ax1.set_xlabel("fused vs Q/DQ: error in output LSBs (dot max, bar mean; 1e-3 = exact)", fontsize=8)
    ax2.set_xlabel("fused vs float model: SQNR (dB, capped at 80)", fontsize=8)
    for ax in (ax1, ax2):
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"{title} (red: a case of that configuration failed the comparison)", fontsize=10)
    return png(fig)


def _row(t: dict, d: dict, first: bool) -> str:
    """One shrunk failure; the op's figures only on its first row, so each op reads as one block."""
    op = (f"<td><code>{escape(t['op'])}</code></td><td>{len(t['configurations'])}</td><td>{t['draws']}</td>"
          f"<td>{t['failures']}</td>") if first else "<td></td>" * 4
    repro = escape(d.get("repro", ""))
    return (f"<tr>{op}<td><code>{escape(d['check'])}</code></td>"
            f'<td style="min-width:14em">{escape(d["config"])} <code>{escape(d["shape"])}</code></td>'
            f'<td style="min-width:24em">{escape(d["boundary"])}</td>'
            f'<td style="font-size:80%;word-break:break-all">{repro}</td></tr>')


def section(doc: dict) -> str:
    """HTML for the search: per fusion, its shrunk failures (table) and its error figure."""
    search = (doc.get("vulkan") or {}).get("search") or {}
    tables, errors = search.get("tables") or {}, search.get("errors") or []
    if not tables:
        return ""
    parts = ['<h3 id="vulkan-search">Search: shrunk failures and error statistics</h3>']
    for fusion_name, table in tables.items():
        rows = "".join(_row(t, d, i == 0) for t in table
                       for i, d in enumerate(t["defects"] or [{"check": "-", "config": "", "shape": "",
                                                                "boundary": t["verdict"]}]))
        parts.append(f"<h4>{escape(fusion_name)}</h4><table><tr><th>op</th><th>configurations</th><th>draws</th>"
                     "<th>failing draws</th><th>check</th><th>smallest failing case</th><th>boundary</th>"
                     f"<th>reproducer</th></tr>{rows}</table>")
        for b64 in figures([r for r in errors if r.get("Fusion", fusion_name) == fusion_name],
                           f"{fusion_name}: error per op and configuration"):
            parts.append(f'<div><img class="plot" alt="error per op and configuration ({escape(fusion_name)})" '
                         f'src="data:image/png;base64,{b64}"></div>')
    return "".join(parts)
