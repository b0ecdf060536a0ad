"""Random programs through the registered PT2E quantization flows: real quantizers, real to_edge, no mocks.

A quantized draw is a quantized case (the passes for quantized graphs run on it, float ones do not), its name is
its recipe, its printed program quantizes on its own exactly as passgate did, the fuzzer gives quantized draws
their turn, and exporting PT2E's pattern graphs once per process changes no program.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from run_helpers import EXE

from harness.core.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent


def _case(program):
    from harness.fuzz.measure import lower_fresh
    from harness.graphs.random.generate import spec_of

    return lower_fresh(spec_of(program))


def _qdq(ep) -> int:
    return sum(1 for n in ep.graph.nodes if "quantized_decomposed" in str(n.target))


def _entry(name: str):
    from harness import catalog

    return next(e for e in catalog.all_entries(catalog.select(None)) if e.name == name)


def test_the_registered_flows():
    from harness.graphs.quantizers import flows

    assert list(flows()) == ["vulkan", "xnnpack"]  # passgate's entry point first, then by name
    assert all("def quantize(model, inputs, dynamic_shapes)" in f.source for f in flows().values())


def test_a_quantized_draw_is_a_quantized_case():
    from harness.graphs.random.generate import draw_program, spec_of

    program = draw_program(0, 1).quantized("xnnpack")
    spec = spec_of(program)
    assert spec.name == "random_s0_001_qxnnpack" and {"random", "quantized", "int8"} <= spec.tags
    assert "PT2E-quantized (xnnpack)" in spec.description
    case = _case(program)
    assert _qdq(case.edge) > 0 and _qdq(_case(draw_program(0, 1)).edge) == 0
    # the passes for quantized graphs run on it; a float pass does not
    assert _entry("vulkan.FoldQDQPass").applies(spec) and not _entry("exir.CSEPass").applies(spec)


def test_the_printed_program_quantizes_on_its_own(tmp_path):
    """`passgate graphs --show` of a quantized draw is a plain program holding the flow; run alone, it exports
    a program with the same Q/DQ ops passgate's case has."""
    shown = subprocess.run([EXE, "graphs", "--show", "random_s0_001_qxnnpack"], cwd=ROOT, capture_output=True,
                           text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "prepare_pt2e" in shown.stdout and 'TAGS = ("quantized", "int8")' in shown.stdout
    script = tmp_path / "q.py"
    script.write_text(shown.stdout + "\n    print('QDQ', sum('quantized_decomposed' in str(n.target) "
                                     "for n in exported.graph.nodes))\n")
    ran = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]
    from harness.graphs.random.generate import draw_program, spec_of

    exported = spec_of(draw_program(0, 1).quantized("xnnpack")).build().model
    assert f"QDQ {_qdq(exported)}" in ran.stdout


def test_names_are_recipes():
    """A quantized mutant's name rebuilds it: mutation of the float choices, then the parent's flow."""
    from harness.fuzz.draws import NAME, by_name, fresh, mutant, quantized

    parent = quantized(fresh(0, 4), "vulkan")
    child = mutant(parent, 1)
    assert (parent.name, child.name, child.flow) == ("random_s0_004_qvulkan", "random_s0_004_m1_qvulkan", "vulkan")
    assert child.parent == parent.name
    rebuilt = by_name(child.name)
    assert rebuilt is not None and rebuilt.code == child.code
    assert NAME.match("random_s0_004_m1_qvulkan") and not NAME.match("random_s0_004_qvulkan_m1")
    with pytest.raises(UsageError, match="unknown quantization flow 'nope'"):
        by_name("random_s0_004_qnope")


def test_pattern_graphs_once_per_process_change_no_program():
    """Quantizing with PT2E's pattern graphs memoized gives the very program quantizing without does, and
    the exporters are PT2E's own again after the block."""
    import importlib

    import torch

    from harness.fuzz.campaign import _warm_program
    from harness.graphs import quantizers

    program = _warm_program().quantized("xnnpack")
    ns: dict = {}
    exec(compile(program.code(), "<warm>", "exec"), ns)  # noqa: S102 - our own generated program
    plain = ns["build"]()[0]
    with quantizers.patterns_memoized():
        memoized = ns["build"]()[0]
        assert quantizers._PATTERNS  # the batch norm on its own makes convert_pt2e build its conv-bn patterns
    assert plain.graph_module.code == memoized.graph_module.code
    assert plain.state_dict.keys() == memoized.state_dict.keys()
    assert all(torch.equal(plain.state_dict[k], memoized.state_dict[k]) for k in plain.state_dict)
    for name in quantizers._PATTERN_USERS:
        assert not getattr(getattr(importlib.import_module(name), quantizers._EXPORTER), "_passgate_memo", False)


def test_fresh_draws_take_turns_through_the_flows():
    from harness.core.config import RunConfig
    from harness.fuzz.loop import Fuzzer
    from harness.fuzz.targets import Target

    def target(name):
        e = _entry(name)
        return Target(e.name, None, (), e.catalog, e)

    both = Fuzzer([target("exir.CSEPass"), target("vulkan.FoldQDQPass")], 0, RunConfig(), flows=("xnnpack", "vulkan"))
    assert [both._fresh(i).name for i in range(4)] == ["random_s0_000", "random_s0_001_qxnnpack",
                                                       "random_s0_002_qvulkan", "random_s0_003"]
    quantized_only = Fuzzer([target("vulkan.FoldQDQPass")], 0, RunConfig(), flows=("vulkan",))
    assert [quantized_only._fresh(i).name for i in range(2)] == ["random_s0_000_qvulkan", "random_s0_001_qvulkan"]
    floats = Fuzzer([target("exir.CSEPass")], 0, RunConfig())
    assert floats._fresh(1).name == "random_s0_001"


def test_the_catalogs_entries_for_quantized_graphs_are_fuzzed_with_quantized_draws():
    from harness.fuzz.targets import flows_for, for_catalogs, on_random_graphs

    targets, _ = for_catalogs(["vulkan"], ["vulkan.FoldQDQPass", "vulkan.RemoveRedundantOpsTransform"])
    assert flows_for(None, targets, default_all=True) == ("vulkan", "xnnpack")
    assert flows_for(["none"], targets, default_all=True) == ()
    assert flows_for(None, targets, default_all=False) == ()  # a --pass: asked for, not by default
    assert [t.name for t in on_random_graphs(targets)[0]] == ["vulkan.RemoveRedundantOpsTransform"]
    assert sorted(t.name for t in on_random_graphs(targets, quantized=True)[0]) == [
        "vulkan.FoldQDQPass", "vulkan.RemoveRedundantOpsTransform"]


def test_an_unknown_flow_is_bad_input():
    proc = subprocess.run([EXE, "fuzz", "--pass", "tests/data/fuzz_passes.py:DecomposeDequantize", "--quantize",
                           "nope", "--draws", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].endswith(
        "unknown quantization flow 'nope': registered: vulkan, xnnpack")
