"""Configurations: a pass built several ways is one catalog entry per construction, ``Name[config]``.

What is pinned here: the expansion (the default keeps its bare name, so baseline keys and conformance
item ids of existing entries never change; every other construction gets its own build, contract, known
failures and applies_to), that a configuration really constructs the pass with its arguments, that
``--only`` selects configurations although fnmatch reads ``[...]`` as a character class, and that the
names survive everything downstream (triage, baseline reasons, pytest node ids).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness import catalog
from harness.catalog import Build, Catalog, CatalogEntry, Config, entry, known, name_matches, split_config
from harness.cli.main import main

SPEC = "passes.reference:RemoveDetachPass"
BASELINE = Path(__file__).resolve().parent.parent / "reports" / "baseline.json"


@pytest.fixture(scope="module")
def builtin():
    """Every entry of passgate's own catalogs, by name (no discovery: only the curated ones)."""
    return {e.name: e for e in catalog.all_entries(catalog.select(None, discovered=False))}


def _vendor(**kw) -> Catalog:
    return Catalog("vendor", (), (entry("vendor", SPEC, contract="removes detach", **kw),))


# -- the expansion ----------------------------------------------------------------------------------------

def test_configs_expand_to_entries_with_their_own_builds_and_the_default_keeps_its_name():
    base_known = known("meta_stack_trace", "shared reason")
    c = _vendor(build=Build("call", (1,)), known=(base_known,), configs={
        "two": Build("call", (2,)),
        "three": Config(Build("call", (3,)), contract="built with three", applies_to=("conv",), stage="export",
                        known=(known("verifier", "only here", kind="by-design"),)),
        "fresh": Config(Build("call", (4,)), inherit_known=False),
    })
    by_name = {e.name: e for e in c.entries}
    assert list(by_name) == ["vendor.RemoveDetachPass", "vendor.RemoveDetachPass[two]",
                             "vendor.RemoveDetachPass[three]", "vendor.RemoveDetachPass[fresh]"]
    default = by_name["vendor.RemoveDetachPass"]
    assert default.build.args == (1,) and default.config == "" and not default.configs
    two, three, fresh = (by_name[f"vendor.RemoveDetachPass[{k}]"] for k in ("two", "three", "fresh"))
    assert two.build.args == (2,) and two.config == "two" and two.contract == "removes detach"
    assert two.known == (base_known,) and two.spec == SPEC and two.catalog == "vendor"
    assert three.contract == "built with three" and three.applies_to == ("conv",) and three.stage == "export"
    assert [k.check for k in three.known] == ["meta_stack_trace", "verifier"]
    assert fresh.known == () and fresh.base_name == "vendor.RemoveDetachPass"
    assert all(not e.configs for e in c.entries)  # expanded once: a copied catalog does not expand again
    again = Catalog(c.name, c.packages, c.entries)
    assert [e.name for e in again.entries] == [e.name for e in c.entries]


def test_default_can_be_named_among_the_configs():
    c = _vendor(default="a", configs={"a": Build("call", ("a",)), "b": Build("call", ("b",))})
    assert [(e.name, e.config, e.build.args) for e in c.entries] == [
        ("vendor.RemoveDetachPass", "a", ("a",)), ("vendor.RemoveDetachPass[b]", "b", ("b",))]


@pytest.mark.parametrize("kw, message", [
    ({"configs": {"has space": Build()}}, "must match"),
    ({"configs": {"x[1]": Build()}}, "must match"),
    ({"configs": {"a.b": Build()}}, "must match"),
    ({"configs": {"a": Build()}, "default": "b"}, "is not one of"),
    ({"configs": {"a": Build()}, "default": "a", "build": Build("call")}, "not both"),
])
def test_bad_configurations_are_refused_where_the_catalog_is_written(kw, message):
    with pytest.raises(ValueError, match=message):
        entry("vendor", SPEC, **kw)


def test_split_config_round_trips_names():
    assert split_config("transforms.ConvertDtypePass[i32_to_i64]") == ("transforms.ConvertDtypePass", "i32_to_i64")
    assert split_config("transforms.ConvertDtypePass") == ("transforms.ConvertDtypePass", "")
    assert split_config("nxp.<aten_passes>") == ("nxp.<aten_passes>", "")


# -- passgate's own catalogs ------------------------------------------------------------------------------

