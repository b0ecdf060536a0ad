"""``python -m benchmarks.reruns``: how many pass calls a pass x graph pair costs, and what they take (issue 14).

Every pair runs the pass once for ``runs`` and again for ``deterministic``
and ``idempotent``; those calls are most of a pair's time. This measures them
in-process on catalog entries (as ``passgate run`` judges them, skipped
checks included), with the engine's own counter and watcher
(:func:`harness.check.invoke.invocations`, :func:`harness.check.invoke.set_watch`):
calls per pair by label, seconds in each kind of call beside the whole
check's, and how many pairs had ``idempotent`` served by the deterministic
check's run. Not a timed assertion: print and compare.

    python -m benchmarks.reruns                                     # exir + transforms on the built-in graphs
    python -m benchmarks.reruns --catalog xnnpack exir --graphs quantized --json out.json

Outer calls are counted by the label of the check that made them; a call
nested in one (a prerequisite step of an entry built ``after`` others) is
counted apart, as ``nested_calls``, and its time is its caller's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from dataclasses import replace
from typing import Optional

from benchmarks.context import record

__all__ = ["TARGET_CALLS", "measure", "figure", "main"]

TARGET_CALLS = 3.0  # runs + deterministic + idempotent, each running the pass once: what a pair cost before


def measure(catalogs: list[str], graphs: list[str], only: Optional[list[str]] = None) -> dict:
    """Judge every runnable entry of ``catalogs`` on the ``graphs`` it applies to; the figures as a dict."""
    from harness.catalog import registry
    from harness.check import invoke
    from harness.check.runner import check_pass_on_case
    from harness.core.config import RunConfig
    from harness.graphs import sources
    from harness.graphs.cases import load_case

    _, entries, _ = registry.select_entries(registry.resolve_catalogs(catalogs), only)
    specs = sources.select(graphs)
    cases = {s.name: load_case(s) for s in specs}
    seconds: dict = defaultdict(float)
    outer: Counter = Counter()
    depth, started = [], []

    def watch(event: str, label: str, timeout) -> None:  # nested calls are counted, their time is their caller's
        if event == "start":
            depth.append(label)
            if len(depth) == 1:
                outer[label] += 1
                started.append(time.perf_counter())
        else:
            depth.pop()
            if not depth:
                seconds[label] += time.perf_counter() - started.pop()

    pairs = shared = 0
    before, t0 = invoke.invocations(), time.perf_counter()
    invoke.set_watch(watch)
    try:
        for e in entries:
            config = replace(RunConfig(), skip_checks=tuple(e.skipped_checks.items()))
            for spec in (s for s in specs if e.applies(s)):
                results = check_pass_on_case(e.loaded(), cases[spec.name], config)
                pairs += 1
                shared += any(r.check == "idempotent" and "deterministic check's second run" in r.message
                              for r in results)
    finally:
        invoke.set_watch(None)
    total = time.perf_counter() - t0
    calls = invoke.invocations() - before
    n = max(pairs, 1)
    return {"catalogs": catalogs, "graphs": graphs, "pairs": pairs, "seconds": round(total, 2),
            "outer_calls": dict(outer), "outer_calls_per_pair": round(sum(outer.values()) / n, 3),
            "nested_calls": sum(calls.values()) - sum(outer.values()),
            "pass_seconds": {k: round(v, 2) for k, v in seconds.items()},
            "pass_share_of_time": round(sum(seconds.values()) / total, 3) if total else None,
            "idempotent_served_by_deterministic": shared}


def figure(ctx) -> dict:
    """``tox -e bench``'s ``reruns`` figure: outer pass calls per pair, below the three a pair used to make."""
    got = measure(["exir"], ["mlp"], ["exir.CSEPass"]) if ctx.tiny else measure(["exir", "transforms"],
                                                                                        ["builtin"])
    value = got["outer_calls_per_pair"]
    return record(value, TARGET_CALLS, "pass calls per pass x graph pair", "lower", **got)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.reruns", description=__doc__.splitlines()[0])
    ap.add_argument("--catalog", nargs="+", default=["exir", "transforms"])
    ap.add_argument("--graphs", nargs="+", default=["builtin"])
    ap.add_argument("--only", nargs="+", help="entry name globs, as passgate run --only")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    from harness.core.quiet import silence_third_party

    silence_third_party()
    got = measure(args.catalog, args.graphs, args.only)
    text = json.dumps(got, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
