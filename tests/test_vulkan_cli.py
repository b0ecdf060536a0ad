"""``passgate vulkan`` end to end, through the harness's CLI entry point."""

from __future__ import annotations

import json

import pytest


@pytest.fixture()
def main():
    from harness.cli.main import main as cli

    return cli


def test_list_and_usage_errors(main, capsys, tmp_path):
    assert main(["vulkan", "--list", "--ops", "q8ta_conv2d"]) == 0
    out = capsys.readouterr().out
    assert "q8ta_conv2d_dw[xnnpack]" in out and "linear_q4gsw" not in out
    assert main(["vulkan", "--ops", "no_such_op", "--report", str(tmp_path)]) == 2
    assert "no recipe matches" in capsys.readouterr().err
    assert main(["vulkan", "--count", "0"]) == 2
    assert main(["vulkan", "--executor", "nowhere.py:X", "--ops", "q8ta_relu", "--report", str(tmp_path)]) == 2


def test_run_writes_results_and_table(main, tmp_path, capsys):
    status = main(["vulkan", "--ops", "q8ta_relu", "--count", "1", "--mode", "fuse-patterns", "--report",
                   str(tmp_path)])
    doc = json.loads((tmp_path / "results.json").read_text())
    by = {r["check"]: r["status"] for r in doc["results"]}
    assert by["fusion_expected"] == "pass" and by["fused_vs_qdq"] == "pass" and by["fused_vs_float"] == "pass"
    assert by["device_vs_reference"] == "skip"
    # ExecuTorch 1.5.1's fused nodes carry no stack_trace / nn_module_stack: a must-level violation.
    assert by["meta_stack_trace"] == "fail" and status == 1
    row = doc["vulkan"]["table"][0]
    assert row["op"] == "et_vk.q8ta_relu" and row["cases"] == 1 and row["fused"] == 1
    assert "| et_vk.q8ta_relu |" in (tmp_path / "vulkan_table.md").read_text()
    assert "## fuse-patterns" in capsys.readouterr().out


def test_crashing_decline_fails_the_run(main, tmp_path):
    assert main(["vulkan", "--ops", "decline:conv2d_dw", "--count", "1", "--mode", "fuse-patterns", "--quiet",
                 "--report", str(tmp_path)]) == 1
    doc = json.loads((tmp_path / "results.json").read_text())
    fe = next(r for r in doc["results"] if r["check"] == "fusion_expected")
    assert fe["status"] == "fail" and "must decline it, not crash" in fe["message"]
