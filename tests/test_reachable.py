"""Declared-unreachable pass code: taken out of the "reachable" coverage figures only when the measurement agrees."""

import importlib
import sys

import pytest

from harness.run import pass_coverage as measure
from harness.run.reachable import Unreachable, declared, exclude

MODULE = '''
TABLE = {}

def live(x):
    if x > 0:
        return x
    return -x

def dead(x):  # registered nowhere, called by nobody
    if x > 0:
        return 1
    for i in range(x):
        x += i
    return x

class Holder:
    def method(self, x):
        if x:
            return 2
        return 3

class Traced:  # stands for a module a pass hands to torch.export(strict=True): made, never run as Python
    def forward(self, x):
        if x:
            return 4
        return 5

def make():
    return Traced()
'''


@pytest.fixture
def measured(tmp_path, monkeypatch):
    """(module name, its FileCoverage) after a real coverage.py run that calls live() both ways and nothing else."""
    import coverage

    (tmp_path / "reach_demo.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    cov = coverage.Coverage(data_file=None, branch=True, source=[str(tmp_path)])
    cov.start()
    try:
        mod = importlib.import_module("reach_demo")
        mod.live(1), mod.live(-1), mod.make()
    finally:
        cov.stop()
        sys.modules.pop("reach_demo", None)
    return "reach_demo", measure.file_coverage(cov, ["reach_demo"])


def test_a_dead_function_leaves_the_reachable_figures_and_is_listed(measured):
    name, files = measured
    raw = files[name]
    assert raw.covered_branches == 2 and raw.branches == 10  # live's 2 of 2; dead's 4, method's and forward's 2 missing
    reach, report = exclude(files, [Unreachable(name, ("dead", "Holder.method"), "nothing calls them")])
    (ex,) = report
    assert not ex.refused and ex.branches == 6 and ex.lines == 8  # dead: 5 statements, method: 3
    got = reach[name]
    assert (got.branches, got.covered_branches) == (4, 2)
    assert got.statements == raw.statements - 8 and got.executed == raw.executed
    assert files[name] is raw and raw.branches == 10  # the raw figures are untouched


def test_a_declaration_the_measurement_contradicts_is_refused(measured):
    name, files = measured
    reach, report = exclude(files, [Unreachable(name, ("live",), "wrong: it ran"),
                                    Unreachable(name, ("gone",), "no such function"),
                                    Unreachable("not.measured", ("f",), "not in the run")])
    assert [x.refused.split(",")[0].split(" ")[0] for x in report] == ["declared", "no", "module"]
    assert "ran" in report[0].refused and all(x.branches == 0 for x in report)
    assert reach[name] == files[name]


def test_the_shipped_declarations_hold_on_a_dynamic_program_the_sym_shape_pass_evaluates():
    """passes/unreachable.py's claim, checked on real executorch: ConstraintBasedSymShapeEvalPass evaluates a
    dynamic-batch program that indexes a tensor (aten.index.Tensor, whose rule is declared), and the declared rules never run."""
    import torch
    from executorch.exir import to_edge
    from executorch.exir.passes.spec_prop_pass import SpecPropPass
    from executorch.exir.passes.sym_shape_eval_pass import ConstraintBasedSymShapeEvalPass

    class M(torch.nn.Module):
        def forward(self, x, idx):
            return x[idx] * 2.0

    batch = torch.export.Dim("batch", min=1, max=8)
    ep = torch.export.export(M(), (torch.randn(4, 3), torch.tensor([0, 2])), dynamic_shapes=({0: batch}, None))
    gm = to_edge(ep).exported_program().graph_module
    mine = [d for d in declared() if d.module.endswith("sym_shape_eval_pass")]
    assert mine, "passes/unreachable.py declares the sym-shape rules"
    import coverage

    cov = coverage.Coverage(data_file=None, branch=True, include=["*/exir/passes/sym_shape_eval_pass.py"])
    cov.start()
    try:
        ConstraintBasedSymShapeEvalPass()(SpecPropPass()(gm).graph_module)
    finally:
        cov.stop()
    files = measure.file_coverage(cov, [mine[0].module])
    _reach, report = exclude(files, mine)
    assert report[0].refused == "" and report[0].branches > 50


def test_traced_code_counts_as_unmeasured_only_once_its_export_call_ran(measured):
    """A `traced` declaration (a module a pass exports strictly) holds when a line naming its owner ran."""
    name, files = measured
    reach, (ex,) = exclude(files, [Unreachable(name, ("Holder.method",), "exported", kind="traced")])
    assert ex.refused.startswith("declared traced") and reach[name] == files[name]  # nothing named Holder ran
    reach, (ex,) = exclude(files, [Unreachable(name, ("dead",), "exported", kind="traced")])
    assert ex.refused.startswith("declared traced")  # `dead` is named nowhere outside itself
    reach, (ex,) = exclude(files, [Unreachable(name, ("Traced.forward",), "exported", kind="traced")])
    assert not ex.refused and ex.branches == 2 and reach[name].branches == files[name].branches - 2


def test_a_line_range_declaration_takes_out_only_those_lines(measured):
    """``lines=``: the branch of a live function no program reaches, and no more of it."""
    name, files = measured
    whole = files[name]
    reach, report = exclude(files, [Unreachable(name, ("dead",), "the loop only", lines=(12, 13))])
    assert not report[0].refused and report[0].lines == 2
    assert sorted(set(whole.missing_lines) - set(reach[name].missing_lines)) == [12, 13]
    ran, _ = exclude(files, [Unreachable(name, ("live",), "wrong: the negative branch runs", lines=(6, 6))])
    assert _[0].refused.startswith("declared unreachable, but lines [6] ran")


def test_the_shipped_line_ranges_lie_in_the_functions_they_name():
    """A line range names lines of the pinned executorch: when a version moves them, this fails rather than the
    coverage and mutation reports leaving out other lines."""
    import ast

    from harness.check.loading import source_file
    from harness.run.reachable import body_spans

    ranged = [d for d in declared() if d.lines]
    assert len(ranged) >= 3
    for d in ranged:
        (function,) = d.functions
        span = body_spans(ast.parse(open(source_file(d.module)).read()), [function])[function]
        assert span is not None and span[0] <= d.lines[0] <= d.lines[1] <= span[1], (d.module, function, span)
