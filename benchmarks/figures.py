"""The figures of issue 7, each measured side by side against its baseline in one run.

Every function returns a dict with at least ``value``, ``target``, ``unit``,
``met`` and ``workload``; :mod:`benchmarks.__main__` prints and stores them.
In-process figures (throughput, verification cost) run in the benchmark
process; the others run the real commands (``passgate check``, ``pytest
conformance``) as subprocesses, the way users run them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional

from benchmarks.proctree import run_sampled
from harness.run.profiles import suite_passes

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
PASSGATE = [PY, "-m", "harness.cli.main"]
EDIT_LOOP_PASS = """\
# A pass author's work in progress: the benchmark edits this file between reruns.
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.pass_base import ExportPass


class MyPass(ExportPass):
    \"\"\"add(x, y) -> sub(x, neg(y)), built on ExportPass like most ExecuTorch passes (it retraces the graph).\"\"\"

    def call_operator(self, op, args, kwargs, meta):
        if (op == exir_ops.edge.aten.add.Tensor and len(args) == 2 and not kwargs
                and all(hasattr(a, "to_tensor") for a in args)):
            neg = super().call_operator(exir_ops.edge.aten.neg.default, (args[1],), {}, meta)
            return super().call_operator(exir_ops.edge.aten.sub.Tensor, (args[0], neg), {}, meta)
        return super().call_operator(op, args, kwargs, meta)
