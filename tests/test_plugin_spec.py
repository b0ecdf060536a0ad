"""The plugin API is declared and kept: the groups of ``harness.core.pluginspec`` are exactly the ones
``pyproject.toml`` registers, every type they hand plugins is public and marked stable, and the example vendor
plugin (``examples/passgate-example-vendor``) installs in a fresh venv beside passgate and runs.

The install test is real: pip installs the example's metadata into a throwaway venv that sees the test
environment's site-packages, so passgate discovers its entry points as it would a vendor's.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

import harness
from harness.core import plugins, pluginspec
from harness.core.stability import is_stable

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "passgate-example-vendor"


def _registered_groups(pyproject: Path) -> set:
    return set(tomllib.loads(pyproject.read_text())["project"].get("entry-points", {}))


def test_declared_groups_are_exactly_those_pyproject_registers():
    declared = [g.name for g in pluginspec.GROUPS]
    assert len(declared) == len(set(declared))
    assert set(declared) == _registered_groups(ROOT / "pyproject.toml")


def test_the_engine_reads_declared_groups_only():
    constants = {name: getattr(plugins, name) for name in plugins.__all__ if name.isupper()}
    assert set(constants.values()) == {g.name for g in pluginspec.GROUPS} - {"pytest11"}
    with pytest.raises(ValueError, match="not declared"):
        plugins.points("passgate.catalog")  # a typo must not read as "no plugin installed"


def test_every_example_registration_parses():
    for g in pluginspec.GROUPS:
        toml, _, python = g.example.partition("\n\n")
        assert tomllib.loads(f'[project.entry-points."{g.name}"]\n{toml}')["project"]["entry-points"][g.name]
        compile(python, g.name, "exec")


def test_every_type_a_group_names_is_public_and_stable():
    named = {t for g in pluginspec.GROUPS for t in g.types}
    assert named - set(harness.__all__) == set()
    assert [t for t in sorted(named) if not is_stable(getattr(harness, t))] == []


def _stable_definitions() -> dict:
    """name -> module of every engine class or function decorated ``@stable``, read from the source."""
    out = {}
    for path in sorted((ROOT / "harness").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and any(
                    isinstance(d, ast.Name) and d.id == "stable" for d in node.decorator_list):
                out[node.name] = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return out


def test_what_is_marked_stable_is_exported_from_harness():
    marked = _stable_definitions()
    assert set(marked) - set(harness.__all__) == set(), "a stable object a plugin cannot import from harness"
    for name, module in marked.items():
        assert getattr(harness, name) is getattr(__import__(module, fromlist=[name]), name)


def test_the_plugin_api_page_is_the_spec():
    spec = importlib.util.spec_from_file_location("plugin_api", ROOT / "docs" / "scripts" / "plugin_api.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.OUT.read_text() == script.page(), "run python docs/scripts/plugin_api.py and commit the page"
    rows = {line.split("|")[1].strip().strip("`") for line in script.page().splitlines() if line.startswith("| `")}
    assert rows == {g.name for g in pluginspec.GROUPS}


def test_the_example_imports_only_the_stable_public_namespace():
    assert _registered_groups(EXAMPLE / "pyproject.toml") <= {g.name for g in pluginspec.GROUPS}
    for path in sorted(EXAMPLE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module] if isinstance(node, ast.ImportFrom) else [])
            for module in modules:
                if module and module.split(".")[0] in ("harness", "passes", "vulkan", "fixtures"):
                    assert module == "harness", f"{path.name} imports {module}: plugins use `from harness import`"
                    assert all(is_stable(getattr(harness, a.name)) for a in node.names), path.name


def test_a_plugin_that_fails_to_load_is_named_in_one_line(tmp_path, monkeypatch):
    dist = tmp_path / "broken_vendor-0.1.dist-info"  # what pip writes for a distribution, by hand
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-vendor\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[passgate.triage]\nbroken = broken_vendor_missing.triage:triage\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert [ep.name for ep in plugins.points(plugins.TRIAGE)][-1] == "broken"
    with pytest.raises(harness.UsageError) as got:
        plugins.load_all(plugins.TRIAGE, "triage")
    assert str(got.value).startswith("triage entry point broken (broken_vendor_missing.triage:triage) failed to load")
    assert "\n" not in str(got.value)


# -- the example, installed -----------------------------------------------------------------------------

# In the venv: the baseline update reads the run's results and asks the triage plugins; then one of the
# partitioner units the example registers under passgate.units is judged on its graph.
_AFTER_RUN = """
import json, sys
from harness.cli.main import main
from harness.core.config import RunConfig
from harness.graphs import sources
from harness.graphs.cases import load_case
from harness.run.plan import plugged_units
from harness.run.profiles import profile

status = main(["baseline", "update", "--baseline", sys.argv[2], "--from", sys.argv[1]])
unit = next(u for u in plugged_units(profile("quick"), 0)["example"] if u.graph == "residual_block")
judged = unit.judge(load_case(sources.select([unit.graph])[0]), RunConfig())
print(json.dumps({"baseline_status": status, "items": [list(i) for i in unit.items()],
                  "judged": [[p, r.check, r.status.value] for _g, p, rs in judged for r in rs]}))
"""


@pytest.fixture
def example_venv(tmp_path):
    """A fresh venv seeing this environment's site-packages (passgate, torch, executorch), the example in it."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # addsitedir, not a bare path: the shared env's own .pth files (passgate's editable install) must run too
    Path(site, "passgate-env.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    source = tmp_path / "src"  # pip builds in the source tree: build from a copy, leave examples/ clean
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                    str(source)], check=True, capture_output=True)
    yield python
    shutil.rmtree(tmp_path, ignore_errors=True)


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's harness over the installed one


def test_example_plugin_installs_in_a_fresh_venv_and_its_catalog_runs(example_venv, tmp_path):
    report, baseline = tmp_path / "report", tmp_path / "baseline.json"
    run = subprocess.run([str(example_venv), "-m", "harness.cli.main", "run", "--catalog", "example", "--graphs",
                          "depthwise_separable", "--report", str(report), "--no-isolation", "-q"],
                         capture_output=True, text=True, env=_env(), timeout=600)
    assert run.returncode == 1, run.stderr[-2000:]  # the broken-on-purpose entry is a violation
    doc = json.loads((report / "results.json").read_text())
    failing = {(r["pass_name"], r["check"]) for r in doc["results"] if r["status"] in ("fail", "error")}
    assert failing == {("example.FuseClampPairsLoose", "numerics")}
    good = [r for r in doc["results"] if r["pass_name"] == "example.FuseClampPairs"]
    assert {r["status"] for r in good} <= {"pass", "not_applicable"} and len(good) > 10
    [exercised] = [r for r in good if r["check"] == "exercised"]
    assert exercised["status"] == "pass"  # the fusion changed the program: its green says something

    after = subprocess.run([str(example_venv), "-c", _AFTER_RUN, str(report), str(baseline)],
                           capture_output=True, text=True, env=_env(), timeout=600)
    assert after.returncode == 0, after.stderr[-2000:]
    got = json.loads(after.stdout.strip().splitlines()[-1])
    assert got["baseline_status"] == 0
    [recorded] = json.loads(baseline.read_text())["entries"]
    assert (recorded["pass"], recorded["check"]) == ("example.FuseClampPairsLoose", "numerics")
    assert recorded["reason"].startswith("keeps the outer clamp's range")  # the example's triage table, not ours
    assert [c for _p, c in got["items"]] == ["runs", "partition_supported", "partition_convex", "delegate_call_only"]
    assert got["judged"] == [["partitioner.example", c, "pass"] for _p, c in got["items"]]
