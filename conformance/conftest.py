"""The conformance suite as a pytest plugin: one test item per unit, its failing checks as subtests.

The workload is a :class:`harness.run.plan.RunPlan` of a profile (``standard`` by
default: every catalog on the built-in and quantized graphs, the backend
pipelines verified after every pass, the partitioners, one case per Vulkan
Q/DQ fusion recipe), plus the pass-writing guide's reference passes on the
built-in graphs. ``passgate run --profile standard`` does the same work in
one process.

A unit (one pass, pipeline, partitioner or fusion on one graph) is one
item; a pass is judged on all its graphs at once, when its first item runs.
The items of a pass are pinned to one pytest-xdist worker with
``xdist_group`` (run with ``--dist loadgroup``). A unit's checks that hold
make no report of their own (:func:`verdicts`): a new violation, or a
worsened known one (its fingerprint got worse than the entry records:
:func:`worsened`), is a failing subtest, as the gate fails it; a unit whose
only violations the baseline (``reports/baseline.json``) records xfails
(:data:`KNOWN_VIOLATIONS`); a fixed one is listed in the report's gate. Each item carries its
CheckResults in ``user_properties``, so the controller collects them all and
writes the passgate report (results.json with its gate section, and its
siblings), which names pass, graph and check for every verdict.

Units are handed out most likely to fail first (:mod:`harness.run.outlook`:
failed last time, edited, new, stale, then the settled ones), so the first
minutes of a long run say the most; the controller computes the tiers once
and gives them to every worker, which all order their items alike. The
terminal shows units done and left with an ETA instead of a dot per item
(conformance/progress.py).

Options: ``--passgate-profile quick|standard|full``, ``--passgate-report DIR``
(default reports/generated/conformance), ``--passgate-baseline FILE``
(default reports/baseline.json; ``none`` gates against nothing),
``--passgate-progress-every SECONDS`` (default 30), ``--passgate-dots``
(pytest's own per-item output), ``--passgate-no-incremental`` (judge every
unit, still record), ``--passgate-no-verdict-cache`` (judge every unit and
keep nothing: no recording either).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance import ordering

__all__ = ["ROOT", "DEFAULT_BASELINE", "pytest_addoption", "pytest_configure", "pytest_xdist_auto_num_workers",
           "pytest_configure_node", "pytest_generate_tests", "Verdict", "verdicts", "worsened", "lost_rewrite", "outlooks",
           "pytest_collection_modifyitems", "incremental", "unit_results", "KNOWN_VIOLATIONS", "pytest_runtest_makereport", "pytest_runtest_logreport",
           "pytest_sessionfinish", "pytest_terminal_summary"]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BASELINE = ROOT / "reports" / "baseline.json"


def pytest_addoption(parser):
    group = parser.getgroup("passgate")
    group.addoption("--passgate-profile", default="standard", help="suite profile: quick, standard or full")
    group.addoption("--passgate-report", default=str(ROOT / "reports" / "generated" / "conformance"),
                    help="folder for the conformance report")
    group.addoption("--passgate-baseline", default=str(DEFAULT_BASELINE),
                    help="known violations (default reports/baseline.json; 'none' for no baseline)")
    group.addoption("--passgate-no-incremental", action="store_true",
                    help="judge every unit: reuse no recorded verdict (the verdict cache is still written)")
    group.addoption("--passgate-no-verdict-cache", action="store_true",
                    help="judge every unit and keep no verdict: nothing reused, nothing written, and no recording "
                         "of what each unit executed (that recording's tracing is part of a cold run's check time)")
    group.addoption("--passgate-changed-since", metavar="GITREF",
                    help="judge only the units whose recorded dependencies include a file changed since GITREF")
    group.addoption("--passgate-affected-by", nargs="+", metavar="FILE",
                    help="judge only the units whose recorded dependencies include one of these files")
    group.addoption("--passgate-progress-every", type=float, default=30.0, metavar="SECONDS",
                    help="a progress line (units done and left, ETA) every SECONDS (default 30)")
    group.addoption("--passgate-dots", action="store_true",
                    help="pytest's own per-item output instead of the progress lines")


def pytest_configure(config):
    from harness.core.quiet import silence_third_party

    silence_third_party()
    config._passgate_started = time.time()
    if config.getoption("--passgate-no-verdict-cache") and (config.getoption("--passgate-changed-since")
                                                            or config.getoption("--passgate-affected-by")):
        pytest.exit("passgate: --passgate-no-verdict-cache judges every unit; it cannot select the units a change "
                    "affects (--passgate-changed-since, --passgate-affected-by)", returncode=2)
    if hasattr(config, "workerinput") or config.getoption("--passgate-dots") or config.option.verbose > 0:
        return  # workers report to the controller; -v and --passgate-dots want pytest's per-item lines
    from conformance.progress import ProgressReporter

    config.pluginmanager.register(ProgressReporter(
        config, units=lambda: _ordered_units(config), unit_id=ordering.unit_id,
        outlooks=lambda: outlooks(config), every=config.getoption("--passgate-progress-every")), "passgate-progress")


def _plan(config):
    """The suite's plan, built once per process (collection in every xdist worker, the report on the controller)."""
    if not hasattr(config, "_passgate_plan"):
        from harness.core.quiet import silence_third_party

        silence_third_party()  # before torch and torchao import: -n auto plans before pytest_configure silences
        from harness.run import plan, profiles

        config._passgate_plan = plan.build(config.getoption("--passgate-profile"), passes=profiles.suite_passes())
    return config._passgate_plan