"""


@dataclass
class Context:
    """What every figure shares: the workload, the seed, a machine-wide cache folder, scratch space."""

    seed: int = 0
    tiny: bool = False
    cache_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="passgate-bench-cache-")))
    scratch: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="passgate-bench-")))
    log: object = sys.stderr
    # where the conformance suite comes from: "worktree" (this checkout) or a git revision (exported with
    # `git archive`, for measuring a committed suite while the checkout's is being edited)
    conformance_source: str = "worktree"
    conformance_args: tuple = ()  # more pytest arguments for the suite (e.g. --passgate-baseline none)
    parallel_profile: str = "standard"
    conformance_profiles: tuple = ("quick", "standard")
    memory_profile: Optional[str] = None  # also sample a conformance run (-n 2) of this profile for the memory figure
    # the warm server the warm_cold and edit_loop figures share: (env, pid, cache folder)
    server: Optional[tuple] = None
    warm_cache: Optional[Path] = None  # the cache folder warm_cold filled

    def say(self, text: str) -> None:
        print(f"bench: {text}", file=self.log, flush=True)

    def ensure_server(self, cache_dir: Path, preload: list[str]) -> dict:
        """The env that reaches a warm server for ``cache_dir`` (started once, stopped by :meth:`stop_server`)."""
        if self.server and self.server[2] == cache_dir:
            return self.server[0]
        self.stop_server()
        env, pid = _start_server(self.env(PASSGATE_CACHE_DIR=cache_dir), preload)
        self.server = (env, pid, cache_dir)
        return env

    def stop_server(self) -> None:
        if self.server:
            _stop_server(self.server[0], self.server[1])
            self.server = None

    def env(self, **extra) -> dict:
        env = {**os.environ, "PASSGATE_CACHE_DIR": str(self.cache_dir), "PYTHONDONTWRITEBYTECODE": "1",
               "XDG_RUNTIME_DIR": str(self.runtime_dir)}
        env.pop("PASSGATE_NO_SERVER", None)
        env.pop("PASSGATE_CACHE_LOG", None)
        env.update({k: str(v) for k, v in extra.items()})
        return env

    @property
    def runtime_dir(self) -> Path:
        path = self.scratch / "xdg"
        path.mkdir(mode=0o700, exist_ok=True)
        return path

    def tmp(self, name: str) -> Path:
        path = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.scratch))
        return path


def _figure(value, target, unit: str, better: str, **rest) -> dict:
    met = None if value is None else (value >= target if better == "higher" else value < target)
    return {"value": value, "target": target, "unit": unit, "better": better, "met": met, **rest}


# ----------------------------------------------------------------------------- workloads


REFERENCE = suite_passes()  # the suite's reference passes: the float workload
PASS_RUN_CHECKS = ("runs", "idempotent", "deterministic")
VULKAN_QUANTIZED = ("vulkan.FoldQDQPass", "vulkan.FuseQuantizedOpsTransform")


def _workloads(ctx: Context) -> list[dict]:
    """[{name, passes: [LoadedPass], specs: [CaseSpec], per_test_passes: int}]."""
    from harness.check.loading import load_pass
    from harness.graphs import sources

    if ctx.tiny:
        return [{"name": "float_tiny", "passes": [load_pass(REFERENCE[2])], "specs": sources.select(["mlp"]),
                 "per_test_passes": 1}]
    from harness import catalog

    entries = {e.name: e for e in catalog.all_entries(catalog.select(["vulkan"]))}
    return [
        {"name": "float: 8 reference passes x 6 built-in graphs", "passes": [load_pass(s) for s in REFERENCE],
         "specs": sources.select(["builtin"]), "per_test_passes": 2},
        {"name": "quantized: 2 Vulkan Q/DQ passes x 6 PT2E int8 graphs",
         "passes": [entries[n].loaded() for n in VULKAN_QUANTIZED], "specs": sources.select(["quantized"]),
         "per_test_passes": 1},
    ]


def _clear_process_memos() -> None:
    from harness.graphs.memos import MEMOS

    MEMOS.clear()


# ----------------------------------------------------------------------------- a. throughput


def throughput(ctx: Context) -> dict:
    """passgate (lower once, copy per check, isolated workers) vs the per-test style on the same pairs and checks."""
    from harness.check.runner import check_pass_on_case
    from harness.core.config import RunConfig
    from harness.graphs import cache
    from harness.graphs.cases import GraphCase, export_and_lower, load_case
    from harness.run.scheduler import check_all

    config = RunConfig(seed=ctx.seed)
    from harness.core.results import Level, ir_checks_at

    must_checks = ir_checks_at(Level.MUST)

    def timed_check(passes, specs, **changes) -> tuple[float, list]:
        """check_all in forked workers as `passgate check` runs it, the cases loaded first: (seconds, results)."""
        _clear_process_memos()
        started = time.perf_counter()
        cases = [load_case(s) for s in specs]
        rs = check_all(passes, cases, replace(config, isolate=True, **changes))
        return time.perf_counter() - started, rs

    parts = []
    for wl in _workloads(ctx):
        passes, specs = wl["passes"], wl["specs"]
        pairs = len(passes) * len(specs)
        # passgate with a cold cache (lowers each graph once) and with the warm one, as `passgate check` runs it
        cold_dir = ctx.tmp("cold-cache")
        cache.configure(cold_dir)
        pg_cold, _ = timed_check(passes, specs)
        shutil.rmtree(cold_dir, ignore_errors=True)
        cache.configure(ctx.cache_dir)
        for s in specs:  # fill the shared cache, untimed
            load_case(s)
        pg_warm, rs = timed_check(passes, specs)
        checks = len(rs)
        # the pass runs the checks need (runs, and the reruns of idempotent/deterministic with their copies):
        # both styles pay them, so per-test time / their time is the best ratio any harness could reach
        pass_runs_s = sum(r.duration_s for r in rs if r.check in PASS_RUN_CHECKS)
        pg_warm_must, rs_must = timed_check(passes, specs, checks=must_checks)  # what the gate enforces by default
        pg_warm_j2, _ = timed_check(passes, specs, workers=2)  # the machine's two cores
        # per-test: each test builds, exports, [quantizes,] lowers its graph, then runs the pass and the checks
        k = wl["per_test_passes"]
        per_graph: dict[str, list[float]] = {}
        should_s: dict[str, list[float]] = {}  # per graph: what the per-test style spent on should-level checks
        measured_checks = 0
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # the thread count passgate's workers run with: the same execution costs
        for gi, spec in enumerate(specs):
            for j in range(k):
                p = passes[(gi * k + j) % len(passes)]  # spread the measured pairs over the passes
                _clear_process_memos()
                started = time.perf_counter()
                inputs, exported, edge = export_and_lower(spec)
                case = GraphCase(spec, inputs, exported, edge)
                got = check_pass_on_case(p, case, config)
                per_graph.setdefault(spec.name, []).append(time.perf_counter() - started)
                should_s.setdefault(spec.name, []).append(sum(r.duration_s for r in got if r.check not in must_checks))
                measured_checks += len(got)
        torch.set_num_threads(threads)
        measured_pairs = sum(len(v) for v in per_graph.values())
        # extrapolation: every pass on graph g costs what the measured tests on g cost on average
        per_test_total = sum(statistics.mean(per_graph[s.name]) * len(passes) for s in specs)
        per_test_must = per_test_total - sum(statistics.mean(should_s[s.name]) * len(passes) for s in specs)
        part = {
            "workload": wl["name"], "pairs": pairs, "checks": checks,
            "passgate_warm_s": round(pg_warm, 2), "passgate_cold_s": round(pg_cold, 2),
            "passgate_warm_2_workers_s": round(pg_warm_j2, 2),
            "per_test_measured_pairs": measured_pairs, "per_test_measured_checks": measured_checks,
            "per_test_measured_s": round(sum(sum(v) for v in per_graph.values()), 2),
            "per_test_mean_s_per_pair": round(per_test_total / pairs, 3),
            "per_test_extrapolated_s": round(per_test_total, 2),
            "passgate_warm_checks_per_s": round(checks / pg_warm, 1),
            "passgate_cold_checks_per_s": round(checks / pg_cold, 1),
            "per_test_checks_per_s": round(checks / per_test_total, 2),
            "ratio_warm": round(per_test_total / pg_warm, 1),
            "ratio_warm_2_workers": round(per_test_total / pg_warm_j2, 1),
            "ratio_cold": round(per_test_total / pg_cold, 1),
            "pass_runs_s": round(pass_runs_s, 2),
            "ceiling_ratio_given_pass_runs": round(per_test_total / pass_runs_s, 1),
            "must_checks": len(rs_must), "passgate_warm_must_s": round(pg_warm_must, 2),
            "per_test_must_extrapolated_s": round(per_test_must, 2),
            "ratio_warm_must_only": round(per_test_must / pg_warm_must, 1),
        }
        ctx.say(f"throughput {wl['name']}: {json.dumps(part)}")
        parts.append(part)
    total_checks = sum(p["checks"] for p in parts)
    per_test = sum(p["per_test_extrapolated_s"] for p in parts)
    warm = sum(p["passgate_warm_s"] for p in parts)
    cold = sum(p["passgate_cold_s"] for p in parts)
    warm2 = sum(p["passgate_warm_2_workers_s"] for p in parts)
    runs = sum(p["pass_runs_s"] for p in parts)
    must = sum(p["passgate_warm_must_s"] for p in parts)
    per_test_must = sum(p["per_test_must_extrapolated_s"] for p in parts)
    return _figure(round(per_test / warm, 1), 30, "x checks/s (1 worker, warm cache)", "higher", parts=parts,
                   ratio_cold_cache=round(per_test / cold, 1), ratio_2_workers=round(per_test / warm2, 1),
                   ceiling_ratio_given_pass_runs=round(per_test / runs, 1),
                   ratio_must_checks_only=round(per_test_must / must, 1),
                   passgate_checks_per_s=round(total_checks / warm, 1),
                   per_test_checks_per_s=round(total_checks / per_test, 2),
                   how="passgate: load the cases from the warm disk cache, then check_all in forked workers "
                       "(as passgate check); per-test: in-process, each pair exports, [quantizes,] lowers its "
                       "graph and runs the same checks, measured on a subset of pairs (every graph, "
                       "per_test_measured_pairs of them) and extrapolated per graph to all pairs",
                   ceiling_note="both styles run the pass once for `runs` and again for `deterministic` and "
                                "(when the pass changed the graph) `idempotent`; ceiling_ratio_given_pass_runs is "
                                "the per-test time over passgate's time in those runs alone: no harness that runs "
                                "the same checks can do better; ratio_must_checks_only leaves out the should-level "
                                "checks on both sides (what the gate enforces without --strict)")


# ----------------------------------------------------------------------------- f. verification cost


COST_NOTES = {
    "idempotent": "runs the pass a second time on a deep copy of its result and fingerprints both graphs: "
                  "its cost is a pass run plus a copy by construction",
    "deterministic": "runs the pass again on a second fresh copy of the input: a pass run plus a copy by construction",
    "runnable": "the one recorded execution (fx Interpreter, per-node shapes noted) that runnable, "
                "val_matches_execution and numerics share; the first pass on a case also pays the reference "
                "outputs of the pre-pass program for every draw",
    "verifier": "ExecuTorch's dialect verifier walks every node and checks each op's dtype constraints",
    "input_unchanged": "fingerprints the shared case and the handed program (every node, its metadata, every tensor)",
}


def verification_cost(ctx: Context) -> dict:
    """Where the time of one pass x graph goes: copy, pass, each verifier, numerics (in-process, warm cache)."""
    from harness.core.config import RunConfig
    from harness.graphs import cache
    from harness.graphs.cases import GraphCase, load_case
    from harness.run.scheduler import check_all

    wl = _workloads(ctx)[0]
    cache.configure(ctx.cache_dir)
    _clear_process_memos()
    cases = [load_case(s) for s in wl["specs"]]
    copies: list[float] = []
    original = GraphCase.program

    def timed_program(self, stage):
        started = time.perf_counter()
        try:
            return original(self, stage)
        finally:
            copies.append(time.perf_counter() - started)

    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the isolation workers that run every check of `passgate check`
    GraphCase.program = timed_program
    try:
        started = time.perf_counter()
        rs = check_all(wl["passes"], cases, RunConfig(seed=ctx.seed))
        total = time.perf_counter() - started
    finally:
        GraphCase.program = original
        torch.set_num_threads(threads)
    pairs = len(wl["passes"]) * len(cases)
    per_check: dict[str, float] = {}
    for r in rs:
        per_check[r.check] = per_check.get(r.check, 0.0) + r.duration_s
    ms = {k: round(1000 * v / pairs, 2) for k, v in per_check.items()}
    # two copies per pair: the pass's input (outside any check) and the deterministic check's second input
    # (inside that check's time): the first half is the copy's own line
    ms["copy (deep copy of the lowered case for the pass's input)"] = round(1000 * sum(copies) / 2 / pairs, 2)
    accounted = sum(per_check.values()) + sum(copies) / 2
    ms["other (seed metadata, fingerprints of the handed program, op counts)"] = round(
        1000 * (total - accounted) / pairs, 2)
    pass_plus_numerics = ms.get("runs", 0.0) + ms.get("numerics", 0.0)
    over = {k: v for k, v in ms.items() if k in per_check and k not in ("runs", "numerics") and v > pass_plus_numerics}
    notes = {k: COST_NOTES.get(k, "no reason recorded: look into it") for k in over}
    worst_unexplained = [k for k in over if k not in COST_NOTES]
    return _figure(len(worst_unexplained), 1, "verifiers costing more than pass+numerics without a reason", "lower",
                   workload=wl["name"], pairs=pairs, total_ms_per_pair=round(1000 * total / pairs, 2),
                   ms_per_pair=dict(sorted(ms.items(), key=lambda kv: -kv[1])),
                   pass_plus_numerics_ms=round(pass_plus_numerics, 2), over_pass_plus_numerics=over, notes=notes)


# ----------------------------------------------------------------------------- b. warm vs cold, e. edit loop


def _check_cmd(passes: list[str], graphs: list[str], report: Path, *extra) -> list[str]:
    args = [*PASSGATE, "check"]
    for p in passes:
        args += ["--pass", p]
    return [*args, "--graphs", *graphs, "--report", str(report), "-q", *extra]


def _timed(cmd: list, env: dict, cwd: Optional[str] = None) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=3600)
    return time.perf_counter() - started, r


RESTARTED = "the server restarts"


def _served(cmd: list, env: dict, cwd: Optional[str] = None, restarts: Optional[list] = None):
    """``_timed`` through the server; when the server restarted for a changed harness file (someone edited
    passgate during the run), wait until it answers again and rerun, noting it in ``restarts``."""
    t, r = _timed(cmd, env, cwd)
    if RESTARTED in r.stderr:
        if restarts is not None:
            restarts.append(round(t, 2))
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if subprocess.run([*PASSGATE, "serve", "--status"], env=env, capture_output=True).returncode == 0:
                break
            time.sleep(1)
        t, r = _timed(cmd, env, cwd)
    return t, r


def _body_seconds(report: Path) -> Optional[float]:
    try:
        return json.loads((report / "results.json").read_text())["duration_s"]
    except (OSError, ValueError, KeyError):
        return None


def import_floor(ctx: Context) -> float:
    """Seconds a bare process needs to import torch, executorch.exir and passgate's CLI."""
    t, _ = _timed([PY, "-c", "import harness.cli.main, torch, executorch.exir"], ctx.env())
    return t


