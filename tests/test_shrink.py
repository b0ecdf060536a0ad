"""A pass wrong only on odd last dimensions: found by random graphs, shrunk, and reproduced on its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from run_helpers import EXE

from harness.graphs.random.program import Program

ROOT = Path(__file__).resolve().parent.parent
ODD = "tests/broken_passes.py:OddLastDimAdd"


def _odd_run(report: Path):
    """`passgate check --pass OddLastDimAdd --graphs random` at the default count and seed."""
    env = {**os.environ, "PASSGATE_NO_SERVER": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([EXE, "check", "--pass", ODD, "--graphs", "random", "--report", str(report), "-q"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    return proc, json.loads((report / "results.json").read_text())


def test_odd_last_dim_bug_is_found_shrunk_and_reproduced(tmp_path, passgate_cache):
    """One test (one CLI run, not one per xdist worker): flagged, shrunk to <= 5 nodes, reproduced alone."""
    report = tmp_path / "report"
    proc, doc = _odd_run(report)

    # flagged at the default count and seed, with exactly the numerics check
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert doc["configuration"]["count"] is None and doc["configuration"]["seed"] == 0  # the defaults
    failing = {(r["graph"], r["check"]) for r in doc["results"] if r["status"] in ("fail", "error")}
    assert failing and {check for _, check in failing} == {"numerics"}
    assert all(g.startswith("random_s0_") for g, _ in failing)

    # shrunk to at most 5 call_function nodes; the record carries the graph and the reproducer
    shrunk = [r for r in doc["results"] if r["details"].get("shrink", {}).get("reproduced")]
    assert len(shrunk) == 1
    rec = shrunk[0]
    assert rec["check"] == "numerics" and rec["status"] == "fail"
    assert rec["details"]["shrunk_nodes"] <= 5
    assert rec["details"]["shrink"]["statements_after"] <= rec["details"]["shrink"]["statements_before"]
    assert "class Program(nn.Module)" in rec["details"]["shrunk_graph"]
    repro = report / rec["details"]["repro"]  # beside results.json, named relative to it
    assert rec["details"]["repro"] == repro.name and repro.name.startswith("repro_") and repro.exists()
    others = [r for r in doc["results"] if r["status"] == "fail" and r is not rec]
    assert others and all(r["details"]["repro"] == repro.name for r in others)
    assert doc["op_coverage"]["add.Tensor"] >= len(others) + 1  # op coverage filled, with core ops at 0
    assert 0 in doc["op_coverage"].values()
    import jsonschema

    schema = json.loads((ROOT / "reports" / "schema" / "results.schema.json").read_text())
    jsonschema.validate(doc, schema)

    # the reproducer, run on its own from another folder, exits 1 while the failure reproduces
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, str(repro)], cwd=elsewhere, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    assert "REPRODUCED" in run.stdout and "numerics: fail" in run.stdout
    # ... and the same script against a correct pass: the failure is gone, exit 0
    fixed = elsewhere / "fixed_pass.py"
    fixed.write_text("from executorch.exir.pass_base import ExportPass\n\n\nclass Fixed(ExportPass):\n    pass\n")
    text = repro.read_text()
    spec_line = next(line for line in text.splitlines() if line.startswith("PASS_SPEC = "))
    patched = elsewhere / "repro_fixed.py"
    patched.write_text(text.replace(spec_line, f"PASS_SPEC = {str(fixed) + ':Fixed'!r}"))
    run = subprocess.run([sys.executable, str(patched)], cwd=elsewhere, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr[-2000:]
    assert "not reproduced" in run.stdout


def _program() -> Program:
    from harness.graphs.random.generate import draw_program

    return next(p for p in (draw_program(0, i) for i in range(40)) if p.size >= 6 and len(p.outputs) >= 2)


def test_program_edits_keep_a_valid_smaller_program():
    import torch

    p = _program()
    one = p.keep_outputs([p.outputs[-1]])
    assert one.outputs == (p.outputs[-1],) and one.size <= p.size
    last = one.stmts[-1]
    produced = {o for s in one.stmts for o in s.outs}
    arg = next((a for a in last.args if a in produced), None)
    if arg is not None:
        cut = one.cut(arg)
        assert cut.size < one.size
        assert cut.val(cut.inputs[-1].name).shape == one.val(arg).shape
        one = cut
    for prog in (p, one):
        model, inputs, _ = prog.build_objects()
        with torch.no_grad():
            assert len(model(*inputs)) == len(prog.outputs)


def test_graph_level_program_lowers_to_the_same_ops(passgate_cache):
    """The lowered graph rewritten as one ATen call per node exports and lowers to the same ops."""
    from collections import Counter

    from harness.graphs.cases import export_and_lower, load_case
    from harness.graphs.op_coverage import program_ops
    from harness.graphs.random.from_graph import from_graph
    from harness.graphs.random.generate import random_specs, spec_of

    spec = random_specs(3, 0)[2]
    case = load_case(spec)
    graph = from_graph(case.edge, "graph_of_" + spec.name, 2)
    assert graph is not None and graph.size >= 3
    _, _, edge = export_and_lower(spec_of(graph, source="shrink"))
    before, after = Counter(program_ops(case.edge)), Counter(program_ops(edge))
    assert all(after[op] == n for op, n in before.items()), (before, after)
    # export clones the items of a *_copy op's list result; nothing else is added
    assert set(after) - set(before) <= {"dim_order_ops._clone_dim_order.default"}


def test_shrink_keeps_the_same_check_id(passgate_cache):
    """Shrinking a numerics failure never settles for a graph that fails some other check instead."""
    import broken_passes

    from harness.check.loading import from_object
    from harness.check.runner import check_pass_on_case
    from harness.core.config import RunConfig
    from harness.graphs.cases import load_case
    from harness.graphs.random.generate import program_of, random_specs
    from harness.reduce.shrink import shrink

    loaded = from_object(broken_passes.OddLastDimAdd)
    for spec in random_specs(25, 0):
        if "numerics" in {r.check for r in check_pass_on_case(loaded, load_case(spec)) if r.is_violation()}:
            break
    res = shrink(loaded, program_of(spec), "numerics", RunConfig(), seconds=40)
    assert res is not None and res.result.check == "numerics" and res.result.status.value == "fail"
    assert res.nodes <= 5 and res.program.size <= program_of(spec).size
