"""The conformance suite's first minutes (issue 34, item 3): units most likely to fail first, a progress line.

Tiers come from real records of the verdict cache: two real passes (one
keeps every check, one drops the stack traces ``meta_stack_trace`` asks
for) judged by ``passgate run`` on real lowered graphs, then surveyed
before the next judging. The suite's own output is read from a real
``pytest conformance`` run under pytest-xdist on a slice of the quick profile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from run_helpers import two_file_catalog

from harness.cli.main import main
from harness.run import outlook
from harness.run.progress import CALIBRATE_AFTER_S, ITEM_SECONDS, Progress, duration

ROOT = Path(__file__).resolve().parent.parent
GRAPHS = ["mlp", "conv_bn_relu"]

CLEAN = '''
import torch
from torch.fx.passes.infra.pass_base import PassBase, PassResult


class LookOnly(PassBase):
    """Looks at the graph and leaves it as it was."""

    def call(self, gm: torch.fx.GraphModule):
        return PassResult(gm, False)
'''

DROPS = '''
import torch
from torch.fx.passes.infra.pass_base import PassBase, PassResult


class DropStackTraces(PassBase):
    """Forgets every node's stack trace: meta_stack_trace (a must) fails."""

    def call(self, gm: torch.fx.GraphModule):
        for node in gm.graph.nodes:
            node.meta.pop("stack_trace", None)
        return PassResult(gm, True)