def _baseline(config):
    if not hasattr(config, "_passgate_baseline"):
        from harness.report import baseline as bl

        path = config.getoption("--passgate-baseline")
        config._passgate_baseline = bl.Baseline() if path == "none" else bl.load(path)
    return config._passgate_baseline


def _known(config) -> dict:
    """(pass, graph, check) -> reason: the baseline's entries and the reference passes' known violations."""
    if not hasattr(config, "_passgate_known"):
        from harness.run.profiles import known_violations

        known = {e.key: e.reason + (f" ({e.upstream})" if e.upstream else "") for e in _baseline(config).entries}
        known.update(known_violations())
        config._passgate_known = known
    return config._passgate_known


@dataclass(frozen=True)
class Verdict:
    """A check of a unit that does not hold, as its subtest reports it."""

    pass_name: str  # the pass judged: the unit's own, or a pipeline's step
    check: str
    message: str  # what its subtest fails with (or, known, what the unit's xfail names), the check id first
    known: bool  # a violation the baseline records, no worse than recorded: xfails


def verdicts(config, unit, results: dict) -> list[Verdict]:
    """The checks of ``unit`` (``results``: (pass, check) -> CheckResult) that do not hold, in item order.

    A ``runs`` record whose pass changed this graph when the baseline was
    recorded and now leaves it as handed fails the gate's ``still_exercised``
    (every other check holds on such a pair). A violation fails unless the
    baseline knows it; a known one that got worse fails as ``worsened``.
    Checks that hold, skip or do not apply give nothing.
    """
    from harness.core.results import Status

    out = []
    known = _known(config)
    for (pass_name, check), r in results.items():
        lost = lost_rewrite(config, r) if check == "runs" else ""
        if lost:
            out.append(Verdict(pass_name, check, f"[still_exercised] {lost}", False))
        elif r.status in (Status.SKIP, Status.NOT_APPLICABLE) or not r.is_violation():
            continue
        elif how := worsened(config, r):
            out.append(Verdict(pass_name, check, f"[{check}] worsened: {how}: {r.message}", False))
        else:
            reason = known.get((pass_name, unit.graph, check))
            out.append(Verdict(pass_name, check, f"[{check}] " + (f"known: {reason}" if reason else r.message),
                               reason is not None))
    return out