def test_shipped_configurations_keep_the_default_names_and_add_bracketed_ones(builtin):
    configs = [e for e in builtin.values() if e.config and "[" in e.name]
    assert len(configs) >= 25
    for e in configs:
        base = builtin.get(e.base_name)
        assert base is not None and base.spec == e.spec, f"{e.name} has no default entry of its pass"
        assert e.contract and e.contract != base.contract or e.build != base.build
    dtype = builtin["transforms.ConvertDtypePass"]  # the name (baseline key, pytest id) it always had
    assert dtype.config == "i64_to_i32" and [str(a) for a in dtype.build.args] == ["torch.int64", "torch.int32"]
    for name in ("transforms.ConvertDtypePass[i32_to_i64]", "transforms.ConvertDtypePass[f32_to_f16]",
                 "vulkan.TagMemoryMetaPass[buffer]", "exir.MemoryPlanningPass[no_io_alloc]",
                 "qualcomm.FoldQDQ[force_fold]"):
        assert name in builtin


def test_a_configuration_constructs_the_pass_with_its_arguments(builtin, builtin_cases):
    import torch
    from executorch.backends.vulkan.serialization.vulkan_graph_schema import VkStorageType
    from executorch.exir.dialects._ops import ops

    ep = builtin_cases["conv_bn_relu"].program("edge")

    def last(e):  # the entry's own pass (entries built ``after`` others are a sequence)
        p = e.loaded().make(ep)
        return p.steps[-1].factory(ep) if type(p).__name__ == "PassSequence" else p

    default = last(builtin["transforms.ConvertDtypePass"])
    assert (default.src_dtype, default.dst_dtype) == (torch.int64, torch.int32)
    back = builtin["transforms.ConvertDtypePass[i32_to_i64]"]
    assert (last(back).src_dtype, last(back).dst_dtype) == (torch.int32, torch.int64)
    assert "I64toI32" in back.construct  # reached through I64toI32's int32 copies
    assert last(builtin["transforms.ConvertDtypePass[i64_to_i32_aten_copy]"]).copy_op == ops.edge.aten._to_copy.default
    assert last(builtin["vulkan.TagMemoryMetaPass[buffer]"]).default_storage == VkStorageType.BUFFER
    assert last(builtin["vulkan.TagMemoryMetaPass"]).default_storage == VkStorageType.TEXTURE_3D
    planner = last(builtin["exir.MemoryPlanningPass[no_io_alloc]"]).planner  # run as to_executorch runs it
    assert planner.alloc_graph_input is False and planner.alloc_graph_output is False
    assert last(builtin["exir.MemoryPlanningPass"]).planner.alloc_graph_input is True
    assert last(builtin["qualcomm.FoldQDQ[force_fold]"]).force_fold is True


def test_lazy_keyword_arguments_reach_function_passes(builtin, builtin_cases):
    """``Lazy`` arguments are made in the worker for every kind of build, functions over programs included."""
    ep = builtin_cases["mlp"].program("edge")
    fn = builtin["exir.reinplace_pass[elementwise]"].loaded().make(ep)
    ops_to_inplace = dict(fn.kwargs)["ops_to_inplace"]
    assert isinstance(ops_to_inplace, set) and len(ops_to_inplace) > 1


def test_constructions_are_shown_without_memory_addresses(builtin):
    """Same seed, same report: a function argument is shown by name, never as <function f at 0x...>."""
    for name in ("exir.external_constants_pass[gen_tag_fn]", "qualcomm.TagQuantIO", "qualcomm.TagQuantIO[uint8_io]"):
        assert " at 0x" not in builtin[name].construct, builtin[name].construct


# -- selecting configurations -----------------------------------------------------------------------------

NAMES = ["transforms.ConvertDtypePass", "transforms.ConvertDtypePass[i32_to_i64]",
         "transforms.ConvertDtypePass[f32_to_f16]", "exir.CSEPass"]


@pytest.mark.parametrize("pattern, expected", [
    ("transforms.ConvertDtypePass[*]", NAMES[1:3]),  # every configuration, not the default
    ("transforms.ConvertDtypePass[i32_to_i64]", NAMES[1:2]),  # one, by its exact name
    ("transforms.ConvertDtypePass*", NAMES[:3]),  # the pass in all its constructions
    ("transforms.ConvertDtypePass", NAMES[:1]),
    ("*[*]", NAMES[1:3]),  # every configuration entry of every pass
    ("exir.[C]SEPass", NAMES[3:]),  # a character class still works
])
def test_only_patterns_select_configurations(pattern, expected):
    assert [n for n in NAMES if name_matches(n, pattern)] == expected


