"""--shard I/N splits the work deterministically; `passgate report merge` joins the parts into
the report an unsharded run writes (timings aside)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.core.shards import Shard
from harness.run import sharding

SUB = "passes.reference:replace_add_mul_with_sub"
DETACH = "passes.reference:RemoveDetachPass"
GRAPHS = ["mlp", "residual_block", "inplace_views"]


def _check(out: Path, *extra: str) -> int:
    return main(["check", "--pass", SUB, "--pass", DETACH, "--graphs", *GRAPHS, "--report", str(out), "-q", *extra])


def verdicts(doc: dict) -> list:
    """Everything but timings, in report order."""
    return [(r["pass_name"], r["graph"], r["check"], r["status"], r["level"], r["message"]) for r in doc["results"]]


def load(path: Path) -> dict:
    return json.loads((path / "results.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("shards")
    status = {"full": _check(root / "full")}
    for i in (1, 2):
        status[f"s{i}"] = _check(root / f"s{i}", "--shard", f"{i}/2")
    return {"root": root, "status": status}


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_split_is_a_partition_balanced_within_one(n):
    passes, graphs = ["b", "a", "c"], [f"g{i}" for i in range(7)]
    parts = [sharding.assigned(Shard(i, n), passes, graphs) for i in range(1, n + 1)]
    assert set().union(*parts) == {(p, g) for p in passes for g in graphs}
    assert sum(len(p) for p in parts) == len(passes) * len(graphs)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    # graph-major cuts: each graph is lowered on at most two shards (it straddles at most one cut)
    for g in graphs:
        assert sum(any(gg == g for _, gg in part) for part in parts) <= 2
    # independent of the order names were given in
    assert parts == [sharding.assigned(Shard(i, n), passes[::-1], graphs[::-1]) for i in range(1, n + 1)]


def test_two_shards_merged_give_the_unsharded_verdicts(runs, capsys):
    root = runs["root"]
    s1, s2 = load(root / "s1"), load(root / "s2")
    assert s1["configuration"]["shard"] == "1/2" and s2["configuration"]["shard"] == "2/2"
    pairs1 = {(r["pass_name"], r["graph"]) for r in s1["results"]}
    pairs2 = {(r["pass_name"], r["graph"]) for r in s2["results"]}
    assert pairs1 and pairs2 and not pairs1 & pairs2 and len(pairs1 | pairs2) == 6
    # cut graph-major: a shard lowers / loads only the graphs it needs, and no more than it must
    assert sorted(c["name"] for c in s1["cases"]) == ["inplace_views", "mlp"]
    assert sorted(c["name"] for c in s2["cases"]) == ["mlp", "residual_block"]

    status = main(["report", "merge", str(root / "s1"), str(root / "s2"), "--out", str(root / "merged")])
    assert "merged 2 shards: 98 checks" in capsys.readouterr().out  # 96 pair checks + exercised of the 2 passes
    full, merged = load(root / "full"), load(root / "merged")
    assert verdicts(merged) == verdicts(full)
    assert merged["summary"] == full["summary"]
    assert [c["name"] for c in merged["cases"]] == [c["name"] for c in full["cases"]]
    assert status == full["exit_status"] == runs["status"]["full"] == 1
    assert max(runs["status"]["s1"], runs["status"]["s2"]) == 1  # the part holding inplace_views fails
    assert {k for k in full["configuration"] if full["configuration"][k] != merged["configuration"][k]} == set()
    assert [s["shard"] for s in merged["shards"]] == ["1/2", "2/2"]
    assert sorted(p.name for p in (root / "merged").iterdir()) == ["blind.json", "junit.xml", "report.html", "results.json", "summary.md"]


def test_merge_refuses_parts_that_are_not_one_run(runs, tmp_path, capsys):
    root = runs["root"]
    cases = {
        "missing": ([root / "s1"], "shard 2/2 missing"),
        "twice": ([root / "s1", root / "s1", root / "s2"], "shard 1/2 appears twice"),
        "unsharded": ([root / "full", root / "s1"], "is not a shard"),
    }
    other = tmp_path / "other"
    shutil.copytree(root / "s2", other)
    doc = load(other)
    doc["configuration"]["seed"] = 7
    (other / "results.json").write_text(json.dumps(doc))
    cases["seed"] = ([root / "s1", other], "configuration differs in seed")
    for name, (parts, expect) in cases.items():
        assert main(["report", "merge", *map(str, parts), "--out", str(tmp_path / name)]) == 2, name
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and expect in err[0], (name, err)


@pytest.mark.parametrize("bad", ["0/2", "3/2", "1/0", "a/b", "2", "1/2/3", ""])
def test_malformed_shard_exits_2_with_one_line(bad, tmp_path, capsys):
    assert main(["check", "--pass", SUB, "--report", str(tmp_path), "--shard", bad]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--shard" in err[0] and "Traceback" not in err[0]
    assert not (tmp_path / "results.json").exists()


def test_merge_joins_per_case_sections_and_drops_what_cannot_be_joined():
    """A shard's own rows of a per-case section (the Vulkan table and records of `passgate vulkan --shard`)
    are joined, not dropped; counts that differ per shard (op coverage) are left out rather than summed wrong."""
    from harness.report.merge import merge

    def part(i: int, rows: list, ops: dict) -> dict:
        return {"schema_version": "1.0", "environment": {"passgate": "x"}, "configuration": {"shard": f"{i}/2"},
                "started_at": f"2026-11-24T00:00:0{i}Z", "duration_s": 1.0, "complete": True, "cases": [],
                "results": [], "exit_status": 0, "op_coverage": ops,
                "vulkan": {"table": rows, "records": [{"case": r["case"]} for r in rows]}}

    a = {"case": "linear_q8", "fused": 1}
    b = {"case": "conv_q8", "fused": 2}
    merged = merge([part(1, [a], {"add.Tensor": 1}), part(2, [b, a], {"add.Tensor": 2})])
    assert merged["vulkan"]["table"] == [a, b]
    assert merged["vulkan"]["records"] == [{"case": "linear_q8"}, {"case": "conv_q8"}]
    assert "op_coverage" not in merged


def test_shards_of_a_run_where_one_holds_no_pipeline_unit_still_merge(tmp_path):
    """`run --shard`: one graph, one entry and one pipeline make two units, one per shard, so one shard holds no
    unit of the pipeline; both still record the run's pipelines, and the merge takes them as one run."""
    base = ["run", "--catalog", "exir", "--only", "exir.CSEPass", "--graphs", "mlp", "--pipeline", "to_executorch",
            "--no-incremental", "-q"]
    for i in (1, 2):
        assert main([*base, "--shard", f"{i}/2", "--report", str(tmp_path / f"s{i}")]) in (0, 1)
    s1, s2 = load(tmp_path / "s1"), load(tmp_path / "s2")
    assert {r["pass_name"].partition("/")[0] for r in s1["results"]} != {r["pass_name"].partition("/")[0]
                                                                        for r in s2["results"]}
    assert s1["configuration"]["pipelines"] == s2["configuration"]["pipelines"] == ["to_executorch"]
    assert main(["report", "merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "m"),
                 "--quiet"]) in (0, 1)
    assert load(tmp_path / "m")["configuration"]["pipelines"] == ["to_executorch"]


def test_merge_of_run_parts_puts_entries_in_the_configuration_order():
    """`run` records its catalog entries as ``entries`` (``check`` as ``passes``). Cut by cost, the first part can
    hold a later entry's pair before an earlier one's: the merge follows the configuration, not the parts."""
    from harness.report.merge import merge

    def rec(p: str, g: str) -> dict:
        return {"pass_name": p, "graph": g, "check": "runs", "status": "pass", "level": "must", "message": ""}

    def part(i: int, results: list) -> dict:
        return {"schema_version": "1.0", "environment": {"passgate": "x"},
                "configuration": {"command": "run", "entries": ["b", "a"], "graphs": ["g1", "g2"], "shard": f"{i}/2"},
                "started_at": f"2026-11-24T00:00:0{i}Z", "duration_s": 1.0, "complete": False, "cases": [],
                "results": results, "exit_status": 0}

    merged = merge([part(1, [rec("a", "g1"), rec("runtime", "g1")]), part(2, [rec("b", "g1"), rec("b", "g2")])])
    assert [(r["pass_name"], r["graph"]) for r in merged["results"]] == [("b", "g1"), ("b", "g2"), ("a", "g1"),
                                                                          ("runtime", "g1")]