def warm_vs_cold(ctx: Context) -> dict:
    """The same `passgate check`: empty cache folder, then the filled one, then through the warm server."""
    graphs = ["mlp"] if ctx.tiny else ["builtin", "zoo"]
    passes = ["passes.reference:RemoveDetachPass"]
    folder = ctx.tmp("warm-cold-cache")
    env = ctx.env(PASSGATE_CACHE_DIR=folder)
    cold_report, warm_report, served_report = ctx.tmp("cold-report"), ctx.tmp("warm-report"), ctx.tmp("served")
    cold_s, cold = _timed(_check_cmd(passes, graphs, cold_report, "--no-server"), env)
    warm_s, warm = _timed(_check_cmd(passes, graphs, warm_report, "--no-server"), env)
    floor = import_floor(ctx)
    served_env = ctx.ensure_server(folder, ["builtin"] if ctx.tiny else ["builtin", "zoo"])
    ctx.warm_cache = folder
    restarts: list = []
    served = [_served(_check_cmd(passes, graphs, served_report), served_env, restarts=restarts) for _ in range(2)]
    served_s = statistics.median(t for t, _ in served)
    cold_body, warm_body = _body_seconds(cold_report), _body_seconds(warm_report)
    served_body = _body_seconds(served_report)
    return _figure(round(cold_s / warm_s, 2), 5, "x (whole process, no server)", "higher",
                   workload=f"passgate check --pass {passes[0]} --graphs {' '.join(graphs)}",
                   cold_s=round(cold_s, 2), warm_s=round(warm_s, 2), through_warm_server_s=round(served_s, 2),
                   ratio_cold_over_server=round(cold_s / served_s, 1),
                   ratio_warm_over_server=round(warm_s / served_s, 1),
                   exit_status={"cold": cold.returncode, "warm": warm.returncode,
                                "served": [r.returncode for _, r in served]},
                   import_floor_s=round(floor, 2), cold_body_s=cold_body, warm_body_s=warm_body,
                   served_body_s=served_body,
                   ratio_run_body=round(cold_body / warm_body, 1) if cold_body and warm_body else None,
                   server_restarts_during_run=restarts,
                   note="whole-process time includes the import floor (torch + executorch.exir) that no cache "
                        "removes; the run body (results.json duration_s: graphs loaded or lowered, checks, "
                        "reports) is what the disk cache speeds up; the warm server removes the floor and the "
                        "loading")


