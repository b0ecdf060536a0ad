"""The suite_overhead figure: the conformance suite's CPU time over the time its checks take, on a cold slice.

What a cold ``tox -e conformance`` costs beyond the pass runs and checks
themselves (forking, case copies, result transfer, pytest's items and
reports, xdist, the report) is the harness's overhead. The figure runs
``tox -e conformance``'s own command on a slice of the standard profile
(``-k`` below: the units of every ``exir.R*`` and ``exir.S*`` entry on the
standard graphs), every verdict judged afresh (``--passgate-no-incremental``)
and the lowered graphs cached, with 2 workers, and divides the CPU seconds
of the whole process tree by the summed ``duration_s`` of the records it
wrote. Its inverse is the share of the ceiling: how much of the CPU went
into pass runs and checks. ``--conformance-source REV`` times another
revision's suite the same way, for a before / after. ``--overhead-slice all``
times the whole standard profile (about an hour on 2 cores): the issue's own
figure, per 1,000 units so it stays comparable as the corpus grows. Its
lowered graphs must be in ``--cache-dir`` already (``passgate graphs
--graphs builtin quantized corpus``); the figure counts the cases the run
lowered itself, so a reader sees whether lowering got into the time.

On a slice it judges the slice once more with ``--passgate-no-verdict-cache``
(``without_recording``): nothing then records what each unit executed
(:mod:`harness.run.deps`). That recorder traces the pass runs and the checks,
so its cost sits inside the check timers, on both sides of the ratio; the
difference is what keeping the verdict cache costs a cold run.
"""

from __future__ import annotations

import json
import resource
import shutil
from collections import Counter

from benchmarks.context import ROOT, Context, record
from benchmarks.proctree import run_sampled
from benchmarks.suite import LEVELS, by_level, cache_events, suite_root, tox_conformance_command

__all__ = ["SLICE", "TARGET", "figure"]

SLICE = "exir.R or exir.S"  # 1,162 units, about 2.5 min of checks: big enough that start-up is a few percent
TARGET = 1.2  # issue 34: CPU seconds at most 1.2x the summed check time


def _cpu_of_children() -> float:
    """User + system seconds of every child (and theirs) this process waited for so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _select(ctx: Context) -> list:
    """The ``-k`` arguments of the measured slice (none for the whole profile)."""
    if ctx.tiny:
        return ["-k", "exir.RemoveNoopPass"]
    chosen = ctx.overhead_slice or SLICE
    return [] if chosen == "all" else ["-k", chosen]


def _per_1000(count, seconds: float, cpu: float, checks: float):
    """Wall, CPU and check seconds per 1,000 of ``count`` things (units, pairs): comparable as the corpus grows."""
    return {"wall_s": round(seconds * 1000 / count, 1), "cpu_s": round(cpu * 1000 / count, 1),
            "check_s": round(checks * 1000 / count, 1)} if count else None


def _judged(ctx: Context, root, report, select: list, extra: list, env: dict, timeout: float):
    """One cold run of the suite's command: (process result, wall s, sampled tree, CPU s, results.json or None)."""
    cmd = tox_conformance_command(2, ["-p", "no:cacheprovider", "--passgate-profile=standard",
                                      f"--passgate-report={report}", *extra, *select, *ctx.conformance_args], root)
    before = _cpu_of_children()
    r, seconds, tree = run_sampled(cmd, env, cwd=str(root), timeout=timeout)
    cpu = _cpu_of_children() - before
    try:
        doc = json.loads((report / "results.json").read_text())
    except (OSError, ValueError):
        doc = None
    return r, seconds, tree, cpu, doc if isinstance(doc, dict) and "results" in doc else None


def _check_seconds(doc: dict) -> float:
    return sum(float(x.get("duration_s") or 0) for x in doc["results"])


