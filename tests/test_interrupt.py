"""Interrupted runs: Ctrl-C and SIGTERM leave a report of what finished; --resume continues it.

A real `passgate check` subprocess is signalled between two pairs (a slow
but correct pass makes the moment easy to catch), then resumed in-process.
The SIGTERM run also proves that a run writes nothing outside its report
and cache folders, and executes nothing from the user's folder but the pass.
"""

from __future__ import annotations

import os
import shutil
import signal

from run_helpers import BAD, files_under, load, pairs, start, strip_timings, wait_for

from harness.cli.main import main

GRAPHS = ["mlp", "conv_bn_relu", "residual_block"]


def _check_incomplete(report, err_text: str, what: str) -> list:
    assert "Traceback" not in err_text, err_text
    assert f"{what}: writing the report of what finished" in err_text
    doc = load(report)
    assert doc["complete"] is False and doc["exit_status"] == 1
    done = pairs(doc)
    assert 1 <= len(done) < len(GRAPHS), done
    assert [g for _, g in done] == GRAPHS[:len(done)]  # whole pairs, in order
    assert {r["graph"] for r in doc["results"]} == {g for _, g in done}
    assert all(len([r for r in doc["results"] if r["graph"] == g]) == 16 for _, g in done)
    assert not [f for f in os.listdir(report) if f.endswith(".tmp")]  # atomic writes left no debris
    assert {"junit.xml", "summary.md", "report.html"} <= set(os.listdir(report))
    return done


def _resume(args, report, done, capsys) -> dict:
    assert main(args + ["--resume"]) == 0
    err = capsys.readouterr().err
    assert f"resuming incomplete {report}/results.json: {len(done)} pass x graph pair(s) already done" in err
    assert f"[{len(done) + 1}/{len(GRAPHS)}]" in err and "[1/3]" not in err  # done pairs are not rerun
    doc = load(report)
    assert doc["complete"] is True and doc["exit_status"] == 0
    assert [g for _, g in pairs(doc)] == GRAPHS + ["*"]  # "*": the pass-level exercised, judged once at the end
    return doc


def test_ctrl_c_leaves_incomplete_report_and_resume_matches_uninterrupted_run(tmp_path, capsys):
    report = tmp_path / "report"
    args = ["check", "--pass", f"{BAD}:slow", "--graphs", *GRAPHS, "--report", str(report)]
    proc, err = start(args, tmp_path)
    wait_for(proc, err, "[1/3]")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 130
    done = _check_incomplete(report, err.read_text(), "interrupted")

    resumed = _resume(args, report, done, capsys)
    fresh = tmp_path / "fresh"
    assert main(["check", "--pass", f"{BAD}:slow", "--graphs", *GRAPHS, "--report", str(fresh), "-q"]) == 0
    a, b = strip_timings(resumed), strip_timings(load(fresh))
    assert a == b  # interrupted + resumed == one uninterrupted run, timings aside


def test_sigterm_leaves_incomplete_report_and_nothing_else_is_written(tmp_path, monkeypatch, capsys):
    home, work, tmp, report = (tmp_path / d for d in ("home", "work", "tmp", "report"))
    for d in (home, work, tmp):
        d.mkdir()
    shutil.copy(BAD, work / "mypasses.py")
    # A package in the cwd named like one passgate imports after loading the pass: it must never run.
    (work / "fixtures").mkdir()
    (work / "fixtures" / "__init__.py").write_text(
        "open(__file__ + '.EXECUTED', 'w').close()\nraise ImportError('the cwd shadowed passgate')\n")
    before = files_under(work)
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(home), TMPDIR=str(tmp))  # PASSGATE_CACHE_DIR: the test session's cache folder
    args = ["check", "--pass", "mypasses:slow", "--graphs", *GRAPHS, "--report", str(report)]
    proc, err = start(args, tmp_path, cwd=work, env=env)
    wait_for(proc, err, "[1/3]")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 1
    done = _check_incomplete(report, err.read_text(), "terminated (SIGTERM)")

    assert files_under(home) == set() and files_under(tmp) == set()
    assert files_under(work) == before  # no __pycache__, no marker: only the pass module was executed

    monkeypatch.chdir(work)
    _resume(args, report, done, capsys)
    assert files_under(work) == before

