"""passgate as a library: the `passgate` pytest fixture and the PassManager check."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import broken_passes
import pytest
from executorch.exir.pass_manager import PassManager
from torch.fx.passes.infra.pass_manager import PassManager as FxPassManager

from harness.pytest_plugin import PassgateFixture
from harness.run.library import IRSpecCheck, IRSpecViolation
from passes.reference import RemoveDetachPass, ReplaceInPlaceReluWithOutOfPlaceReluPass


def test_plugin_is_registered_and_imports_no_torch():
    assert {ep.name: ep.value for ep in entry_points(group="pytest11")}.get("passgate") == "harness.pytest_plugin"
    code = "import sys, harness.pytest_plugin; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_fixture_passes_a_clean_pass(passgate):
    results = passgate.check(ReplaceInPlaceReluWithOutOfPlaceReluPass, graphs=["inplace_views"])
    assert {r.graph for r in results} == {"inplace_views"} and not passgate.violations(results)


def test_fixture_fails_the_test_with_the_reports_message():
    fixture = PassgateFixture(["conv_bn_relu"], strict=False)
    with pytest.raises(pytest.fail.Exception) as failed:
        fixture.check(broken_passes.MoveIntoSubmodule)
    message = str(failed.value)
    assert "IR-spec violation" in message and "MoveIntoSubmodule x conv_bn_relu: no_call_module" in message
    with pytest.raises(pytest.fail.Exception, match="unknown graph 'nope'"):
        fixture.run(RemoveDetachPass, graphs=["nope"])


@pytest.mark.passgate_graphs("mlp")
def test_marker_picks_the_graphs(passgate):
    results = passgate.run("passes.reference:ScalarToTensorPass")
    assert {r.graph for r in results} == {"mlp"}


@pytest.mark.parametrize("manager", [PassManager, FxPassManager], ids=["executorch", "torch.fx"])
def test_pass_manager_check_names_the_pass_that_dropped_metadata(builtin_cases, manager):
    gm = builtin_cases["inplace_views"].program("export").graph_module
    check = IRSpecCheck(seed=True)
    pm = manager(passes=[RemoveDetachPass(), broken_passes.RawCallFunctionNoMeta()], run_checks_after_each_pass=True)
    pm.add_checks(check)
    with pytest.raises(Exception) as raised:  # torch's PassManager wraps what a check raises
        pm(gm)
    violation = raised.value
    while violation is not None and not isinstance(violation, IRSpecViolation):
        violation = violation.__cause__
    assert violation is not None, raised.value
    assert violation.check in ("meta_val", "meta_stack_trace")
    assert "after pass 2" in str(violation)


def test_pass_manager_check_accepts_a_clean_pipeline(builtin_cases):
    gm = builtin_cases["inplace_views"].program("export").graph_module
    pm = PassManager(passes=[ReplaceInPlaceReluWithOutOfPlaceReluPass(), RemoveDetachPass()],
                     run_checks_after_each_pass=True)
    check = IRSpecCheck(seed=True)
    pm.add_checks(check)
    pm(gm)
    assert check.calls == 3  # the input, then after each pass