def _start_server(env: dict, preload: list[str]) -> tuple[dict, int]:
    r = subprocess.run([*PASSGATE, "serve", "--preload", *preload, "--idle-timeout", "1800"], env=env,
                       capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"passgate serve failed: {r.stderr.strip()}")
    status = json.loads(subprocess.run([*PASSGATE, "serve", "--status"], env=env, capture_output=True, text=True,
                                       timeout=60).stdout)
    return env, status["pid"]


def _stop_server(env: dict, pid: int) -> None:
    subprocess.run([*PASSGATE, "serve", "--stop"], env=env, capture_output=True, timeout=60)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    import signal

    os.kill(pid, signal.SIGKILL)


def edit_loop(ctx: Context, reruns: int = 3) -> dict:
    """Rerun `passgate check` of one pass file on the zoo after each edit: through the warm server vs a cold process."""
    graphs = ["mlp"] if ctx.tiny else ["zoo"]
    folder = ctx.tmp("edit-loop")
    pass_file = folder / "my_pass.py"
    pass_file.write_text(EDIT_LOOP_PASS)
    report = folder / "report"
    cache_dir = ctx.warm_cache or ctx.cache_dir
    env = ctx.ensure_server(cache_dir, ["builtin"] if ctx.tiny else ["builtin", "zoo"])
    served: dict = {}
    statuses = []
    restarts: list = []
    loads: dict = {}  # the 1-minute load average before each served rerun: other work on the machine slows -j 2 most
    edits = 0
    for j in (1, 2):
        served[j] = []
        loads[j] = []
        for _ in range(reruns):
            edits += 1
            pass_file.write_text(EDIT_LOOP_PASS + f"\n# edit {edits}\n")
            loads[j].append(round(os.getloadavg()[0], 2))
            t, r = _served(_check_cmd([f"{pass_file}:MyPass"], graphs, report, "-j", str(j)), env, cwd=str(folder),
                           restarts=restarts)
            served[j].append(t)
            statuses.append(r.returncode)
    body = _body_seconds(report)
    must = []  # the same loop judging the must-level checks only: one pass run per graph instead of three
    for _ in range(reruns):
        edits += 1
        pass_file.write_text(EDIT_LOOP_PASS + f"\n# edit {edits}\n")
        t, r = _served(_check_cmd([f"{pass_file}:MyPass"], graphs, folder / "report-must", "-j", "2", "--checks",
                                  "must"), env, cwd=str(folder), restarts=restarts)
        must.append(t)
        statuses.append(r.returncode)
    small = []  # the same loop on the six built-in graphs: what narrowing --graphs while iterating gives
    for _ in range(reruns):
        edits += 1
        pass_file.write_text(EDIT_LOOP_PASS + f"\n# edit {edits}\n")
        t, r = _served(_check_cmd([f"{pass_file}:MyPass"], ["builtin"], folder / "report-builtin"), env,
                       cwd=str(folder), restarts=restarts)
        small.append(t)
        statuses.append(r.returncode)
    info = json.loads(subprocess.run([*PASSGATE, "serve", "--status"], env=env, capture_output=True, text=True,
                                     timeout=60).stdout or "{}")
    local = []
    for _ in range(max(1, reruns - 1)):
        edits += 1
        pass_file.write_text(EDIT_LOOP_PASS + f"\n# edit {edits}\n")
        t, r = _timed(_check_cmd([f"{pass_file}:MyPass"], graphs, report, "-j", "2", "--no-server"), env,
                      cwd=str(folder))
        local.append(t)
        statuses.append(r.returncode)
    s1, s2, c = statistics.median(served[1]), statistics.median(served[2]), statistics.median(local)
    best = 1 if s1 <= s2 else 2  # two workers only pay off on an otherwise idle machine: the better is the answer
    m = statistics.median(must)
    return _figure(round(min(s1, s2), 2), 2.0, f"s per rerun through the server (-j {best}, the faster; "
                   f"--checks must -j 2: {m:.2f} s)", "lower",
                   workload=f"passgate check --pass my_pass.py:MyPass (an ExportPass rewriting add) --graphs {' '.join(graphs)} "
                            f"-j N, the file edited before each rerun",
                   served_j1_s=[round(x, 2) for x in served[1]], served_j2_s=[round(x, 2) for x in served[2]],
                   served_j1_median_s=round(s1, 2), served_j2_median_s=round(s2, 2), served_body_s=body,
                   served_j1_loadavg_1m=loads[1], served_j2_loadavg_1m=loads[2],
                   served_checks_must_j2_s=[round(x, 2) for x in must], served_checks_must_j2_median_s=round(m, 2),
                   served_checks_must_body_s=_body_seconds(folder / "report-must"),
                   met_with_checks_must=m < 2.0,
                   served_builtin_graphs_j1_s=[round(x, 2) for x in small],
                   cold_process_j2_s=[round(x, 2) for x in local], cold_process_median_s=round(c, 2),
                   speedup_over_cold_process=round(c / min(s1, s2), 1), exit_statuses=statuses,
                   requests_served=info.get("requests"), server_max_rss_mib=info.get("max_rss_mib"),
                   server_restarts_during_run=restarts,
                   note="served_body_s is the run body of the last served rerun (results.json duration_s): what is "
                        "left once imports and case loading are gone is the checks themselves (3 runs of the pass "
                        "per graph: runs, idempotent, deterministic; 2 where the pass changed nothing); "
                        "--checks must leaves out the should-level reruns")


