"""Figures c, d and g: the conformance suite under pytest (``tox -e conformance``'s own command), its speed-up with
pytest-xdist, the peak memory of every process, and ``passgate --help``'s time.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
from pathlib import Path
from typing import Optional

from benchmarks.context import PASSGATE, PY, ROOT, Context, check_cmd, record, timed
from benchmarks.proctree import run_sampled

__all__ = ["LEVELS", "by_level", "tox_conformance_command", "suite_root", "cache_events", "parallel", "memory", "conformance_wall", "help_time"]

# ----------------------------------------------------------------------------- c./d./g. conformance suite under pytest

LEVELS = ("controller", "xdist_workers", "isolation_workers")  # the suite's process tree, by depth


def by_level(by_depth: dict) -> dict:
    """A per-depth figure of the suite's process tree (TreeRSS.by_depth, cpu_by_depth) named by LEVELS."""
    return {name: by_depth.get(d) for d, name in enumerate(LEVELS)}


def tox_conformance_command(workers: int, extra: list, root: Path = ROOT) -> list:
    """The command `tox -e conformance` runs (read from tox.ini), with ``-n workers`` and ``extra`` as posargs."""
    import configparser
    import shlex

    ini = configparser.ConfigParser(interpolation=None)
    ini.read(root / "tox.ini")
    line = " ".join(ini.get("testenv:conformance", "commands").split())
    line = re.sub(r"\{env:PASSGATE_WORKERS:[^}]*\}", str(workers), line)
    words = shlex.split(line.replace("{posargs}", "\0POSARGS\0"))
    cmd: list = []
    for w in words:
        if w == "\0POSARGS\0":
            cmd += extra
        else:
            cmd.append(w)
    if cmd and cmd[0] == "pytest":
        cmd = [PY, "-m", "pytest", *cmd[1:]]
    return cmd


def suite_root(ctx: Context) -> Path:
    """The folder holding the conformance/ suite to run (the checkout, or an export of a git revision)."""
    if ctx.conformance_source == "worktree":
        return ROOT
    folder = ctx.scratch / f"suite-{re.sub(r'[^A-Za-z0-9_.-]', '_', ctx.conformance_source)}"
    if not folder.exists():
        folder.mkdir()
        # the suite and what its plugin reads beside it (the baseline, the recorded unit costs), as at that revision
        wanted = ["conformance", "pyproject.toml", "tox.ini", "reports/baseline.json", "reports/unit-costs.json"]
        present = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", ctx.conformance_source, "--",
                                  *wanted], capture_output=True, text=True, check=True).stdout.split()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ctx.conformance_source, *present],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def _conformance(ctx: Context, profile: str, workers: int, cache_dir: Path, log: Optional[Path] = None) -> dict:
    report = ctx.tmp(f"conformance-{profile}-n{workers}")
    root = suite_root(ctx)
    # the whole suite's time: reuse no verdict an earlier figure recorded in this cache (a suite that has the option)
    fresh = ["--passgate-no-incremental"] if "--passgate-no-incremental" in (
        root / "conformance" / "conftest.py").read_text() else []
    cmd = tox_conformance_command(workers, ["-p", "no:cacheprovider", f"--passgate-profile={profile}",
                                            f"--passgate-report={report}", *fresh, *ctx.conformance_args], root)
    extra = {"PASSGATE_CACHE_DIR": cache_dir}
    if log is not None:
        extra["PASSGATE_CACHE_LOG"] = log
    r, seconds, tree = run_sampled(cmd, ctx.env(**extra), cwd=str(root))
    doc = {}
    try:
        doc = json.loads((report / "results.json").read_text())
    except (OSError, ValueError):
        pass
    results = doc.get("results", [])
    tail = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    errors = [ln for ln in r.stdout.splitlines() if ln.startswith(("ERROR", "E   "))][:5]
    return {
        "command": " ".join(cmd[2:]), "suite": ctx.conformance_source, "seconds": round(seconds, 1), "exit_status": r.returncode,
        "pytest_summary": tail, **({"errors": errors} if errors else {}),
        "content": {"passes": len({x["pass_name"] for x in results}), "graphs": len({x["graph"] for x in results}),
                    "checks": len({x["check"] for x in results}), "items": len(results)},
        "peak_rss_mib": by_level(tree.by_depth()),
    }


def cache_events(log: Path) -> dict:
    """What the lowered-graph cache log ``log`` holds: events by kind, and the cases lowered (by more than one process)."""
    events: dict[str, int] = {}
    lowered_by: dict[str, set] = {}
    if log.exists():
        for line in log.read_text().splitlines():
            e = json.loads(line)
            events[e["event"]] = events.get(e["event"], 0) + 1
            if e["event"] == "lowered":
                lowered_by.setdefault(e["case"], set()).add(e["pid"])
    return {"events": events, "cases_lowered": len(lowered_by),
            "cases_lowered_more_than_once": sorted(c for c, p in lowered_by.items() if len(p) > 1)}