def worsened(config, result) -> str:
    """How ``result``, a violation the baseline records, got worse than its entry's fingerprint ("" if it did not)."""
    from harness.report import baseline as bl

    if not hasattr(config, "_passgate_baseline_by_key"):
        config._passgate_baseline_by_key = _baseline(config).by_key()
    entry = config._passgate_baseline_by_key.get((result.pass_name, result.graph, result.check))
    return bl.worse(entry, result) if entry is not None else ""


def lost_rewrite(config, result) -> str:
    """Why ``result`` (a ``runs`` record) fails the gate's ``still_exercised``: its pass changed this graph when
    the baseline was recorded and now leaves it as handed ("" when it does not)."""
    from harness.report import baseline as bl

    return bl.lost_rewrite(result, _baseline(config))


def pytest_generate_tests(metafunc):
    if "conformance_unit" not in metafunc.fixturenames:
        return
    units = _ordered_units(metafunc.config)
    metafunc.parametrize("conformance_unit", [pytest.param(u, marks=pytest.mark.xdist_group(ordering.group_of(u)))
                                              for u in units], ids=[ordering.unit_id(u) for u in units])


def _ordered_units(config) -> list:
    """The plan's units in judging order (conformance/ordering.py): the controller's tiers in a worker."""
    if not hasattr(config, "_passgate_ordered"):
        shared = getattr(config, "workerinput", {}).get(ordering.WORKERINPUT_KEY)
        units = _plan(config).units()
        config._passgate_ordered = ordering.ordered_units(
            units, shared if shared is not None else ordering.shared_tiers(units, outlooks(config)))
    return config._passgate_ordered


def outlooks(config) -> dict:
    """Unit key -> :class:`harness.run.outlook.Outlook` of every unit, from the verdict cache, once per process."""
    if not hasattr(config, "_passgate_outlooks"):
        from harness.run import costs
        from harness.run.outlook import survey

        p, inc = _plan(config), incremental(config)
        edited = ordering.edited_files(str(ROOT), inc.changed)  # the working tree's edits: their units first
        units = p.units()
        config._passgate_outlooks = survey(inc, p, units, _run_config(), known=_known(config), edited=edited,
                                           priors=costs.priors(units, ROOT / "reports" / "unit-costs.json"))
    return config._passgate_outlooks


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """Give each xdist worker the controller's tiers, so all order their items alike."""
    node.workerinput[ordering.WORKERINPUT_KEY] = ordering.shared_tiers(_plan(node.config).units(),
                                                                        outlooks(node.config))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Suffix each item's node id with its group, which is what ``--dist loadgroup`` schedules by."""
    if getattr(config.option, "loadgroup", False):  # set in xdist workers under --dist loadgroup
        ordering.suffix_groups(items)


_UNITS: dict = {}


def incremental(config):
    """This process's verdict cache and affected-only selection (harness/run/incremental.py), built once."""
    if not hasattr(config, "_passgate_incremental"):
        from harness.graphs.cache import default_cache_root
        from harness.run import affected
        from harness.run.incremental import Incremental
        from harness.run.verdicts import VerdictCache

        changed = None
        if config.getoption("--passgate-changed-since"):
            changed = affected.changed_since(config.getoption("--passgate-changed-since"), str(ROOT))
        if config.getoption("--passgate-affected-by"):
            changed = (changed or set()) | affected.normalize(config.getoption("--passgate-affected-by"))
        no_cache = config.getoption("--passgate-no-verdict-cache")  # with a change selection: refused at configure
        cache = None if no_cache else VerdictCache(default_cache_root() / "verdicts")
        config._passgate_incremental = Incremental(cache, reuse=not (no_cache or config.getoption(
            "--passgate-no-incremental")), changed=changed)
    return config._passgate_incremental


