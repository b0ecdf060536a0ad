"""--pass SPEC resolution: every form DESIGN.md allows, and one-line errors for the rest."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import failing_ids

from harness.check.loading import load_pass
from harness.check.runner import check_pass_on_case
from harness.core.errors import UsageError

DATA = Path(__file__).parent / "data"
FILE = DATA / "user_passes.py"


@pytest.mark.parametrize("attr,kind", [
    ("IdentityExportPass", "class"),
    ("WantsProgram", "class"),
    ("identity_function", "function"),
    ("identity_instance", "instance"),
])
def test_file_spec_forms_run_clean(attr, kind, builtin_cases):
    loaded = load_pass(f"{FILE}:{attr}")
    assert loaded.kind == kind
    assert failing_ids(check_pass_on_case(loaded, builtin_cases["mlp"])) == set()


def test_module_spec_and_declarations():
    loaded = load_pass("passes.reference:ReplaceAddWithMulSub")
    assert loaded.semantics == "changing" and loaded.stage == "edge"
    assert load_pass("passes.reference:RemoveDetachPass").stage == "export"
    assert load_pass("passes.reference:RemoveDetachPass", stage="edge").stage == "edge"


@pytest.mark.parametrize("spec,fragment", [
    ("no_such_module_xyz:Pass", "pass module not found: no_such_module_xyz"),
    ("passes.reference:NoSuchPass", "has no attribute 'NoSuchPass'"),
    (f"{DATA}/missing.py:Pass", "pass file not found"),
    (f"{FILE}:NOT_A_PASS", "is not a pass"),
    (f"{DATA}/syntax_error.py:broken", "syntax error in pass file"),
    ("passes.reference", "must be package.module:Name"),
    (f"{FILE}:NeedsTwoArgs", "needs 2 constructor arguments"),
])
def test_bad_specs_raise_one_line_usage_errors(spec, fragment):
    with pytest.raises(UsageError) as info:
        load_pass(spec)
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)
