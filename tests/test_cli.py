"""`passgate check` end to end: exit statuses, the table, results.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from harness.cli.main import main

RELU = "passes.reference:ReplaceInPlaceReluWithOutOfPlaceReluPass"


def test_check_clean_pass_exits_0_and_writes_results(tmp_path, capsys):
    status = main(["check", "--stage", "export", "--pass", RELU, "--report", str(tmp_path), "--graphs", "mlp", "inplace_views"])
    out = capsys.readouterr()
    assert status == 0
    assert "inplace_views" in out.out and "relu_.default" in out.out
    assert "[2/2]" in out.err  # progress lines
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["schema_version"] and doc["complete"] is True and doc["exit_status"] == 0
    assert doc["environment"]["torch"].startswith("2.13.0") and doc["environment"]["executorch"] == "1.5.1"
    assert doc["configuration"]["seed"] == 0 and doc["configuration"]["passes"][0]["stage"] == "export"
    assert {r["graph"] for r in doc["results"]} == {"mlp", "inplace_views", "*"}  # "*": the pass-level exercised
    assert len(doc["results"]) == 2 * 16 + 1
    record = doc["results"][0]
    assert set(record) >= {"pass_name", "graph", "check", "status", "level", "message", "details", "duration_s"}
    assert doc["summary"]["violations"] == 0


def test_check_broken_pass_exits_1_naming_the_check(tmp_path, capsys):
    spec = f"{os.path.dirname(__file__)}/broken_passes.py:MoveIntoSubmodule"
    status = main(["check", "--pass", spec, "--report", str(tmp_path), "--graphs", "conv_bn_relu"])
    assert status == 1
    assert "no_call_module" in capsys.readouterr().out


def test_should_level_failure_fails_only_with_strict(tmp_path):
    spec = f"{os.path.dirname(__file__)}/broken_passes.py:NeverFixedPoint"
    args = ["check", "--pass", spec, "--report", str(tmp_path), "--graphs", "mlp", "-q"]
    assert main(args) == 0
    assert main(args + ["--strict"]) == 1


def test_checks_must_judges_the_must_checks_only(tmp_path):
    """--checks must (the edit-loop setting): a should-level failure is not judged, a must-level one still is."""
    spec = f"{os.path.dirname(__file__)}/broken_passes.py:NeverFixedPoint"
    args = ["check", "--pass", spec, "--report", str(tmp_path), "--graphs", "mlp", "-q", "--strict"]
    assert main(args + ["--checks", "must"]) == 0  # its only fault is idempotent, left out
    doc = json.loads((tmp_path / "results.json").read_text())
    judged = {r["check"] for r in doc["results"]}
    assert "idempotent" not in judged and "deterministic" not in judged and {"runs", "numerics"} <= judged
    assert all(r["level"] == "must" for r in doc["results"])
    assert doc["configuration"]["checks"] == sorted(judged)
    assert main(args + ["--checks", "idempotent"]) == 1
    assert {r["check"] for r in json.loads((tmp_path / "results.json").read_text())["results"]} == {"runs", "idempotent"}
    moved = f"{os.path.dirname(__file__)}/broken_passes.py:MoveIntoSubmodule"
    assert main(["check", "--pass", moved, "--report", str(tmp_path), "--graphs", "conv_bn_relu", "-q",
                 "--checks", "must"]) == 1


def test_bad_usage_exits_2_with_one_line(tmp_path, capsys):
    assert main(["check", "--pass", "nope_module:X", "--report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["passgate: error: pass module not found: nope_module"]
    assert main(["check", "--pass", RELU, "--graphs", "no_such_graph", "--report", str(tmp_path)]) == 2
    assert "unknown graph 'no_such_graph'" in capsys.readouterr().err
    assert main(["check", "--pass", RELU, "--timeout", "0"]) == 2
    assert main(["check", "--bogus-option"]) == 2


def test_console_script_help_and_run(tmp_path):
    """The installed `passgate` script, as a user runs it: fast --help, a real check."""
    exe = os.path.join(os.path.dirname(sys.executable), "passgate")
    help_out = subprocess.run([exe, "check", "--help"], capture_output=True, text=True, timeout=60)
    assert help_out.returncode == 0 and "--pass SPEC" in help_out.stdout
    run = subprocess.run([exe, "check", "--pass", RELU, "--stage", "export", "--graphs", "inplace_views",
                          "--report", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    # console() leaves by os._exit after the exit handlers: the status and the last lines still come through
    assert run.stdout.rstrip().splitlines()[-1].startswith("passgate: report: ")
    bad = subprocess.run([exe, "check", "--pass", RELU, "--graphs", "no_such_graph", "--report", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown graph 'no_such_graph'" in bad.stderr
    # a reader gone before the run says anything (`| true` exits at once; `| head -1` does it after a line):
    # the reports are written, the text ends, no traceback about the pipe, exit 1
    # (unbuffered, so the first print meets the closed pipe, as a terminal-like stream does; buffered output
    # meets it at exit, in console()'s flush, which says nothing either and keeps the run's status)
    piped = subprocess.run(f"'{exe}' check --pass {RELU} --stage export --graphs inplace_views --report "
                           f"'{tmp_path / 'piped'}' | true; echo $? ${{PIPESTATUS[0]}}", shell=True,
                           executable="/bin/bash", capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert "Traceback" not in piped.stderr and piped.stdout.split() == ["0", "1"], piped.stderr[-1500:]
    assert (tmp_path / "piped" / "results.json").exists()
