"""The per-op table: cases, how many fused, worst LSB error, SQNR (fused / Q/DQ vs float), verdict.

:func:`per_op` turns the :class:`vulkan.judging.suite.CaseRecord` list of a run into
rows (plain dicts, JSON-ready) that report code renders; :func:`markdown`
is one such rendering. A row's diagnosis names the fault the case-level
diagnoses agree on and the shape traits that separate failing cases from
passing ones ("fails only when output channels % 4 != 0").
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable

from harness.core.results import check_ids
from vulkan.judging.diagnose import shape_explanation

__all__ = ["per_op", "markdown"]

_VULKAN_CHECKS = check_ids("vulkan")


def _failed(rec) -> list[str]:
    return [c for c in _VULKAN_CHECKS if rec.statuses.get(c) in ("fail", "error")]


def _min(values: Iterable) -> float:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return min(vals) if vals else math.nan


def per_op(records: list) -> list[dict]:
    """One row per op (recipes of the same op merged), in catalog order."""
    order, groups = [], {}
    for rec in records:
        if rec.op not in groups:
            order.append(rec.op)
            groups[rec.op] = []
        groups[rec.op].append(rec)
    return [_row(op, groups[op]) for op in order]


def _row(op: str, recs: list) -> dict:
    applicable = [r for r in recs if r.statuses.get("fusion_expected") != "not_applicable"]
    negative = recs[0].negative
    crashed = [r for r in applicable if "crash" in r.messages.get("fusion_expected", "")]
    if negative:
        fused = sum(1 for r in applicable if r.statuses.get("fusion_expected") == "pass")  # declined as it must
    else:
        fused = sum(1 for r in applicable if r.fused > 0)
    failing = [r for r in applicable if _failed(r)]
    passing = [r for r in applicable if not _failed(r)]
    lsbs = [(r.worst_lsb, r.unit) for r in applicable if r.worst_lsb is not None]
    worst = max(lsbs, key=lambda x: x[0]) if lsbs else (None, "")
    checks_failed = Counter(c for r in failing for c in _failed(r))
    faults = Counter(r.fault for r in failing if r.fault)
    if not applicable:
        verdict = "n/a"
    elif failing:
        verdict = "FAIL (" + ", ".join(f"{c} {n}/{len(applicable)}" for c, n in checks_failed.items()) + ")"
    else:
        verdict = "pass"
    diagnosis = _diagnosis(failing, passing, crashed)
    return {
        "op": op,
        "negative": negative,
        "recipes": sorted({r.recipe for r in recs}),
        "cases": len(applicable),
        "fused": fused,
        "crashed": len(crashed),
        "worst_lsb": worst[0],
        "unit": worst[1],
        "sqnr_fused_db": _min(r.sqnr_fused_db for r in applicable),
        "sqnr_qdq_db": _min(r.sqnr_qdq_db for r in applicable),
        "sqnr_fused_vs_qdq_db": _min(r.sqnr_fused_vs_qdq_db for r in applicable),
        "verdict": verdict,
        "checks_failed": dict(checks_failed),
        "fault": faults.most_common(1)[0][0] if faults else ("fusion-pass" if crashed else ""),
        "diagnosis": diagnosis,
        "failing_cases": [r.case for r in failing][:6],
        "fusion_seconds": sum(r.timings.get("fusion_s", 0.0) for r in recs),
    }


def _diagnosis(failing: list, passing: list, crashed: list) -> str:
    if not failing:
        return ""
    parts = []
    summaries = Counter(r.diagnosis for r in failing if r.diagnosis)
    if summaries:
        parts.append(summaries.most_common(1)[0][0])
    crash_msgs = Counter(r.messages.get("fusion_expected", "") for r in crashed)
    if crash_msgs:
        parts.append(f"{len(crashed)} case(s): {crash_msgs.most_common(1)[0][0]}")
    other = Counter(r.messages.get(c, "") for r in failing for c in _failed(r)
                    if c == "fusion_expected" and r not in crashed)
    if other:
        parts.append(other.most_common(1)[0][0])
    parts += shape_explanation([r.shape for r in failing], [r.shape for r in passing])
    seen, out = set(), []
    for p in parts:
        if p and p not in seen:
            seen.add(p)
            out.append(p)
    return " | ".join(out)


def _fmt(x, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.{digits}f}"


def markdown(rows: list[dict], with_diagnosis: bool = True) -> str:
    head = ("| op | cases | fused | worst LSB | SQNR fused / Q/DQ vs float (dB) | fused vs Q/DQ (dB) | verdict |\n"
            "| --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
    lines = []
    for r in rows:
        fused = f"{r['fused']}" + (" declined" if r["negative"] else "") + (f", {r['crashed']} crashed" if r["crashed"] else "")
        lsb = "-" if r["worst_lsb"] is None else f"{_fmt(r['worst_lsb'], 2)} {r['unit']}"
        lines.append(f"| {r['op']} | {r['cases']} | {fused} | {lsb} | {_fmt(r['sqnr_fused_db'])} / "
                     f"{_fmt(r['sqnr_qdq_db'])} | {_fmt(r['sqnr_fused_vs_qdq_db'])} | {r['verdict']} |")
    text = head + "\n".join(lines) + "\n"
    if with_diagnosis:
        diag = [f"- **{r['op']}** ({r['fault'] or 'fault undetermined'}): {r['diagnosis']}" for r in rows
                if r["diagnosis"]]
        if diag:
            text += "\nDiagnoses:\n\n" + "\n".join(diag) + "\n"
    return text
