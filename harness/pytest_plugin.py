"""The ``passgate`` pytest plugin: a fixture that runs a pass over chosen graphs under IR-spec verification.

Registered as the ``pytest11`` entry point ``passgate``, so every pytest run
in an environment with passgate installed loads it. That is why this module
imports only pytest at import time: torch and executorch (~10 s) are imported
the first time a test actually uses the fixture, never by collection alone.

Use::

    def test_my_pass(passgate):
        passgate.check(MyPass, graphs=["mlp", "conv_bn_relu"])   # fails the test on a violation

    def test_my_pass_keeps_metadata(passgate):
        results = passgate.run(MyPass, graphs=["builtin"])        # no failing: inspect the CheckResults
        assert not passgate.violations(results)

``check`` fails the test with the report's lines (pass x graph: check id:
message), without a Python traceback of passgate's internals. Options:
``--passgate-graphs`` (default graphs for ``check``/``run`` without ``graphs=``)
and ``--passgate-strict`` (should-level checks fail too).
"""

from __future__ import annotations

from typing import Iterable, Optional

import pytest

__all__ = ["pytest_addoption", "pytest_configure", "PassgateFixture", "passgate"]


def pytest_addoption(parser):
    group = parser.getgroup("passgate-fixture", "passgate fixture")
    group.addoption("--passgate-graphs", nargs="+", default=None, metavar="NAME",
                    help="graphs the passgate fixture uses when a test names none (default: builtin)")
    group.addoption("--passgate-strict", action="store_true", default=False,
                    help="should-level checks (idempotent, deterministic, meta_debug_handle) fail the test too")


def pytest_configure(config):
    config.addinivalue_line("markers", "passgate_graphs(*names): default graphs of the passgate fixture in this test")


class PassgateFixture:
    """What the ``passgate`` fixture gives a test."""

    def __init__(self, graphs: Iterable[str], strict: bool):
        self.graphs = tuple(graphs)
        self.strict = strict

    def run(self, pass_obj, graphs: Optional[Iterable[str]] = None, *, stage: Optional[str] = None,
            semantics: Optional[str] = None, checks: Optional[Iterable[str]] = None, timeout: float = 60.0,
            seed: int = 0, name: Optional[str] = None) -> list:
        """Every IR check of ``pass_obj`` on ``graphs``; returns the CheckResults without failing."""
        from harness.core.errors import UsageError
        from harness.core.quiet import silence_third_party
        from harness.run.library import check_pass

        silence_third_party()
        try:
            return check_pass(pass_obj, tuple(graphs) if graphs is not None else self.graphs, stage=stage,
                              semantics=semantics, strict=self.strict, checks=checks, timeout=timeout, seed=seed,
                              name=name)
        except UsageError as exc:
            pytest.fail(f"passgate: {exc}", pytrace=False)

    def violations(self, results) -> list:
        return [r for r in results if r.is_violation(self.strict)]

    def check(self, pass_obj, graphs: Optional[Iterable[str]] = None, **kwargs) -> list:
        """Like :meth:`run`, but fails the test with the report's message on any violation."""
        from harness.run.library import violation_message

        results = self.run(pass_obj, graphs, **kwargs)
        if self.violations(results):
            pytest.fail(violation_message(results, self.strict), pytrace=False)
        return results

    __call__ = check


@pytest.fixture
def passgate(request) -> PassgateFixture:
    marker = request.node.get_closest_marker("passgate_graphs")
    graphs = marker.args if marker and marker.args else (request.config.getoption("--passgate-graphs") or ["builtin"])
    return PassgateFixture(graphs, bool(request.config.getoption("--passgate-strict")))