# ----------------------------------------------------------------------------- c./d./g. conformance suite under pytest


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


def _suite_root(ctx: Context) -> Path:
    """The folder holding the conformance/ suite to run (the checkout, or an export of a git revision)."""
    if ctx.conformance_source == "worktree":
        return ROOT
    folder = ctx.scratch / f"suite-{re.sub(r'[^A-Za-z0-9_.-]', '_', ctx.conformance_source)}"
    if not folder.exists():
        folder.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ctx.conformance_source, "conformance",
                                  "pyproject.toml", "tox.ini"], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def _conformance(ctx: Context, profile: str, workers: int, cache_dir: Path, log: Optional[Path] = None) -> dict:
    report = ctx.tmp(f"conformance-{profile}-n{workers}")
    root = _suite_root(ctx)
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
    depth = tree.by_depth()
    errors = [ln for ln in r.stdout.splitlines() if ln.startswith(("ERROR", "E   "))][:5]
    return {
        "command": " ".join(cmd[2:]), "suite": ctx.conformance_source, "seconds": round(seconds, 1), "exit_status": r.returncode,
        "pytest_summary": tail, **({"errors": errors} if errors else {}),
        "content": {"passes": len({x["pass_name"] for x in results}), "graphs": len({x["graph"] for x in results}),
                    "checks": len({x["check"] for x in results}), "items": len(results)},
        "peak_rss_mib": {"controller": depth.get(0), "xdist_workers": depth.get(1), "isolation_workers": depth.get(2)},
    }


