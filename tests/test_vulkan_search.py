"""The Vulkan fusion search: real quantization, real ExecuTorch fusion passes, vendor fusions wrong in one region.

Each vendor fusion (``tests/data/vulkan_vendor_passes.py``) wraps
ExecuTorch's FusePatternsPass and corrupts its result in one region of an
op's configuration space only; the search, with its default budget, must
find that region and shrink the failure into it. A control judges the
shrunk case under a fusion without the corruption: the check holds there, so
the search found the vendor's defect, not one it shares with upstream.
"""

from __future__ import annotations

import csv
import json
import runpy
import time
from pathlib import Path

import pytest

from harness.check.loading import load_pass
from vulkan.backend import fusion
from vulkan.cases import flows
from vulkan.cases.recipes import FUSE_PATTERNS
from vulkan.entry.search_run import DEFAULT_BUDGET
from vulkan.reports.search_report import CSV_COLUMNS
from vulkan.search import boundary, op_search, space, spaces
from vulkan.search.evaluate import evaluate
from vulkan.search.space import CaseDesc, freeze

VENDOR = Path(__file__).parent / "data" / "vulkan_vendor_passes.py"


def vendor(name: str) -> fusion.Fusion:
    return fusion.UserFusion(load_pass(f"{VENDOR}:{name}"))


@pytest.fixture(scope="module", autouse=True)
def fast_patterns():
    with fusion.pattern_graphs_memoized(), flows.quantizer_patterns_memoized():
        yield


def _search(op: str, fuse) -> tuple[op_search.OpSearch, float]:
    started = time.perf_counter()
    result = op_search.search_op(spaces.space(op), fuse, seed=0, budget_s=DEFAULT_BUDGET)
    assert not result.error, result.error
    return result, time.perf_counter() - started


def _defect(result, trait: str):
    found = [d for d in result.defects if trait in d.traits]
    assert found, [(d.check, space.describe(d.case), d.boundary) for d in result.defects]
    return found[0]


def _holds_without_the_corruption(defect, fuse) -> None:
    out = evaluate(defect.case, fuse, use_cache=False)
    assert out.statuses[defect.check] not in ("fail", "error"), out.messages[defect.check]


def test_vendor_wrong_for_asymmetric_weights_is_shrunk_to_an_asymmetric_case():
    result, seconds = _search("et_vk.embedding_q4gsw", vendor("AsymmetricWeightsWrong"))
    d = _defect(result, "asymmetric weights")
    assert d.case.weight == "asym" and d.check == "fused_vs_qdq", space.describe(d.case)
    assert d.boundary.startswith("fails when asymmetric weights"), d.boundary
    assert d.case.shape_dict()["dim"] <= 32 and d.case.shape_dict()["vocab"] <= 4  # shrunk, not the first draw
    assert any(p.weight == "sym" and s == "pass" for p, s in d.probes)
    _holds_without_the_corruption(d, fusion.builtin(FUSE_PATTERNS))
    print(f"asymmetric weights: {len(result.draws)} draws, {seconds:.0f} s")


def test_vendor_wrong_when_output_channels_not_a_multiple_of_4_is_shrunk_to_such_a_case():
    result, seconds = _search("et_vk.q8ta_conv2d_pw", vendor("OutputChannelsWrong"))
    d = _defect(result, "output channels % 4 != 0")
    s = d.case.shape_dict()
    assert s["C_out"] % 4 != 0 and s["C_out"] < 4 and d.check == "fused_vs_qdq", space.describe(d.case)
    assert "output channels % 4 != 0" in d.boundary
    assert any(p.shape_dict()["C_out"] % 4 == 0 and st == "pass" for p, st in d.probes)
    _holds_without_the_corruption(d, fusion.builtin(FUSE_PATTERNS))
    print(f"output channels % 4: {len(result.draws)} draws, {seconds:.0f} s")


