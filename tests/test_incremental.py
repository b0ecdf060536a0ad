"""Incremental runs: per-unit dependency recording, the verdict cache, affected-only selection (issue 14).

Real passes (two ExportPass subclasses in files of a temporary catalog module, as a vendor writes them)
on real lowered graphs, through ``passgate run`` in this process. Each test has its own cache folder
(the lowered cases linked in from the session's shared cache, so nothing is lowered again) and so its
own ``verdicts/``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from run_helpers import two_file_catalog

from harness.cli.main import main
from harness.report.diff import diff
from harness.run import deps, verdicts

GRAPHS = ["mlp", "conv_bn_relu"]

PASS_A = '''
from executorch.exir.pass_base import ExportPass
from executorch.exir.dialects._ops import ops as exir_ops


class ReluToRelu(ExportPass):
    """Rebuilds every relu as a relu: changes nothing, reaches ExportPass's retrace."""

    def call_operator(self, op, args, kwargs, meta):
        if op == exir_ops.edge.aten.relu.default:
            return super().call_operator(exir_ops.edge.aten.relu.default, args, kwargs, meta)
        return super().call_operator(op, args, kwargs, meta)
'''

PASS_B = '''
import torch
from torch.fx.passes.infra.pass_base import PassBase, PassResult


class CountNodes(PassBase):
    """Looks at the graph and leaves it as it was."""

    def call(self, gm: torch.fx.GraphModule):
        self.seen = len(gm.graph.nodes)
        return PassResult(gm, False)
