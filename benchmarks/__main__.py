"""``python -m benchmarks`` (``tox -e bench``): every speed and scale figure of issue 7 in one run.

Each figure is measured side by side with its baseline on a fixed workload
and seed, printed with its target, and the whole run is written as JSON
(default ``reports/generated/bench/bench-<UTC time>.json`` and
``latest.json`` beside it) so runs can be compared with ``--compare``.

    python -m benchmarks                   # everything but the slow conformance wall times
    python -m benchmarks --with-slow       # also tox -e conformance's quick and standard wall times
    python -m benchmarks --only throughput verification
    python -m benchmarks --tiny --out x.json   # a seconds-long smoke run (what the tests use)

The machine's other load matters: the JSON records the load average before
and after, and the CPU count.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Callable

FIGURES = ("throughput", "verification", "warm_cold", "edit_loop", "parallel", "memory", "conformance", "help",
           "incremental", "reruns", "vulkan_parallel", "report_html", "run_parallel", "shards", "runtime_cost",
           "verifier_memo", "suite_overhead")
SLOW = ("conformance", "incremental", "vulkan_parallel", "runtime_cost")
TARGETS = {
    "throughput": "passgate >= 30x the checks/s of the per-test style",
    "warm_cold": "warm cache >= 5x faster than cold",
    "edit_loop": "rerun through the warm server < 2 s",
    "parallel": "xdist -n 2 >= 1.6x faster than -n 1",
    "memory": "peak RSS per worker < 4 GiB",
    "verification": "no verifier costs more than pass + numerics without a written reason",
    "conformance": "tox -e conformance: quick < 2 min, standard < 10 min",
    "help": "passgate --help answers without importing torch",
    "incremental": "incremental gate: warm < 20 s, one pass changed < 60 s, pass_base.py changed reruns all",
    "reruns": "fewer than 3 pass calls per pass x graph pair (runs, deterministic, idempotent shared)",
    "vulkan_parallel": "passgate vulkan -j 2 >= 1.6x faster than -j 1 cold; warm reruns reuse every fusion",
    "report_html": "report.html of a full-suite-size run opens in headless Chromium in < 2 s (size, and main's, beside)",
    "run_parallel": "passgate run -j 2 >= 1.8x faster than -j 1, same verdicts (report diff: 0 differences)",
    "shards": "slowest of 4 shards (cut by recorded unit costs) <= 1.15x their total / 4",
    "runtime_cost": "the standard profile's runtime legs add < 15% to a cold standard run",
    "verifier_memo": "the verifier on results equal to their input costs less with the memo, same verdicts",
    "suite_overhead": "tox -e conformance, cold slice: CPU seconds <= 1.2x the summed check time",
}


def _fmt(v) -> str:
    return "-" if v is None else (f"{v:g}" if isinstance(v, (int, float)) else str(v))


def render(figures: dict) -> str:
    lines = [f"{'figure':<13} {'value':>9}  {'target':>8}  {'met':<4} unit / what"]
    for name, f in figures.items():
        if "error" in f:
            lines.append(f"{name:<13} {'error':>9}  {'':>8}  {'':<4} {f['error']}")
            continue
        cmp = ">=" if f.get("better") == "higher" else "<"
        met = {True: "yes", False: "NO", None: "-"}[f.get("met")]
        lines.append(f"{name:<13} {_fmt(f.get('value')):>9}  {cmp + _fmt(f.get('target')):>8}  {met:<4} "
                     f"{f.get('unit', '')}")
    return "\n".join(lines)


def details(figures: dict) -> str:
    out = []
    for name, f in figures.items():
        body = {k: v for k, v in f.items() if k not in ("value", "target", "unit", "better", "met")}
        out.append(f"--- {name}: {TARGETS.get(name, '')}\n{json.dumps(body, indent=1, default=str)}")
    return "\n".join(out)


def compare(new: dict, old: dict) -> str:
    lines = ["figure         before      now"]
    for name, f in new["figures"].items():
        before = old.get("figures", {}).get(name, {}).get("value")
        lines.append(f"{name:<13} {_fmt(before):>8} {_fmt(f.get('value')):>8}")
    return "\n".join(lines)


def _context_only(args: argparse.Namespace, got: dict) -> tuple:
    """What most figures are given beside the Context: nothing."""
    return ()


# figure -> (module of benchmarks, function, what it is given beside the Context): the one place a figure is
# wired in; main measures them in FIGURES order. ``parallel`` is the run the memory figure may reuse.
RUNNERS: dict[str, tuple[str, str, Callable[[argparse.Namespace, dict], tuple]]] = {
    "throughput": ("figures", "throughput", _context_only),
    "verification": ("figures", "verification_cost", _context_only),
    "warm_cold": ("served", "warm_vs_cold", _context_only),
    "edit_loop": ("served", "edit_loop", _context_only),
    "parallel": ("suite", "parallel", _context_only),
    "memory": ("suite", "memory", lambda args, got: (got.get("parallel") if "error" not in got.get("parallel", {})
                                                    else None,)),
    "conformance": ("suite", "conformance_wall", _context_only),
    "help": ("suite", "help_time", _context_only),
    "incremental": ("incremental", "figure", lambda args, got: (args.incremental_profile,)),
    "reruns": ("reruns", "figure", _context_only),
    "vulkan_parallel": ("vulkan_parallel", "figure", _context_only),
    "report_html": ("report_page", "figure", _context_only),
    "run_parallel": ("run_parallel", "run_parallel", _context_only),
    "shards": ("run_parallel", "shards", lambda args, got: (got.get("run_parallel") if "error" not in
                                                           got.get("run_parallel", {}) else None,)),
    "runtime_cost": ("runtime_cost", "figure", _context_only),
    "verifier_memo": ("verifier_memo", "figure", _context_only),
    "suite_overhead": ("suite_overhead", "figure", _context_only),
}


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=FIGURES, help="measure only these figures")
    ap.add_argument("--with-slow", action="store_true", help=f"also the slow figures ({', '.join(SLOW)}): "
                    "two full conformance runs")
    ap.add_argument("--skip-slow", action="store_true", help="leave the slow figures out (the default)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the in-process figures (throughput, verification); "
                    "the passgate and pytest commands run with their default seed, 0")
    ap.add_argument("--tiny", action="store_true", help="a smoke-sized workload (one pass, one graph)")
    ap.add_argument("--cache-dir", help="the shared lowered-graph cache (default: a fresh temporary folder, so "
                    "every run starts from the same state)")
    ap.add_argument("--conformance-source", default="worktree", metavar="worktree|REV",
                    help="the conformance suite to time: this checkout's (default) or a git revision's, exported "
                    "(e.g. HEAD, while the checkout's suite is being edited)")
    ap.add_argument("--conformance-args", default="", metavar="ARGS",
                    help="more pytest arguments for the suite runs, one string (e.g. '--passgate-baseline none')")
    ap.add_argument("--parallel-profile", default="standard", choices=("quick", "standard", "full"),
                    help="the suite profile the -n 2 / -n 1 figure runs (default standard)")
    ap.add_argument("--conformance-profiles", nargs="+", default=["quick", "standard"], choices=("quick", "standard"),
                    help="the profiles the conformance wall-time figure runs (default both)")
    ap.add_argument("--memory-profile", choices=("quick", "standard", "full"),
                    help="the memory figure also samples a conformance run (-n 2) of this profile "
                    "(e.g. full: the certification profile)")
    ap.add_argument("--overhead-slice", metavar="EXPR",
                    help="the -k expression of the suite_overhead figure (default: every exir.R* / exir.S* entry); "
                    "'all': the whole standard profile, cold (about an hour on 2 cores; lowered graphs must be cached)")
    ap.add_argument("--incremental-profile", default="standard", choices=("quick", "standard", "full"),
                    help="the profile of the incremental gate figure (default standard; slow: cold, warm, one pass "
                    "changed, every pass changed)")
    ap.add_argument("--out", help="JSON file to write (default reports/generated/bench/bench-<time>.json)")
    ap.add_argument("--compare", metavar="JSON", help="print the figures beside those of an earlier run")
    return ap


def _context(args: argparse.Namespace):
    """The run's Context; the cache folder it names becomes this process's (and its commands') cache."""
    import shlex

    from benchmarks.context import Context

    ctx = Context(seed=args.seed, tiny=args.tiny, conformance_source=args.conformance_source,
                  conformance_args=tuple(shlex.split(args.conformance_args)), parallel_profile=args.parallel_profile,
                  conformance_profiles=tuple(args.conformance_profiles), memory_profile=args.memory_profile,
                  overhead_slice=args.overhead_slice)
    if args.cache_dir:
        ctx.cache_dir = Path(args.cache_dir)
        ctx.cache_dir.mkdir(parents=True, exist_ok=True)
    os.environ["PASSGATE_CACHE_DIR"] = str(ctx.cache_dir)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(ctx.cache_dir / "torchinductor")
    return ctx


def measure_all(ctx, args: argparse.Namespace, wanted: list) -> dict:
    """Each wanted figure, in FIGURES order; a figure that raises is recorded as its error, the others still run."""
    import importlib

    got: dict = {}
    try:
        for name in (f for f in FIGURES if f in wanted):
            module, function, extra = RUNNERS[name]
            ctx.say(f"measuring {name} ...")
            t = time.perf_counter()
            try:
                fn = getattr(importlib.import_module(f"benchmarks.{module}"), function)
                got[name] = fn(ctx, *extra(args, got))
            except Exception as exc:  # noqa: BLE001 - one failing figure must not lose the others
                import traceback

                traceback.print_exc()
                got[name] = {"error": f"{type(exc).__name__}: {exc}"}
            got[name]["measured_in_s"] = round(time.perf_counter() - t, 1)
    finally:
        ctx.stop_server()
        if not args.cache_dir:
            shutil.rmtree(ctx.cache_dir, ignore_errors=True)
        shutil.rmtree(ctx.scratch, ignore_errors=True)
    return got


def document(args: argparse.Namespace, got: dict, started: float, load_before: tuple) -> dict:
    """The run as JSON: its options, the machine (CPU count, load before and after, torch) and every figure."""
    doc = {
        "schema": "passgate-bench/1",
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "duration_s": round(time.time() - started, 1),
        "seed": args.seed, "tiny": args.tiny, "conformance_source": args.conformance_source,
        "conformance_args": args.conformance_args, "parallel_profile": args.parallel_profile,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "loadavg_before": [round(x, 2) for x in load_before],
                    "loadavg_after": [round(x, 2) for x in os.getloadavg()]},
        "targets": {k: v for k, v in TARGETS.items() if k in got},
        "figures": got,
    }
    try:
        import torch

        doc["machine"]["torch"] = torch.__version__
        doc["machine"]["torch_threads"] = torch.get_num_threads()
    except ImportError:  # pragma: no cover
        pass
    return doc


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    from harness.core.quiet import silence_third_party

    silence_third_party()
    ctx = _context(args)
    load_before, started = os.getloadavg(), time.time()
    got = measure_all(ctx, args, list(args.only or [f for f in FIGURES if args.with_slow or f not in SLOW]))
    doc = document(args, got, started, load_before)
    out = Path(args.out) if args.out else Path("reports/generated/bench") / time.strftime(
        "bench-%Y%m%dT%H%M%SZ.json", time.gmtime(started))
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=1, default=str)
    out.write_text(text)
    if not args.out:
        (out.parent / "latest.json").write_text(text)
    print(details(got))
    print()
    print(render(got))
    print(f"\nbench: {len(got)} figures in {doc['duration_s']} s on {os.cpu_count()} CPUs "
          f"(load average before {doc['machine']['loadavg_before'][0]}); JSON: {out}")
    if args.compare:
        print(compare(doc, json.loads(Path(args.compare).read_text())))
    return 1 if any("error" in f for f in got.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
