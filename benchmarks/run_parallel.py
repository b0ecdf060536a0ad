"""``passgate run -j 2`` against ``-j 1``, and the CI shard matrix simulated on this machine (issue 34, items 1 and 4).

Both figures time real ``passgate run`` processes on one slice of the
standard profile (every exir entry on the built-in and quantized graphs, the
XNNPACK partitioner, and the runtime legs of each case and lowered program:
cheap batched pairs and costly units of their own, as the standard profile
mixes them), from the same warm lowered-graph cache, with
``--no-incremental`` (every unit judged). Start-up (imports, about 6 s, and
case loading) is serial in both runs, so by Amdahl's law a slice of under a
minute of checks caps ``-j 2`` near 1.75x whatever the pool does; this one
has about two minutes of checks:

- ``run_parallel``: ``-j 1`` then ``-j 2``, back to back; the speed-up, and
  ``passgate report diff`` between the two reports with a direct comparison
  of every verdict in order (it must find no difference);
- ``shards``: the shipped matrix (``.github/workflows/conformance.yml``: 4
  jobs of ``passgate run --shard I/4``) run one after another here, each a
  process of its own at ``-j 1``, cut by the unit costs the ``-j 1`` run
  recorded (``passgate report costs`` then ``--shard-costs``) and, beside it,
  by count as before. The figure is the slowest shard's wall time over the
  shards' total / 4 (every shard pays its own imports and case loading, as
  a CI job does); the cost-cut shards, merged, must give the ``-j 1`` verdicts.

On a machine other work keeps busy (Linux's autogroup scheduler gives one
session a fixed share of the cores whatever its process count), ``-j 2``
cannot beat ``-j 1`` by much: the JSON records the load average before each
run; read the figures of an idle machine.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from benchmarks.context import PASSGATE, Context, record, timed

__all__ = ["SLICE", "TARGET_SPEEDUP", "TARGET_SHARD_RATIO", "run_parallel", "shards"]

# (entries, graphs): about 1-3 min at -j 1 on a loaded 2-core machine; the tiny one for the smoke run
SLICE = (("exir.*",), ("builtin", "quantized"))  # every exir entry, with the partitioner (_slice): ~2 min at -j 1
TINY_SLICE = (("exir.CSEPass",), ("mlp", "conv_bn_relu"))
TARGET_SPEEDUP = 1.8
TARGET_SHARD_RATIO = 1.15
SHARDS = 4


def _slice(ctx: Context, entries=None) -> list:
    """``passgate run`` arguments of the slice (of ``entries`` of it, when given)."""
    chosen, graphs = TINY_SLICE if ctx.tiny else SLICE
    partitioner = [] if ctx.tiny or entries else ["--partitioner", "xnnpack"]
    return ["--catalog", "exir", "--only", *(entries or chosen), "--graphs", *graphs, "--runtime", *partitioner]


def _warm(ctx: Context) -> None:
    """Lower the slice's graphs into the cache (one cheap entry on each, and the runtime units) before timing."""
    ctx.say("warming the lowered-graph cache")
    _run(ctx, "warm", "-j", "2", workload=_slice(ctx, ["exir.CSEPass"]))


def _run(ctx: Context, name: str, *extra: str, workload=None) -> dict:
    """One timed ``passgate run`` of the slice; its wall seconds, exit status and report folder."""
    report = ctx.tmp(name)
    load = os.getloadavg()[0]
    seconds, r = timed([*PASSGATE, "run", *(workload or _slice(ctx)), "--no-incremental", "-q", "--report", str(report),
                        *extra],
                       ctx.env(PASSGATE_NO_SERVER=1))
    if r.returncode not in (0, 1):
        raise RuntimeError(f"passgate run {' '.join(extra)} exited {r.returncode}: {r.stderr.strip()[-2000:]}")
    ctx.say(f"run {name}: {seconds:.1f} s (load {load:.1f})")
    return {"seconds": round(seconds, 1), "exit": r.returncode, "load_before": round(load, 2), "report": str(report)}


