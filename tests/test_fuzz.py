"""`passgate fuzz` and `passgate corpus`: real torch.export graphs, real passes, no mocks.

Four passes broken on one kind of graph only (tests/data/fuzz_passes.py: int32 tensors, a dynamic batch, a
multi-output op, a PT2E-quantized graph) are each found within the default budget, shrunk, and their reproducer fails on its own and passes against the fixed pass. The draws
and the graphs kept depend on the seed alone (not on -j), and a distilled corpus is a fixed point of
distilling it again.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from run_helpers import DATA, EXE

ROOT = Path(__file__).resolve().parent.parent
PASSES = DATA / "fuzz_passes.py"


def _env() -> dict:
    return {**os.environ, "PASSGATE_NO_SERVER": "1", "OMP_NUM_THREADS": "1"}


def _passgate(*args, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *map(str, args)], cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=timeout)


def _doc(report: Path) -> dict:
    return json.loads((report / "results.json").read_text())


def _run_scripts(scripts: list[Path], cwd: Path) -> list[subprocess.CompletedProcess]:
    """Run reproducer scripts at once (each imports torch for seconds), from a folder of their own."""
    env = {k: v for k, v in _env().items() if k != "PYTHONPATH"}
    procs = [subprocess.Popen([sys.executable, str(s)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for s in scripts]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


# broken pass, its fixed version, what the failing graph must have, the fuzz run's extra arguments
CASES = {
    "int32": ("WidenInt32Arith", "WidenInt32ArithFixed", re.compile(r"int32|\.int\(\)"), ()),
    "dynamic_batch": ("ShapeClassTagger", "ShapeClassTaggerFixed", re.compile(r"torch\.export\.Dim"), ()),
    "multi_output": ("MergeGetitems", "MergeGetitemsFixed",
                     re.compile(r"^\s+v\d+(, v\d+)+ = ", re.MULTILINE), ()),
    # PT2E-quantized draws: the failing graph quantizes (its own flow's program, or the Q/DQ calls it left)
    "quantized": ("DecomposeDequantize", "DecomposeDequantizeFixed",
                  re.compile(r"prepare_pt2e|quantized_decomposed\.(de)?quantize_per_tensor"), ("--quantize", "xnnpack")),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_fuzz_finds_shrinks_and_reproduces(kind, tmp_path, passgate_cache):
    """Found within the default budget and seed, shrunk, reproduced alone; the fixed pass passes the script."""
    broken, fixed, feature, extra = CASES[kind]
    report = tmp_path / "report"
    proc = _passgate("fuzz", "--pass", f"{PASSES}:{broken}", "--report", report, *extra)
    assert proc.returncode == 1, proc.stderr[-3000:]
    doc = _doc(report)
    from harness.cli.fuzz import DEFAULT_BUDGET

    assert doc["configuration"]["command"] == "fuzz" and doc["configuration"]["budget"] == DEFAULT_BUDGET
    section = doc["fuzz"]
    kept = {k["name"]: k for k in section["kept"]}
    bad = [r for r in doc["results"] if r["status"] in ("fail", "error")]
    assert bad and all(r["graph"] in kept for r in bad)
    (row,) = section["targets"]
    assert row["name"] == broken and row["violations"] >= 1 and row["kept"] == len(kept)

    # the failing graph has what the pass breaks on, and so does its shrunk version
    shrunk = [r for r in bad if r["details"].get("shrink", {}).get("reproduced")]
    assert shrunk, [r["details"].get("shrink") for r in bad]
    rec = min(shrunk, key=lambda r: r["details"]["shrunk_nodes"])
    assert rec["details"]["shrunk_nodes"] <= 5
    assert feature.search(rec["details"]["shrunk_graph"]), rec["details"]["shrunk_graph"]
    corpus_file = report / "corpus" / f"{rec['graph']}.py"
    assert feature.search(corpus_file.read_text())

    # the reproducer exits 1 on its own; pointed at the fixed pass, 0
    repro = report / rec["details"]["repro"]
    text = repro.read_text()
    spec_line = next(line for line in text.splitlines() if line.startswith("PASS_SPEC = "))
    patched = tmp_path / "repro_fixed.py"
    patched.write_text(text.replace(spec_line, f"PASS_SPEC = {str(PASSES) + ':' + fixed!r}"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    as_is, against_fixed = _run_scripts([repro, patched], elsewhere)
    assert as_is.returncode == 1, as_is.stdout + as_is.stderr[-2000:]
    assert "REPRODUCED" in as_is.stdout
    assert against_fixed.returncode == 0, against_fixed.stdout + against_fixed.stderr[-2000:]
    assert "not reproduced" in against_fixed.stdout


def test_same_seed_same_draws_and_kept_graphs_whatever_j(tmp_path, passgate_cache):
    """Two runs of one seed, -j 1 and -j 2 at once: the same draws, the same graphs kept for the same reasons;
    a kept graph's name rebuilds its program (`passgate corpus show`)."""
    # A seed whose 20 draws keep a mutant (random_s2_003_m1), for the corpus show of a mutant's name below: few
    # seeds do (1 of seeds 0-6), and which ones moves with the vocabulary (seed 3 did before ops_sym's rules).
    common = ["fuzz", "--catalog", "exir", "transforms", "--only", "exir.CSEPass", "transforms.RemoveCloneOpsTransform",
              "transforms.FuseViewCopyTransform", "--draws", "20", "--budget", "900", "--seed", "2", "--no-shrink",
              "-q"]
    procs = [subprocess.Popen([EXE, *common, "-j", str(j), "--report", str(tmp_path / f"j{j}")], cwd=ROOT, env=_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for j in (1, 2)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode in (0, 1), err[-3000:]
    one, two = (_doc(tmp_path / f"j{j}")["fuzz"] for j in (1, 2))
    assert one["draws"] == two["draws"] == 20 and one["mutants"] == two["mutants"] > 0
    assert [(k["name"], k["draw"], k["reasons"]) for k in one["kept"]] == \
           [(k["name"], k["draw"], k["reasons"]) for k in two["kept"]]
    assert one["kept"] and all(k["name"].startswith("random_s2_") for k in one["kept"])
    assert [(r["name"], r["before"], r["after"]) for r in one["targets"]] == \
           [(r["name"], r["before"], r["after"]) for r in two["targets"]]

    mutants = [k["name"] for k in one["kept"] if "_m" in k["name"]]
    assert mutants, [k["name"] for k in one["kept"]]
    shown = _passgate("corpus", "show", mutants[0], "--from", tmp_path / "nowhere")
    assert shown.returncode == 0, shown.stderr
    from harness.fuzz.corpus import program_code

    kept_file = (tmp_path / "j1" / "corpus" / f"{mutants[0]}.py").read_text()
    assert program_code(kept_file) == program_code(shown.stdout.rstrip("\n") + "\n")


def test_corpus_distill_is_a_fixed_point_and_loads_as_cases(tmp_path, passgate_cache):
    """A tiny distill writes corpus_<hash8>.py programs and an index; distilling that corpus again keeps it as it
    is; its files load as cases that export and lower."""
    out = tmp_path / "corpus"
    args = ["corpus", "distill", "--catalog", "transforms", "--only", "transforms.RemoveCloneOpsTransform",
            "transforms.FuseViewCopyTransform", "transforms.ConvertDtypePass", "--out", out, "-q"]
    first = _passgate(*args, "--budget", "600", "--draws", "8")
    assert first.returncode == 0, first.stderr[-3000:]
    index = json.loads((out / "index.json").read_text())
    names = sorted(g["name"] for g in index["graphs"])
    assert names and all(re.fullmatch(r"corpus_[0-9a-f]{8}", n) for n in names)
    assert index["distilled"]["draws"] == 8 and index["distilled"]["uncovered"] == 0
    (coverage,) = index["coverage"].values()  # one catalog: the corpus keeps what every candidate reached
    assert coverage["corpus"] == coverage["candidates"] >= coverage["baseline"]
    assert sorted(p.stem for p in out.glob("corpus_*.py")) == names
    assert f"corpus: {len(names)} graphs" in first.stdout

    from harness.fuzz.corpus import corpus_name, load_dir

    for path in out.glob("corpus_*.py"):
        assert corpus_name(path.read_text()) == path.stem  # the name is the program's hash
    again = _passgate(*args, "--budget", "0")
    assert again.returncode == 0, again.stderr[-3000:]
    index_again = json.loads((out / "index.json").read_text())
    assert sorted(g["name"] for g in index_again["graphs"]) == names
    assert index_again["coverage"] == {c: {**v, "candidates": v["corpus"]} for c, v in index["coverage"].items()}

    from harness.graphs.cases import load_case

    specs = load_dir(out)
    assert [s.name for s in specs] == names and all("random" in s.tags for s in specs)
    assert load_case(specs[0]).edge is not None


def test_corpus_is_a_registered_graph_source():
    from harness.graphs import sources

    assert "corpus" in sources.static_sources()
    for spec in sources.static_specs("corpus"):  # the committed corpus, when there is one
        # distilled graphs are named by their code's hash; the hand-written ones targeted_<topic>
        assert spec.source == "corpus" and re.fullmatch(r"corpus_[0-9a-f]{8}|targeted_[a-z0-9_]+", spec.name)
        assert ("hand-written" in spec.description) == spec.name.startswith("targeted_")