def _run_config():
    """How the suite judges its units (the verdict cache keys on it)."""
    from harness.core.config import RunConfig
    from harness.run import forking

    return RunConfig(isolate=forking.available())


# Judging work (CPU-seconds) above which -n auto distributes: below, the per-item cost xdist adds to some 200,000
# items (their reports travel to the controller, which handles them one by one: minutes) outweighs what a
# second core saves.
PARALLEL_WORTH_S = 600.0


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (what ``tox -e conformance`` passes): the cores when there is real judging to do, none when
    every unit's recorded verdicts hold or the units left to judge are a few minutes of work.

    Why: a reused unit costs its items' reporting only, and distributed, each item's setup, call and teardown
    reports go from a worker to the controller, which handles them one at a time while the workers wait: a fully
    reused standard suite took 9 min on 2 workers. In one process there is no such traffic. With much to judge
    (a cold cache, a change every pass executes), the cores judge it, a pass's units on one worker (``--dist
    loadgroup``). ``-n N`` always means N.
    """
    import os

    pending = [o for o in outlooks(config).values() if not o.reusable]
    config._passgate_pending = (len(pending), sum(o.seconds for o in pending))
    return (os.cpu_count() or 1) if config._passgate_pending[1] > PARALLEL_WORTH_S else 0


def unit_results(config, unit) -> dict:
    """(pass name, check) -> CheckResult for every check of ``unit``, computed once per process.

    The first item of a pass judges the pass on every graph of its group in
    one ``check_all`` call, as ``passgate run`` does: an isolated run forks
    one worker pool per pass instead of one per pass x graph.
    """
    if unit not in _UNITS:
        from harness.graphs.cases import load_cases

        p = _plan(config)
        batch = _groups(config)[ordering.group_of(unit)] if unit.batched else [unit]
        got: dict = {u: {} for u in batch}
        by_graph = {u.graph: u for u in batch}
        # Catalog entries run in forked workers (harness/run/isolation.py): a pass that segfaults or hangs
        # in native code fails its own items with the signal instead of taking the xdist worker down.
        # Units whose recorded verdicts still hold are reused; cases are loaded only for those that run.
        for r in incremental(config).execute(p, batch, _run_config(),
                                             load_cases=lambda specs: load_cases(specs, loaded=_case_loaded)):
            got[by_graph[r.graph]][(r.pass_name, r.check)] = r
        _UNITS.update(got)
    return _UNITS[unit]


def _groups(config) -> dict:
    """xdist group -> the plan's units in it, built once per process."""
    if not hasattr(config, "_passgate_groups"):
        config._passgate_groups = {}
        for u in _plan(config).units():
            config._passgate_groups.setdefault(ordering.group_of(u), []).append(u)
    return config._passgate_groups


_CASES: dict = {}  # case name -> its record and ops, in this process (see _case_loaded)
_PENDING_CASES: list = []  # names loaded since the last item's report: sent with the next one


def _case_loaded(index: int, case) -> None:
    """Remember a case's record (cache or lowered, seconds) and ops, for the controller's report.

    Cases are loaded in the xdist workers, the report is written on the
    controller: what the controller learns of a worker travels in the items'
    ``user_properties``, so the next item's report carries it
    (:func:`pytest_runtest_makereport`), once per case and worker. The record
    is also stored beside the case in the lowered-graph cache, for the runs
    that reuse every verdict on it (:func:`_read_reused_cases`).
    """
    if case.name in _CASES:
        return
    from harness.graphs.cache import default_cache
    from harness.graphs.op_coverage import case_ops

    try:
        ops = case_ops(case)
        keys = sorted(set(ops) | set(getattr(ops, "dtype_keys", ())))
    except Exception:  # noqa: BLE001 - a case without a readable graph has no ops to count
        keys = []
    spec = case.spec
    _CASES[case.name] = {"name": case.name, "source": spec.source, "key": spec.key, "from_cache": case.from_cache,
                         "lower_seconds": round(case.lower_seconds, 4), "ops": keys}
    _PENDING_CASES.append(case.name)
    cache = default_cache()
    if cache is not None and keys and cache.summary(spec) is None:
        cache.store_summary(spec, {"name": case.name, "source": spec.source, "key": spec.key, "ops": keys})


