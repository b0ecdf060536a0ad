"""`passgate vulkan --bundles DIR`: the search's passing cases as BundledPrograms, and which cases those are.

End to end on one real drawn case (q8ta_add under FusePatternsPass): the
search, its VulkanPartitioner bundle (written and indexed; no Vulkan runtime
here, so `device run` skips it) and its portable bundle, which the runtime
here runs and `device ingest` judges.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.report import bundles as bx
from harness.run.bundle import file_stem
from vulkan.reports import bundles
from vulkan.search import op_search, spaces
from vulkan.search.evaluate import Outcome
from vulkan.search.op_search import OpSearch


@pytest.fixture(scope="module")
def searched(tmp_path_factory) -> tuple[Path, Path, int]:
    root = tmp_path_factory.mktemp("vk-bundles")
    report, out = root / "report", root / "bundles"
    status = main(["vulkan", "--ops", "q8ta_add", "--mode", "fuse-patterns", "--examples", "1", "-j", "1",
                   "--report", str(report), "--bundles", str(out), "--bundle-backends", "vulkan", "portable", "-q"])
    return report, out, status


def test_passing_searched_cases_are_bundled_for_the_vulkan_partitioner_and_run_here_on_portable(searched, tmp_path):
    report, out, _ = searched
    doc = json.loads((report / "results.json").read_text())
    drawn = {r["graph"] for r in doc["results"]}
    index = bx.load_index(out)
    assert index.complete and index.profile == bundles.PROFILE and not index.skipped
    assert {(e.case, e.backend) for e in index.entries} == {(c, b) for c in drawn for b in ("vulkan", "portable")}
    assert doc["vulkan"]["search"]["bundles"]["bundles"] == 2 and doc["vulkan"]["search"]["bundles"]["complete"]
    vk = next(e for e in index.entries if e.backend == "vulkan")
    assert vk.runtime_backend == "VulkanBackend" and b"VulkanBackend" in (out / vk.file).read_bytes()
    assert "/" not in vk.file and vk.file == f"{file_stem(vk.case)}.vulkan.bpte"
    assert main(["device", "run", "--bundles", str(out), "-q"]) == 0
    assert main(["device", "ingest", "--bundles", str(out), "--report", str(tmp_path / "r"), "-q"]) == 0
    verdicts = {r["pass_name"]: r for r in json.loads((tmp_path / "r" / "results.json").read_text())["results"]}
    assert verdicts["device.portable"]["status"] == "pass", verdicts["device.portable"]["message"]
    assert verdicts["device.vulkan"]["status"] == "skip" and "VulkanBackend" in verdicts["device.vulkan"]["message"]


def _outcome(desc, statuses: dict) -> Outcome:
    return Outcome(desc, "f", ("et_vk.q8ta_add",), statuses=statuses)


def test_a_case_is_bundled_only_when_every_fusion_that_judged_it_passes_and_once_per_configuration():
    first, second = op_search.draws(spaces.space("et_vk.q8ta_add"), 0, 6)[:2]
    ok = {"fusion_expected": "pass", "fused_vs_qdq": "pass", "fused_vs_float": "pass", "meta_stack_trace": "fail"}

    def op(*outcomes) -> OpSearch:
        return OpSearch("et_vk.q8ta_add", draws=list(outcomes))

    # an IR failure does not keep a case from a device: it judges metadata, not what the device computes
    assert bundles.passing_cases({"x": [op(_outcome(first, ok))]}) == [first]
    failing = op(_outcome(first, {**ok, "fused_vs_qdq": "fail"}))
    assert bundles.passing_cases({"x": [op(_outcome(first, ok))], "y": [failing]}) == []
    declined = op(_outcome(first, {**ok, "fusion_expected": "not_applicable"}))
    assert bundles.passing_cases({"x": [declined]}) == []
    same_config = second.config_id() == first.config_id()
    both = bundles.passing_cases({"x": [op(_outcome(first, ok), _outcome(second, ok))]})
    assert both == ([first] if same_config else [first, second])