def _verdicts(report: str) -> list:
    doc = json.loads((Path(report) / "results.json").read_text())
    return [(r["pass_name"], r["graph"], r["check"], r["status"], r["message"]) for r in doc["results"]]


def _diff(ctx: Context, old: str, new: str) -> dict:
    """``passgate report diff`` and a direct comparison, verdict by verdict, in order."""
    _, r = timed([*PASSGATE, "report", "diff", old, new, "--format", "json"], ctx.env())
    diff = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {"error": r.stderr.strip()}
    a, b = _verdicts(old), _verdicts(new)
    differing = sum(1 for x, y in zip(a, b) if x != y) + abs(len(a) - len(b))
    return {"report_diff_exit": r.returncode, "report_diff": {k: len(v) if isinstance(v, list) else v
                                                              for k, v in diff.items()},
            "verdicts": len(a), "differences": differing}


def run_parallel(ctx: Context) -> dict:
    """``-j 1`` then ``-j 2`` on the slice, back to back: the speed-up and the difference in verdicts (none)."""
    _warm(ctx)
    runs = {"j1": _run(ctx, "j1", "-j", "1"), "j2": _run(ctx, "j2", "-j", "2")}
    same = _diff(ctx, runs["j1"]["report"], runs["j2"]["report"])
    value = round(runs["j1"]["seconds"] / runs["j2"]["seconds"], 2)
    return record(value, TARGET_SPEEDUP, "x faster (passgate run -j 2 over -j 1, same verdicts)", "higher",
                  workload=" ".join(_slice(ctx)), runs=runs, **same, cpus=os.cpu_count(),
                  met_verdicts=same["differences"] == 0 and same["report_diff_exit"] == 0,
                  note="wall time of whole processes (imports and case loading included), measured back to back")


def _matrix(ctx: Context, label: str, *extra: str) -> dict:
    """The 4 shards one after another, each a process of its own; the slowest against the total / 4."""
    parts = [_run(ctx, f"{label}-{i}", "-j", "1", "--shard", f"{i}/{SHARDS}", *extra) for i in range(1, SHARDS + 1)]
    seconds = [p["seconds"] for p in parts]
    total = sum(seconds)
    return {"shard_seconds": seconds, "total_s": round(total, 1),
            "slowest_over_mean": round(max(seconds) / (total / SHARDS), 3), "reports": [p["report"] for p in parts]}


def shards(ctx: Context, parallel_figure=None) -> dict:
    """The shipped 4-job matrix simulated: cut by recorded unit costs (and, beside it, by count)."""
    if parallel_figure and "runs" in parallel_figure:
        reference = parallel_figure["runs"]["j1"]["report"]
    else:
        _warm(ctx)
        reference = _run(ctx, "j1", "-j", "1")["report"]
    costs = ctx.scratch / "unit-costs.json"
    _, r = timed([*PASSGATE, "report", "costs", reference, "--out", str(costs)], ctx.env())
    if r.returncode != 0:
        raise RuntimeError(f"passgate report costs exited {r.returncode}: {r.stderr.strip()}")
    started = time.perf_counter()
    by_cost = _matrix(ctx, "by-cost", "--shard-costs", str(costs))
    by_count = _matrix(ctx, "by-count")
    merged = ctx.tmp("merged")
    _, m = timed([*PASSGATE, "report", "merge", *by_cost["reports"], "--out", str(merged), "-q"], ctx.env())
    same = _diff(ctx, reference, str(merged)) if m.returncode in (0, 1) else {"merge_error": m.stderr.strip()}
    value = by_cost["slowest_over_mean"]
    return record(value, TARGET_SHARD_RATIO, f"x (slowest of {SHARDS} shards / their total / {SHARDS}, cut by "
                  "recorded unit costs)", "lower", workload=" ".join(_slice(ctx)), by_cost=by_cost,
                  by_count=by_count, merged_vs_unsharded=same, measured_s=round(time.perf_counter() - started, 1),
                  met=value <= TARGET_SHARD_RATIO,
                  note="each shard a whole passgate process at -j 1, run one after another on this machine")