def _without_recording(ctx: Context, root, select: list, cpu: float, checks: float) -> dict:
    """The same slice judged with no verdict cache, so nothing records what each unit executed.

    The recorder (harness.run.deps, cProfile) traces every unit's pass runs and checks, so its cost sits
    inside the check timers: the difference is what the warm cache costs a cold run.
    """
    report = ctx.tmp("suite-overhead-unrecorded")
    r, seconds, _, cpu_bare, doc = _judged(ctx, root, report, select, ["--passgate-no-verdict-cache"], ctx.env(), 3600)
    if doc is None:
        return {"error": f"no results.json (exit {r.returncode}): {r.stderr[-300:]}"}
    bare = _check_seconds(doc)
    return {"wall_s": round(seconds, 1), "cpu_s": round(cpu_bare, 1), "check_s": round(bare, 1),
            "ratio": round(cpu_bare / bare, 3) if bare else None,
            "recording_cpu_s": round(cpu - cpu_bare, 1), "recording_check_s": round(checks - bare, 1),
            "recording_share_of_check_s": round((checks - bare) / checks, 3) if checks else None}


def figure(ctx: Context) -> dict:
    root = suite_root(ctx)
    report = ctx.tmp("suite-overhead")
    select = _select(ctx)
    whole = not select
    if not whole:  # lowered graphs cached before the clock starts: lowering is not the harness's overhead
        warm = tox_conformance_command(2, ["-p", "no:cacheprovider", "--passgate-profile=standard",
                                           f"--passgate-report={ctx.tmp('suite-overhead-warmup')}", *select,
                                           *ctx.conformance_args], root)
        run_sampled(warm, ctx.env(), cwd=str(root))
    log = ctx.tmp("suite-overhead-cache-log") / "events.jsonl"
    r, seconds, tree, cpu, doc = _judged(ctx, root, report, select, ["--passgate-no-incremental"],
                                         ctx.env(PASSGATE_CACHE_LOG=log), 4 * 3600 if whole else 3600)
    if doc is None:
        return {"error": f"the suite wrote no results.json (exit {r.returncode}): {r.stdout[-500:]}{r.stderr[-500:]}"}
    results = doc["results"]
    checks = _check_seconds(doc)
    units = len({(x["pass_name"], x["graph"]) for x in results})
    items = (doc.get("incremental") or {}).get("units")  # the suite's units: one pytest item each
    by_check: Counter = Counter()
    for x in results:
        by_check[x["check"]] += float(x.get("duration_s") or 0)
    value = round(cpu / checks, 3) if checks else None
    ctx.say(f"suite_overhead: {units} pass x graph pairs, {len(results)} records, {seconds:.1f} s wall, "
            f"{cpu:.1f} CPU-s, {checks:.1f} s of checks: {value}")
    cpu_levels = by_level(tree.cpu_by_depth())
    kept = None
    if whole:  # an hour's report: kept for `passgate report costs` (reports/unit-costs.json) and a look at its verdicts
        kept = ROOT / "reports" / "generated" / "bench" / "suite-overhead-report"
        shutil.rmtree(kept, ignore_errors=True)
        try:
            shutil.copytree(report, kept)
        except OSError as exc:
            kept = f"not kept: {exc}"
    # the slice again without the dependency recorder (an hour more on the whole profile: not there)
    unrecorded = None if whole else _without_recording(ctx, root, select, cpu, checks)
    return record(value, TARGET, "CPU-s of the suite's process tree / summed check seconds (cold "
                  + ("standard profile)" if whole else "slice)"), "lower",
                  **({"report": str(kept)} if kept else {}),
                  suite=ctx.conformance_source, select=" ".join(select[1:]) or "all (standard profile)",
                  exit_status=r.returncode, wall_s=round(seconds, 1),
                  cpu_s=round(cpu, 1), check_s=round(checks, 1), pairs=units, records=len(results),
                  share_of_ceiling=round(checks / cpu, 3) if cpu else None,
                  units=items, per_1000_units=_per_1000(items, seconds, cpu, checks),
                  per_1000_pairs=_per_1000(units, seconds, cpu, checks),
                  check_s_by_check={k: round(v, 1) for k, v in by_check.most_common(8)},
                  cases_lowered_during_run=cache_events(log)["cases_lowered"],
                  # own CPU seconds by process level: what is not in a check is where the overhead lives
                  cpu_s_by_level={**cpu_levels, "deeper_or_unsampled": round(cpu - sum(
                      cpu_levels[name] or 0.0 for name in LEVELS), 1)},
                  peak_rss_mib=by_level(tree.by_depth()),
                  **({"without_recording": unrecorded} if unrecorded is not None else {}),
                  pytest_summary=(r.stdout.strip().splitlines() or [""])[-1])
