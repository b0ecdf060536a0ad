"""`passgate vulkan`'s search judges the IR checks of the fused program that a `--count` recipe run judges.

Two vendor fusions (``tests/data/vulkan_vendor_passes.py``) built on
ExecuTorch's real FusePatternsPass: one gives its fused nodes their source
metadata, the other does the same and then drops ``stack_trace`` from the
fused ``et_vk`` node. Their numbers are the same; only the IR check can tell
them apart, and the default search mode must, by the check's id.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main

VENDOR = Path(__file__).parent / "data" / "vulkan_vendor_passes.py"
OP = "q8ta_add"


def _search(report: Path, name: str) -> tuple[int, dict, Path]:
    status = main(["vulkan", "--pass", f"{VENDOR}:{name}", "--ops", OP, "--examples", "2", "-j", "1",
                   "--report", str(report), "--quiet"])
    return status, json.loads((report / "results.json").read_text()), report


@pytest.fixture(scope="module")
def searched(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("vk-ir")
    return {name: _search(root / name, name) for name in ("CarriesFusedMeta", "DropsFusedStackTrace")}


def _by_case(doc: dict, check: str) -> dict:
    return {r["graph"]: r for r in doc["results"] if r["check"] == check}


def test_search_records_the_recipe_runs_ir_check_ids(searched):
    from vulkan.judging.ircheck import IR_CHECKS_ON_FUSED
    from vulkan.judging.suite import ALL_CHECKS

    for _status, doc, _report in searched.values():
        checks = {r["check"] for r in doc["results"]}
        assert set(IR_CHECKS_ON_FUSED) <= checks and set(IR_CHECKS_ON_FUSED) <= set(ALL_CHECKS)
        cases = {r["graph"] for r in doc["results"]}
        for check in IR_CHECKS_ON_FUSED:  # on every drawn case, not only on a shrunk failure
            assert set(_by_case(doc, check)) == cases, check


def test_metadata_dropped_on_the_fused_node_is_caught_by_its_check_id(searched):
    _, kept, _ = searched["CarriesFusedMeta"]
    status, dropped, report = searched["DropsFusedStackTrace"]
    assert status == 1
    good, bad = _by_case(kept, "meta_stack_trace"), _by_case(dropped, "meta_stack_trace")
    assert set(good) == set(bad) and good
    for case, r in bad.items():
        assert good[case]["status"] == "pass", good[case]["message"]
        assert r["status"] == "fail" and "et_vk_q8ta_add" in r["message"] and "stack_trace" in r["message"]
        assert r["details"]["op"] == "et_vk.q8ta_add" and r["details"]["new_without"]
    # the numbers are the same: only the IR check tells the two fusions apart
    for check in ("fusion_expected", "fused_vs_qdq", "fused_vs_float", "meta_nn_module_stack", "meta_val"):
        assert {c: r["status"] for c, r in _by_case(kept, check).items()} == \
            {c: r["status"] for c, r in _by_case(dropped, check).items()}, check
    [row] = dropped["vulkan"]["search"]["tables"]["DropsFusedStackTrace"]
    assert row["ir_failures"]["meta_stack_trace"] == row["draws"] == len(bad)
    [row] = kept["vulkan"]["search"]["tables"]["CarriesFusedMeta"]
    assert "meta_stack_trace" not in row["ir_failures"]
    assert f"`meta_stack_trace` on {len(bad)}/{len(bad)} draws" in (report / "vulkan_table.md").read_text()