KNOWN_VIOLATIONS = pytest.StashKey[str]()  # a unit item's known violations, when nothing else failed: it xfails


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach the case records loaded during this item to its report (``passgate_case`` user properties); a unit
    whose only violations are known xfails (:data:`KNOWN_VIOLATIONS`).

    Why the xfail is set here and not raised by ``pytest.xfail()``: a raised
    one has pytest read the test's source for its location, some 3 ms per
    item, and a warm run xfails thousands."""
    if call.when == "call" and _PENDING_CASES:
        for name in _PENDING_CASES:
            item.user_properties.append(("passgate_case", json.dumps(_CASES[name], default=str)))
        _PENDING_CASES.clear()
    report = yield
    stash = getattr(item, "stash", None)
    known = stash.get(KNOWN_VIOLATIONS, None) if stash is not None else None
    if known and call.when == "call" and report.passed and not isinstance(report, pytest.SubtestReport):
        report.outcome, report.wasxfail = "skipped", known
    return report


def pytest_runtest_logreport(report):
    """On the controller (and without xdist): gather each item's CheckResults and the case records."""
    if report.when != "call" and not (report.when == "setup" and report.skipped):
        return
    if isinstance(report, pytest.SubtestReport):  # it copies its item's properties so far: the item's own has all
        return
    for name, value in report.user_properties:
        if name == "passgate_results":
            _controller_results.extend(json.loads(value))
        elif name == "passgate_unit":
            key, state = json.loads(value)
            _controller_units[key] = state
        elif name == "passgate_case":
            _case_record(json.loads(value))


_controller_results: list = []
_controller_units: dict = {}  # unit key -> ran / reused / not_affected (harness/run/incremental.py)


def _incremental_section(config) -> dict:
    """results.json's ``incremental`` section for the whole suite: units counted once, whichever worker ran them."""
    states = list(_controller_units.values())
    inc = incremental(config)
    return {"run": inc.run, "reuse": inc.reuse, "units": len(states), "ran": states.count("ran"),
            "reused": states.count("reused"), "not_affected": states.count("not_affected"),
            "changed_files": sorted(inc.changed) if inc.changed is not None else None,
            "cache": str(inc.cache.root) if inc.cache is not None else None}
_controller_cases: dict = {}


def _read_reused_cases(p, results) -> None:
    """The cases of graphs no worker loaded (every unit on them reused its recorded verdicts), read here.

    A reused unit loads no case, so without this a fully reused run would
    report no cases and no op coverage. Read from the summary the lowered-graph
    cache keeps beside each case (:meth:`harness.graphs.cache.CaseCache.summary`),
    else from the case itself (lowered only if the cache lost it), marked
    ``reused`` so the timings do not count them as this run's work.
    """
    missing = [p.specs_by_name[g] for g in dict.fromkeys(r.graph for r in results)
               if g in p.specs_by_name and g not in _controller_cases]
    from harness.graphs.cache import default_cache
    from harness.graphs.cases import load_cases

    cache = default_cache()
    summaries = {s.name: cache.summary(s) for s in missing} if cache is not None else {}
    load_cases([s for s in missing if not summaries.get(s.name)], loaded=_case_loaded)  # stores their summaries
    for spec in missing:
        known = summaries.get(spec.name)
        record = {**known, "from_cache": True, "lower_seconds": 0.0} if known else _CASES[spec.name]
        _case_record({**record, "reused": True})
    _PENDING_CASES.clear()  # the controller's own reads: nothing to send anywhere