def test_vendor_ignoring_the_alpha_keyword_is_found_and_shrunk_from_the_command_line(tmp_path):
    from harness.cli.main import main

    started = time.perf_counter()
    status = main(["vulkan", "--pass", f"{VENDOR}:IgnoresAlpha", "--ops", "q8ta_add", "--report", str(tmp_path),
                   "--quiet"])
    seconds = time.perf_counter() - started
    assert status == 1
    doc = json.loads((tmp_path / "results.json").read_text())
    table = doc["vulkan"]["search"]["tables"]["IgnoresAlpha"]
    defects = [d for row in table for d in row["defects"] if "alpha != 1" in d["traits"]]
    assert defects, [(d["check"], d["config"], d["boundary"]) for row in table for d in row["defects"]]
    d = defects[0]
    assert d["case"]["alpha"] not in (None, 1.0) and d["check"] == "fused_vs_qdq"
    assert d["case"]["shape"]["shape"] == [1, 1, 1, 1]  # shrunk to one element
    # The reproducer is standalone and exits 1 while the failure reproduces.
    repro = tmp_path / d["repro"]
    with pytest.raises(SystemExit) as exit_:
        runpy.run_path(str(repro), run_name="__main__")
    assert exit_.value.code == 1
    # The same fusion with the keyword carried over holds on the shrunk case.
    _holds_without_the_corruption(op_search.Defect("et_vk.q8ta_add", d["check"], None, space.from_json(d["case"]),
                                                None), vendor("FixedAlphaFusion"))
    _check_csv(tmp_path / "vulkan_errors.csv", doc)
    print(f"alpha keyword: {seconds:.0f} s")


def _check_csv(path: Path, doc: dict) -> None:
    """Header row, then exactly one row per op x configuration x comparison."""
    with path.open(newline="") as f:
        header = next(csv.reader(f))
    assert header == CSV_COLUMNS
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    keys = [(r["Op"], r["Configuration"], r["Comparison"]) for r in rows]
    assert len(keys) == len(set(keys)) and rows
    configs = {(op, c) for op, c, _ in keys}
    assert set(keys) == {(op, c, cmp) for op, c in configs for cmp in ("fused_vs_qdq", "fused_vs_float")}
    table = doc["vulkan"]["search"]["tables"]["IgnoresAlpha"]
    assert {(row["op"], c) for row in table for c in row["configurations"]} <= configs
    judged = {(r["Op"], r["Configuration"]) for r in rows if r["Cases"] and int(r["Elements"] or 0)}
    assert judged, rows
    for r in rows:
        assert r["Test ID"] == f"{r['Op']}[{r['Configuration']}]/{r['Comparison']}" and r["Result"] in ("Pass", "Fail")
        if int(r["Elements"]):
            assert float(r["Output 0 Error Max"]) >= float(r["Output 0 Error MAE"]) >= 0.0


def test_draws_are_deterministic_for_a_seed():
    sp = spaces.space("et_vk.q8ta_relu")
    fuse = fusion.builtin(FUSE_PATTERNS)
    runs = [op_search.search_op(sp, fuse, seed=s, examples=3, probe=False) for s in (0, 0, 1)]
    descs = [[o.desc for o in r.draws] for r in runs]
    assert descs[0] == descs[1] and descs[0] != descs[2]


def test_boundary_is_the_traits_that_separate_failing_from_passing_probes():
    base = CaseDesc("et_vk.q8ta_conv2d", "xnnpack", weight="sym", granularity="per_channel", act="static",
                    shape=freeze({"C_in": 2, "C_out": 6, "groups": 2, "k": 3, "stride": 1, "padding": 1,
                                  "dilation": 2, "H": 5, "W": 5}))
    passing = [base.with_shape(dilation=1), base.with_shape(groups=1, C_in=1, C_out=3)]
    failing = [base, base.with_shape(C_out=8, C_in=4)]
    traits, text = boundary.explain(failing, passing)
    assert set(traits) == {"groups > 1", "dilation > 1"}
    assert text.startswith("fails when ") and "; passes otherwise" in text
    assert boundary.explains(traits, base.with_shape(H=7)) and not boundary.explains(traits, passing[0])


