"""What a search leaves: the per-op table, the error-statistics CSV, and a reproducer per shrunk failure.

The CSV has one row per op x configuration x comparison (fused vs the Q/DQ
program, fused vs the float model), pooled over every case of that
configuration the search judged. Its columns reuse the names of ExecuTorch's
backend test suite report (``executorch/backends/test/suite/reporting.py``:
``Test ID``, ``Test Case``, ``Subtest``, ``Flow``, ``Params``, ``Result``,
``Result Detail``, ``Output 0 Error Max``, ``Output 0 Error MAE``,
``Output 0 SNR``, ``Error``; numbers with three decimals as it writes
them), so the same tooling reads both, and add what that suite has no
column for: the configuration, the comparison, how many cases, and the error
in output LSBs.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Optional

from vulkan.search.evaluate import COMPARISONS, ErrStats

__all__ = ["CSV_COLUMNS", "rows", "markdown", "csv_rows", "write_csv", "write_repros", "reproduce"]

CSV_FILE = "vulkan_errors.csv"
CSV_COLUMNS = [
    "Test ID", "Test Case", "Subtest", "Flow", "Params", "Result", "Result Detail",
    "Op", "Configuration", "Comparison", "Cases", "Failed Cases", "Elements",
    "Output 0 Error Max", "Output 0 Error MAE", "Output 0 SNR",
    "Output 0 Error Max (LSB)", "Output 0 Error Mean (LSB)", "LSB Unit", "Error",
]


def _applicable(outcomes: list) -> list:
    return [o for o in outcomes if o.applicable]


def rows(results: list) -> list[dict]:
    """One row per op: configurations covered, draws, failures and each defect's shrunk case and boundary."""
    out = []
    for r in results:
        draws = _applicable(r.draws)
        out.append({
            "op": r.op, "configurations": sorted({o.desc.config_id() for o in draws}),
            "draws": len(draws), "failures": sum(1 for o in draws if o.failed),
            "declines": sum(1 for o in draws if not o.expected), "judged": len(_applicable(r.outcomes)),
            "not_applicable": len(r.draws) - len(draws), "seconds": round(r.seconds, 1), "stopped": r.stopped,
            "error": r.error, "defects": [d.to_json() for d in r.defects], "ir_failures": _ir_failures(draws),
            "verdict": "FAIL" if r.defects or any(o.failed for o in draws) else
                       ("error" if r.error and not draws else "n/a" if not draws else "pass"),
        })
    return out


def _ir_failures(draws: list) -> dict:
    """IR check -> how many draws fail it (judged on every draw, not shrunk: :mod:`vulkan.search.evaluate`)."""
    counts: dict = {}
    for o in draws:
        for c in o.ir_failed:
            counts[c] = counts.get(c, 0) + 1
    return counts


def markdown(table: list[dict]) -> str:
    head = ("| op | configurations | draws | failing draws | verdict | shrunk failures: check, smallest case, boundary |\n"
            "| --- | ---: | ---: | ---: | --- | --- |\n")
    lines = []
    for r in table:
        defects = "<br>".join(f"`{d['check']}` on {d['config']} {d['shape']}: {d['boundary']}" for d in r["defects"])
        lines.append(f"| {r['op']} | {len(r['configurations'])} | {r['draws']} | {r['failures']} | {r['verdict']} | "
                     f"{defects or '-'} |")
    text = head + "\n".join(lines) + "\n"
    msgs = [f"- **{r['op']}** `{d['check']}` ({d['config']} {d['shape']}): {d['message']}"
            + (f" — `{d['repro']}`" if d.get("repro") else "") for r in table for d in r["defects"]]
    if msgs:
        text += "\nShrunk failures:\n\n" + "\n".join(msgs) + "\n"
    ir = [f"- **{r['op']}**: " + ", ".join(f"`{c}` on {n}/{r['draws']} draws" for c, n in r["ir_failures"].items())
          for r in table if r.get("ir_failures")]
    if ir:
        text += "\nIR checks of the fused program failing (every draw judged, not shrunk):\n\n" + "\n".join(ir) + "\n"
    return text


def _fmt(x: Optional[float]) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return "inf" if math.isinf(x) else f"{x:.3f}"


