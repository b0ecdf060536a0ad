"""Exercised, measured: the runs record says whether and how a pass changed the program, and the
pass-level ``exercised`` check flags a pass no case made change anything (should; must in certify).

Real torch.export / to_edge graphs and real passes throughout: the guide's reference passes and a
few written here the way a user writes one (loaded from a file by SPEC).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from junitparser import JUnitXml, Skipped

from harness.check import exercised
from harness.cli.main import main
from harness.core.results import PASS_LEVEL, CheckResult, Level, Status, result
from harness.run.library import check_pass

RELU = "passes.reference:ReplaceInPlaceReluWithOutOfPlaceReluPass"
ADD = "passes.reference:ReplaceAddPass"  # requires an add: not applicable on mlp and conv_bn_relu
SCHEMA = Path(__file__).resolve().parent.parent / "reports" / "schema" / "results.schema.json"

PASSES = '''
import torch
import torch.fx
from executorch.exir.pass_base import ExportPass
from torch.fx.passes.infra.pass_base import PassBase, PassResult


class ChangesNothing(PassBase):
    """Looks at the graph and leaves it as it was."""

    passgate_stage = "export"

    def call(self, gm):
        return PassResult(gm, False)


class RetraceOnly(ExportPass):
    """An ExportPass that overrides nothing: it re-traces the program (names and retrace bookkeeping
    such as seq_nr move) and changes nothing a check could flag."""

    passgate_stage = "export"


class SwapAddOperands(PassBase):
    """add(x, y) -> add(y, x): the op counts stay, the structure changes."""

    passgate_stage = "export"

    def call(self, gm):
        changed = False
        for n in gm.graph.nodes:
            if (n.op == "call_function" and n.target == torch.ops.aten.add.Tensor and not n.kwargs
                    and len(n.args) == 2 and all(isinstance(a, torch.fx.Node) for a in n.args)):
                n.args = (n.args[1], n.args[0])
                changed = True
        gm.recompile()
        return PassResult(gm, changed)


class TagsNodes(PassBase):
    """Notes something in every call_function node's metadata: only the metadata changes."""

    passgate_stage = "export"

    def call(self, gm):
        for n in gm.graph.nodes:
            if n.op == "call_function":
                n.meta["passgate_test_note"] = "seen"
        return PassResult(gm, True)


class PrintsNodes(PassBase):
    """A debug printer: it counts the call_function nodes and leaves the program as it was, by contract."""

    passgate_stage = "export"
    passgate_semantics = "observing"

    def call(self, gm):
        print(sum(n.op == "call_function" for n in gm.graph.nodes), "call_function nodes")
        return PassResult(gm, False)


class ReadsItsProgram(ExportPass):
    """Built from the program (``Build("program")``): it tags nodes only if the program it was built with is the one
    it is run on, after SpecPropPass (every call_function node of that one carries meta['spec'])."""

    def __init__(self, exported_program):
        super().__init__()
        self.program = exported_program

    def call(self, gm):
        built_for = [n for n in self.program.graph.nodes if n.op == "call_function"]
        if not built_for or any("spec" not in n.meta for n in built_for):
            raise RuntimeError("built from a program other than the one it runs on")
        for n in gm.graph.nodes:
            if n.op == "call_function":
                n.meta["passgate_test_note"] = "seen"
        return PassResult(gm, True)


def raises(gm):
    raise RuntimeError("this pass never runs")
