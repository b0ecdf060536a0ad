"""What running each pass x graph in a worker process costs, against running it in-process.

``passgate check`` isolates by default (harness/run/isolation.py); this measures
the price on a fixed workload (the guide's reference passes on the builtin
graphs, seed 0), side by side in one process, as a CLI run would pay it:
the in-process memos (reference outputs, shared fingerprints) are cleared
before each run, since a worker computes its own. It also checks that both
modes give the same verdicts and messages. Run:

    python benchmarks/isolation_overhead.py [--repeat 3] [--workers 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def _strip(results, details: bool = False):
    return [(r.pass_name, r.graph, r.check, r.status.value, r.message) + ((r.details,) if details else ())
            for r in results]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--graphs", nargs="+", default=["builtin"])
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)

    from harness.check.loading import load_pass
    from harness.core.config import RunConfig
    from harness.core.quiet import silence_third_party
    from harness.graphs.cases import load_case
    from harness.graphs.memos import MEMOS
    from harness.graphs.sources import select
    from harness.run import scheduler
    from harness.run.profiles import suite_passes

    silence_third_party()
    passes = [load_pass(s) for s in suite_passes()]
    cases = [load_case(s) for s in select(args.graphs)]
    pairs = len(passes) * len(cases)

    import torch

    default_threads = torch.get_num_threads()

    def once(mode: str):
        MEMOS.clear(cases=False)
        torch.set_num_threads(1 if mode == "in_process_1_thread" else default_threads)
        config = RunConfig(isolate=mode.startswith("isolated"), workers=args.workers)
        started = time.perf_counter()
        if mode == "isolated_pool_per_pair":  # how the conformance plugin and catalog entries call it
            rs = [r for p in passes for c in cases for r in scheduler.check_all([p], [c], config)]
        else:
            rs = scheduler.check_all(passes, cases, config)
        seconds = time.perf_counter() - started
        torch.set_num_threads(default_threads)
        return seconds, rs

    modes = ("in_process", "in_process_1_thread", "isolated", "isolated_pool_per_pair")
    once("in_process")  # warm lazy imports and caches every mode shares
    times: dict = {m: [] for m in modes}
    same = same_details = True
    for _ in range(args.repeat):
        got = {}
        for mode in modes:
            seconds, got[mode] = once(mode)
            times[mode].append(seconds)
        same = same and _strip(got["isolated"]) == _strip(got["in_process"]) == _strip(got["isolated_pool_per_pair"])
        same_details = same_details and _strip(got["isolated"], True) == _strip(got["in_process_1_thread"], True)
    inproc, one, iso, per_pair = (statistics.median(times[m]) for m in modes)
    out = {
        "workload": {"passes": len(passes), "graphs": len(cases), "pairs": pairs, "workers": args.workers},
        "torch_threads_in_process": default_threads,
        "in_process_s": round(inproc, 3),
        "in_process_1_thread_s": round(one, 3),
        "isolated_s": round(iso, 3),
        "isolated_pool_per_pair_s": round(per_pair, 3),
        "per_pair_ms": {"in_process": round(1000 * inproc / pairs, 1),
                        "in_process_1_thread": round(1000 * one / pairs, 1),
                        "isolated": round(1000 * iso / pairs, 1),
                        "isolated_pool_per_pair": round(1000 * per_pair / pairs, 1)},
        # what the worker processes themselves cost (fork, pipes, pickling, per-worker memos):
        # isolated against in-process at the same thread count
        "isolation_cost_per_pair_ms": round(1000 * (iso - one) / pairs, 1),
        "isolation_cost_per_pair_with_a_fork_each_ms": round(1000 * (per_pair - one) / pairs, 1),
        "ratio_isolated_over_in_process": round(iso / inproc, 3),
        "ratio_isolated_over_in_process_1_thread": round(iso / one, 3),
        "same_verdicts_and_messages": same,
        "same_details_as_1_thread": same_details,
    }
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
