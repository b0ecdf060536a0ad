"""The pass catalog: discovery agrees with the explicit entries, entries build, `passes` and `run` work."""

from __future__ import annotations

import json
from importlib.metadata import entry_points

import pytest

from harness import catalog
from harness.cli.main import main
from harness.core import plugins
from harness.core.kinds import Semantics

CORE = ("exir", "transforms", "vulkan", "xnnpack")


@pytest.fixture(scope="module")
def catalogs():
    return catalog.load_catalogs()


def test_entry_point_group_registers_passgates_own_catalogs(catalogs):
    points = {ep.name: ep.value for ep in entry_points(group=plugins.CATALOGS)}
    assert points.get("passgate") == "passes.catalog:builtin_catalogs"
    assert set(CORE) <= set(catalogs)


@pytest.mark.parametrize("name", CORE)
def test_discovery_matches_explicit_entries(catalogs, name):
    """Every pass discovery finds has an explicit entry, and every entry's pass exists."""
    check = catalog.cross_check(catalogs[name])
    assert not [d.spec for d in check.uncatalogued], "discovered passes without a catalog entry"
    assert not [e.spec for e in check.stale], "catalog entries whose pass is gone"
    found = catalog.discover(catalogs[name].packages).found
    assert len(found) >= 8


def test_entries_are_well_formed_and_never_silently_dropped(catalogs):
    entries = catalog.all_entries(catalog.with_discovered(c)[0] for c in catalogs.values())  # names unique
    assert len(entries) > 300
    for e in entries:
        assert e.stage in catalog.CATALOG_STAGES and e.semantics in {s.value for s in Semantics}
        assert e.unavailable or e.contract, f"{e.name} has neither a contract nor a reason it cannot run"
        for k in e.known:
            assert k.reason and k.kind in ("bug", "by-design", "precondition")
    runnable = [e for e in entries if e.runnable]
    assert len(runnable) > 200


def test_sdk_gated_backends_are_listed_from_source_with_the_import_error(catalogs):
    arm, _ = catalog.with_discovered(catalogs["arm"])
    assert len(arm.entries) > 50
    assert all(not e.runnable and "tosa_serializer" in e.unavailable for e in arm.entries)
    cadence, check = catalog.with_discovered(catalogs["cadence"])
    hidden = [e for e in cadence.entries if "typing.override" in e.unavailable or "override" in e.unavailable]
    assert hidden, "cadence passes behind the Python 3.12-only import must be listed"


def test_builds_give_real_arguments(builtin_cases):
    ep = builtin_cases["mlp"].program("edge")
    entries = {e.name: e for e in catalog.all_entries(catalog.select(["vulkan", "exir"], discovered=False))}
    tag = entries["vulkan.TagMemoryMetaPass"].loaded().make(ep)
    assert type(tag).__name__ == "PassSequence" and type(tag.steps[-1].factory(ep)).__name__ == "TagMemoryMetaPass"
    fuse = entries["vulkan.FusePatternsPass"].loaded().make(ep)
    assert fuse._exported_program is ep  # as vulkan_preprocess.apply_passes sets it
    assert entries["exir.ToDevicePass"].loaded().make(ep).device.type == "cpu"
    assert "SpecPropPass" in entries["exir.MemoryPlanningPass"].construct


def test_passes_command_lists_and_checks_discovery(capsys):
    assert main(["passes", "--catalog", "vulkan", "xnnpack", "--check-discovery"]) == 0
    out = capsys.readouterr().out
    assert "vulkan.FusePatternsPass" in out and "quantized-edge" in out and "xnnpack.FuseActivationPass" in out
    assert main(["passes", "--catalog", "arm", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["catalogs"][0]["entries"] and doc["catalogs"][0]["entries"][0]["unavailable"]
    assert main(["passes", "--catalog", "no_such_catalog"]) == 2


def test_run_a_catalog_slice_writes_the_catalog_section(tmp_path, capsys):
    status = main(["run", "--catalog", "transforms", "--only", "transforms.Rank0ToRank1Pass",
                   "transforms.RemoveCloneOpsTransform", "--graphs", "mlp", "conv_bn_relu",
                   "--report", str(tmp_path), "--no-isolation", "-q"])
    doc = json.loads((tmp_path / "results.json").read_text())
    assert status == 1  # Rank0ToRank1Pass rewrites meta['val'] of a rank-0 buffer without the data
    # per-graph verdicts (the pass-level ``exercised`` record, graph "*", judges the pass over all its cases)
    bad = [r for r in doc["results"] if r["status"] == "fail" and r["graph"] != "*"]
    assert {(r["pass_name"], r["graph"], r["check"]) for r in bad} == {
        ("transforms.Rank0ToRank1Pass", "conv_bn_relu", "val_matches_execution")}
    assert bad[0]["details"]["known"]["upstream"].endswith("rank_0_to_rank_1.py")
    section = doc["catalog"]
    assert section["ran"] == 2 and section["ran_on"]["transforms.RemoveCloneOpsTransform"] == ["mlp", "conv_bn_relu"]


def test_third_party_catalog_by_spec(tmp_path, capsys):
    plugin = tmp_path / "vendor_catalog.py"
    plugin.write_text(
        "from harness.catalog import Catalog, entry\n"
        "CATALOG = Catalog('vendor', (), (entry('vendor', 'passes.reference:RemoveDetachPass', stage='export',"
        " contract='removes detach'),))\n")
    status = main(["run", "--catalog", f"{plugin}:CATALOG", "--graphs", "inplace_views",
                   "--report", str(tmp_path / "r"), "--no-isolation", "-q"])
    assert status == 0
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    assert {r["pass_name"] for r in doc["results"]} == {"vendor.RemoveDetachPass"}
    assert main(["run", "--catalog", f"{plugin}:NOPE", "--report", str(tmp_path / "r")]) == 2
