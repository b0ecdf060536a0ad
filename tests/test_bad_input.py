"""Bad input: one line on stderr naming the problem, exit status 2, no traceback (DESIGN.md).

Most cases call ``harness.cli.main.main`` in-process (fast); a few run the real
`passgate` console script, to show what a user sees from the entry point.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from run_helpers import DATA, EXE, load

from harness.cli.main import main
from harness.graphs.memos import MEMOS

RELU = "passes.reference:ReplaceInPlaceReluWithOutOfPlaceReluPass"
USER = f"{DATA}/user_passes.py"


def write_files(root: Path) -> None:
    """Every broken file the cases below point at."""
    (root / "truncated.json").write_text('{"schema_version": "1.0", "results": [{"pass_name": "x"')
    (root / "wrong.json").write_text('{"hello": "world"}\n')
    (root / "binary.json").write_bytes(b"\xff\xfe\x00\x9c garbage")
    (root / "a_file").write_text("not a folder\n")
    (root / "raises_on_import.py").write_text("raise RuntimeError('boom at import')\n")
    for name, content in (("r_truncated", (root / "truncated.json").read_bytes()),
                          ("r_wrong", b'{"schema_version": "1.0", "results": "nope"}'),
                          ("r_binary", (root / "binary.json").read_bytes())):
        (root / name).mkdir()
        (root / name / "results.json").write_bytes(content)
    (root / "r_dir" / "results.json").mkdir(parents=True)


# (label, argv with {tmp} for the case folder, fragment the one-line message must contain)
CASES = [
    ("pass module missing", ["check", "--pass", "no_such_module:Pass"], "pass module not found: no_such_module"),
    ("pass file missing", ["check", "--pass", "{tmp}/nope.py:Pass"], "pass file not found: {tmp}/nope.py"),
    ("attribute missing in file", ["check", "--pass", f"{USER}:Nope"], f"{USER} has no attribute 'Nope'"),
    ("attribute missing in module", ["check", "--pass", "passes.reference:Nope"],
     "passes.reference has no attribute 'Nope'"),
    ("not a pass", ["check", "--pass", f"{USER}:NOT_A_PASS"], "is not a pass: an int is neither a class"),
    ("needs constructor args", ["check", "--pass", f"{USER}:NeedsTwoArgs"], "needs 2 constructor arguments"),
    ("syntax error", ["check", "--pass", f"{DATA}/syntax_error.py:broken"],
     "syntax error in pass file"),
    ("raises on import", ["check", "--pass", "{tmp}/raises_on_import.py:X"],
     "failed: RuntimeError: boom at import"),
    ("SPEC without a colon", ["check", "--pass", "nocolon"], "must be package.module:Name or path/to/file.py:Name"),
    ("unknown graph", ["check", "--pass", RELU, "--graphs", "no_such_graph"], "unknown graph 'no_such_graph'"),
    ("unknown catalog", ["run", "--catalog", "no_such_catalog"], "unknown catalog 'no_such_catalog'"),
    ("shard not I/N", ["check", "--pass", RELU, "--shard", "abc"], "--shard expects I/N"),
    ("shard 0/2", ["check", "--pass", RELU, "--shard", "0/2"], "I must be between 1 and N"),
    ("shard 3/2", ["check", "--pass", RELU, "--shard", "3/2"], "I must be between 1 and N"),
    ("shard 1/0", ["check", "--pass", RELU, "--shard", "1/0"], "I must be between 1 and N"),
    ("unknown check", ["check", "--pass", RELU, "--checks", "must,no_such_check"],
     "argument --checks: unknown check 'no_such_check'"),
    ("count 0", ["check", "--pass", RELU, "--count", "0"], "argument --count: must be greater than 0, got 0"),
    ("count negative", ["check", "--pass", RELU, "--count", "-3"], "must be greater than 0, got -3"),
    ("count not a number", ["check", "--pass", RELU, "--count", "x"], "expected a whole number, got 'x'"),
    ("timeout 0", ["check", "--pass", RELU, "--timeout", "0"], "argument --timeout: must be greater than 0, got 0"),
    ("timeout negative", ["check", "--pass", RELU, "--timeout", "-1"], "must be greater than 0, got -1"),
    ("timeout nan", ["check", "--pass", RELU, "--timeout", "nan"], "must be greater than 0, got nan"),
    ("unknown option", ["check", "--pass", RELU, "--bogus"], "unrecognized arguments: --bogus"),
    ("unknown command", ["frobnicate"], "invalid choice: 'frobnicate'"),
    ("report under a file", ["check", "--pass", RELU, "--graphs", "mlp", "--report", "{tmp}/a_file/sub"],
     "report folder {tmp}/a_file/sub cannot be written: Not a directory"),
    ("report is a file", ["check", "--pass", RELU, "--graphs", "mlp", "--report", "{tmp}/a_file"],
     "report folder {tmp}/a_file cannot be written"),
    ("resume truncated results", ["check", "--pass", RELU, "--graphs", "mlp", "--resume", "--report", "{tmp}/r_truncated"],
     "results file {tmp}/r_truncated/results.json is not valid JSON (line 1): truncated or corrupt"),
    ("resume wrong-schema results", ["check", "--pass", RELU, "--graphs", "mlp", "--resume", "--report", "{tmp}/r_wrong"],
     "does not follow the passgate results schema"),
    ("resume unreadable results", ["check", "--pass", RELU, "--graphs", "mlp", "--resume", "--report", "{tmp}/r_binary"],
     "cannot read results file {tmp}/r_binary/results.json"),
    ("resume results is a folder", ["check", "--pass", RELU, "--graphs", "mlp", "--resume", "--report", "{tmp}/r_dir"],
     "results file not found"),
    ("report render truncated", ["report", "render", "{tmp}/truncated.json"], "is not valid JSON"),
    ("report diff wrong schema", ["report", "diff", "{tmp}/wrong.json", "{tmp}/wrong.json"],
     "does not follow the passgate results schema"),
    ("report merge missing", ["report", "merge", "{tmp}/nowhere", "--out", "{tmp}/merged"], "results file not found"),
    ("baseline missing", ["run", "--profile", "quick", "--baseline", "{tmp}/nope.json"], "baseline not found"),
    ("baseline truncated", ["run", "--profile", "quick", "--baseline", "{tmp}/truncated.json"],
     "baseline {tmp}/truncated.json is not valid JSON"),
    ("baseline wrong schema", ["run", "--profile", "quick", "--baseline", "{tmp}/wrong.json"],
     "does not follow the passgate baseline schema"),
    ("baseline unreadable", ["run", "--profile", "quick", "--baseline", "{tmp}/binary.json"], "baseline"),
]


@pytest.fixture(scope="module")
def case_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bad_input")
    write_files(root)
    return root


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("passgate: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("label,argv,fragment", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_exit_2(label, argv, fragment, case_dir, capsys):
    argv = [a.replace("{tmp}", str(case_dir)) for a in argv]
    assert main(argv) == 2
    line = one_line_error(capsys.readouterr().err)
    assert fragment.replace("{tmp}", str(case_dir)) in line, line


def test_resume_with_another_configuration_is_refused(tmp_path, capsys):
    args = ["check", "--pass", RELU, "--graphs", "mlp", "--report", str(tmp_path), "-q"]
    assert main(args) == 0
    before = (tmp_path / "results.json").read_bytes()
    assert main(args + ["--seed", "1", "--resume"]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert "cannot --resume" in line and "different configuration (it differs in seed)" in line
    assert (tmp_path / "results.json").read_bytes() == before  # refused before anything was written


def test_corrupt_cache_entry_is_rebuilt_with_a_warning(tmp_path, capsys):
    cache_dir = tmp_path / "cache"
    args = ["check", "--pass", RELU, "--graphs", "mlp", "--report", str(tmp_path / "r"), "--cache-dir", str(cache_dir)]
    assert main(args + ["-q"]) == 0
    (entry,) = cache_dir.glob("mlp-*.case")
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte: the checksum no longer matches
    entry.write_bytes(bytes(data))
    MEMOS.clear()  # this process keeps lowered cases in memory too: make it read the disk
    capsys.readouterr()
    assert main(args) == 0
    err = capsys.readouterr().err
    assert f"passgate: warning: cache entry {entry.name} is corrupt; rebuilding" in err
    assert "graph 1/1 mlp: lowered" in err
    assert load(tmp_path / "r")["cases"][0]["from_cache"] is False
    assert entry.exists() and entry.read_bytes() != bytes(data)  # rebuilt in place


def test_console_script_bad_input_has_no_traceback(tmp_path):
    """The real entry point; run side by side, since each start pays the interpreter's imports."""
    write_files(tmp_path)
    runs = {
        "unknown option": ([ "check", "--pass", RELU, "--bogus"], "unrecognized arguments: --bogus"),
        "timeout": (["check", "--pass", RELU, "--timeout", "-1"], "must be greater than 0"),
        "module": (["check", "--pass", "no_such_module:Pass"], "pass module not found: no_such_module"),
        "syntax": (["check", "--pass", f"{DATA}/syntax_error.py:broken"], "syntax error in pass file"),
        "truncated results": (["check", "--pass", RELU, "--graphs", "mlp", "--resume", "--report",
                               str(tmp_path / "r_truncated")], "is not valid JSON (line 1): truncated or corrupt"),
    }
    procs = {k: subprocess.Popen([EXE, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k, (argv, _) in runs.items()}
    for k, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 2, (k, err)
        assert runs[k][1] in one_line_error("\n".join(line for line in err.splitlines()
                                                      if line.startswith("passgate"))), k
        assert "Traceback" not in err and out == "", (k, err)
