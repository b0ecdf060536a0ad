"""``passgate vulkan`` over workers and the fusion cache: cold ``-j 1`` against cold ``-j 2``, then warm reruns.

The issue it measures: a vendor running ``passgate vulkan --pass
my_fusion.py:MyFusion`` waited 15-17 min per run, every fusion in one
process, all of them again after any edit. The workload here is fixed and
reduced so that it fits a shared machine: a vendor-style fusion (a copy of
``tests/data/vulkan_vendor_passes.py:FixedAlphaFusion``, a correct
FusePatternsPass wrapper) searched over ``--ops`` with ``--examples N`` (a
deterministic draw sequence), or over the fixed list with ``--count N``.

Runs, each a fresh ``passgate vulkan`` process, timed whole (imports
included, as a vendor waits for them):

1. cold ``-j 1``: an empty cache folder (quantize, lower, fuse everything);
2. cold ``-j 2``: another empty cache folder, the same workload;
3. warm after an unrelated edit: run 2's folder, a file beside the pass
   edited (not the pass): every fusion is reused;
4. after editing the pass's own file: the lowerings are reused, every
   fusion is redone (what the fusion cache saves is 4 minus 3).

Every run's verdicts must equal run 1's. Wall and CPU seconds are recorded
with the load average before each run: on a machine busy with other work
(Linux's autogroup scheduler gives one session a fixed share of the cores
whatever its process count) ``-j 2`` cannot beat ``-j 1`` by much; measure
on an idle one. Run::

    python benchmarks/vulkan_parallel.py [--ops q8ta_add q8ta_relu] [--examples 3 | --count 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["TARGET_SPEEDUP", "measure", "figure", "main"]

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "tests" / "data" / "vulkan_vendor_passes.py"


def _passgate() -> list[str]:
    beside = Path(sys.executable).with_name("passgate")
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "harness.cli.main"]


def _run(label: str, workdir: Path, cache: Path, jobs: int, workload: list[str]) -> dict:
    report = workdir / f"report-{label}"
    env = {**os.environ, "PASSGATE_CACHE_DIR": str(cache), "PASSGATE_NO_SERVER": "1",
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    cmd = [*_passgate(), "vulkan", "--pass", f"{workdir / 'my_fusion.py'}:FixedAlphaFusion", *workload,
           "-j", str(jobs), "--quiet", "--report", str(report)]
    load = os.getloadavg()[0]
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    doc = json.loads((report / "results.json").read_text())
    verdicts = [(r["pass_name"], r["graph"], r["check"], r["status"], r["message"]) for r in doc["results"]]
    records = doc["vulkan"].get("records") or []
    cached = sum(1 for r in records if r["timings"].get("fusion_from_cache"))
    print(f"{label:22s} -j {jobs}: {seconds:7.1f} s wall {cpu:7.1f} s cpu  load {load:.1f}  exit {proc.returncode}  "
          f"{len(verdicts)} verdicts"
          + (f"  {cached}/{len(records)} fusions from cache" if records else ""), file=sys.stderr, flush=True)
    if proc.returncode not in (0, 1):
        print(proc.stderr[-3000:], file=sys.stderr)
    return {"seconds": round(seconds, 1), "cpu_s": round(cpu, 1), "load_before": round(load, 2), "jobs": jobs,
            "exit": proc.returncode, "verdicts": verdicts,
            "fusions_from_cache": cached if records else None}


def measure(workload: list[str]) -> dict:
    """The four runs on ``workload`` (``passgate vulkan`` arguments); speed-up of ``-j 2`` and the runs."""
    with tempfile.TemporaryDirectory(prefix="passgate-vulkan-bench-") as tmp:
        work = Path(tmp)
        shutil.copy(VENDOR, work / "my_fusion.py")
        (work / "helpers_not_imported.py").write_text("X = 1\n")
        runs = {"cold_j1": _run("cold", work, work / "cache-j1", 1, workload),
                "cold_j2": _run("cold", work, work / "cache-j2", 2, workload)}
        (work / "helpers_not_imported.py").write_text("X = 2  # an unrelated edit\n")
        os.utime(work / "my_fusion.py")  # touched, not edited: still the same source
        runs["warm_unrelated_edit"] = _run("warm, unrelated edit", work, work / "cache-j2", 2, workload)
        with open(work / "my_fusion.py", "a") as f:
            f.write("\n# the vendor edited the pass\n")
        runs["pass_edited"] = _run("pass edited", work, work / "cache-j2", 2, workload)
    same = all(r["verdicts"] == runs["cold_j1"]["verdicts"] for r in runs.values())
    return {"workload": workload, "load_average": os.getloadavg(), "cpus": os.cpu_count(),
            "same_verdicts": same, "speedup_j2": round(runs["cold_j1"]["seconds"] / runs["cold_j2"]["seconds"], 2),
            "runs": {k: {kk: vv for kk, vv in v.items() if kk != "verdicts"} for k, v in runs.items()}}


TARGET_SPEEDUP = 1.6  # as xdist's -n 2 figure: two workers on two cores, less the imports both pay


def figure(ctx) -> dict:
    """``tox -e bench``'s ``vulkan_parallel`` figure: ``-j 2`` over ``-j 1`` cold, with the warm reruns beside it."""
    workload = ["--ops", "q8ta_add", "--count", "1"] if ctx.tiny else \
        ["--ops", "q8ta_add", "q8ta_relu", "q8ta_conv2d_pw", "q8ta_linear", "--examples", "3"]
    got = measure(workload)
    value = got["speedup_j2"]
    return {"value": value, "target": TARGET_SPEEDUP, "unit": "x faster (-j 2 over -j 1, cold, same verdicts)",
            "better": "higher", "met": bool(got["same_verdicts"] and value >= TARGET_SPEEDUP), **got}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="+", default=["q8ta_add", "q8ta_relu", "q8ta_conv2d_pw", "q8ta_linear"])
    ap.add_argument("--examples", type=int, default=3, help="search: draws per op (default 3)")
    ap.add_argument("--count", type=int, help="the fixed list instead of the search: cases per recipe")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    workload = ["--ops", *args.ops, *(["--count", str(args.count)] if args.count else
                                      ["--examples", str(args.examples)])]
    out = measure(workload)
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0 if out["same_verdicts"] else 1


if __name__ == "__main__":
    sys.exit(main())
