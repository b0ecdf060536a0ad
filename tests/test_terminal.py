"""What `passgate check` prints for broken passes, and how stale baseline entries are reported and dropped.

Issue 16: a failing pair printed ``FAIL numerics`` without the error and its
tolerance, a crashing pass only ``FAIL runs``, the count line left the n/a
records out, and the closing line named only results.json.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.core.results import CheckResult
from harness.report import baseline as bl
from harness.report import headline as hl
from harness.report import summary_md

TESTS = Path(__file__).resolve().parent
BROKEN = f"{TESTS}/broken_passes.py"
BAD = f"{TESTS}/data/misbehaving_passes.py"


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory):
    """RetargetAddToSub (numerics), a pass that raises (runs) and NeverFixedPoint (idempotent, should-level)."""
    out = tmp_path_factory.mktemp("check")
    buf, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
        status = main(["check", "--pass", f"{BROKEN}:RetargetAddToSub", "--pass", f"{BAD}:raises",
                       "--pass", f"{BROKEN}:NeverFixedPoint", "--graphs", "residual_block", "mlp",
                       "--report", str(out), "--no-isolation", "--no-server"])
    return status, buf.getvalue(), err.getvalue(), out


def test_each_failing_pair_prints_its_reasons(failing_run):
    status, out, err, _ = failing_run
    assert status == 1
    numerics = re.search(r"^RetargetAddToSub +residual_block +FAIL +numerics.*\n    \[must\]   numerics: (.*)$", out, re.M)
    assert numerics and "max abs err" in numerics.group(1) and "rtol" in numerics.group(1)
    assert re.search(r"^raises +mlp +FAIL +runs\n    \[must\]   runs: the pass raised: RuntimeError: this pass is "
                     r"broken on purpose$", out, re.M)
    assert re.search(r"^NeverFixedPoint +mlp +warn +idempotent.*\n    \[should\] idempotent: a second run changed "
                     r"the graph again: .* \(warns; gates only with --strict\)$", out, re.M)
    # the progress lines (stderr) carry the same reasons as each pair finishes
    assert "FAIL runs (" in err and "    [must]   runs: the pass raised: RuntimeError" in err


def test_the_count_line_adds_up_and_the_closing_line_names_the_reports(failing_run):
    _, out, _, report = failing_run
    doc = json.loads((report / "results.json").read_text())
    by, total = doc["summary"]["by_status"], doc["summary"]["total"]
    counts = re.search(r"^passgate: (\d+) checks: (\d+) pass, (\d+) fail, (\d+) error, (\d+) skip, (\d+) n/a", out, re.M)
    assert counts, out
    n = [int(x) for x in counts.groups()]
    assert n[0] == total == sum(n[1:]) and n[1:] == [by[s] for s in hl.STATUSES]
    assert f"passgate: {hl.compute(doc).text()}" in out
    assert "passgate: FAIL: 3 new violations, 0 known, 0 fixed, 0 stale baseline entries, 2 should-level warnings" in out
    last = out.rstrip().splitlines()[-1]
    assert last == f"passgate: report: {report / 'report.html'} (summary.md, junit.xml, results.json beside it)"


def _baseline(path: Path) -> Path:
    entries = [bl.BaselineEntry("RetargetAddToSub", "residual_block", "numerics", "adds become subs", message="old"),
               bl.BaselineEntry("RetargetAddToSub", "residual_block", "verifier", "was broken once"),  # fixed
               bl.BaselineEntry("RetargetAddToSub", "residual_block", "ensures", "not judged now"),  # stale: n/a
               bl.BaselineEntry("NeverFixedPoint", "mlp", "idempotent", "recorded under --strict"),  # stale: warns
               bl.BaselineEntry("RetargetAddToSub", "conv_bn_relu", "numerics", "another graph")]  # pair not run
    bl.save(bl.Baseline(entries), path)
    return path


def test_stale_entries_are_reported_by_the_gate_and_every_format(failing_run, tmp_path):
    _, _, _, report = failing_run
    doc = json.loads((report / "results.json").read_text())
    results = [CheckResult.from_json(r) for r in doc["results"]]
    g = bl.gate(results, bl.load(_baseline(tmp_path / "baseline.json")), path="baseline.json")
    assert [(d["check"], d["now"]) for d in g.stale] == [("idempotent", "fail"), ("ensures", "not_applicable")]
    assert [d["check"] for d in g.fixed] == ["verifier"] and [d["check"] for d in g.known] == ["numerics"]
    assert {(d["graph"], d["check"]) for d in g.not_evaluated} == {("conv_bn_relu", "numerics"),
                                                                    ("residual_block", "ensures")}
    text = bl.render(g)
    assert "1 known, 1 fixed, 2 stale" in text and "stale baseline entry" in text and "drops it" in text
    doc["gate"] = g.to_json()
    h = hl.compute(doc)
    assert (h.known, h.fixed, h.stale) == (1, 1, 2)
    md = summary_md.render(doc)
    assert "### Stale baseline entries: 2" in md and "| `RetargetAddToSub` | `residual_block` | `ensures` |" in md


def test_baseline_update_refreshes_known_and_drops_stale_and_fixed(failing_run, tmp_path, capsys):
    _, _, _, report = failing_run
    path = _baseline(tmp_path / "baseline.json")
    assert main(["baseline", "update", "--baseline", str(path), "--from", str(report)]) == 0
    out = capsys.readouterr().out
    assert "refreshed 1 known entry (message updated, reason kept)" in out
    assert "dropped fixed (the check holds): RetargetAddToSub x residual_block x verifier" in out
    assert "dropped stale (its pair ran; the check is now not_applicable, not a violation): RetargetAddToSub x " \
           "residual_block x ensures" in out
    assert "dropped stale (its pair ran; the check is now fail, not a violation): NeverFixedPoint x mlp x " \
           "idempotent" in out
    entries = {e.key: e for e in bl.load(path).entries}
    kept = entries[("RetargetAddToSub", "residual_block", "numerics")]
    assert kept.reason == "adds become subs" and "max abs err" in kept.message  # refreshed, reason kept
    assert ("RetargetAddToSub", "residual_block", "ensures") not in entries


def test_update_help_says_what_happens_to_stale_entries(capsys):
    with pytest.raises(SystemExit):
        main(["baseline", "update", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "stale entries" in text and "are dropped" in text and "refreshed" in text
