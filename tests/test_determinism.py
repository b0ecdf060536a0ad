"""Same seed, same report: two runs give the same results.json apart from timings (DESIGN.md).

Timings are ``duration_s`` (run and record), ``started_at``, ``lower_seconds``
and ``from_cache`` (a cold and a warm run differ there only). Everything else,
environment and messages and tracebacks included, must be byte-for-byte equal
once those are taken out, whether a pass succeeds, violates a check or raises.
"""

from __future__ import annotations

import importlib.util
import json

from run_helpers import BAD, DATA, TIMING_KEYS, load, strip_timings

from harness.cli.main import main

PASSES = ["passes.reference:ReplaceAddWithMulSub", "passes.reference:replace_add_mul_with_sub",
          f"{DATA.parent}/broken_passes.py:ClaimFloat16", f"{BAD}:raises"]
GRAPHS = ["mlp", "inplace_views"]


def _args(report, seed: int = 0) -> list:
    argv = ["check", "--report", str(report), "--seed", str(seed), "-q", "--graphs", *GRAPHS]
    if importlib.util.find_spec("harness.graphs.random.generate") is not None:  # random graphs, when this build has them
        argv += ["random", "--count", "2"]
    for p in PASSES:
        argv += ["--pass", p]
    return argv


def test_same_seed_same_results_apart_from_timings(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(_args(first)) == 1  # the broken passes make it a failing run: failures must repeat too
    assert main(_args(second)) == 1
    a, b = load(first), load(second)
    assert a["results"] and any(r["status"] == "fail" for r in a["results"])
    assert json.dumps(strip_timings(a), sort_keys=True) == json.dumps(strip_timings(b), sort_keys=True)
    # and the fields left out really are the timings
    assert {k for k in a if a[k] != b[k]} <= TIMING_KEYS | {"cases", "results"}


def test_strip_timings_keeps_everything_else():
    doc = {"duration_s": 1.0, "started_at": "t", "results": [{"duration_s": 0.1, "message": "m"}],
           "cases": [{"name": "mlp", "lower_seconds": 0.5, "from_cache": True}]}
    assert strip_timings(doc) == {"results": [{"message": "m"}], "cases": [{"name": "mlp"}]}