def csv_rows(results: list) -> list[dict]:
    """Pooled error figures per op x configuration x comparison, over every applicable case judged."""
    groups: dict = {}
    for r in results:
        for o in _applicable(r.outcomes):
            key = (r.op, o.desc.config_id())
            groups.setdefault(key, []).append(o)
    out = []
    for (op, config), outcomes in groups.items():
        desc = outcomes[0].desc
        params = json.dumps({k: str(v) for k, v in desc.config().items()})
        for comparison in COMPARISONS:
            pooled, failed, errors = ErrStats(), [], []
            for o in outcomes:
                if comparison in o.stats:
                    pooled.merge(o.stats[comparison])
                if o.statuses.get(comparison) in ("fail", "error"):
                    failed.append(o)
                    errors.append(o.messages.get(comparison, ""))
            detail = f"{len(failed)}/{len(outcomes)} cases fail {comparison}" if failed else ""
            out.append({
                "Test ID": f"{op}[{config}]/{comparison}", "Test Case": op, "Subtest": comparison, "Flow": desc.flow,
                "Params": params, "Result": "Fail" if failed else "Pass", "Result Detail": detail, "Op": op,
                "Configuration": config, "Comparison": comparison, "Cases": len(outcomes),
                "Failed Cases": len(failed), "Elements": pooled.elements,
                "Output 0 Error Max": _fmt(pooled.max_abs if pooled.elements else None),
                "Output 0 Error MAE": _fmt(pooled.mae), "Output 0 SNR": _fmt(pooled.sqnr),
                "Output 0 Error Max (LSB)": _fmt(pooled.max_lsb if pooled.elements else None),
                "Output 0 Error Mean (LSB)": _fmt(pooled.mean_lsb), "LSB Unit": pooled.unit,
                "Error": _truncate(errors[0]) if errors else ("" if pooled.elements else "no fused output to compare"),
            })
    return out


def _truncate(text: str) -> str:
    return text if len(text) <= 400 else text[:200] + "..." + text[-200:]  # as reporting.py truncates


def write_csv(path: Path, table: list[dict]) -> Path:
    from harness.core.io import atomic_write_bytes

    buf = io.StringIO()
    writer = csv.DictWriter(buf, CSV_COLUMNS)
    writer.writeheader()
    for row in table:
        writer.writerow(row)
    atomic_write_bytes(path, buf.getvalue().encode())
    return path


REPRO = '''#!/usr/bin/env python
"""passgate vulkan reproducer: {op} fails {check} on its smallest case.

    {config} {shape}
    {boundary}
    fusion: {fusion}

Exit 1 while it reproduces, 0 once {check} holds. Needs passgate (and so
torch / executorch) importable: ``python {name}``.
"""

import sys

CASE = {case}
FUSION = {fusion!r}
MODE = {mode!r}
CHECK = {check!r}

if __name__ == "__main__":
    from vulkan.reports.search_report import reproduce

    sys.exit(reproduce(CASE, FUSION, CHECK, MODE))
'''


def write_repros(report_dir: Path, results: list, fusion_spec: str, mode: Optional[str],
                 fusion_name: str = "") -> list[Path]:
    """A ``repro_vulkan_<fusion>_<op>_<check>.py`` per shrunk failure; the defect records the file name."""
    from harness.core.io import atomic_write_bytes

    if ":" in fusion_spec and not fusion_spec.startswith("/"):
        path, _, name = fusion_spec.rpartition(":")
        if path.endswith(".py"):
            fusion_spec = f"{Path(path).resolve()}:{name}"
    paths = []
    for r in results:
        for i, d in enumerate(r.defects):
            who = "".join(ch if ch.isalnum() else "_" for ch in fusion_name) + "_" if fusion_name else ""
            name = f"repro_vulkan_{who}{r.op.split('.')[-1]}_{d.check}{'_' + str(i) if i else ''}.py"
            text = REPRO.format(op=r.op, check=d.check, config=d.case.config_id(), shape=d.case.shape_id(),
                                boundary=d.boundary, fusion=fusion_spec, mode=mode, name=name,
                                case=repr(d.case.to_json()))
            atomic_write_bytes(Path(report_dir) / name, text.encode())
            d.repro = name
            paths.append(Path(report_dir) / name)
    return paths


def reproduce(case: dict, fusion_spec: str, check: str, mode: Optional[str] = None) -> int:
    """Judge ``case`` afresh (no cache) under the fusion; 1 while ``check`` fails, 0 once it holds."""
    from vulkan.backend import fusion
    from vulkan.cases import flows
    from vulkan.search import space
    from vulkan.search.evaluate import evaluate

    desc = space.from_json(case)
    if fusion_spec in (fusion.PREPROCESS, fusion.FUSE_PATTERNS):
        fuse = fusion.builtin(fusion_spec)
    else:
        from harness.check.loading import load_pass

        fuse = fusion.UserFusion(load_pass(fusion_spec), mode)
    with fusion.pattern_graphs_memoized(), flows.quantizer_patterns_memoized():
        out = evaluate(desc, fuse, use_cache=False)
    status = out.statuses.get(check, "?")
    print(f"{desc.name()} {desc.shape_id()} under {fuse.name}: {check} {status}: {out.messages.get(check, '')}")
    return 1 if status in ("fail", "error") else 0