def parallel(ctx: Context) -> dict:
    """pytest-xdist -n 2 vs -n 1 on the conformance suite, each from an empty shared cache (lowering counted)."""
    profile = ctx.parallel_profile
    runs = {}
    for n in (1, 2):
        cache_dir, log = ctx.tmp(f"xdist-cache-n{n}"), ctx.scratch / f"cache-log-n{n}.jsonl"
        runs[n] = _conformance(ctx, profile, n, cache_dir, log)
        runs[n]["cache"] = cache_events(log)
        ctx.say(f"conformance -n {n}: {json.dumps(runs[n])}")
        shutil.rmtree(cache_dir, ignore_errors=True)
    ratio = round(runs[1]["seconds"] / runs[2]["seconds"], 2)
    return record(ratio, 1.6, "x (-n 1 time / -n 2 time)", "higher", profile=profile,
                   n1=runs[1], n2=runs[2],
                   note="both runs start from an empty cache folder the xdist workers share; cache.lowered counts "
                        "lowerings across all workers (one per graph means no worker redid another's)")


def memory(ctx: Context, parallel_figure: Optional[dict]) -> dict:
    """Peak RSS per process: the conformance workers (from the parallel run) and passgate check on every graph source."""
    from harness.graphs import sources

    graphs = ["mlp"] if ctx.tiny else ["builtin", "zoo", "quantized"]
    try:
        sources.select(["random"], 2, 0)
        graphs = graphs if ctx.tiny else [*graphs, "random"]
    except Exception:  # noqa: BLE001 - random graphs not in this build
        pass
    passes = ["passes.reference:RemoveDetachPass", "passes.reference:ReplaceAddMulWithSubKeepingMeta"]
    report = ctx.tmp("memory-report")
    cmd = check_cmd(passes, graphs, report, "--no-server")
    r, seconds, tree = run_sampled(cmd, ctx.env())
    depth = tree.by_depth()
    peaks = [v["max_mib"] for v in depth.values()]
    conf = None
    if parallel_figure:
        conf = parallel_figure["n2"]["peak_rss_mib"]
        peaks += [v["max_mib"] for v in conf.values() if v]
    profile_run = None
    if ctx.memory_profile:
        profile_run = _conformance(ctx, ctx.memory_profile, 2, ctx.cache_dir)
        ctx.say(f"memory: conformance {ctx.memory_profile}: {json.dumps(profile_run)}")
        peaks += [v["max_mib"] for v in profile_run["peak_rss_mib"].values() if v]
    worst = max(peaks) if peaks else None
    return record(round(worst / 1024, 2) if worst else None, 4.0, "GiB peak RSS of any one process", "lower",
                   check_workload=f"passgate check, 2 reference passes x --graphs {' '.join(graphs)} "
                                  f"(every graph source: what the full profile adds is more passes, not more "
                                  f"graphs held)", check_seconds=round(seconds, 1), check_exit_status=r.returncode,
                   check_peak_rss_mib={"passgate": depth.get(0), "isolation_workers": depth.get(1)},
                   conformance_n2_peak_rss_mib=conf,
                   **({f"conformance_{ctx.memory_profile}_n2": profile_run} if profile_run else {}),
                   note="VmHWM sampled every 0.2 s; forked workers count the pages they share with their parent")


def conformance_wall(ctx: Context) -> dict:
    """`tox -e conformance`'s command (pytest conformance -n 2) on the quick and standard profiles, warm cache."""
    out = {}
    for profile, target in (("quick", 120.0), ("standard", 600.0)):
        if profile not in ctx.conformance_profiles:
            out[profile] = {"skipped": "not asked for (--conformance-profiles)", "target_s": target}
            continue
        log = ctx.scratch / f"cache-log-{profile}.jsonl"
        run = _conformance(ctx, profile, 2, ctx.cache_dir, log)
        run["cache"] = cache_events(log)  # what the run still had to lower: the cache is as the earlier figures left it
        run["target_s"] = target
        run["met"] = run["seconds"] < target
        out[profile] = run
        ctx.say(f"conformance {profile}: {json.dumps(run)}")
    headline = "standard" if "seconds" in out["standard"] else "quick"
    return record(out[headline]["seconds"], out[headline]["target_s"], f"s ({headline} profile)", "lower", **out,
                   how="the command tox -e conformance runs (pytest conformance -n 2 -q -rN --no-header), in the "
                       "passgate venv on the bench cache as the earlier figures left it (cache.lowered: what the "
                       "run lowered itself); tox's own env creation is not included; the parallel figure's -n 2 "
                       "run is the same command from an empty cache")


def help_time(ctx: Context) -> dict:
    """`passgate --help` (lazy subcommand imports: no torch)."""
    times = [timed([*PASSGATE, "--help"], ctx.env())[0] for _ in range(3)]
    return record(round(statistics.median(times), 3), 1.0, "s", "lower", runs=[round(t, 3) for t in times])