'''


@pytest.fixture
def setup(tmp_path, passgate_cache, monkeypatch):
    """A catalog module of two entries, each pass in its own file, and a cache folder of our own."""
    made = two_file_catalog(tmp_path, passgate_cache, "pgi", {"ReluToRelu": PASS_A, "CountNodes": PASS_B}, "inc")
    monkeypatch.syspath_prepend(str(made["src"]))
    yield {**made, "a": made["files"][0], "b": made["files"][1]}
    for m in made["mods"]:
        sys.modules.pop(m, None)


def _run(setup, name: str, *extra, graphs=GRAPHS) -> dict:
    report = setup["tmp"] / name
    status = main(["run", "--catalog", f"{setup['src']}/inc_catalog.py:CATALOG", "--graphs", *graphs,
                   "--cache-dir", str(setup["cache"]), "--report", str(report), "-q", *extra])
    assert status in (0, 1)
    doc = json.loads((report / "results.json").read_text())
    doc["_dir"] = report
    return doc


def _verdicts(doc: dict) -> list:
    return sorted((r["pass_name"], r["graph"], r["check"], r["status"], r["message"]) for r in doc["results"])


def _graph_pairs(doc: dict) -> set:
    return {(r["pass_name"], r["graph"]) for r in doc["results"] if r["graph"] != "*"}


def _edit(path: Path, setup) -> None:
    path.write_text(path.read_text() + "\n# edited: a comment is a change of content\n")
    for m in setup["mods"]:
        sys.modules.pop(m, None)


def test_rerun_reuses_every_unit_with_the_same_verdicts(setup):
    first = _run(setup, "first")
    assert first["incremental"]["ran"] == 4 and first["incremental"]["recorded"] == 4
    second = _run(setup, "second")
    inc = second["incremental"]
    assert (inc["units"], inc["ran"], inc["reused"], inc["not_affected"]) == (4, 0, 4, 0)
    assert _verdicts(first) == _verdicts(second)
    per_graph = [r for r in second["results"] if r["graph"] != "*"]
    assert per_graph and all(r["details"]["reused"]["run"] == first["incremental"]["run"]["id"] for r in per_graph)
    d = diff(first, second)
    assert not (d.regressions or d.fixed or d.gone)
    summary = (second["_dir"] / "summary.md").read_text()
    assert "4 reused" in summary


def test_recorded_dependencies_are_what_the_unit_executed(setup):
    _run(setup, "first")
    cache = verdicts.VerdictCache(setup["cache"] / "verdicts")
    files_of = {}
    for path in (setup["cache"] / "verdicts" / "units").glob("*/*.json"):
        rec = cache.read(path.stem)
        files_of[rec.unit] = cache.files(rec)
    relu = files_of["entry:inc.ReluToRelu@mlp"]
    assert str(setup["a"].resolve()) in relu and str(setup["b"].resolve()) not in relu
    assert any(f.endswith("executorch/exir/pass_base.py") for f in relu)
    assert any(f.endswith("harness/check/runner.py") for f in relu)
    count = files_of["entry:inc.CountNodes@mlp"]
    assert str(setup["b"].resolve()) in count and not any(f.endswith("exir/pass_base.py") for f in count)


def test_editing_a_pass_file_reruns_exactly_its_units(setup):
    first = _run(setup, "first")
    _edit(setup["a"], setup)
    second = _run(setup, "second")
    assert (second["incremental"]["ran"], second["incremental"]["reused"]) == (2, 2)
    ran = {(r["pass_name"], r["graph"]) for r in second["results"] if "reused" not in r["details"] and r["graph"] != "*"}
    assert ran == {("inc.ReluToRelu", g) for g in GRAPHS}
    assert _verdicts(first) == _verdicts(second)
    full = _run(setup, "full", "--no-incremental")
    assert (full["incremental"]["ran"], full["incremental"]["reused"]) == (4, 0)
    assert not any("reused" in r["details"] for r in full["results"])
    d = diff(full, second)  # the incremental run's verdicts are the full run's
    assert not (d.regressions or d.fixed or d.gone) and _verdicts(full) == _verdicts(second)


def test_affected_by_selects_the_units_that_executed_the_file(setup):
    _run(setup, "first")
    picked = _run(setup, "picked", "--affected-by", str(setup["a"]))
    inc = picked["incremental"]
    assert (inc["ran"] + inc["reused"], inc["not_affected"]) == (2, 2)
    assert _graph_pairs(picked) == {("inc.ReluToRelu", g) for g in GRAPHS}
    # a unit with no record yet (a new graph) always runs; a file no unit executed selects nothing else
    unrelated = setup["tmp"] / "unrelated.py"
    unrelated.write_text("x = 1\n")
    fresh = _run(setup, "fresh", "--affected-by", str(unrelated), graphs=[*GRAPHS, "residual_block"])
    assert fresh["incremental"]["not_affected"] == 4 and fresh["incremental"]["ran"] == 2
    assert {g for _, g in _graph_pairs(fresh)} == {"residual_block"}
    # every unit executes passgate's runner.py: a change to it selects them all
    from harness.check import runner

    assert _run(setup, "all", "--affected-by", runner.__file__)["incremental"]["not_affected"] == 0


def test_a_changed_dependency_outside_the_checkout_reruns_its_units(setup, monkeypatch):
    """site-packages is never edited: PASSGATE_DEPS_REDIRECT hashes a changed temporary copy in its place."""
    _run(setup, "first")
    import executorch.exir.pass_base as pb

    copy = setup["tmp"] / "pass_base_copy.py"
    copy.write_text(Path(pb.__file__).read_text() + "\n# changed\n")
    monkeypatch.setenv(deps.REDIRECT_ENV, f"{os.path.realpath(pb.__file__)}={copy}")
    second = _run(setup, "second")
    # ReluToRelu is an ExportPass; CountNodes never reaches pass_base.py
    assert (second["incremental"]["ran"], second["incremental"]["reused"]) == (2, 2)
    monkeypatch.delenv(deps.REDIRECT_ENV)
    third = _run(setup, "third")  # hashed afresh by each run; one record per key, the latest (the copy's)
    assert (third["incremental"]["ran"], third["incremental"]["reused"]) == (2, 2)


def test_a_corrupt_cache_file_is_a_miss_not_a_crash(setup):
    _run(setup, "first")
    root = setup["cache"] / "verdicts"
    units = sorted((root / "units").glob("*/*.json"))
    units[0].write_bytes(b"{not json")
    units[1].write_text(json.dumps({"format": verdicts.FORMAT, "unit": "x"}))  # a key part missing
    next((root / "deps").glob("*/*.json")).write_bytes(b"\x00\xff garbage")
    second = _run(setup, "second")
    inc = second["incremental"]
    assert inc["ran"] >= 2 and inc["ran"] + inc["reused"] == 4 and inc["corrupt"] >= 2
    assert _run(setup, "third")["incremental"]["reused"] == 4  # the rerun recorded them afresh


def test_certify_never_reuses(setup, monkeypatch, tmp_path):
    from harness.run import incremental, profiles

    def refuse(*a, **k):
        raise AssertionError("certify consulted the verdict cache")

    monkeypatch.setattr(verdicts.VerdictCache, "read", refuse)
    monkeypatch.setattr(incremental.Incremental, "execute", refuse)
    monkeypatch.setattr(profiles, "workload", lambda name: profiles.Workload(
        "quick", (f"{setup['a']}:ReluToRelu",), ("mlp",)))
    out = tmp_path / "bundle"
    status = main(["certify", "--profile", "quick", "--out", str(out), "--cache-dir", str(setup["cache"]), "-q"])
    assert status in (0, 1)
    doc = json.loads((out / "results.json").read_text())
    assert doc["results"] and not any("reused" in r["details"] for r in doc["results"])
    assert "incremental" not in doc
    assert main(["certify", "--incremental", "--out", str(tmp_path / "b2")]) == 2


def test_stable_keys_name_no_memory_address():
    class Plain:  # no repr of its own: rendered by its state
        def __init__(self, mode):
            self.mode = mode

    class Slotted:
        __slots__ = ("x",)

    assert verdicts.stable({"b": 1, "a": (1, 2.0)}) == verdicts.stable({"a": (1, 2.0), "b": 1})
    assert "0x" not in verdicts.stable(test_stable_keys_name_no_memory_address)
    assert verdicts.stable(Plain("preprocess")) == verdicts.stable(Plain("preprocess")) != verdicts.stable(Plain("x"))
    with pytest.raises(verdicts.Unstable):
        verdicts.stable(Slotted())


def test_keys_made_with_a_shared_memo_equal_keys_made_one_by_one():
    """A plan's units share their entries: _partition renders each entry once (stable's memo) and the run's
    config once (config_text); every key must still be the one a unit keyed alone gets."""
    from harness.core.config import RunConfig
    from harness.run import plan as plans

    p = plans.build("quick")
    units = p.units()[:400]
    config = RunConfig()
    memo: dict = {}
    text = verdicts.config_key(config)
    alone = [verdicts.static_key(u, "case", config) for u in units]
    shared = [verdicts.static_key(u, "case", config, memo, text) for u in units]
    assert alone == shared and len(set(alone)) == len(units)
    assert len(memo) < 2 * len(units)  # the entries were rendered once each, not once per unit


def test_a_fully_reused_run_reports_its_cases_and_op_coverage(setup):
    first = _run(setup, "first")
    second = _run(setup, "second")
    assert {c["name"] for c in second["cases"]} == set(GRAPHS) and all(c.get("reused") for c in second["cases"])
    assert second["op_coverage"] == first["op_coverage"]


def _conformance(cache: Path, report: Path, *extra) -> dict:
    import subprocess

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PASSGATE_CACHE_DIR": str(cache), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "conformance", "-q", "-p", "no:cacheprovider",
                           "--passgate-profile", "quick", "--passgate-baseline", "none",
                           "--passgate-report", str(report), "-rs", "-k", "exir.CSEPass and mlp", *extra],
                          cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "passgate: incremental:" in proc.stdout, (extra, proc.stdout[-3000:])
    return json.loads((report / "results.json").read_text())


def test_the_conformance_suite_reuses_and_selects(setup):
    """tox -e conformance judges through the same cache: a rerun reuses, an unrelated change selects nothing."""
    cache, tmp = setup["cache"], setup["tmp"]
    first = _conformance(cache, tmp / "c1")
    assert (first["incremental"]["ran"], first["incremental"]["reused"]) == (1, 0)
    second = _conformance(cache, tmp / "c2")
    assert (second["incremental"]["ran"], second["incremental"]["reused"]) == (1 - 1, 1)
    assert _verdicts(first) == _verdicts(second)
    unrelated = tmp / "unrelated.py"
    unrelated.write_text("x = 1\n")
    third = _conformance(cache, tmp / "c3", "--passgate-affected-by", str(unrelated))
    assert third["incremental"]["not_affected"] == 1 and third["incremental"]["ran"] == 0
    fourth = _conformance(cache, tmp / "c4", "--passgate-no-incremental")
    assert (fourth["incremental"]["ran"], fourth["incremental"]["reused"]) == (1, 0)
    records = sorted((cache / "verdicts").rglob("*.json"))
    stamps = [(p, p.stat().st_mtime_ns) for p in records]
    fifth = _conformance(cache, tmp / "c5", "--passgate-no-verdict-cache")  # judged afresh, nothing kept
    assert (fifth["incremental"]["ran"], fifth["incremental"]["cache"]) == (1, None)
    assert _verdicts(fifth) == _verdicts(first)
    assert sorted((cache / "verdicts").rglob("*.json")) == records and all(p.stat().st_mtime_ns == t for p, t in stamps)


def test_no_verdict_cache_with_a_change_selection_is_bad_usage(setup):
    import subprocess

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PASSGATE_CACHE_DIR": str(setup["cache"]), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "conformance", "-q", "-p", "no:cacheprovider",
                           "--passgate-no-verdict-cache", "--passgate-affected-by", __file__],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "--passgate-no-verdict-cache" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_changed_since_reads_git_and_a_bad_ref_is_a_usage_error(setup, capsys):
    from harness.core.errors import UsageError
    from harness.run import affected

    root = Path(__file__).resolve().parent.parent
    changed = affected.changed_since("HEAD", str(root))  # the working tree's edits and untracked files, if any
    assert all(os.path.isabs(f) and f.startswith(str(root.resolve())) for f in changed)
    with pytest.raises(UsageError):
        affected.changed_since("no-such-ref-passgate", str(root))
    status = main(["run", "--catalog", f"{setup['src']}/inc_catalog.py:CATALOG", "--graphs", "mlp",
                   "--cache-dir", str(setup["cache"]), "--report", str(setup["tmp"] / "r"), "-q",
                   "--changed-since", "no-such-ref-passgate"])
    assert status == 2 and "--changed-since" in capsys.readouterr().err


def test_a_cache_restored_at_another_path_still_hits_and_edits_still_miss(tmp_path):
    """Dependency folders are recorded relative to the checkout and site-packages: a verdict cache restored
    under another path (CI, a second clone) hits there; an edited file misses; a file outside every root
    keeps its absolute path."""
    from harness.core.results import Status, result

    def tree(root: Path) -> Path:
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "mod.py").write_text("X = 1\n")
        return root

    a, b = tree(tmp_path / "a" / "site"), tree(tmp_path / "b" / "site")
    outside = tmp_path / "user_pass.py"
    outside.write_text("Y = 1\n")
    res = [result("P", "mlp", "runs", Status.PASS, "ok")]
    deps.forget_hashes()
    first = verdicts.VerdictCache(tmp_path / "cache", roots=(("{site0}", str(a)),))
    assert first.write("k1", "entry:P@mlp", [str(a / "pkg" / "mod.py"), str(outside)], res, verdicts.new_run())
    folders = {json.loads(p.read_text())["folder"] for p in (tmp_path / "cache" / "deps").glob("*/*.json")}
    assert folders == {"{site0}" + os.sep + "pkg", str(tmp_path)}

    moved = verdicts.VerdictCache(tmp_path / "cache", roots=(("{site0}", str(b)),))
    rec = moved.hit("k1")
    assert rec is not None and moved.files(rec) == {str(b / "pkg" / "mod.py"), str(outside)}
    (b / "pkg" / "mod.py").write_text("X = 2\n")
    deps.forget_hashes()
    assert verdicts.VerdictCache(tmp_path / "cache", roots=(("{site0}", str(b)),)).hit("k1") is None
    assert verdicts.portable(str(b / "pkg"), (("{site0}", str(b)),)) == "{site0}" + os.sep + "pkg"
    assert verdicts.local("{site0}" + os.sep + "pkg", (("{site0}", str(b)),)) == str(b / "pkg")


def test_a_unit_whose_process_dies_is_an_error_and_the_run_goes_on():
    """A unit judged in a forked child that aborts (a native kernel's assertion does so) gives an error for each
    of its items, not recorded in the verdict cache, and the units after it are still judged."""
    from dataclasses import dataclass
    from typing import ClassVar

    from harness.core.config import RunConfig
    from harness.core.results import CheckResult, Status
    from harness.run.incremental import Incremental
    from harness.run.plan import RunPlan, Unit

    @dataclass(frozen=True)
    class Demo(Unit):
        kind: ClassVar[str] = "demo"
        needs_case: ClassVar[bool] = False

        def items(self):
            return [(f"demo.{self.name}", "runs"), (f"demo.{self.name}", "verifier")]

        def judge(self, case, config):
            if self.name == "aborts":
                os.abort()
            return [(self.graph, f"demo.{self.name}", [CheckResult(f"demo.{self.name}", self.graph, "runs", Status.PASS)])]

    plan = RunPlan(profile=None, catalogs=[], entries=[], runnable=[], skipped_slow=[], specs=[])
    units = [Demo("aborts", "g"), Demo("fine", "g")]
    out = Incremental(cache=None).execute(plan, units, RunConfig(isolate=True))
    by = {(r.pass_name, r.check): r for r in out}
    assert by[("demo.aborts", "runs")].status is Status.ERROR and by[("demo.aborts", "verifier")].status is Status.ERROR
    assert "SIGABRT" in by[("demo.aborts", "runs")].message and by[("demo.aborts", "runs")].details["outcome"] == "crashed"
    assert by[("demo.fine", "runs")].status is Status.PASS


def test_a_spec_that_resolves_to_another_file_is_not_served_the_verdicts_of_the_first(tmp_path, monkeypatch):
    """The same catalog entry (``relu_subject:ReluToClamp``) defined in two folders, as when a checkout moves or
    two test runs write the module afresh: the files the first run executed are unchanged, but the pass the
    second run loads is another file, so its verdicts are judged, not reused."""
    data = Path(__file__).parent / "data" / "mutation_subject.py"
    stopped = "from torch.fx.passes.infra.pass_base import PassBase, PassResult\n\n\nclass ReluToClamp(PassBase):\n" \
              "    def call(self, graph_module):\n        return PassResult(graph_module, False)\n"
    cache = tmp_path / "cache"
    monkeypatch.setenv("PASSGATE_CACHE_DIR", str(cache))
    states = []
    for name, body in (("first", stopped), ("second", data.read_text())):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "relu_subject.py").write_text(body)
        (folder / "cat.py").write_text("from harness.catalog import Catalog, entry\nCATALOG = Catalog('vendor', (), "
                                       "(entry('vendor', 'relu_subject:ReluToClamp', contract='relu -> clamp'),))\n")
        monkeypatch.syspath_prepend(str(folder))
        monkeypatch.delitem(sys.modules, "relu_subject", raising=False)
        assert main(["run", "--catalog", f"{folder / 'cat.py'}:CATALOG", "--graphs", "conv_bn_relu", "--report",
                     str(folder / "r"), "--no-isolation", "-q"]) == 0
        doc = json.loads((folder / "r" / "results.json").read_text())
        runs = next(r for r in doc["results"] if r["check"] == "runs")
        states.append((doc["incremental"]["reused"], runs["details"]["changed"]["ops"]))
    assert states == [(0, False), (0, True)]
