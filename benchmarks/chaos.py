"""``python -m benchmarks.chaos`` (``tox -e chaos``): the seeded fault campaign of issue 36, and its table.

Faults are drawn by the seed (every kind once first, then by weight) and each
strikes a tiny slice of the quick profile (:mod:`benchmarks.chaos_trials`), a
quick ``certify`` or a small ``vulkan`` run (:mod:`benchmarks.chaos_commands`);
after each, the rerun (``--resume`` where it applies) must give the verdicts
of the slice's uninterrupted run, every file must read back whole, and no
error may be a traceback. The table (fault kind x where it struck, with the
counts) is printed and written as JSON under ``reports/generated/chaos/``.
``--serve-seconds`` adds the soak of ``passgate serve`` (:mod:`benchmarks.chaos_serve`).

    python -m benchmarks.chaos                      # the default budget: 320 faults
    python -m benchmarks.chaos --faults 40          # a short campaign
    python -m benchmarks.chaos --faults 0 --serve-seconds 120 --clients 8
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.chaos_commands import COMMAND_FAULTS, COMMANDS, command_of, command_reference, run_command_trial
from benchmarks.chaos_trials import FAULTS, SLICES, reference, run_trial

__all__ = ["TARGET_FAULTS", "draw", "table", "render", "main"]

ROOT = Path(__file__).resolve().parent.parent
TARGET_FAULTS = 300
COUNTS = ("count", "injected", "completed", "identical", "lost", "wrong_cache_hits", "corrupt", "tracebacks",
          "bad_errors", "debris")


ALL_FAULTS = FAULTS + COMMAND_FAULTS


def draw(n: int, seed: int, only: tuple = ()) -> list[tuple]:
    """``n`` (kind, where) faults: each kind once in :data:`ALL_FAULTS` order, then drawn by weight
    (``only``: the faults whose kind or where contains one of these words)."""
    rng = random.Random(seed)
    faults = [(k, w) for k, w in ALL_FAULTS if not only or any(o in f"{k[0]}@{k[1]}" for o in only)]
    kinds = [k for k, _ in faults]
    out = kinds[:n]
    weights = [w for _, w in faults]
    out += rng.choices(kinds, weights, k=max(0, n - len(out)))
    return out


def table(rows: list[dict]) -> list[dict]:
    """Rows grouped by (kind, where): the counts of issue 36's table."""
    groups: dict = {}
    for r in rows:
        empty = {"kind": r["kind"], "where": r["where"], **dict.fromkeys(COUNTS, 0)}
        g = groups.setdefault((r["kind"], r["where"]), empty)
        g["count"] += 1
        g["injected"] += r["injected"]
        g["completed"] += r["injected"] and r["completed"]
        g["identical"] += r["injected"] and r["identical"]
        for k in ("lost", "wrong_cache_hits", "tracebacks", "bad_errors", "debris"):
            g[k] += r[k]
        g["corrupt"] += len(r["corrupt"])
    return list(groups.values())


def render(groups: list[dict]) -> str:
    head = f"{'fault':<9} {'where':<19}" + "".join(f" {c[:9]:>9}" for c in COUNTS)
    lines = [head]
    for g in groups:
        lines.append(f"{g['kind']:<9} {g['where']:<19}" + "".join(f" {g[c]:>9}" for c in COUNTS))
    total = {c: sum(g[c] for g in groups) for c in COUNTS}
    lines.append(f"{'total':<29}" + "".join(f" {total[c]:>9}" for c in COUNTS))
    return "\n".join(lines)


def _summary(groups: list[dict]) -> dict:
    t = {c: sum(g[c] for g in groups) for c in COUNTS}
    return {**t, "targets": {"injected >= 300": t["injected"] >= TARGET_FAULTS,
                             "0 verdicts lost or wrong": t["lost"] == 0 and t["wrong_cache_hits"] == 0
                             and t["identical"] == t["injected"],
                             "0 corrupt files": t["corrupt"] == 0, "0 tracebacks": t["tracebacks"] == 0}}


def _in_parallel(plan: list, jobs: int, seed: int, scratch: Path, done) -> None:
    """Each trial in a forked process of its own, ``jobs`` at a time (its outcome comes back as a JSON file)."""
    running: dict = {}
    todo = list(plan)
    while todo or running:
        while todo and len(running) < jobs:
            i, kind, where, ref = todo.pop(0)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    o = _trial(i, seed, ref, kind, where, scratch).to_json()
                    (scratch / f"outcome-{i}.json").write_text(json.dumps(o, default=str))
                    code = 0
                finally:
                    os._exit(code)
            running[pid] = (i, kind, where, ref)
        pid, _ = os.wait()
        i, kind, where, ref = running.pop(pid)
        try:
            done(i, json.loads((scratch / f"outcome-{i}.json").read_text()))
        except (OSError, ValueError):  # the trial itself failed: the campaign's bug, shown as a finding
            done(i, {"kind": kind, "where": where, "slice": ref.name, "injected": True, "identical": False,
                     "completed": False, "status": None, "rerun_status": None, "seconds": 0.0, "lost": 0,
                     "wrong_cache_hits": 0, "tracebacks": 1, "bad_errors": 0, "debris": 0, "corrupt": [],
                     "note": "the trial process failed"})


