"""A known violation that gets worse is a regression: the gate calls it ``worsened`` and fails it.

A baseline entry keys on pass x graph x check; its fingerprint records what
the violation was (offending nodes, exception type, worst error), and a run
whose violation is worse than that fails the gate, as a new one does, while
one that got better stays known.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from junitparser import Failure, JUnitXml
from torch.fx.passes.infra.pass_base import PassBase, PassResult

from harness.cli.main import main
from harness.core.results import Status, result
from harness.report import baseline as bl
from harness.report import view as reports
from harness.report import violation_fingerprint as vf
from harness.run.library import check_pass

TESTS = Path(__file__).parent
ATEN = torch.ops.aten


class DropStackTrace(PassBase):
    """Forgets to keep the stack trace of the first ``drop`` call_function nodes it rewrites."""

    passgate_stage = "export"

    def __init__(self, drop: int = 2) -> None:
        super().__init__()
        self.drop = drop

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        nodes = [n for n in gm.graph.nodes if n.op == "call_function"][: self.drop]
        for node in nodes:
            node.meta.pop("stack_trace", None)
        return PassResult(gm, bool(nodes))


class OffsetOutput(PassBase):
    """Adds ``offset`` to the first output (a bias folded twice): right metadata, wrong numbers."""

    passgate_stage = "export"
    offset = 0.5

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
        first = output.args[0][0]
        with gm.graph.inserting_before(output):
            shifted = gm.graph.call_function(ATEN.add.Tensor, (first, self.offset))
        shifted.meta = dict(first.meta)
        output.replace_input_with(first, shifted)
        gm.recompile()
        return PassResult(gm, True)


class OffsetOutputMore(OffsetOutput):
    offset = 0.75


class OffsetOutputBarely(OffsetOutput):
    offset = 0.5 * 1.004  # within the 1% margin: the same error, read back from a 3-digit message


class RaisesKeyError(PassBase):
    passgate_stage = "export"

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        return PassResult(gm, {}["weight_scale"])


class RaisesValueError(PassBase):
    passgate_stage = "export"

    def call(self, gm: torch.fx.GraphModule) -> PassResult:
        raise ValueError("weight_scale must be positive")


VENDOR = f'''
import sys
sys.path.insert(0, {str(TESTS)!r})
from harness.catalog import Build, Catalog, entry

def _drop(n):
    return Catalog("vendor", (), (entry("vendor", "test_baseline_worsened:DropStackTrace", build=Build("call", (n,)),
                                        contract="keeps every node's stack trace"),))

DROP_2, DROP_3, DROP_1 = _drop(2), _drop(3), _drop(1)
'''


def _run(tmp_path, attr, *extra):
    plugin = tmp_path / "vendor.py"
    plugin.write_text(VENDOR)
    report = tmp_path / f"report_{attr}"
    status = main(["run", "--catalog", f"{plugin}:{attr}", "--graphs", "mlp", "--report", str(report),
                   "--no-isolation", "--no-incremental", *extra])
    return status, json.loads((report / "results.json").read_text()), report


KEY = ("vendor.DropStackTrace", "mlp", "meta_stack_trace")


def test_one_more_unannotated_node_is_worsened_fewer_stays_known_and_update_accepts_it(tmp_path, capsys):
    status, doc, report = _run(tmp_path, "DROP_2")
    assert status == 1
    baseline = tmp_path / "baseline.json"
    assert main(["baseline", "update", "--baseline", str(baseline), "--from", str(report)]) == 0
    stored = json.loads(baseline.read_text())
    assert stored["schema_version"] == 3
    entry = bl.load(baseline).by_key()[KEY]
    lost = doc["results"][[r["check"] for r in doc["results"]].index("meta_stack_trace")]["details"]["lost"]
    assert len(lost) == 2 and entry.fingerprint.nodes == {"lost": tuple(sorted(lost)), "new_without": ()}

    status, doc, _ = _run(tmp_path, "DROP_2", "--baseline", str(baseline))
    assert status == 0 and doc["gate"]["worsened"] == [] and [tuple(reports.key({**d, "pass_name": d["pass"]}))
                                                              for d in doc["gate"]["known"]] == [KEY]

    capsys.readouterr()
    status, doc, report = _run(tmp_path, "DROP_3", "--baseline", str(baseline))
    out = capsys.readouterr().out
    assert status == 1 and doc["exit_status"] == 1
    g = doc["gate"]
    assert g["status"] == "fail" and g["regressions"] == [] and g["known"] == []
    assert [(d["pass"], d["graph"], d["check"]) for d in g["worsened"]] == [KEY]
    assert "1 lost not recorded" in g["worsened"][0]["worse"]
    assert "[worsened] meta_stack_trace: 3 surviving node(s) lost stack_trace" in out
    assert "WORSENED vendor.DropStackTrace x mlp x meta_stack_trace" in out
    assert "FAIL: 0 new violations, 1 worsened, 0 known" in out
    assert "### Worsened: 1" in (report / "summary.md").read_text()
    html = (report / "report.html").read_text()
    assert "<h3>Worsened</h3>" in html and "1 worsened" in html
    xml = JUnitXml.fromfile(str(report / "junit.xml"))
    failures = [r.message for s in xml for c in s for r in c.result if isinstance(r, Failure)]
    assert len(failures) == 1 and failures[0].startswith("worsened known violation (1 lost not recorded")
    props = {p.name: p.value for s in xml for p in s.properties()}
    assert props["passgate.worsened_violations"] == "1" and props["passgate.new_violations"] == "0"

    status, doc, _ = _run(tmp_path, "DROP_1", "--baseline", str(baseline))
    assert status == 0 and doc["gate"]["worsened"] == [] and len(doc["gate"]["known"]) == 1  # better: still known

    capsys.readouterr()
    assert main(["baseline", "update", "--baseline", str(baseline), "--from", str(report)]) == 0
    assert "accepted worsened: vendor.DropStackTrace x mlp x meta_stack_trace" in capsys.readouterr().out
    accepted = bl.load(baseline).by_key()[KEY].fingerprint.nodes["lost"]
    assert len(accepted) == 3 and set(lost) < set(accepted)
    status, doc, _ = _run(tmp_path, "DROP_3", "--baseline", str(baseline))
    assert status == 0 and doc["gate"]["worsened"] == []


def _baselined(pass_obj, name: str, check: str):
    results = check_pass(pass_obj, ("mlp",), name=name)
    base = bl.updated(results, None)
    assert [e.check for e in base.entries] == [check], [(r.check, r.message) for r in results if r.is_violation()]
    return base


def test_another_exception_type_is_worsened():
    base = _baselined(RaisesKeyError, "vendor.Raises", "runs")
    assert base.entries[0].fingerprint.exceptions == ("KeyError",)
    assert bl.gate(check_pass(RaisesKeyError, ("mlp",), name="vendor.Raises"), base).passed
    g = bl.gate(check_pass(RaisesValueError, ("mlp",), name="vendor.Raises"), base)
    assert not g.passed and g.regressions == [] and g.known == []
    assert [d["check"] for d in g.worsened] == ["runs"] and "raises ValueError, recorded KeyError" in g.worsened[0]["worse"]


def test_a_larger_numerics_error_is_worsened_one_within_the_margin_is_not():
    base = _baselined(OffsetOutput, "vendor.Offset", "numerics")
    assert base.entries[0].fingerprint.error == pytest.approx(0.5)
    worse = bl.gate(check_pass(OffsetOutputMore, ("mlp",), name="vendor.Offset"), base)
    assert not worse.passed and [d["check"] for d in worse.worsened] == ["numerics"]
    assert "error 0.75, recorded 0.5" in worse.worsened[0]["worse"]
    same = bl.gate(check_pass(OffsetOutputBarely, ("mlp",), name="vendor.Offset"), base)
    assert same.passed and [d["check"] for d in same.known] == ["numerics"]
    # read back from the recorded message alone (3 significant digits), the margin covers the rounding too
    from_message = bl.Baseline([bl.BaselineEntry(*base.entries[0].key, "r", message=base.entries[0].message,
                                                 fingerprint=None)])
    assert bl.gate(check_pass(OffsetOutputBarely, ("mlp",), name="vendor.Offset"), from_message).passed


V1 = {"schema": "passgate-baseline", "schema_version": 1, "generated": {}, "strict": False, "entries": [
    {"pass": "p", "graph": "g", "check": "meta_stack_trace", "reason": "known",
     "message": "2 surviving node(s) lost stack_trace: gelu, linear"},
    {"pass": "p", "graph": "g", "check": "input_unchanged", "reason": "known"},
    {"pass": "p", "graph": "h", "check": "runs", "reason": "known"},
]}


def test_a_version_1_baseline_loads_and_entries_without_a_fingerprint_gate_by_key_and_say_so(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(V1))
    base = bl.load(path)
    by = base.by_key()
    assert by[("p", "g", "meta_stack_trace")].fingerprint.nodes == {"lost": ("gelu", "linear")}
    assert by[("p", "g", "input_unchanged")].fingerprint is None and by[("p", "h", "runs")].fingerprint is None
    worse = result("p", "g", "meta_stack_trace", Status.FAIL, "3 surviving node(s) lost stack_trace: gelu, linear, relu",
                   {"lost": ["linear", "gelu", "relu"], "new_without": []})
    anything = [result("p", "g", "input_unchanged", Status.FAIL, "the pass changed the shared graph case"),
                result("p", "h", "runs", Status.FAIL, "the pass raised: TypeError: anything at all")]
    g = bl.gate([worse, *anything], base)
    assert [d["check"] for d in g.worsened] == ["meta_stack_trace"] and not g.passed
    assert sorted(d["check"] for d in g.known) == ["input_unchanged", "runs"] and g.without_fingerprint == 2
    assert "2 known violation(s) without a fingerprint: judged by pass x graph x check only" in bl.render(g)
    assert g.to_json()["without_fingerprint"] == 2
    bl.save(base, tmp_path / "v2.json")  # rewritten as the current version: the derived fingerprint is stored
    again = json.loads((tmp_path / "v2.json").read_text())
    assert again["schema_version"] == 3
    assert [e.get("fingerprint") for e in again["entries"]] == [None, {"nodes": {"lost": ["gelu", "linear"]}}, None]
    assert bl.load(tmp_path / "v2.json").by_key() == by


def test_the_committed_baseline_gates_its_own_violations_exactly_as_before():
    base = bl.load(TESTS.parent / "reports" / "baseline.json")
    results = [result(*e.key, Status.FAIL, e.message) for e in base.entries]
    g = bl.gate(results, base, strict=True)
    assert g.worsened == [] and g.regressions == [] and g.passed
    assert len(g.known) == len(base.entries)  # every entry known, as by its key alone
    assert sum(e.fingerprint is not None for e in base.entries) > len(base.entries) // 2
    assert g.without_fingerprint == sum(e.fingerprint is None for e in base.entries)


def test_the_conformance_suite_fails_a_worsened_check_and_xfails_a_known_one(tmp_path):
    """Two real units of the quick suite, each known to the baseline check for check, but one check's entry
    records one offending node fewer than the pass leaves now: that check's subtest fails and the report's gate
    says worsened; the other checks, known as they are, xfail."""
    import subprocess
    import sys

    committed = bl.load(TESTS.parent / "reports" / "baseline.json")
    graphs = ("mlp", "conv_bn_relu")
    kept = [e for e in committed.entries if e.pass_name == "exir.ToOutVarPass" and e.graph in graphs]
    grown = committed.by_key()[("exir.ToOutVarPass", "mlp", "meta_stack_trace")]
    assert grown.message == "5 new node(s) lack stack_trace: alloc, alloc_1, alloc_2, alloc_3, alloc_4"
    fewer = bl.BaselineEntry(*grown.key, grown.reason, message="4 new node(s) lack stack_trace: alloc, alloc_1, "
                             "alloc_2, alloc_3", fingerprint=None)
    path = bl.save(bl.Baseline([fewer if e.key == grown.key else e for e in kept]), tmp_path / "baseline.json")
    units = " or ".join(f"exir.ToOutVarPass-{g}" for g in graphs)
    proc = subprocess.run([sys.executable, "-m", "pytest", "conformance", "--passgate-profile", "quick", "-k", units,
                           "--passgate-baseline", str(path), "--passgate-report", str(tmp_path / "report"),
                           "-n", "0", "-p", "no:cacheprovider", "-q", "-rf", "--no-header"],
                          cwd=TESTS.parent, capture_output=True, text=True, timeout=900)
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]
    # pytest appends " - <message>" when the terminal is wide enough; the ids alone are what is asserted
    failed = [line.split(" - ")[0] for line in out.splitlines() if line.startswith(("FAILED", "SUBFAILED"))]
    assert failed == ["SUBFAILED[meta_stack_trace] conformance/test_conformance.py::test_unit[entry:exir.ToOutVarPass-mlp]",
                      "FAILED conformance/test_conformance.py::test_unit[entry:exir.ToOutVarPass-mlp]"], out[-3000:]
    assert "worsened: 1 new_without not recorded: alloc_4" in out
    gate = json.loads((tmp_path / "report" / "results.json").read_text())["gate"]
    assert [(d["graph"], d["check"]) for d in gate["worsened"]] == [("mlp", "meta_stack_trace")]
    assert len(gate["known"]) == len(kept) - 1 and not gate["regressions"], gate


def _meta(names: list) -> object:
    from harness.check.metadata import names_preview

    return result("p", "g", "meta_stack_trace", Status.FAIL, f"{len(names)} new node(s) lack stack_trace: "
                  f"{names_preview(names)}", {"lost": [], "new_without": names})


@pytest.mark.parametrize("now, worsened", [(40, False), (39, False), (41, True)])
def test_an_entry_whose_message_named_only_some_nodes_compares_their_count(now, worsened):
    """A recorded ``(+34 more)``: the nodes it did not name are unknown, so only more of them is worse."""
    recorded = _meta([f"alloc_{i}" if i else "alloc" for i in range(40)])
    entry = bl.BaselineEntry("p", "g", "meta_stack_trace", "r", message=recorded.message,
                             fingerprint=vf.from_message(recorded.message))
    assert entry.fingerprint.more == {"new_without": 34}
    g = bl.gate([_meta([f"alloc_{i}" if i else "alloc" for i in range(now)])], bl.Baseline([entry]))
    assert bool(g.worsened) is worsened and g.passed is not worsened


def test_a_message_cut_short_says_nothing_of_what_lies_past_the_cut():
    lost = [f"quantized_decomposed_dequantize_per_tensor_default_{i}" for i in range(7)]
    full = f"7 surviving node(s) lost stack_trace: {', '.join(lost[:6])} (+1 more); 2 new node(s) lack stack_trace: a, b"
    recorded = vf.first_line(full)
    assert len(recorded) == vf.MESSAGE_LIMIT and "new node(s)" not in recorded
    fp = vf.from_message(recorded)
    assert fp.cut and set(fp.nodes) == {"lost"} and fp.count("lost") == 7
    now = result("p", "g", "meta_stack_trace", Status.FAIL, full, {"lost": lost, "new_without": ["a", "b"]})
    entry = bl.BaselineEntry("p", "g", "meta_stack_trace", "r", message=recorded, fingerprint=fp)
    assert bl.gate([now], bl.Baseline([entry])).passed  # the two new nodes were past the cut: not known to be new
    one_more = result("p", "g", "meta_stack_trace", Status.FAIL, full, {"lost": lost + ["x"], "new_without": ["a", "b"]})
    assert not bl.gate([one_more], bl.Baseline([entry])).passed  # 8 lost where the entry counted 7


def test_a_message_cut_inside_its_more_count_names_no_bogus_node():
    """A stored message cut inside "(+7 more)" still names its first nodes whole: read from the message alone, the
    fragment was taken for a node name the entry never recorded, and the committed baseline failed itself."""
    names = [f"n_{i}" for i in range(1, 14)]
    entry = bl.BaselineEntry("p", "g", "meta_stack_trace", "why", message="13 new node(s) lack stack_trace: "
                             "n_1, n_2, n_3, n_4, n_5, n_6 (+7 ", fingerprint=bl.fingerprint_of(_meta(names)))
    now = result("p", "g", "meta_stack_trace", Status.FAIL, entry.message)
    assert bl.gate([now], bl.Baseline([entry]), strict=True).worsened == []
    grown = _meta([*names, "n_14"])
    assert bl.gate([grown], bl.Baseline([entry]), strict=True).worsened != []
