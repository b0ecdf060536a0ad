"""``python -m benchmarks.runtime_cost``: what the runtime checks add to a cold standard run (issue 33).

The standard profile turns the runtime leg of each case on (``Profile.runtime``,
docs/runtime.md). This times ``passgate run --profile standard`` on a slice of
its graphs three times back to back, in one process, from the same warm
lowered-graph cache and with the verdict cache off (``--no-incremental``: every
unit judged, a cold run): without the runtime checks, with the profile's legs,
and with every leg (``--runtime``: pipeline results and the XNNPACK
partitioner's lowered program too). The figure is the share the profile's legs
add to the run without them. On a loaded machine a full side takes long; ``--sides off leg leg_base`` measures
the cases leg alone (the runtime units with one cheap entry, beside the same run without them) and sets its
time against the full run without runtime checks. Not a timed assertion: print and compare; the load
average before and after is recorded, since another process's load inflates
every side.

    python -m benchmarks.runtime_cost --graphs mlp corpus_7f0d7a1f --json out.json
    python -m benchmarks.runtime_cost --sides off leg leg_base   # the cheaper decomposition
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.context import record, timed

__all__ = ["TARGET_ADDED_PCT", "SLICE", "SIDES", "measure", "figure", "main"]

TARGET_ADDED_PCT = 15.0
SLICE = ("mlp", "corpus_7f0d7a1f")  # a built-in graph whose runtime leg passes, a corpus one whose fails
SIDES = {"off": ("--no-runtime",), "profile": (), "all_legs": ("--runtime",),
         # the cases leg alone, beside the same run without it: one cheap catalog entry keeps the run valid
         "leg": ("--only", "exir.DebugPass", "--no-pipelines", "--no-partitioners", "--runtime"),
         "leg_base": ("--only", "exir.DebugPass", "--no-pipelines", "--no-partitioners", "--no-runtime")}


def _run(graphs: list[str], extra: tuple, report: Path, env: dict) -> dict:
    cmd = [sys.executable, "-m", "harness.cli.main", "run", "--profile", "standard", "--graphs", *graphs,
           "--no-incremental", "--report", str(report), "-q", *extra]
    seconds, done = timed(cmd, env)
    doc = json.loads((report / "results.json").read_text())
    runtime = [r for r in doc["results"] if r["check"] in ("serialize_roundtrip", "runtime_runs", "runtime_numerics")]
    return {"seconds": round(seconds, 1), "exit_status": done.returncode, "records": len(doc["results"]),
            "runtime_records": len(runtime),
            "runtime_seconds": round(sum(r.get("duration_s") or 0.0 for r in runtime), 1)}


def measure(graphs: list[str], sides: tuple[str, ...] = ("off", "profile", "all_legs")) -> dict:
    """Each side's wall time and records on ``graphs``, in order, back to back."""
    env = {**os.environ, "PASSGATE_NO_SERVER": "1"}
    load_before = os.getloadavg()
    got: dict = {}
    with tempfile.TemporaryDirectory(prefix="passgate-runtime-cost-") as tmp:
        for side in sides:
            got[side] = _run(graphs, SIDES[side], Path(tmp) / side, env)
    got["loadavg_before"] = [round(x, 2) for x in load_before]
    got["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return got


def _added(got: dict, side: str) -> float:
    """% ``side`` adds to ``off``; ``leg``: the cases leg's own time (``leg`` - ``leg_base``) over ``off``."""
    extra = (got["leg"]["seconds"] - got["leg_base"]["seconds"] if side == "leg"
             else got[side]["seconds"] - got["off"]["seconds"])
    return round(100.0 * extra / got["off"]["seconds"], 1)


def figure(ctx) -> dict:
    """``tox -e bench``'s ``runtime_cost`` figure: the % the profile's runtime legs add, below 15%."""
    graphs = list(SLICE[:1] if ctx.tiny else SLICE)
    got = measure(graphs)
    return record(_added(got, "profile"), TARGET_ADDED_PCT, "% added to a cold standard run by its runtime legs",
                  "lower", graphs=graphs, all_legs_added_pct=_added(got, "all_legs"), sides=got)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="+", default=list(SLICE))
    ap.add_argument("--sides", nargs="+", choices=tuple(SIDES), default=["off", "profile", "all_legs"])
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    started = time.time()
    got = measure(args.graphs, tuple(args.sides))
    if "off" in got:
        for side in (s for s in args.sides if s in ("profile", "all_legs") or (s == "leg" and "leg_base" in got)):
            got[side]["added_pct"] = _added(got, side)
    got["graphs"], got["duration_s"] = args.graphs, round(time.time() - started, 1)
    text = json.dumps(got, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