def test_every_space_draws_cases_its_builders_accept_and_probes_stay_in_the_space():
    from hypothesis import HealthCheck, Phase, given, settings

    def last_draw(sp):
        drawn = []

        @settings(max_examples=3, database=None, phases=[Phase.generate], deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(sp.strategy(0))
        def draw(desc):
            drawn.append(desc)

        draw()
        return drawn[-1]

    for sp in spaces.select():
        d = last_draw(sp)
        assert d.op == sp.name and spaces.desc_case(d).spec.name.startswith("vulkan/search:")
        for p in boundary.probes(sp, d):
            assert boundary.consistent(sp, p) and p != d


def test_the_standard_profile_keeps_its_committed_cases_and_unit_names():
    from vulkan.cases import catalog, recipes
    from vulkan.entry import unit
    from vulkan.search import pinned

    drawn = [recipes.cases(r, 1, 0)[0] for r in catalog.RECIPES]
    assert [c.name for c in pinned.standard_cases()] == [c.name for c in drawn]

    class Standard:
        vulkan_count = 1

    names = [(u.name, u.graph) for u in unit.units(Standard(), 0) if not isinstance(u, unit.ShrunkUnit)]
    assert len(names) == 2 * len(catalog.RECIPES)
    assert names[0] == ("vulkan-preprocess", "vulkan/linear_q4gsw[torchao-int4-sym]/G4-K4-N1-lead1/s0")


def test_memoized_pattern_graphs_give_the_same_quantized_and_fused_programs():
    from vulkan.cases import lowering
    from vulkan.search.evaluate import evaluate as judge

    d = CaseDesc("et_vk.q8ta_conv2d_pw", "xnnpack", weight="sym", granularity="per_channel", act="static",
                 shape=freeze({"C_in": 3, "C_out": 5, "k": 1, "stride": 1, "padding": 0, "dilation": 1,
                               "groups": 1, "H": 3, "W": 4}), seed=11)
    case = spaces.desc_case(d)
    with flows.quantizer_patterns_memoized():
        memo = lowering.build_exported(case.spec)[1]
    plain = _unmemoized(lambda: lowering.build_exported(case.spec)[1])
    assert str(memo.graph_module.code) == str(plain.graph_module.code)
    fused = judge(d, fusion.builtin(FUSE_PATTERNS), use_cache=False)
    again = _unmemoized(lambda: judge(d, fusion.builtin(FUSE_PATTERNS), use_cache=False))
    assert fused.statuses == again.statuses and fused.fused == again.fused == 1


def _unmemoized(fn):
    """Run ``fn`` with the registry's and the quantizer's own functions (the module fixture memoizes them)."""
    from executorch.backends.vulkan.patterns.pattern_registry import fusable_patterns
    from executorch.backends.xnnpack.quantizer import xnnpack_quantizer_utils as utils

    saved = {k: e.get_graphs_fn for k, e in fusable_patterns.items()}
    saved_q = utils._get_aten_graph_module_for_pattern
    try:
        for e in fusable_patterns.values():
            e.get_graphs_fn = getattr(e.get_graphs_fn, "__wrapped__", e.get_graphs_fn)
        utils._get_aten_graph_module_for_pattern = getattr(saved_q, "__wrapped__", saved_q)
        return fn()
    finally:
        for k, fn_ in saved.items():
            fusable_patterns[k].get_graphs_fn = fn_
        utils._get_aten_graph_module_for_pattern = saved_q


FIXTURE = Path(__file__).parent.parent / "fixtures" / "vulkan_cases" / "executorch-1.5.1.json"


def test_committed_shrunk_cases_are_in_their_spaces_and_replay(tmp_path):
    """The shrunk failures a search found on executorch 1.5.1, replayed: each still fails its check."""
    from harness.cli.main import main
    from vulkan.search.pinned import load_cases

    cases = load_cases(FIXTURE)
    assert cases
    for d in cases:
        assert boundary.consistent(spaces.space(d.op), d), space.describe(d)
    entries = json.loads(FIXTURE.read_text())["cases"]
    wanted = [e for e in entries if e["op"] == "et_vk.embedding_q4gsw" and e["fusion"] == FUSE_PATTERNS]
    assert wanted
    status = main(["vulkan", "--replay", str(FIXTURE), "--ops", "embedding_q4gsw", "--mode", FUSE_PATTERNS,
                   "--report", str(tmp_path), "--quiet"])
    doc = json.loads((tmp_path / "results.json").read_text())
    by = {(r["graph"], r["check"]): r["status"] for r in doc["results"]}
    for e in wanted:
        name = spaces.desc_case(space.from_json(e["case"])).name
        assert by[(name, e["check"])] == "fail", (name, e["check"])
    assert status == 1
