"""Incremental gate runs (issue 14), measured side by side: cold, warm, one pass changed, every pass changed.

The pre-merge gate ``passgate run --profile standard --baseline reports/baseline.json --incremental`` is
run four times as a subprocess, the way CI runs it, against one verdict cache of its own (the lowered
cases are linked in from the benchmark's cache folder, so pass ``--cache-dir`` a filled one to leave
lowering out):

1. ``cold``: no verdict recorded: every unit runs, and is recorded (the price of recording is in it);
2. ``warm``: nothing changed: every unit is reused (target < 20 s);
3. ``one_pass``: one pass module "changed" (target < 60 s): the executorch pass module of median reach
   (how many recorded units executed it; a module every backend lowering runs, such as
   ``remove_noop_pass.py``, reaches every pipeline, partitioner and Vulkan unit and costs minutes);
4. ``every_pass``: ``executorch/exir/pass_base.py`` "changed": every unit that executed it reruns.

Nothing in site-packages is edited: ``PASSGATE_DEPS_REDIRECT`` makes dependency hashing read a changed
temporary copy in place of the file (:mod:`harness.run.deps`). Each run's verdicts are compared with the
cold run's (``passgate report diff``: no regression, nothing fixed, nothing gone). The warm run's time is
split into the import floor (a bare ``import torch, executorch.exir``), building the plan, and the run's
body (results.json ``duration_s``: hashing, reading records, writing the reports).

``recording`` measures what recording costs, in-process on a fixed set of pairs (exir entries on the
builtin graphs): bare, :mod:`cProfile` (what :mod:`harness.run.deps` uses), a ``sys.setprofile``
callback, and coverage.py.

    python -m benchmarks --only incremental --cache-dir ~/.cache/passgate [--incremental-profile quick]
    python -m benchmarks.incremental --recording-only
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Optional

from benchmarks.context import PASSGATE, ROOT, Context, import_floor, record, timed

__all__ = ["ONE_PASS_ENTRY", "figure", "recording_overhead", "main"]

ONE_PASS_ENTRY = "exir.RemoveNoopPass"  # the tiny workload's changed pass
TINY = ["--catalog", "exir", "--only", "exir.CSEPass", ONE_PASS_ENTRY, "--graphs", "mlp", "conv_bn_relu"]


def _gate_cmd(profile: str, report: Path, tiny: bool) -> list:
    if tiny:
        return [*PASSGATE, "run", *TINY, "--incremental", "-q", "--report", str(report)]
    return [*PASSGATE, "run", "--profile", profile, "--baseline", str(ROOT / "reports" / "baseline.json"),
            "--incremental", "-q", "--report", str(report)]


def _changed_copy(ctx: Context, path: str) -> str:
    """A temporary copy of ``path`` with one more line: a change of content, the file itself untouched."""
    copy = ctx.tmp("changed") / Path(path).name
    copy.write_text(Path(path).read_text() + "\n# changed by benchmarks/incremental.py\n")
    return str(copy)


def _module_file(spec: str) -> str:
    from harness.check.loading import source_file

    return source_file(spec)


def _entry_spec(name: str) -> str:
    from harness.catalog import resolve_catalogs, select_entries

    entries, _, _ = select_entries(resolve_catalogs([name.split(".")[0]]), [name], True)
    return entries[0].spec


def _reach(cache_root: Path) -> dict:
    """Pass module (executorch ``passes`` / ``_passes`` / ``transforms`` file) -> how many recorded units executed it."""
    from collections import Counter

    from harness.run.verdicts import VerdictCache

    cache = VerdictCache(cache_root)
    counts: Counter = Counter()
    for f in (cache_root / "units").glob("*/*.json"):
        rec = cache.read(f.stem)
        for path in (cache.files(rec) if rec is not None else None) or ():
            if "/executorch/" in path and any(p in path for p in ("/passes/", "/_passes/", "/transforms/")):
                counts[path] += 1
    return dict(counts)


def _median_pass_module(reach: dict) -> str:
    """The pass module a typical pull request edits: the one of median reach (ties: by name)."""
    ranked = sorted(reach.items(), key=lambda kv: (kv[1], kv[0]))
    return ranked[len(ranked) // 2][0]


def _units_executing(cache_root: Path, path: str) -> int:
    """How many recorded units list ``path`` among their dependencies."""
    from harness.run.verdicts import VerdictCache

    cache = VerdictCache(cache_root)
    n = 0
    for f in (cache_root / "units").glob("*/*.json"):
        rec = cache.read(f.stem)
        files = cache.files(rec) if rec is not None else None
        n += bool(files and path in files)
    return n


def _one_run(ctx: Context, name: str, profile: str, env: dict, cold: Optional[dict]) -> dict:
    report = ctx.tmp(f"incremental-{name}")
    ctx.say(f"incremental: {name} gate run ...")
    seconds, proc = timed(_gate_cmd(profile, report, ctx.tiny), env, cwd=str(ROOT))
    out: dict = {"seconds": round(seconds, 1), "exit_status": proc.returncode}
    try:
        doc = json.loads((report / "results.json").read_text())
    except (OSError, ValueError):
        out["error"] = proc.stderr[-1500:]
        return out
    inc = doc.get("incremental") or {}
    out.update({k: inc.get(k) for k in ("units", "ran", "reused", "not_affected", "recorded", "uncacheable")})
    out["body_s"] = doc.get("duration_s")
    out["checks"] = len(doc.get("results", ()))
    out["doc"] = doc
    if cold is not None:
        from harness.report.diff import diff

        d = diff(cold, doc)
        out["same_verdicts_as_cold"] = not (d.regressions or d.fixed or d.gone)
        out["diff"] = {"regressions": len(d.regressions), "fixed": len(d.fixed), "gone": len(d.gone)}
    return out


def figure(ctx: Context, profile: str = "standard") -> dict:
    """The four gate runs; the value is the warm run's seconds (target < 20 s)."""
    import executorch.exir.pass_base as pass_base

    cache = ctx.tmp("incremental-cache")
    for f in Path(ctx.cache_dir).glob("*.case"):
        (cache / f.name).symlink_to(f)
    env = ctx.env(PASSGATE_CACHE_DIR=cache, PASSGATE_NO_SERVER=1)
    cold = _one_run(ctx, "cold", profile, env, None)
    cold_doc = cold.pop("doc", None)
    if cold_doc is None:
        return {"error": f"the cold run wrote no results: {cold.get('error', '')[-500:]}"}
    warm = _one_run(ctx, "warm", profile, env, cold_doc)

    reach = _reach(cache / "verdicts")
    one_file = os.path.realpath(_module_file(_entry_spec(ONE_PASS_ENTRY))) if ctx.tiny or not reach \
        else _median_pass_module(reach)
    spread = sorted(reach.values())
    base_file = os.path.realpath(pass_base.__file__)
    expect_one = _units_executing(cache / "verdicts", one_file)
    expect_all = _units_executing(cache / "verdicts", base_file)
    redirect_one = f"{one_file}={_changed_copy(ctx, one_file)}"
    one = _one_run(ctx, "one_pass", profile, {**env, "PASSGATE_DEPS_REDIRECT": redirect_one}, cold_doc)
    both = os.pathsep.join([redirect_one, f"{base_file}={_changed_copy(ctx, base_file)}"])
    every = _one_run(ctx, "every_pass", profile, {**env, "PASSGATE_DEPS_REDIRECT": both}, cold_doc)
    for r in (warm, one, every):
        r.pop("doc", None)
    floor = import_floor(ctx)
    body = warm.get("body_s") or 0.0
    value = warm.get("seconds")
    return record(value, 20.0, "s", "lower", workload=f"passgate run --profile {profile} --baseline --incremental"
                   + (" (tiny: 2 exir entries x 2 graphs)" if ctx.tiny else ""),
                   cold=cold, warm=warm, one_pass={**one, "file": one_file, "units_executing_it": expect_one,
                                                   "target_s": 60.0,
                                                   "met": one.get("seconds") is not None and one["seconds"] < 60},
                   every_pass={**every, "file": base_file, "units_executing_it": expect_all},
                   pass_module_reach={"modules": len(spread), "min": spread[0] if spread else None,
                                      "median": spread[len(spread) // 2] if spread else None,
                                      "p90": spread[int(0.9 * len(spread))] if spread else None,
                                      "max": spread[-1] if spread else None,
                                      "widest": sorted(reach, key=reach.get)[-5:]},
                   warm_split={"import_floor_s": round(floor, 1), "body_s": body,
                               "plan_and_rest_s": round((value or 0) - floor - body, 1)},
                   recording=recording_overhead(ctx))


def _pairs(ctx: Context):
    from harness.core.config import RunConfig  # noqa: F401 - imported here so the timing leaves imports out
    from harness.graphs.cases import load_cases
    from harness.run import plan

    p = plan.build("standard", catalogs=["exir"], graphs=["mlp"] if ctx.tiny else ["builtin"])
    cases = {c.name: c for c in load_cases(p.specs)}
    entries = p.runnable[:2] if ctx.tiny else p.runnable[:6]
    return [(e.loaded(), cases[g]) for e in entries for g in p.applied[e.name]]


def recording_overhead(ctx: Context, repeat: int = 2) -> dict:
    """Seconds to check a fixed set of pairs in-process, bare and under each way of recording what ran."""
    import cProfile

    import torch

    from harness.check.runner import check_pass_on_case
    from harness.core.config import RunConfig
    from harness.graphs.memos import MEMOS

    todo = _pairs(ctx)
    torch.set_num_threads(1)

    def run() -> None:
        MEMOS.clear(cases=False)
        for lp, case in todo:
            check_pass_on_case(lp, case, RunConfig())

    def bare() -> int:
        run()
        return 0

    def cprofile() -> int:
        pr = cProfile.Profile(builtins=False)
        pr.enable()
        try:
            run()
        finally:
            pr.disable()
        return len({e.code.co_filename for e in pr.getstats() if not isinstance(e.code, str)})

    def setprofile() -> int:
        seen: set = set()

        def hook(frame, event, arg):
            if event == "call":
                seen.add(frame.f_code)

        sys.setprofile(hook)
        try:
            run()
        finally:
            sys.setprofile(None)
        return len({c.co_filename for c in seen})

    def coverage_py() -> int:
        import coverage

        cov = coverage.Coverage(data_file=None, config_file=False, source=[str(ROOT), os.path.dirname(torch.__file__)])
        cov.start()
        try:
            run()
        finally:
            cov.stop()
        data = cov.get_data()
        return len([f for f in data.measured_files() if data.lines(f)])  # executed, not merely under source

    run()  # warm the process's memos of loading and first calls
    out: dict = {"pairs": len(todo)}
    for name, fn in (("bare", bare), ("cprofile", cprofile), ("setprofile", setprofile), ("coverage", coverage_py)):
        times, files = [], 0
        for _ in range(repeat):
            t = time.perf_counter()
            files = fn()
            times.append(time.perf_counter() - t)
        out[name] = {"seconds": round(statistics.median(times), 2), "files": files}
    for name in ("cprofile", "setprofile", "coverage"):
        out[name]["overhead_percent"] = round(100 * (out[name]["seconds"] / out["bare"]["seconds"] - 1), 1)
    return out


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recording-only", action="store_true", help="only the in-process recording overhead")
    ap.add_argument("--tiny", action="store_true")
    args = ap.parse_args(argv)
    from harness.core.quiet import silence_third_party

    silence_third_party()
    ctx = Context(tiny=args.tiny)
    print(json.dumps(recording_overhead(ctx) if args.recording_only else figure(ctx), indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
