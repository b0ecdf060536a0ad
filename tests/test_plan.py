"""The plan both `passgate run` and the conformance suite execute, and the triage of known violations."""

from __future__ import annotations

import os
import subprocess
import sys

from harness.run import plan

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_ITEMS_SCRIPT = """
from harness.run import plan
p = plan.build("standard", passes=("passes.reference:ReplaceAddPass",))
for u in p.units():
    for name, check in p.items(u):
        print(u.key, name, check)
"""


def test_items_are_the_same_whatever_the_hash_seed():
    """pytest-xdist refuses workers that collect different item lists; set order must not leak into them."""
    outs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", _ITEMS_SCRIPT], capture_output=True, text=True, env=env,
                              cwd=ROOT, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        outs.append(proc.stdout)
    assert outs[0] == outs[1]
    lines = outs[0].splitlines()
    kinds = {line.split(":", 1)[0] for line in lines}
    assert {"entry", "pass", "pipeline", "partitioner", "vulkan"} <= kinds
    assert len(lines) == len(set(lines)), "an item appears twice"


def test_narrowed_plan_drops_pipelines_partitioners_and_vulkan():
    p = plan.build("standard", catalogs=["exir"], only=["exir.CSEPass"], graphs=["mlp", "conv_bn_relu"])
    units = p.units()
    assert [(u.kind, u.name, u.graph) for u in units] == [
        ("entry", "exir.CSEPass", "mlp"), ("entry", "exir.CSEPass", "conv_bn_relu")]
    assert [s.name for s in p.needed_specs()] == ["mlp", "conv_bn_relu"]


def test_units_compare_by_kind_name_and_graph_and_keep_cuts_a_shard():
    p = plan.build("standard", catalogs=["exir"], only=["exir.CSEPass"], graphs=["mlp", "conv_bn_relu"],
                   pipelines=["xnnpack"], partitioners=["xnnpack"])
    units = p.units()
    assert units == p.units() and len(set(units)) == len(units)  # what a unit carries is not its identity
    assert [u.kind for u in units] == ["entry", "entry", "pipeline", "pipeline", "partitioner", "partitioner"]
    assert units[2].pairs == len(p.pipelines[0].steps) and units[0].pairs == 1
    shard = {u for u in units if u.kind == "entry" and u.graph == "mlp"} | {u for u in units if u.kind == "pipeline"}
    p.keep(shard)
    assert set(p.units()) == shard and p.applied["exir.CSEPass"] == ["mlp"] and not p.partitioners


def test_shards_of_a_plan_with_pipelines_do_not_overlap():
    """A pipeline runs per graph: each shard keeps only its own graphs of it, so the parts join exactly."""
    from harness.core.shards import Shard
    from harness.run import sharding

    def build():
        return plan.build("standard", catalogs=["exir"], only=["exir.CSEPass"], graphs=["mlp", "conv_bn_relu"],
                          pipelines=["xnnpack"], partitioners=["xnnpack"])

    everything = build().units()
    parts = []
    for i in (1, 2):
        p = build()
        p.keep(set(sharding.split(p.units(), Shard(i, 2), key=lambda u: (u.graph, u.kind, u.name))))
        parts.append(p.units())
    assert not set(parts[0]) & set(parts[1])
    assert sorted(u.key for part in parts for u in part) == sorted(u.key for u in everything)


def test_engine_imports_no_content():
    """harness/ never imports passes/, vulkan/ or fixtures/: content plugs in through entry points."""
    import ast
    from pathlib import Path

    bad = []
    for path in sorted(Path(ROOT, "harness").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            bad += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}" for n in names
                    if n.split(".")[0] in ("passes", "vulkan", "fixtures")]
    assert not bad