def _case_record(record: dict) -> None:
    """Keep one record per case; the one that lowered it in this run over one that read the cache."""
    old = _controller_cases.get(record["name"])
    if old is None or (old.get("from_cache") and not record.get("from_cache")):
        _controller_cases[record["name"]] = record


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if hasattr(config, "workerinput") or not (_controller_results or _controller_units):
        return  # workers send their results to the controller; it writes the report (also when none was affected)
    from harness.core.config import configuration
    from harness.core.results import CheckResult
    from harness.report import baseline as bl
    from harness.report import results_json as report_json
    from harness.run.profiles import SUITE_VERSION
    from harness.run.session import Session

    p = _plan(config)
    results = sorted((CheckResult.from_json(d) for d in _controller_results),
                     key=lambda r: (r.pass_name, r.graph, r.check))
    base = _baseline(config)
    g = bl.gate(results, base, path=config.getoption("--passgate-baseline"))
    report_dir = report_json.ensure_writable(config.getoption("--passgate-report"))
    s = Session(report_dir=report_dir, quiet=True, started_at=config._passgate_started, configuration=configuration(
        "conformance", profile=p.profile.name, suite_version=SUITE_VERSION, catalogs=[c.name for c in p.catalogs],
        entries=[e.name for e in p.runnable], passes=[x.spec for x in p.passes], pipelines=[x.name for x in p.pipelines],
        partitioners=p.partitioners, vulkan_cases=len(p.plugged.get("vulkan", ())),
        baseline=config.getoption("--passgate-baseline"), graphs=[x.name for x in p.specs],
        graph_selection=p.profile.graphs))
    s.results = results
    worse = {(d["pass"], d["graph"], d["check"]) for d in g.worsened}
    s.waived = set(_known(config)) - worse
    # the cases the workers loaded (cache or lowered, seconds) and their ops: the report's timings and op coverage
    _read_reused_cases(p, results)
    s.cases = [{k: v for k, v in c.items() if k != "ops"} for c in _controller_cases.values()]
    s.op_sets = {c["name"]: set(c.get("ops") or ()) for c in _controller_cases.values()}
    gate = g.to_json()
    known = [{"pass": a, "graph": b, "check": c, "reason": r} for (a, b, c), r in sorted(_known(config).items())
             if (a, b, c) not in worse]
    written: dict = {}
    s.writers = [*s.writers, lambda _dir, doc: written.update(doc=doc)]  # the document, for the terminal summary
    s.finish(extra={"gate": gate, "known_violations": known, "incremental": _incremental_section(config)})
    config._passgate_gate = g
    config._passgate_doc = written.get("doc")
    config._passgate_report_dir = report_dir


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    g = getattr(config, "_passgate_gate", None)
    if g is None:
        return
    from harness.report import baseline as bl
    from harness.report import terminal

    for line in bl.render(g).splitlines()[:40]:
        terminalreporter.write_line(line)
    inc = _incremental_section(config)
    terminalreporter.write_line(f"passgate: incremental: {inc['ran']} units ran, {inc['reused']} reused, "
                                f"{inc['not_affected']} not affected")
    pending = getattr(config, "_passgate_pending", None)
    if pending is not None:  # -n auto: say what it chose, and why
        workers = config.getoption("numprocesses", 0) or 0
        terminalreporter.write_line(f"passgate: -n auto: {pending[0]} units to judge, ~{pending[1]:.0f} s of work "
                                    f"by their records: {'in this process' if not workers else f'{workers} workers'}"
                                    f" (distributed above {PARALLEL_WORTH_S:.0f} s)")
    doc = getattr(config, "_passgate_doc", None)
    if doc is None:
        terminalreporter.write_line(f"passgate: conformance report written to {config._passgate_report_dir}")
        return
    # every status's count, the headline summary.md / report.html / junit.xml state, and the files to open
    for line in terminal.closing(doc, config._passgate_report_dir):
        terminalreporter.write_line(line)
