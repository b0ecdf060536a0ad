"""``passgate run --shard I/N --shard-costs FILE``: shards cut by recorded unit costs, not count, still one run."""

from __future__ import annotations

import json
import random

import pytest
from run_helpers import load, strip_timings

from harness.cli.main import main
from harness.core.errors import UsageError
from harness.core.shards import Shard
from harness.run import costs, sharding
from harness.run.plan import EntryUnit, RuntimeUnit

KEY = staticmethod(lambda u: (u.graph, u.kind, u.name))


def _units() -> list:
    """Five entries on each of 12 graphs, and a runtime unit on the first four only (they sort first)."""
    graphs = [f"g{i:02d}" for i in range(12)]
    return ([EntryUnit(f"vendor.P{j}", g) for g in graphs for j in range(5)]
            + [RuntimeUnit("runtime", g) for g in graphs[:4]])


def _recorded(units) -> dict:
    """Seconds per (pass, graph): entries cheap and uneven, a runtime unit ten times dearer."""
    rng = random.Random(0)
    return {(u.items()[0][0], u.graph): 10.0 if u.kind == "runtime" else rng.uniform(0.1, 2.0) for u in units}


@pytest.mark.parametrize("n", [2, 3, 4, 7])
def test_a_cut_by_cost_is_a_partition_within_one_unit_of_the_mean(n):
    units = _units()
    recorded = _recorded(units)
    weigh = lambda us: costs.unit_costs(us, recorded)  # noqa: E731
    parts = [sharding.split(units, Shard(i, n), KEY, weigh) for i in range(1, n + 1)]
    assert sorted(u.key for part in parts for u in part) == sorted(u.key for u in units)
    cost = dict(zip((u.key for u in units), weigh(units)))
    totals = [sum(cost[u.key] for u in part) for part in parts]
    assert max(totals) <= sum(totals) / n + max(cost.values()) + 1e-9
    # the same cut whatever order the units came in (every CI machine computes it alone)
    assert parts == [sharding.split(units[::-1], Shard(i, n), KEY, weigh) for i in range(1, n + 1)]
    by_count = [sharding.split(units, Shard(i, n), KEY) for i in range(1, n + 1)]
    assert max(totals) < max(sum(cost[u.key] for u in part) for part in by_count)  # what costs are for


def test_unknown_units_cost_the_median_of_their_kind_and_no_costs_cut_by_count():
    units = _units()
    recorded = {k: v for k, v in _recorded(units).items() if k[1] != "g00"}  # g00 never recorded
    estimated = dict(zip((u.key for u in units), costs.unit_costs(units, recorded)))
    known_runtime = [c for k, c in estimated.items() if k.startswith("runtime") and not k.endswith("@g00")]
    assert estimated["runtime:runtime@g00"] == pytest.approx(sorted(known_runtime)[len(known_runtime) // 2])
    zero = lambda us: [0.0] * len(us)  # noqa: E731
    assert sharding.split(units, Shard(2, 3), KEY, zero) == sharding.split(units, Shard(2, 3), KEY)


def test_costs_come_from_a_results_json_or_the_compact_file(tmp_path):
    doc = {"results": [{"pass_name": "a", "graph": "g", "check": c, "duration_s": 0.5} for c in ("runs", "numerics")]
           + [{"pass_name": "a", "graph": "*", "check": "exercised", "duration_s": 0.0}]}
    (tmp_path / "results.json").write_text(json.dumps(doc))
    assert main(["report", "costs", str(tmp_path), "--out", str(tmp_path / "costs.json")]) == 0
    assert costs.read(tmp_path / "costs.json") == costs.read(tmp_path / "results.json") == {("a", "g"): 1.0}
    (tmp_path / "bad.json").write_text("{\"results\": 3}")
    with pytest.raises(UsageError, match="neither a passgate results.json nor a costs file"):
        costs.read(tmp_path / "bad.json")


def test_priors_give_every_unit_a_cost_from_the_file_and_nothing_without_a_readable_one(tmp_path):
    units = _units()
    recorded = {k: v for k, v in _recorded(units).items() if k[1] != "g00"}
    costs.write(recorded, tmp_path / "unit-costs.json")
    got = costs.priors(units, tmp_path / "unit-costs.json")
    assert set(got) == {u.key for u in units}
    assert got["runtime:runtime@g01"] == pytest.approx(10.0) and got["runtime:runtime@g00"] == pytest.approx(10.0)
    assert got["entry:vendor.P0@g01"] == pytest.approx(recorded[("vendor.P0", "g01")], abs=1e-3)
    assert costs.priors(units, tmp_path / "absent.json") == {}
    (tmp_path / "torn.json").write_text('{"schema": "passgate-pair-')
    assert costs.priors(units, tmp_path / "torn.json") == {}  # an ETA is never worth an error


@pytest.mark.parametrize("args, message", [
    (["--shard-costs", "nope.json"], "--shard-costs only applies with --shard I/N"),
    (["--shard", "1/2", "--shard-costs", "nope.json"], "cannot read unit costs from nope.json"),
])
def test_bad_shard_costs_exit_2_with_one_line(args, message, tmp_path, capsys):
    assert main(["run", "--catalog", "reference", "--report", str(tmp_path / "r"), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_shards_cut_by_recorded_costs_merge_into_the_unsharded_run(tmp_path, capsys):
    run = ["run", "--catalog", "exir", "--only", "exir.CSEPass", "exir.DebugPass", "--graphs", "mlp", "conv_bn_relu",
           "inplace_views", "--runtime", "--no-incremental", "-q", "-j", "1"]
    assert main([*run, "--report", str(tmp_path / "whole")]) in (0, 1)
    assert main(["report", "costs", str(tmp_path / "whole"), "--out", str(tmp_path / "costs.json")]) == 0
    for i in (1, 2):
        assert main([*run, "--shard", f"{i}/2", "--shard-costs", str(tmp_path / "costs.json"),
                     "--report", str(tmp_path / f"s{i}")]) in (0, 1)
    parts = [load(tmp_path / f"s{i}") for i in (1, 2)]
    assert all(p["results"] for p in parts) and parts[0]["configuration"]["shard_costs"].startswith("sha256:")
    assert main(["report", "merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "m"),
                 "-q"]) in (0, 1)
    whole, merged = load(tmp_path / "whole"), load(tmp_path / "m")
    assert [strip_timings(r) for r in merged["results"]] == [strip_timings(r) for r in whole["results"]]
    # a shard cut by other costs is not part of the same run
    (tmp_path / "other.json").write_text(json.dumps({"schema": costs.SCHEMA, "pairs": [["runtime", "mlp", 99.0]]}))
    assert main([*run, "--shard", "2/2", "--shard-costs", str(tmp_path / "other.json"),
                 "--report", str(tmp_path / "s2x")]) in (0, 1)
    capsys.readouterr()
    assert main(["report", "merge", str(tmp_path / "s1"), str(tmp_path / "s2x"), "--out", str(tmp_path / "m2")]) == 2
    assert "shard_costs" in capsys.readouterr().err
