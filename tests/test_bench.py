"""The benchmark runner works (not how fast anything is: benchmarks are never timed assertions in tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_tiny_bench_run_writes_valid_json(tmp_path):
    out = tmp_path / "bench.json"
    r = subprocess.run([sys.executable, "-m", "benchmarks", "--tiny", "--only", "throughput", "verification", "help", "reruns",
                        "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["schema"] == "passgate-bench/1" and doc["tiny"] is True and doc["machine"]["cpus"] >= 1
    assert set(doc["figures"]) == {"throughput", "verification", "help", "reruns"}
    for name, f in doc["figures"].items():
        assert {"value", "target", "unit", "met"} <= set(f), name
        assert isinstance(f["value"], (int, float)), name
    part = doc["figures"]["throughput"]["parts"][0]
    assert part["checks"] == part["per_test_measured_checks"] > 0  # both sides ran the same checks
    assert 0 < part["must_checks"] < part["checks"]  # the must-only run left the should-level checks out
    tp = doc["figures"]["throughput"]
    assert tp["ceiling_ratio_given_pass_runs"] > 0 and tp["ratio_must_checks_only"] > 0
    assert "runs" in doc["figures"]["verification"]["ms_per_pair"]
    reruns = doc["figures"]["reruns"]
    assert reruns["pairs"] == 1 and reruns["value"] == reruns["outer_calls_per_pair"] >= 1
    for line in ("throughput", "verification", "help", "reruns"):  # the table prints every figure with its target
        assert any(row.startswith(line) for row in r.stdout.splitlines())


def test_every_figure_is_wired_to_a_function_that_exists():
    """``RUNNERS`` is the one place a figure is wired in: each figure has one, naming a real function."""
    import importlib

    from benchmarks.__main__ import FIGURES, RUNNERS, SLOW, TARGETS

    assert set(RUNNERS) == set(FIGURES) == set(TARGETS) and set(SLOW) <= set(FIGURES)
    for name, (module, function, _extra) in RUNNERS.items():
        assert callable(getattr(importlib.import_module(f"benchmarks.{module}"), function)), name