'''


@pytest.fixture(scope="module")
def passes_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("passes") / "exercised_passes.py"
    path.write_text(PASSES)
    return str(path)


def _runs(results, graph: str) -> CheckResult:
    return next(r for r in results if r.check == "runs" and r.graph == graph)


def test_runs_records_whether_and_how_the_pass_changed_the_program(passes_file):
    relu = check_pass(RELU, ["mlp", "inplace_views"])
    rewritten = _runs(relu, "inplace_views").details
    assert rewritten["changed"] == {"ops": True, "structure": True, "metadata": False}
    assert rewritten["change_signature"] == "+relu.default -relu_.default [ops,structure]"
    assert rewritten["ops_changed"] == {"relu.default": 1, "relu_.default": -1}  # kept as it was
    assert _runs(relu, "mlp").details["changed"] == {"ops": False, "structure": False, "metadata": False}

    def changed(name: str, graph: str) -> tuple[dict, str]:
        d = _runs(check_pass(f"{passes_file}:{name}", [graph]), graph).details
        return d["changed"], d["change_signature"]

    assert changed("ChangesNothing", "residual_block") == (
        {"ops": False, "structure": False, "metadata": False}, "unchanged")
    # an ExportPass re-trace renames nodes and rewrites seq_nr / from_node: not a change of the program
    assert changed("RetraceOnly", "residual_block")[1] == "unchanged"
    assert changed("SwapAddOperands", "residual_block") == (
        {"ops": False, "structure": True, "metadata": False}, "[structure]")
    assert changed("TagsNodes", "residual_block") == (
        {"ops": False, "structure": False, "metadata": True}, "[metadata]")


def test_judge_over_cases_pass_fail_not_applicable_and_skip(passes_file):
    by_pass = {r.pass_name: r for r in exercised.judge(
        check_pass(RELU, ["mlp", "inplace_views"]) + check_pass(f"{passes_file}:RetraceOnly", ["mlp", "inplace_views"])
        + check_pass(ADD, ["mlp", "conv_bn_relu"]) + check_pass(f"{passes_file}:raises", ["mlp"]))}
    assert all(r.graph == PASS_LEVEL and r.check == "exercised" for r in by_pass.values())
    relu = by_pass["ReplaceInPlaceReluWithOutOfPlaceReluPass"]
    assert relu.status is Status.PASS and relu.details["cases_changed"] == 1 and relu.details["ran"] == 2
    assert relu.details["exercised_by"] == ["inplace_views"]
    retrace = by_pass["RetraceOnly"]
    assert retrace.status is Status.FAIL and retrace.level is Level.SHOULD and not retrace.is_violation()
    assert retrace.message == ("no case changed the program: ops, structure and metadata identical on all 2 cases")
    assert by_pass["ReplaceAddPass"].status is Status.NOT_APPLICABLE
    assert by_pass["raises"].status is Status.SKIP and "no case ran" in by_pass["raises"].message


def test_an_observer_is_not_judged_exercised(passes_file):
    """A pass declared an observer (semantics 'observing') changes no program by contract: exercised does not
    apply to it; the same code declared preserving is a pass no case exercised."""
    observer = check_pass(f"{passes_file}:PrintsNodes", ["mlp", "residual_block"])
    assert all(_runs(observer, g).details["observing"] is True for g in ("mlp", "residual_block"))
    (judged,) = exercised.judge(observer)
    assert judged.status is Status.NOT_APPLICABLE and judged.details["observing"] == 2
    assert judged.message == ("an observer (semantics 'observing'): it records or prints and by contract changes "
                              "no program; 0 of 2 cases changed")
    as_preserving = check_pass(f"{passes_file}:PrintsNodes", ["mlp"], semantics="preserving")
    (plain,) = exercised.judge(as_preserving)
    assert plain.status is Status.FAIL and "observing" not in _runs(as_preserving, "mlp").details


def test_level_override_is_written_as_level_and_read_back():
    r = result("P", PASS_LEVEL, "exercised", Status.FAIL, "no case changed the program", level=Level.MUST)
    assert r.level is Level.MUST and r.is_violation()
    d = r.to_json()
    assert d["level"] == "must" and "level_override" not in d
    back = CheckResult.from_json(d)
    assert back == r and back.level is Level.MUST and back.is_violation()
    plain = result("P", PASS_LEVEL, "exercised", Status.FAIL, level=Level.SHOULD)  # the registry's own level
    assert plain.level_override is None and CheckResult.from_json(plain.to_json()) == plain
    assert not plain.is_violation() and plain.is_violation(strict=True)


def test_check_flags_a_pass_no_case_changed_in_every_report(passes_file, tmp_path, capsys):
    args = ["check", "--pass", f"{passes_file}:ChangesNothing", "--pass", RELU, "--graphs", "mlp", "inplace_views",
            "--report", str(tmp_path)]
    assert main(args) == 0  # should level: reported, not gating
    out = capsys.readouterr().out
    assert "ChangesNothing" in out and "[should] exercised: no case changed the program" in out
    assert main(args + ["--strict", "-q"]) == 1
    doc = json.loads((tmp_path / "results.json").read_text())
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(doc)
    ex = {r["pass_name"]: r for r in doc["results"] if r["check"] == "exercised"}
    assert ex["ChangesNothing"]["status"] == "fail" and ex["ChangesNothing"]["graph"] == "*"
    assert ex["ChangesNothing"]["level"] == "should" and ex["ReplaceInPlaceReluWithOutOfPlaceReluPass"]["status"] == "pass"
    assert doc["results"][-2:] == list(ex.values())  # after every pair
    assert doc["summary"]["graphs"] == 2 and doc["summary"]["violations"] == 1  # strict: the exercised fail

    md = (tmp_path / "summary.md").read_text()
    assert "### Exercised: 1 of 2 passes changed the program on some case" in md and "`ChangesNothing`" in md
    html = (tmp_path / "report.html").read_text()
    assert 'id="exercised"' in html and html.count('<span class="nx" title="no case changed the program') == 1
    assert "<th class=\"g\"><span title=\"*\">" not in html  # no "*" graph column in the matrix
    xml = JUnitXml.fromfile(str(tmp_path / "junit.xml"))
    case = next(c for s in xml for c in s if c.name == "*::exercised" and c.classname == "ChangesNothing")
    assert case.result and not isinstance(case.result[0], Skipped)  # strict: a failure


def test_resume_judges_exercised_once_over_the_whole_run(passes_file, tmp_path):
    args = ["check", "--pass", f"{passes_file}:ChangesNothing", "--graphs", "mlp", "inplace_views", "-q",
            "--report", str(tmp_path)]
    assert main(args) == 0
    assert main(args + ["--resume"]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert [r["graph"] for r in doc["results"] if r["check"] == "exercised"] == ["*"]


def test_shards_leave_exercised_to_the_merge(passes_file, tmp_path):
    common = ["check", "--pass", f"{passes_file}:ChangesNothing", "--pass", RELU, "--graphs", "mlp", "inplace_views",
              "-q"]
    assert main(common + ["--report", str(tmp_path / "all")]) == 0
    for i in (1, 2):
        assert main(common + ["--shard", f"{i}/2", "--report", str(tmp_path / str(i))]) == 0
        part = json.loads((tmp_path / str(i) / "results.json").read_text())
        assert not [r for r in part["results"] if r["check"] == "exercised"]  # a shard saw part of the cases
    assert main(["report", "merge", str(tmp_path / "1"), str(tmp_path / "2"), "--out", str(tmp_path / "m")]) == 0
    merged = json.loads((tmp_path / "m" / "results.json").read_text())
    whole = json.loads((tmp_path / "all" / "results.json").read_text())

    def verdicts(doc):
        return [(r["pass_name"], r["status"], r["level"], r["message"]) for r in doc["results"]
                if r["check"] == "exercised"]

    assert verdicts(merged) == verdicts(whole) and len(verdicts(whole)) == 2


def test_certify_judges_exercised_at_must(passes_file, tmp_path):
    """A backend under certification that changes nothing on the suite's graphs certifies nothing: the
    bundle's results.json says must, and the verdict and exit status count it."""
    out = tmp_path / "bundle"
    status = main(["certify", "--profile", "quick", "--out", str(out), "--backend", f"{passes_file}:ChangesNothing",
                   "-q"])
    assert status == 1
    doc = json.loads((out / "results.json").read_text())
    ex = {r["pass_name"]: r for r in doc["results"] if r["check"] == "exercised"}
    assert ex and all(r["level"] == "must" for r in ex.values())
    assert ex["ChangesNothing"]["status"] == "fail"
    assert ex["ReplaceInPlaceReluWithOutOfPlaceReluPass"]["status"] == "pass"
    bad = [r for r in doc["results"] if CheckResult.from_json(r).is_violation()]
    assert ("ChangesNothing", "*", "exercised") in {(r["pass_name"], r["graph"], r["check"]) for r in bad}
    assert doc["summary"]["violations"] >= 1
    cert = json.loads((out / "certificate.json").read_text())
    assert cert["verdict"] == "FAIL" and cert["exit_status"] == 1


def test_pass_coverage_per_entry_with_branches_and_exercised(tmp_path, capsys):
    """Branch and line coverage of a catalog entry's own source under a real run, its exercised verdict beside
    it, and `passgate passes --coverage` showing both."""
    from harness.catalog import resolve_catalogs
    from harness.cli.pass_coverage import JSON_FILE, render
    from harness.report import view
    from harness.run import pass_coverage as measure

    entry = "misc.PermuteMemoryFormatsPass"  # NCHW <-> NHWC permutes around convs: rewrites conv_bn_relu
    cov = measure.start()
    try:
        # --no-incremental, as `tox -e coverage` runs: a verdict reused from an earlier run executes no pass code
        status = main(["run", "--catalog", "misc", "--only", entry, "--graphs", "conv_bn_relu", "mlp",
                       "--no-isolation", "--no-incremental", "-q", "--report", str(tmp_path)])
    finally:
        cov.stop()
    assert status in (0, 1)
    verdicts = measure.exercised_verdicts(view.load(tmp_path))
    assert verdicts[entry]["status"] == "pass" and verdicts[entry]["cases_changed"] >= 1
    doc = measure.analyse(cov, resolve_catalogs(["misc"]), verdicts)
    row = next(e for e in doc["entries"] if e["name"] == entry)
    assert row["modules"] and row["modules"][0].endswith("permute_memory_formats_pass")
    assert 0 < row["covered_branches"] <= row["branches"] and 0 < row["executed"] <= row["statements"]
    assert row["exercised"]["status"] == "pass"
    misc = doc["by_catalog"]["misc"]
    assert misc["entries"] == 6 and misc["not_run"] == 5 and misc["not_exercised"] == 0
    assert doc["total"]["branches"] >= row["branches"] and "branches" in render(doc)

    path = tmp_path / JSON_FILE
    path.write_text(json.dumps(doc))
    assert main(["passes", "--catalog", "misc", "--coverage", str(path)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if entry in x)
    assert f"exercised {row['exercised']['cases_changed']}/{row['exercised']['ran']}, branches " in line
    assert main(["passes", "--coverage", str(tmp_path / "missing.json")]) == 2


def test_not_exercised_entries_carry_the_catalogs_reason():
    """An entry no graph can exercise says why (its known `exercised` failure) in the coverage document and
    its Markdown; one without a reason is counted apart, as what the corpus still lacks."""
    from harness.catalog import entry, known
    from harness.cli.pass_coverage import render
    from harness.run import pass_coverage as measure

    why = entry("demo", "executorch.exir.passes.debug_pass:DebugPass",
                known=(known("exercised", "prints the graph, changes nothing", "exir/passes/debug_pass.py",
                             kind="by-design"),))
    missing = entry("demo", "executorch.exir.passes.cse_pass:CSEPass")
    assert measure.why_not_exercised(why) == {"kind": "by-design", "reason": "prints the graph, changes nothing",
                                              "upstream": "exir/passes/debug_pass.py"}
    assert measure.why_not_exercised(missing) is None
    fail = {"status": "fail", "cases_changed": 0, "ran": 3, "message": "no case changed the program"}
    rows = [measure.EntryCoverage(e.name, "demo", [], measure.CoverageCounts(), fail, measure.why_not_exercised(e))
            for e in (why, missing)]
    group = measure._group(rows, {}, lambda name: True)
    assert group["not_exercised"] == 2 and group["not_exercised_unexplained"] == ["demo.CSEPass"]
    doc = {"total": group, "by_catalog": {"demo": group}, "entries": [r.to_json() for r in rows], "modules": []}
    text = render(doc)
    assert "(1 without a reason)" in text
    assert "- `demo.DebugPass`: by-design: prints the graph, changes nothing (exir/passes/debug_pass.py)" in text
    assert "- `demo.CSEPass`: no reason recorded" in text


def test_a_meta_key_set_to_none_counts_as_absent():
    """A retrace sets meta['val'] = None on ops that return nothing (_assert_tensor_metadata): no change a check
    could flag, so it must not make a pass 'exercised'; a real value in a new key is a change."""
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) + 1

    ep = torch.export.export(M(), (torch.randn(2, 3),))
    before = exercised.meta_form(ep)
    node = next(n for n in ep.graph.nodes if n.op == "call_function")
    node.meta["debug_handle"] = None
    assert exercised.meta_form(ep) == before
    node.meta["debug_handle"] = 7
    assert exercised.meta_form(ep) != before


def test_an_entry_run_after_prerequisites_is_judged_on_its_own_changes():
    """``Build(after=...)`` runs prerequisites first (SpecPropPass gives every node meta['spec']): what they
    change is not the entry's doing. An entry that changes nothing after them is not exercised; one that
    changes what they left is, with its own change recorded."""
    from harness.catalog import Build, entry
    from harness.check.runner import check_pass_on_case
    from harness.graphs import sources
    from harness.graphs.cases import load_case

    spec_prop = "harness.pipelines.pipeline:SpecPropWithPlaceholders"
    case = load_case(sources.select(["mlp"])[0])

    def changed(spec: str, how: str) -> dict:
        loaded = entry("demo", spec, stage="edge", build=Build(how, after=(spec_prop,))).loaded()
        return _runs(check_pass_on_case(loaded, case), "mlp").details

    # nothing is dead in mlp: dead-code elimination after SpecPropPass changes nothing
    nothing = changed("executorch.exir.passes:dead_code_elimination_pass", "graph_function")
    assert nothing["changed"] == {"ops": False, "structure": False, "metadata": False}
    assert nothing["ops_changed"] == {} and nothing["change_signature"] == "unchanged"
    # external_constants_pass tags the constants SpecPropPass marked const: a metadata change of its own
    tags = changed("executorch.exir.passes.external_constants_pass:external_constants_pass", "graph_function")
    assert tags["changed"] == {"ops": False, "structure": False, "metadata": True}
    # SpecPropPass as the entry itself: its meta['spec'] is its change
    alone = _runs(check_pass(spec_prop, ["mlp"]), "mlp").details
    assert alone["changed"]["metadata"] is True


def test_an_entry_built_from_the_program_is_built_from_what_its_prerequisites_made(passes_file, monkeypatch):
    """With ``after=``, a pass built from the program (``Build("program")``) gets the program its own step is
    handed, not the one before the prerequisites (it once read the latter: state, signature, meta of another
    program than the one it rewrote)."""
    from harness.catalog import Build, entry
    from harness.check.runner import check_pass_on_case
    from harness.graphs import sources
    from harness.graphs.cases import load_case

    monkeypatch.syspath_prepend(str(Path(passes_file).parent))  # a catalog SPEC is module:attr
    case = load_case(sources.select(["mlp"])[0])
    loaded = entry("demo", f"{Path(passes_file).stem}:ReadsItsProgram", stage="edge",
                   build=Build("program", after=("harness.pipelines.pipeline:SpecPropWithPlaceholders",))).loaded()
    runs = _runs(check_pass_on_case(loaded, case), "mlp")
    assert runs.status is Status.PASS, runs.message
    assert runs.details["changed"]["metadata"] is True


def test_an_entry_that_edits_the_prerequisites_tensor_specs_in_place_is_exercised(passgate_cache):
    """HintBasedSymShapeEvalPass rewrites ``spec.shape`` of the TensorSpecs SpecPropPass made, in place. A deep
    copy of the program would share those TensorSpecs (torch.fx copies node.meta shallowly) and read as
    unchanged; the forms taken before the entry's step see the symbolic batch made concrete."""
    from test_shape_env import SPEC as DYNAMIC

    from harness.catalog import Build, entry
    from harness.check.runner import check_pass_on_case
    from harness.graphs import sources
    from harness.graphs.cases import load_case

    spec_prop = "harness.pipelines.pipeline:SpecPropWithPlaceholders"
    loaded = entry("demo", "executorch.exir.passes.sym_shape_eval_pass:HintBasedSymShapeEvalPass", stage="edge",
                   build=Build(after=(spec_prop,))).loaded()
    dynamic = _runs(check_pass_on_case(loaded, load_case(DYNAMIC)), DYNAMIC.name).details
    assert dynamic["changed"] == {"ops": False, "structure": False, "metadata": True}
    static = _runs(check_pass_on_case(loaded, load_case(sources.select(["mlp"])[0])), "mlp").details
    assert static["changed"]["metadata"] is False  # nothing symbolic to evaluate


def test_a_change_inside_a_tensor_spec_is_a_metadata_change():
    """Memory planning and symbolic-shape evaluation change fields of meta['spec'] (TensorSpec), not its type."""
    import torch
    from executorch.exir.tensor import TensorSpec

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) + 1

    ep = torch.export.export(M(), (torch.randn(2, 3),))
    node = next(n for n in ep.graph.nodes if n.op == "call_function")
    node.meta["spec"] = TensorSpec.from_tensor(torch.zeros(2, 3))
    before = exercised.meta_form(ep)
    node.meta["spec"].mem_offset = 64
    assert exercised.meta_form(ep) != before


def test_the_layout_of_a_non_contiguous_state_tensor_is_part_of_the_fingerprint():
    """convert_constant_dim_order_pass changes only how a constant is laid out (a transposed buffer made
    contiguous or channels-last): the same values in another layout are another program."""
    import torch

    from harness.check.fingerprint import tensor_digest

    t = torch.arange(12.0).reshape(3, 4).t()
    assert tensor_digest(t) != tensor_digest(t.contiguous())
    assert tensor_digest(t.contiguous()) == tensor_digest(t.clone(memory_format=torch.contiguous_format))
    assert "@" not in tensor_digest(t.contiguous())  # contiguous tensors keep the digest they always had


def test_the_joint_program_exercises_the_training_only_passes(passgate_cache):
    """weights_to_outputs_pass and external_mutable_weights_pass act only on a joint forward-backward program
    (GRADIENT_TO_PARAMETER outputs): the hand-written targeted_exir_joint corpus graph is one, mlp is not."""
    from harness.catalog.registry import load_catalogs
    from harness.check.runner import check_pass_on_case
    from harness.graphs import sources
    from harness.graphs.cases import load_case

    exir = {e.name: e for e in load_catalogs()["exir"].entries}
    joint, mlp = (load_case(sources.select([name])[0]) for name in ("targeted_exir_joint", "mlp"))
    for name, kind in (("exir.weights_to_outputs_pass", "structure"), ("exir.external_mutable_weights_pass", "metadata")):
        loaded = exir[name].loaded()
        assert _runs(check_pass_on_case(loaded, joint), joint.name).details["changed"][kind] is True, name
        assert not any(_runs(check_pass_on_case(loaded, mlp), "mlp").details["changed"].values()), name


def test_pass_coverage_in_parts_measures_what_one_process_measures(tmp_path):
    """``-j 2``: two shard processes, their coverage data combined and their results merged, give the same
    lines, branches and exercised verdicts as one process."""
    import subprocess
    import sys

    from harness.cli import pass_coverage

    docs = {}
    for jobs in (1, 2):
        # each from a new process, as the command is run: in this one, other tests have imported the pass
        # modules already, and their module-level lines ran before any measurement started
        report = tmp_path / f"j{jobs}"
        done = subprocess.run([sys.executable, "-m", "harness.cli.pass_coverage", "--catalog", "misc", "--graphs",
                               "conv_bn_relu", "mlp", "--report", str(report), "-j", str(jobs)], capture_output=True)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        docs[jobs] = json.loads((report / pass_coverage.JSON_FILE).read_text())
    one, two = docs[1], docs[2]
    assert one["total"] == two["total"] and one["total"]["covered_branches"] > 0
    assert [(e["name"], e["covered_branches"], e["exercised"]) for e in one["entries"]] == \
        [(e["name"], e["covered_branches"], e["exercised"]) for e in two["entries"]]


def test_pass_coverage_joined_to_an_earlier_measurement_is_the_union(tmp_path):
    """``--join``: measuring a second graph alone and joining the measurement of the first gives the lines and
    branches of measuring both at once (at least: a run of both shares in-process state the parts do not), and
    the same exercised verdicts; a folder with no measurement in it is one line and exit 2."""
    import subprocess
    import sys

    from harness.cli import pass_coverage

    def measure(report, *args):
        done = subprocess.run([sys.executable, "-m", "harness.cli.pass_coverage", "--catalog", "misc",
                               "--report", str(tmp_path / report), *args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads((tmp_path / report / pass_coverage.JSON_FILE).read_text())

    both = measure("both", "--graphs", "conv_bn_relu", "mlp", "-j", "2")
    first = measure("first", "--graphs", "mlp", "-j", "2")
    joined = measure("joined", "--graphs", "conv_bn_relu", "--join", str(tmp_path / "first"))
    assert joined["joined"] == [str(tmp_path / "first")]
    assert joined["total"]["covered_branches"] >= both["total"]["covered_branches"] > first["total"]["covered_branches"]
    assert joined["total"]["branches"] == both["total"]["branches"]
    assert [(e["name"], (e["exercised"] or {}).get("status")) for e in joined["entries"]] == \
        [(e["name"], (e["exercised"] or {}).get("status")) for e in both["entries"]]
    # --no-measure: the union of earlier measurements alone (here the first within both: both's figures)
    union = measure("union", "--no-measure", "--join", str(tmp_path / "first"), str(tmp_path / "both"))
    assert union["total"]["covered_branches"] == both["total"]["covered_branches"]
    assert [(e["name"], (e["exercised"] or {}).get("status")) for e in union["entries"]] == \
        [(e["name"], (e["exercised"] or {}).get("status")) for e in both["entries"]]
    bad = subprocess.run([sys.executable, "-m", "harness.cli.pass_coverage", "--join", str(tmp_path / "nothing")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1].startswith("passgate: error: --join")
    alone = subprocess.run([sys.executable, "-m", "harness.cli.pass_coverage", "--no-measure"], capture_output=True,
                           text=True)
    assert alone.returncode == 2 and "--no-measure needs --join" in alone.stderr