def _trial(i: int, seed: int, ref, kind: str, where: str, scratch: Path):
    runner = run_command_trial if command_of(where) else run_trial
    return runner(i, seed, ref, kind, where, scratch)


def campaign(n: int, seed: int, scratch: Path, shared_cache: Path, log, jobs: int = 1,
             only: tuple = ()) -> list[dict]:
    from benchmarks.chaos_proc import warm_imports

    warm_imports()
    faults = draw(n, seed, only)
    refs, commands = {}, {}
    wanted = {c.name for _kind, where in faults if (c := command_of(where))}
    for s in list(SLICES) + [c for c in COMMANDS if c.name in wanted]:
        t0 = time.monotonic()
        ref = command_reference(s, shared_cache, scratch) if s in COMMANDS else reference(s, shared_cache, scratch)
        (commands if s in COMMANDS else refs)[s.name] = ref
        print(f"chaos: reference {s.name}: status {ref.status}, {ref.seconds:.1f} s "
              f"(set up in {time.monotonic() - t0:.0f} s)", file=log, flush=True)
    rng = random.Random(seed)

    def ref_for(where: str):
        if c := command_of(where):
            return commands[c.name]
        return refs["dim_order"] if where == "baseline" else refs[rng.choice(sorted(refs))]

    plan = [(i, kind, where, ref_for(where)) for i, (kind, where) in enumerate(faults)]
    rows: dict = {}

    def done(i: int, o: dict) -> None:
        rows[i] = o
        bad = o["injected"] and not o["identical"] or o["tracebacks"] or o["corrupt"] or o["bad_errors"]
        print(f"chaos: [{len(rows)}/{n}] #{i} {o['kind']}@{o['where']} ({o['slice']}): "
              f"{'missed' if not o['injected'] else ('OK' if not bad else 'FINDING')} status {o['status']} -> "
              f"{o['rerun_status']} in {o['seconds']:.1f} s {o['note']}", file=log, flush=True)

    if jobs <= 1:
        for i, kind, where, ref in plan:
            done(i, _trial(i, seed, ref, kind, where, scratch).to_json())
    else:
        _in_parallel(plan, jobs, seed, scratch, done)
    rows = [rows[i] for i in sorted(rows)]
    return rows


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.chaos", description=__doc__.split("\n\n")[0])
    ap.add_argument("--faults", type=int, default=320, help="how many faults to inject (default 320)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-j", "--jobs", type=int, default=int(os.environ.get("PASSGATE_WORKERS", 2)),
                    help="trials at once, each in a process of its own (default $PASSGATE_WORKERS or 2)")
    ap.add_argument("--only", nargs="+", default=(), metavar="WORD",
                    help="only faults whose KIND@WHERE contains one of these (e.g. certify vulkan sigkill@parent)")
    ap.add_argument("--serve-seconds", type=float, default=0.0, help="also soak `passgate serve` this long")
    ap.add_argument("--clients", type=int, default=8, help="concurrent clients of the serve soak (default 8)")
    ap.add_argument("--out", type=Path, default=ROOT / "reports" / "generated" / "chaos")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (trial folders, logs)")
    args = ap.parse_args(argv)
    shared = Path(os.environ.get("PASSGATE_CACHE_DIR") or Path.home() / ".cache" / "passgate")
    scratch = Path(tempfile.mkdtemp(prefix="passgate-chaos-"))
    started = time.time()
    load_before = os.getloadavg()
    doc: dict = {"seed": args.seed, "faults_requested": args.faults, "only": list(args.only), "jobs": args.jobs,
                 "cpus": os.cpu_count(),
                 "loadavg_before": load_before, "scratch": str(scratch)}
    try:
        if args.faults:
            cpu0 = _cpu()
            rows = campaign(args.faults, args.seed, scratch, shared, sys.stderr, args.jobs, tuple(args.only))
            groups = table(rows)
            print(render(groups))
            # CPU seconds (this process and every run it forked): what the budget costs on an idle machine
            doc.update(table=groups, summary=_summary(groups), cpu_seconds=round(_cpu() - cpu0, 1), trials=rows)
        if args.serve_seconds:
            from benchmarks.chaos_serve import soak

            doc["serve"] = soak(args.serve_seconds, args.clients, args.seed, shared, scratch / "serve", sys.stderr)
            print(json.dumps(doc["serve"], indent=1))
    finally:
        doc.update(seconds=round(time.time() - started, 1), loadavg_after=os.getloadavg())
        args.out.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(started))
        for name in (f"chaos-{stamp}.json", "latest.json"):
            (args.out / name).write_text(json.dumps(doc, indent=1, default=str) + "\n")
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"chaos: {doc['seconds']} s; JSON in {args.out / 'latest.json'}", file=sys.stderr)
    s = doc.get("summary", {}).get("targets", {})
    serve_ok = doc.get("serve", {}).get("ok", True)
    return 0 if all(v for k, v in s.items() if k != "injected >= 300") and serve_ok else 1


if __name__ == "__main__":
    sys.exit(main())