def test_select_entries_with_only_takes_the_configurations(builtin):
    cats = catalog.select(["transforms"], discovered=False)
    _, runnable, _ = catalog.select_entries(cats, ["transforms.ConvertDtypePass[*]"])
    names = {e.name for e in runnable}
    assert names and all(n.startswith("transforms.ConvertDtypePass[") for n in names)
    assert "transforms.ConvertDtypePass" not in names


def test_triage_reads_a_configuration_as_its_pass():
    from passes.triage import attr_of, triage

    assert attr_of("vulkan.TagMemoryMetaPass[buffer]") == "TagMemoryMetaPass"
    k = triage("vulkan.TagMemoryMetaPass[buffer]", "verifier",
               "SpecViolationError: aten.clone.default ... should not be used in dim_order mode")
    assert k is not None and k.kind == "by-design"


def test_run_only_a_configuration_reports_it_under_its_own_name(tmp_path):
    status = main(["run", "--catalog", "transforms", "--only", "transforms.ConvertDtypePass[i64_to_i32_aten_copy]",
                   "--graphs", "conv_bn_relu", "--baseline", str(BASELINE),
                   "--report", str(tmp_path), "--no-isolation", "-q"])
    doc = json.loads((tmp_path / "results.json").read_text())
    assert status == 0  # its violations are in the committed baseline, under the bracketed name
    assert {r["pass_name"] for r in doc["results"]} == {"transforms.ConvertDtypePass[i64_to_i32_aten_copy]"}
    verifier = next(r for r in doc["results"] if r["check"] == "verifier")
    assert verifier["status"] == "fail" and verifier["details"]["known"]["kind"] == "by-design"
    assert doc["catalog"]["ran_on"] == {"transforms.ConvertDtypePass[i64_to_i32_aten_copy]": ["conv_bn_relu"]}
    assert doc["gate"]["known"] and not doc["gate"]["regressions"]


def test_plan_units_of_a_configuration_are_keyed_by_its_name():
    from harness.run import plan

    p = plan.build("quick", catalogs=["transforms"], only=["transforms.I64toI32*"], graphs=["conv_bn_relu"])
    assert [u.key for u in p.units()] == ["entry:transforms.I64toI32@conv_bn_relu",
                                          "entry:transforms.I64toI32[aten_copy]@conv_bn_relu"]


def test_bracketed_names_work_as_pytest_node_ids(tmp_path):
    """The conformance suite's item ids are ``<kind>:<pass>-<graph>``: a node id with nested brackets selects
    its item, and so does -k."""
    (tmp_path / "test_ids.py").write_text(textwrap.dedent("""
        import pytest
        IDS = ["entry:transforms.ConvertDtypePass-mlp", "entry:transforms.ConvertDtypePass[i32_to_i64]-mlp",
               "entry:transforms.ConvertDtypePass[i32_to_i64]-conv_bn_relu"]
        @pytest.mark.parametrize("x", IDS, ids=IDS)
        def test_conformance(x):
            pass
    """))

    def run(*args):
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120)
        return out.stdout.strip().splitlines()[-1]

    assert run("test_ids.py::test_conformance[entry:transforms.ConvertDtypePass[i32_to_i64]-mlp]").startswith("1 passed")
    assert run("-k", "ConvertDtypePass[i32_to_i64]").startswith("2 passed, 1 deselected")


def test_applies_to_any_graph_takes_float_and_quantized_graphs_of_every_source():
    from harness.graphs import sources

    every = CatalogEntry(name="x.Y", spec=SPEC, applies_to=(catalog.ANY_GRAPH,))
    specs = sources.select(["builtin", "quantized"])
    assert all(every.applies(s) for s in specs)
    assert not all(CatalogEntry(name="x.Y", spec=SPEC).applies(s) for s in specs)  # default: float graphs only


def test_catalog_entry_without_configs_is_unchanged():
    e = CatalogEntry(name="x.Y", spec=SPEC)
    assert e.expanded() == (e,) and e.base_name == "x.Y" and e.config == ""
