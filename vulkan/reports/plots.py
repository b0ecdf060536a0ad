"""The Vulkan section of report.html: error against the references, per fused op, with plots.

The engine's HTML report knows no backend: it renders the sections content
declares in the ``passgate.report_sections`` entry-point group, and this
module is Vulkan's (:func:`report_section`, declared in pyproject.toml). It
shows nothing for a run without Vulkan checks.

The Vulkan checks (``check_ids("vulkan")``: ``fusion_expected``,
``fused_vs_qdq``, ``fused_vs_float``, ``device_vs_reference``) carry their
measurements in ``details``. This module reads them tolerantly, because a
vendor's executor may report fewer fields than ours; keys read (first one
present wins):

- fused op: ``op``, ``fused_op``, ``expected_op``; else the recipe in a
  ``vulkan/<recipe>/<shape>/s<seed>`` graph name; else the ops a case's
  ``fusion_expected`` record lists as ``emitted``; else the graph name;
- SQNR of the fused program against the float model: ``sqnr_db``,
  ``sqnr_fused_db``, ``sqnr``; of the Q/DQ program: ``sqnr_qdq_db``,
  ``qdq_sqnr_db``;
- error against the Q/DQ program: ``worst_lsb``, ``max_lsb_err``,
  ``lsb_err``, ``max_abs_err``; a distribution: ``errors`` (a list of numbers).

Plots are drawn with matplotlib's Agg backend (no display, no network) and
returned as base64 PNG so the HTML report stays one file that opens offline.
matplotlib is imported only when Vulkan results exist: it costs ~0.5 s.

A failed record counts as the report's own classification says
(:func:`harness.report.view.outcome`): a baselined violation is *known*
(blue, "known" in the verdict column and the plots), never a red "fail" in
a passing run; a row whose checks produced no numbers says why (the first
line of its failing check's message) instead of a row of dashes.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass, field
from html import escape
from typing import Optional

from harness.core.results import check_ids
from harness.report import view as reports
from vulkan.reports.png import png

__all__ = ["OpStats", "median", "op_of", "plots", "report_section", "vulkan_stats"]

_VULKAN_CHECKS = check_ids("vulkan")


def _first(d: dict, *keys) -> Optional[float]:
    for k in keys:
        v = d.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            return float(v)
    return None


def _short(op) -> str:
    """et_vk.linear_q4gsw.default -> linear_q4gsw: the name the Vulkan docs and recipes use."""
    name = str(op).removeprefix("et_vk.")
    return name.removesuffix(".default")


def op_of(record: dict, emitted: Optional[dict] = None) -> str:
    d = record.get("details") or {}
    for k in ("op", "fused_op", "expected_op"):
        if isinstance(d.get(k), str) and d[k]:
            return d[k]
    parts = record["graph"].split("/")
    if len(parts) >= 3 and parts[0] == "vulkan":
        return parts[1]
    ops = (emitted or {}).get((record["pass_name"], record["graph"]))
    return "+".join(sorted(ops)) if ops else record["graph"]


@dataclass
class OpStats:
    op: str
    cases: set = field(default_factory=set)
    fused: int = 0  # fusion_expected passed
    failed: int = 0  # vulkan-check records that failed or errored and gate (new violations)
    known: int = 0  # vulkan-check records that failed, recorded as known (baselined): shown, never gating
    why: str = ""  # the first failing message, for a row without numbers
    sqnr_fused: list = field(default_factory=list)
    sqnr_qdq: list = field(default_factory=list)
    errors: list = field(default_factory=list)  # per case worst error, or the reported distribution
    unit: str = ""  # what the errors count, as the check reports it (e.g. "out LSB")

    @property
    def verdict(self) -> str:
        return "fail" if self.failed else ("known" if self.known else "ok")

    @property
    def worst_error(self) -> Optional[float]:
        return max(self.errors) if self.errors else None


def vulkan_stats(results: list, strict: bool = False, known=frozenset()) -> dict[str, OpStats]:
    ops: dict[str, OpStats] = {}
    emitted = {(r["pass_name"], r["graph"]): [_short(k) for k in (r.get("details") or {}).get("emitted") or ()]
               for r in results if r["check"] == "fusion_expected"}
    for r in results:
        if r["check"] not in _VULKAN_CHECKS:
            continue
        op = op_of(r, emitted)
        st = ops.setdefault(op, OpStats(op))
        st.cases.add(r["graph"])
        d = r.get("details") or {}
        outcome = reports.outcome(r, strict, known)
        if outcome in ("fail", "error"):
            st.failed += 1
        elif outcome == "known":
            st.known += 1
        if r["status"] in ("fail", "error") and not st.why:
            st.why = (str(r.get("message") or "").strip().splitlines() or [""])[0][:200]
        if r["check"] == "fusion_expected" and r["status"] == "pass":
            st.fused += 1
        fused = _first(d, "sqnr_db", "sqnr_fused_db", "sqnr")
        qdq = _first(d, "sqnr_qdq_db", "qdq_sqnr_db")
        if r["check"] == "fused_vs_float" and fused is not None:
            st.sqnr_fused.append(fused)
        if qdq is not None:
            st.sqnr_qdq.append(qdq)
        if r["check"] in ("fused_vs_qdq", "device_vs_reference"):
            dist = d.get("errors")
            if isinstance(dist, list) and dist:
                st.errors.extend(float(x) for x in dist if isinstance(x, (int, float)) and math.isfinite(x))
            else:
                err = _first(d, "worst_lsb", "max_lsb_err", "lsb_err", "max_abs_err")
                if err is not None:
                    st.errors.append(err)
            if isinstance(d.get("unit"), str) and d["unit"] and not st.unit:
                st.unit = d["unit"]
    return dict(sorted(ops.items()))


def median(xs: list) -> Optional[float]:
    return statistics.median(xs) if xs else None


def plots(stats: dict[str, OpStats]) -> list[tuple[str, str]]:
    """(title, base64 PNG) for the SQNR and the error plots; empty when there is nothing to draw."""
    if not stats:
        return []
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    out = []
    names = list(stats)
    with_sqnr = [n for n in names if stats[n].sqnr_fused or stats[n].sqnr_qdq]
    if with_sqnr:
        fig, ax = plt.subplots(figsize=(7.5, max(2.2, 0.38 * len(with_sqnr) + 1.2)))
        labelled = set()
        for i, n in enumerate(with_sqnr):
            st = stats[n]
            ax.scatter(st.sqnr_qdq, [i + 0.12] * len(st.sqnr_qdq), marker="|", s=140, color="#1f77b4",
                       label="Q/DQ program vs float" if i == 0 else None)
            # one legend entry per colour actually drawn, labelled by the verdict that colour means
            v = st.verdict
            label = None if v in labelled or not st.sqnr_fused else f"fused vs float ({_VERDICT_LABEL[v]})"
            if label:
                labelled.add(v)
            ax.scatter(st.sqnr_fused, [i - 0.12] * len(st.sqnr_fused), marker="o", s=22, color=_VERDICT_COLOUR[v],
                       label=label)
        ax.set_yticks(range(len(with_sqnr)), with_sqnr)
        ax.invert_yaxis()
        ax.set_xlabel("SQNR against the float model (dB, higher is better)")
        ax.grid(axis="x", alpha=0.3)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1 - 0.45 / len(with_sqnr)), ncol=2, fontsize=8,
                  frameon=False)
        ax.set_title("SQNR per fused op (one mark per case)")
        out.append(("SQNR per fused op", png(fig)))
    with_err = [n for n in names if stats[n].errors]
    if with_err:
        fig, ax = plt.subplots(figsize=(7.5, max(2.2, 0.38 * len(with_err) + 1.2)))
        data = [stats[n].errors for n in with_err]
        ax.boxplot(data, orientation="horizontal", tick_labels=with_err, showfliers=True)
        jitter = random.Random(0)  # same report for the same results: seeded jitter
        for i, n in enumerate(with_err, 1):
            ys = [i + jitter.uniform(-0.18, 0.18) for _ in stats[n].errors]
            ax.scatter(stats[n].errors, ys, s=10, alpha=0.5,
                       color=_VERDICT_COLOUR[stats[n].verdict] if stats[n].verdict != "ok" else "#555555")
        positive = [x for xs in data for x in xs if x > 0]
        if positive and max(positive) / max(min(positive), 1e-12) > 100:
            ax.set_xscale("symlog", linthresh=max(min(positive), 1e-6))
        ax.axvline(1.0, color="#d62728", linestyle="--", linewidth=0.8, label="1 LSB")
        ax.invert_yaxis()
        ax.set_xlabel("error of the fused program against the Q/DQ program (LSB, or abs. error)")
        ax.grid(axis="x", alpha=0.3)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1 - 0.45 / len(with_err)), fontsize=8, frameon=False)
        ax.set_title("Error distribution per fused op (box: quartiles; dots: values)")
        out.append(("Error against the Q/DQ program per fused op", png(fig)))
    return out


# ----------------------------------------------------------------------------- the report.html section


_VERDICT_COLOUR = {"fail": "#d62728", "known": "#5b7fa6", "ok": "#2ca02c"}
_VERDICT_LABEL = {"fail": "new violation", "known": "known, baselined", "ok": "holds"}


def _e(x) -> str:
    return escape(str(x if x is not None else ""))


def _fmt(x: Optional[float], spec: str = ".1f") -> str:
    return "–" if x is None else format(x, spec)


def report_section(doc: dict) -> str:
    """The Vulkan Q/DQ fusion section of report.html: per-op table and plots; "" without Vulkan results."""
    from vulkan.reports.plots_search import section as search_section

    stats = vulkan_stats(doc.get("results", ()), reports.is_strict(doc), reports.known_set(doc))
    if not stats:
        return ""
    rows = "".join(_row(s) for s in stats.values())
    table = ("<table><tr><th>fused op</th><th>cases</th><th>fused</th><th>worst error vs Q/DQ</th>"
             f"<th>median SQNR fused (dB)</th><th>median SQNR Q/DQ (dB)</th><th>verdict</th><th>why no numbers</th>"
             f"</tr>{rows}</table>")
    imgs = "".join(f'<div><img class="plot" alt="{_e(t)}" src="data:image/png;base64,{b64}"></div>'
                   for t, b64 in plots(stats))
    return f'<h2 id="vulkan">Vulkan Q/DQ fusion</h2>{table}{imgs}{search_section(doc)}'


def _row(s: OpStats) -> str:
    """One fused op; a row with no measurement says why (its first failing check's message)."""
    empty = s.worst_error is None and not s.sqnr_fused and not s.sqnr_qdq
    label = {"fail": "fail", "known": "known (baselined)", "ok": "ok"}[s.verdict]
    return (f'<tr><td><code>{_e(s.op)}</code></td><td>{len(s.cases)}</td><td>{s.fused}</td>'
            f"<td>{_fmt(s.worst_error, '.3g')} {_e(s.unit if s.worst_error is not None else '')}</td>"
            f"<td>{_fmt(median(s.sqnr_fused))}</td><td>{_fmt(median(s.sqnr_qdq))}</td>"
            f'<td class="{s.verdict}">{_e(label)}</td><td class="muted">{_e(s.why) if empty else ""}</td></tr>')


report_section.nav_label = "Vulkan"  # the report's navigation bar links the section under this name
