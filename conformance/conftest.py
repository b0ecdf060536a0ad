"""The conformance suite as a pytest plugin: one test item per pass x graph x check.

Items are parametrized from the suite workload (``harness.suite``); the
checks for one (pass, graph) run once, when its first item runs, and every
item of that pair asserts its own check. Known violations are strict xfails.
Each item carries its CheckResult in ``user_properties``, so the controller
(also under pytest-xdist) collects them all and writes the passgate report
(results.json and its siblings) at the end of the session.

Options: ``--passgate-profile quick|standard|full`` (default standard),
``--passgate-report DIR`` (default reports/generated/conformance).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pytest_addoption(parser):
    group = parser.getgroup("passgate")
    group.addoption("--passgate-profile", default="standard", help="suite profile: quick, standard or full")
    group.addoption("--passgate-report", default=str(ROOT / "reports" / "generated" / "conformance"),
                    help="folder for the conformance report")


def pytest_configure(config):
    from harness.quiet import silence_third_party

    silence_third_party()
    config._passgate_results = []
    config._passgate_started = time.time()


def _workload(config):
    from harness.suite import workload

    if not hasattr(config, "_passgate_workload"):
        config._passgate_workload = workload(config.getoption("--passgate-profile"))
    return config._passgate_workload


def pytest_generate_tests(metafunc):
    if "conformance_item" not in metafunc.fixturenames:
        return
    from harness import sources
    from harness.loading import load_pass
    from harness.results import IR_CHECK_IDS

    wl = _workload(metafunc.config)
    specs = sources.select(list(wl.graphs), wl.random_count or None, wl.seed)
    params, ids = [], []
    for spec in wl.passes:
        name = load_pass(spec).name
        for case in specs:
            for check in IR_CHECK_IDS:
                reason = wl.known.get((name, case.name, check))
                marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
                params.append(pytest.param((spec, case.name, check), marks=marks))
                ids.append(f"{name}-{case.name}-{check}")
    metafunc.parametrize("conformance_item", params, ids=ids)


_PAIRS: dict = {}


def pair_results(spec: str, graph: str, seed: int) -> dict:
    """All check results of one (pass, graph), computed once per process."""
    key = (spec, graph)
    if key not in _PAIRS:
        from harness import isolation, sources
        from harness.cases import load_case
        from harness.loading import load_pass
        from harness.runner import RunConfig, check_all

        (case_spec,) = sources.select([graph])
        # In a forked worker (harness/isolation.py): a pass that segfaults or hangs in native code
        # fails its own items with the signal, instead of taking the pytest(-xdist) worker down.
        config = RunConfig(seed=seed, isolate=isolation.available())
        results = check_all([load_pass(spec)], [load_case(case_spec)], config)
        _PAIRS[key] = {r.check: r for r in results}
    return _PAIRS[key]


def pytest_runtest_logreport(report):
    """On the controller (and without xdist): gather each item's CheckResult."""
    if report.when != "call" and not (report.when == "setup" and report.skipped):
        return
    for name, value in report.user_properties:
        if name == "passgate_result":
            _controller_results.append(json.loads(value))


_controller_results: list = []


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if hasattr(config, "workerinput") or not _controller_results:
        return  # workers send their results to the controller; it writes the report
    from harness import report_json
    from harness.results import CheckResult
    from harness.session import Session
    from harness.suite import SUITE_VERSION

    wl = _workload(config)
    results = [CheckResult.from_json(d) for d in _controller_results]
    results.sort(key=lambda r: (r.pass_name, r.graph, r.check))
    report_dir = report_json.ensure_writable(config.getoption("--passgate-report"))
    s = Session(report_dir=report_dir, quiet=True, started_at=config._passgate_started,
                configuration={"command": "conformance", "profile": wl.profile, "suite_version": SUITE_VERSION,
                               "passes": list(wl.passes), "graph_selection": list(wl.graphs), "seed": wl.seed})
    s.results = results
    s.waived = set(wl.known)
    known = [{"pass": p, "graph": g, "check": c, "reason": r} for (p, g, c), r in sorted(wl.known.items())]
    s.finish(extra={"known_violations": known})
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        tr.write_line(f"passgate: conformance report written to {report_dir}")