def _cache_events(log: Path) -> dict:
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
        runs[n]["cache"] = _cache_events(log)
        ctx.say(f"conformance -n {n}: {json.dumps(runs[n])}")
        shutil.rmtree(cache_dir, ignore_errors=True)
    ratio = round(runs[1]["seconds"] / runs[2]["seconds"], 2)
    return _figure(ratio, 1.6, "x (-n 1 time / -n 2 time)", "higher", profile=profile,
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
    cmd = _check_cmd(passes, graphs, report, "--no-server")
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
    return _figure(round(worst / 1024, 2) if worst else None, 4.0, "GiB peak RSS of any one process", "lower",
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
        run["cache"] = _cache_events(log)  # what the run still had to lower: the cache is as the earlier figures left it
        run["target_s"] = target
        run["met"] = run["seconds"] < target
        out[profile] = run
        ctx.say(f"conformance {profile}: {json.dumps(run)}")
    headline = "standard" if "seconds" in out["standard"] else "quick"
    return _figure(out[headline]["seconds"], out[headline]["target_s"], f"s ({headline} profile)", "lower", **out,
                   how="the command tox -e conformance runs (pytest conformance -n 2 -q -rN --no-header), in the "
                       "passgate venv on the bench cache as the earlier figures left it (cache.lowered: what the "
                       "run lowered itself); tox's own env creation is not included; the parallel figure's -n 2 "
                       "run is the same command from an empty cache")


def help_time(ctx: Context) -> dict:
    """`passgate --help` (lazy subcommand imports: no torch)."""
    times = [_timed([*PASSGATE, "--help"], ctx.env())[0] for _ in range(3)]
    return _figure(round(statistics.median(times), 3), 1.0, "s", "lower", runs=[round(t, 3) for t in times])

