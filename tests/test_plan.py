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


def test_run_judges_every_item_it_announces(builtin_cases):
    """Each (pass, check) a unit announces comes back from running it, and nothing else does."""
    from harness.check.runner import RunConfig

    p = plan.build("standard", catalogs=["exir"], only=["exir.RemoveNoopPass"], graphs=["mlp"],
                   pipelines=["xnnpack"])
    got = []
    p.run(p.units(), {"mlp": builtin_cases["mlp"]}, RunConfig(),
          lambda graph, name, rs: got.extend((graph, r.pass_name, r.check) for r in rs))
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