'''


def test_progress_counts_units_and_estimates_from_their_recorded_costs():
    p = Progress({"a": 2, "b": 1, "c": 1}, {"a": 10.0, "b": 0.0, "c": 30.0}, workers=2)
    assert (p.units_total, p.left) == (3, 3)
    assert p.total_seconds == pytest.approx(40.0 + 4 * ITEM_SECONDS)
    assert p.item("a", now=100.0) is False  # one of a's two items
    assert p.item("unknown", now=101.0) is False and p.done == 0
    assert p.eta(101.0) == pytest.approx(p.total_seconds / 2)  # no calibration yet: the costs over the workers
    assert p.item("a", now=102.0) is True and (p.done, p.left) == (1, 2)
    # calibrated: a's 10 s of recorded work took CALIBRATE_AFTER_S of wall time, so the 30 s left take 3x as long
    now = 100.0 + CALIBRATE_AFTER_S
    assert p.eta(now) == pytest.approx((30.0 + 2 * ITEM_SECONDS) * CALIBRATE_AFTER_S / (10.0 + 2 * ITEM_SECONDS))
    p.item("b", now)
    p.failed = 1
    assert p.line(now) == (f"passgate: 2 of 3 units done, 1 left | 1 failed | {duration(CALIBRATE_AFTER_S)}, "
                           f"ETA ~{duration(p.eta(now))}")
    p.item("c", now)
    assert p.eta(now) == 0.0 and p.summary(now) == "passgate: 3 of 3 units done in 20s | 1 failed"


@pytest.mark.parametrize("seconds, text", [(0.4, "0s"), (42, "42s"), (185, "3m05s"), (3725, "1h02m")])
def test_durations_read_as_a_person_would_say_them(seconds, text):
    assert duration(seconds) == text


@pytest.fixture
def catalog(tmp_path, passgate_cache, monkeypatch):
    """A catalog of a clean pass and a failing one, each in its own file, and a cache folder of our own."""
    made = two_file_catalog(tmp_path, passgate_cache, "pgp", {"LookOnly": CLEAN, "DropStackTraces": DROPS}, "pgp")
    monkeypatch.syspath_prepend(str(made["src"]))
    yield {**made, "clean": made["files"][0]}
    for m in made["mods"]:
        sys.modules.pop(m, None)


def _survey(catalog, known=(), edited=None) -> tuple:
    from harness.core.config import RunConfig
    from harness.run import forking, plan
    from harness.run.incremental import Incremental
    from harness.run.verdicts import VerdictCache

    p = plan.build(catalogs=[catalog["spec"]], graphs=GRAPHS)
    inc = Incremental(VerdictCache(catalog["cache"] / "verdicts"))
    units = p.units()
    return units, outlook.survey(inc, p, units, RunConfig(isolate=forking.available()), known=known, edited=edited)


def _tiers(units, looks) -> dict:
    return {(u.name.split(".")[-1], u.graph): looks[u.key].tier for u in units}


def test_tiers_say_which_units_fail_first_from_what_the_cache_recorded(catalog):
    units, looks = _survey(catalog)
    assert set(_tiers(units, looks).values()) == {outlook.NEW}  # never judged
    status = main(["run", "--catalog", catalog["spec"], "--graphs", *GRAPHS, "--cache-dir", str(catalog["cache"]),
                   "--report", str(catalog["tmp"] / "r1"), "-q"])
    assert status == 1  # DropStackTraces fails meta_stack_trace
    units, looks = _survey(catalog)
    assert _tiers(units, looks) == {("LookOnly", g): outlook.SETTLED for g in GRAPHS} | {
        ("DropStackTraces", g): outlook.FAILED for g in GRAPHS}
    assert all(looks[u.key].reusable and looks[u.key].seconds == 0.0 for u in units)
    # the same violations, known to the baseline: nothing to expect from them first
    doc = json.loads((catalog["tmp"] / "r1" / "results.json").read_text())
    known = {(r["pass_name"], r["graph"], r["check"]) for r in doc["results"] if r["status"] == "fail"}
    assert set(_tiers(units, _survey(catalog, known=known)[1]).values()) == {outlook.SETTLED}
    # an edit to LookOnly's file: its records no longer hold; edited in the working tree, it comes before new units
    catalog["clean"].write_text(catalog["clean"].read_text() + "\n# edited\n")
    units, looks = _survey(catalog)
    assert {t for (name, _), t in _tiers(units, looks).items() if name == "LookOnly"} == {outlook.STALE}
    assert all(looks[u.key].seconds > 0 for u in units if u.name.endswith("LookOnly"))  # its recorded cost
    units, looks = _survey(catalog, edited={os.path.realpath(catalog["clean"])})
    assert {t for (name, _), t in _tiers(units, looks).items() if name == "LookOnly"} == {outlook.EDITED}


def test_the_order_puts_a_groups_likeliest_failure_first_and_keeps_groups_together(catalog):
    units, _ = _survey(catalog)
    group = lambda u: u.name  # noqa: E731 - as the suite groups a catalog entry: all its graphs on one worker
    clean, drops = units[0].name, units[-1].name
    tiers = {clean: outlook.SETTLED, drops: outlook.FAILED}
    order = [(u.name, u.graph) for u in outlook.ordered(units, tiers, group)]
    assert order == [(drops, g) for g in GRAPHS] + [(clean, g) for g in GRAPHS]
    looks = {u.key: outlook.Outlook(outlook.STALE if u.graph == "mlp" else outlook.SETTLED, 1.0, False)
             for u in units}
    assert outlook.group_tiers(units, looks, group) == {clean: outlook.STALE, drops: outlook.STALE}


def _conformance(cache: Path, report: Path, *extra) -> subprocess.CompletedProcess:
    env = {**os.environ, "PASSGATE_CACHE_DIR": str(cache), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "pytest", "conformance", "-q", "-p", "no:cacheprovider",
                           "-p", "no:logging", "--no-header", "--passgate-profile", "quick",
                           "--passgate-baseline", "none", "--passgate-report", str(report),
                           "--junitxml", str(report.parent / f"{report.name}-pytest.xml"), "--dist", "loadgroup",
                           "-k", "exir.CSEPass or exir.ToOutVarPass", *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)


def test_the_suite_prints_units_and_an_eta_and_judges_last_times_failures_first(tmp_path, passgate_cache):
    """A real run under xdist: a headline, progress lines in units, failures as they come, no dots; the second
    run judges first the pass whose verdicts failed the first time, and JUnit XML still names every item."""
    cache = tmp_path / "cache"
    cache.mkdir()
    for f in Path(passgate_cache).glob("*.case"):
        (cache / f.name).symlink_to(f)
    first = _conformance(cache, tmp_path / "r1", "-n", "2", "--passgate-progress-every", "0")
    out = first.stdout
    assert first.returncode == 1, out[-3000:] + first.stderr[-3000:]  # ToOutVarPass fails without its baseline
    headline = next(line for line in out.splitlines() if line.startswith("passgate: ") and "units in" in line)
    units = int(headline.split()[1].replace(",", ""))
    assert units >= 4 and f"judged first: {units:,} new; 0 settled" in headline, headline
    lines = [line for line in out.splitlines() if " units done, " in line and " left" in line]
    assert lines and lines[-1].startswith(f"passgate: {units:,} of {units:,} units done, 0 left"), lines[-3:]
    assert f"passgate: {units:,} of {units:,} units done in " in out
    assert "passgate: FAILED entry:exir.ToOutVarPass-mlp (meta_stack_trace): [meta_stack_trace] " in out
    ours = [line for line in out.splitlines() if line.startswith("passgate: FAILED")]
    assert not [line for line in ours if "failed subtests" in line]  # a unit failed by its checks: no line of its own
    assert not any(set(line.strip()) <= set(".sxXF") and line.strip() for line in out.splitlines())  # no dots
    assert "Failed to load" not in first.stderr and "_pytree" not in first.stderr
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "r1-pytest.xml").getroot().iter("testcase")}
    mlp = next((c for n, c in cases.items() if n.startswith("test_unit[entry:exir.ToOutVarPass-mlp]")), None)
    assert mlp is not None, sorted(cases)[:5]  # one testcase per unit, a failure per failing check, named
    assert any(f.get("message", "").startswith("Failed: [meta_stack_trace] ") for f in mlp.iter("failure"))

    second = _conformance(cache, tmp_path / "r2", "-n", "1")
    assert second.returncode == 1, second.stdout[-3000:]
    assert "failed last time" in second.stdout, second.stdout[-3000:]
    order = [c.get("name") for c in ET.parse(tmp_path / "r2-pytest.xml").getroot().iter("testcase")]
    assert order[0].startswith("test_unit[entry:exir.ToOutVarPass-"), order[:3]  # one worker: the collection order


def test_the_start_up_chatter_of_the_dependencies_stays_out_of_the_terminal(tmp_path, passgate_cache):
    """``-n auto`` (what tox passes) plans before pytest_configure: torch and torchao are imported there, and
    their warnings (torchao's 'Failed to load ... .so', torch's pytree deprecation) must not reach the terminal."""
    proc = _conformance(Path(passgate_cache), tmp_path / "r", "-n", "auto", "-k", "no_item_has_this_name")
    assert proc.returncode == 5, proc.stdout[-2000:] + proc.stderr[-2000:]  # nothing selected: pytest's status
    assert "passgate: 0 units in 0 items" in proc.stdout
    assert proc.stderr.strip() == "", proc.stderr[-2000:]


def test_an_items_id_is_read_whole_when_its_xdist_group_holds_brackets():
    """A configured entry's group (``entry:P[config]``) holds a ``]``: read up to the last one, the id of every
    item of that entry came out wrong and its units were never counted (the progress said 0 left while they ran)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from conformance.progress import param_id

    assert param_id("conformance/test_conformance.py::test_unit[entry:q.R[annotation]-g]@entry:q.R[annotation]") \
        == "entry:q.R[annotation]-g"
    assert param_id("conformance/test_conformance.py::test_unit[pipeline:x-g]@pipeline:x@g") == "pipeline:x-g"
    assert param_id("conformance/test_conformance.py::test_unit[entry:p[c]-g]") == "entry:p[c]-g"


def test_a_configured_entrys_items_form_one_xdist_group_so_one_worker_judges_the_entry():
    """xdist's loadgroup reads an item's group only after the node id's last ``]``: a group written
    ``entry:P[config]`` was no group, the entry's items were scheduled one by one, and both workers judged the
    whole entry. Asked of xdist's own scheduler, not of a copy of its rule."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from xdist.scheduler.loadgroup import LoadGroupScheduling

    from conformance.ordering import group_of
    from harness.run.plan import EntryUnit

    scope = LoadGroupScheduling._split_scope
    groups = set()
    for graph in ("mlp", "unet_q8"):
        unit = EntryUnit("qualcomm.AnnotateQuantAttrs[skip_advanced_requant]", graph)
        nodeid = f"conformance/test_conformance.py::test_unit[entry:{unit.name}-{graph}]@{group_of(unit)}"
        groups.add(scope(None, nodeid))
    assert groups == {"entry:qualcomm.AnnotateQuantAttrs(skip_advanced_requant)"}
    assert group_of(EntryUnit("exir.RemoveNoopPass", "mlp")) == "entry:exir.RemoveNoopPass"
