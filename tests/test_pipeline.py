"""Pipelines verified after every pass, and bisection to the first pass that breaks a check."""

from __future__ import annotations

import runpy
from dataclasses import replace

import broken_passes
import pytest
from executorch.exir.passes import dead_code_elimination_pass
from executorch.exir.passes.cse_pass import CSEPass
from executorch.exir.passes.remove_noop_pass import RemoveNoopPass
from executorch.exir.passes.scalar_to_tensor_pass import ScalarToTensorPass

from harness.cli.main import main
from harness.core.results import Status
from harness.pipelines.pipeline import Pipeline, pipeline_of, resolve_pipeline, verify_each
from harness.reduce.bisect import bisect

BROKEN_IN_THE_MIDDLE = [RemoveNoopPass, CSEPass, broken_passes.RetargetAddToSub, ScalarToTensorPass,
                        dead_code_elimination_pass, RemoveNoopPass]

PIPELINE_FILE = '''
import sys
sys.path.insert(0, {tests!r})
from broken_passes import RetargetAddToSub
from executorch.exir.passes import dead_code_elimination_pass
from executorch.exir.passes.cse_pass import CSEPass
from executorch.exir.passes.remove_noop_pass import RemoveNoopPass
from executorch.exir.passes.scalar_to_tensor_pass import ScalarToTensorPass
PIPELINE = [RemoveNoopPass, CSEPass, RetargetAddToSub, ScalarToTensorPass, dead_code_elimination_pass, RemoveNoopPass]
'''


def _failing(results):
    return sorted({r.check for r in results if r.status is Status.FAIL})


def test_verify_each_blames_only_the_broken_step(builtin_cases):
    pipeline = pipeline_of(BROKEN_IN_THE_MIDDLE, "broken")
    assert [s.name for s in pipeline.steps][-1] == "RemoveNoopPass#2"  # repeated passes stay distinct
    reports = verify_each(pipeline, builtin_cases["residual_block"])
    assert len(reports) == 6
    assert [_failing(r.results) for r in reports] == [[], [], ["numerics"], [], [], []]
    assert reports[2].results[0].pass_name == "broken/03:RetargetAddToSub"


def test_inherited_state_failures_are_reported_once(builtin_cases):
    """A step handed a program that already fails a state check is not blamed for it again."""
    pipeline = pipeline_of([broken_passes.MoveIntoSubmodule, RemoveNoopPass], "call_module_then_noop", "export")
    reports = verify_each(pipeline, builtin_cases["conv_bn_relu"])
    assert "no_call_module" in _failing(reports[0].results)
    (later,) = [r for r in reports[1].results if r.check == "no_call_module"]
    assert later.status is Status.SKIP and later.details["inherited_from_step"] == 1


def test_bisect_finds_the_broken_pass_in_the_middle(builtin_cases, tmp_path):
    pipeline = pipeline_of(BROKEN_IN_THE_MIDDLE, "broken")
    res = bisect(pipeline, builtin_cases["residual_block"])
    assert res.first_bad == 2 and res.step == "RetargetAddToSub"
    assert res.failing == ["numerics"] and res.confirmed == ["numerics"]
    assert len(res.probes) <= 4  # log2(6) + the full run
    clean = bisect(pipeline, builtin_cases["mlp"])  # no add in the MLP: nothing to break
    assert clean.first_bad is None and len(clean.probes) == 1


def test_bisect_command_reports_the_step_and_writes_a_reproducer(tmp_path, capsys):
    spec = tmp_path / "pipe.py"
    spec.write_text(PIPELINE_FILE.format(tests=str(__import__("pathlib").Path(__file__).parent)))
    report = tmp_path / "report"
    status = main(["bisect", "--pipeline", f"{spec}:PIPELINE", "--graphs", "residual_block", "--report", str(report),
                   "--no-isolation"])
    out = capsys.readouterr().out
    assert status == 1
    assert "first bad pass is step 3/6 RetargetAddToSub: numerics" in out
    (repro,) = report.glob("repro_bisect_*.py")
    with pytest.raises(SystemExit) as exited:
        runpy.run_path(str(repro), run_name="__main__")
    assert exited.value.code == 1
    assert "step 3 (RetargetAddToSub) on residual_block: numerics" in capsys.readouterr().out
    assert main(["bisect", "--pipeline", "no_such_pipeline", "--report", str(report)]) == 2


def test_builtin_pipelines_follow_upstream_order():
    vulkan = resolve_pipeline("vulkan")
    names = [s.name for s in vulkan.steps]
    assert names.index("FusePatternsPass") < names.index("FoldQDQPass") < names.index("SpecPropPass") \
        < names.index("insert_prepack_nodes") < names.index("TagMemoryMetaPass") < names.index("MemoryPlanningPass")
    xnnpack = resolve_pipeline("xnnpack")
    assert len(xnnpack.steps) == 17 and xnnpack.steps[0].name == "XNNPACKRemoveCloneOpsTransform"
    assert isinstance(resolve_pipeline("to_executorch"), Pipeline)


def test_vulkan_pipeline_verified_each_pass(builtin_cases):
    """The Vulkan preprocessing on conv -> batch norm -> relu: batch norm folds into the conv, then
    FuseClampPass fuses the relu into et_vk.conv_with_clamp, whose clamp bound (sys.float_info.max)
    does not fit float32, so the program no longer runs on CPU (an upstream bug, see the baseline)."""
    vulkan = resolve_pipeline("vulkan")  # up to RemoveRedundantOps; FusePatternsPass (3 s a call, no Q/DQ here) left out
    steps = tuple(s for s in vulkan.steps[:8] if s.name != "FusePatternsPass")
    reports = verify_each(replace(vulkan, steps=steps), builtin_cases["conv_bn_relu"])
    by_step = {r.step: _failing(r.results) for r in reports}
    assert "runnable" in by_step["FuseClampPass"] and "meta_stack_trace" in by_step["FuseClampPass"]
    later = [r for r in reports if r.index > [x.step for x in reports].index("FuseClampPass")]
    assert all("runnable" not in _failing(r.results) for r in later)  # inherited, not re-blamed