def test_content_plugs_in_through_entry_points():
    from importlib.metadata import entry_points

    from harness.cli.main import commands
    from harness.graphs import sources
    from harness.pipelines.pipeline import registered_pipelines

    def group(name):
        return {ep.name: ep.value for ep in entry_points(group=name)}

    assert group("passgate.units") == {"vulkan": "vulkan.entry.unit:units"}
    assert group("passgate.triage") == {"passgate": "passes.triage:triage"}
    assert commands()["vulkan"] == "vulkan.entry.command" and list(commands())[-1] == "vulkan"  # after the engine's own
    assert sources.static_sources() == ("builtin", "zoo", "quantized", "corpus")  # not the entry points' name order
    assert set(registered_pipelines()) == {"vulkan", "xnnpack", "to_executorch"}


def test_run_judges_every_item_it_announces(builtin_cases):
    """Each (pass, check) a unit announces comes back from running it, and nothing else does."""
    from harness.core.config import RunConfig

    p = plan.build("standard", catalogs=["exir"], only=["exir.RemoveNoopPass"], graphs=["mlp"],
                   pipelines=["xnnpack"])
    got = [(r.graph, r.pass_name, r.check) for r in p.run(p.units(), {"mlp": builtin_cases["mlp"]}, RunConfig())]
    announced = {(u.graph, name, check) for u in p.units() for name, check in p.items(u)}
    assert set(got) <= announced
    entry_items = {x for x in announced if x[1] == "exir.RemoveNoopPass"}
    assert entry_items <= set(got)


def test_triage_explains_by_class_name_and_message():
    from passes.triage import attr_of, triage

    assert attr_of("vulkan/06:FusePatternsPass") == attr_of("vulkan.FusePatternsPass") == "FusePatternsPass"
    k = triage("vulkan/06:FusePatternsPass", "meta_stack_trace", "13 new node(s) lack stack_trace: et_vk_q8ta_add")
    assert k is not None and "create_node" in k.reason and k.kind == "bug"
    assert triage("exir.CSEPass", "numerics", "draw sample: output 0: Tensor-likes are not close!") is None
    assert triage("mine.MyPass", "input_unchanged", "the pass returned a new program but also edited the one "
                  "it was handed").kind == "bug"


def test_the_standard_profile_has_every_runtime_leg_and_others_ask_for_them():
    """standard judges each case's own program, each pipeline's result and the XNNPACK partitioner's lowered
    program by the runtime checks (their violations are triaged in the baseline); quick, --no-runtime and a
    narrowed run have none, and a narrowed run gets all three with --runtime."""
    from harness.run import plan as plans

    default = plans.build("standard", graphs=["mlp"])
    assert default.runtime == plans.RUNTIME_LEGS == ("cases", "pipelines", "partitioners")
    assert [u for u in default.units() if u.kind == plans.RUNTIME]
    checks = {(u.name, c) for u in default.units() if u.kind == plans.PARTITIONER for _, c in u.items()}
    assert ("xnnpack", "runtime_numerics") in checks and ("xnnpack", "delegate_call_only") in checks
    assert ("vulkan", "runtime_numerics") not in checks  # no runtime here registers the Vulkan backend
    pipeline_items = {p for u in default.units() if u.kind == plans.PIPELINE for p, _ in u.items()}
    assert {p for p in pipeline_items if p.endswith("/runtime")} == {"vulkan/runtime", "xnnpack/runtime",
                                                                     "to_executorch/runtime"}
    none = plans.build("standard", graphs=["mlp"], runtime=False)
    assert not none.runtime and not [u for u in none.units() if u.kind == plans.RUNTIME]
    assert not [p for u in none.units() if u.kind == plans.PIPELINE for p, _ in u.items() if p.endswith("/runtime")]
    assert not [c for u in none.units() if u.kind == plans.PARTITIONER for _, c in u.items() if c == "runtime_runs"]
    assert not [u for u in plans.build("quick", graphs=["mlp"]).units() if u.kind == plans.RUNTIME]
    assert not plans.build("standard", only=["exir.CSEPass"], graphs=["mlp"]).runtime
    asked = plans.build("standard", only=["exir.CSEPass"], graphs=["mlp"], pipelines=["xnnpack"],
                        partitioners=["xnnpack"], runtime=True)
    assert asked.runtime == plans.RUNTIME_LEGS
    assert {p for u in asked.units() if u.kind == plans.PIPELINE for p, _ in u.items()} >= {"xnnpack/runtime"}