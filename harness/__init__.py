"""passgate: a pass-test and conformance harness for PyTorch / ExecuTorch graph passes.

The public API is the names in ``__all__``; everything else is internal and
may change. They are imported lazily (on first attribute access), because
``passgate --help`` must not pay for importing torch and executorch (~6 s).
The plugin API is the part of it marked ``@stable``
(:mod:`harness.core.stability`): the types the entry-point groups of
:mod:`harness.core.pluginspec` hand plugins or take from them.

The engine is layered; each subpackage imports only from those listed
after it, never from content (``passes/``, ``vulkan/``, ``fixtures/``),
which plugs in through the entry-point groups :mod:`harness.core.pluginspec`
declares, as a vendor's plugin does:

- ``cli``: the ``passgate`` command, one module per subcommand;
- ``serve``: the warm server, its client and its wire protocol;
- ``mutate``: mutation testing of catalog passes (``passgate mutate``): what the graphs would catch;
- ``run``: what a run executes (plan, profiles, sharding), the scheduler and
  isolation of crashing passes, sessions, the library API;
- ``report``: results.json, junit.xml, summary.md, report.html; diff, merge,
  the baseline gate, certification bundles;
- ``reduce``: shrinking failing graphs, reproducers, pipeline bisection;
- ``catalog``: catalog entries and their registry, pass discovery;
- ``pipelines``: verify-each over pass pipelines, partitioner checks;
- ``check``: loading and invoking one pass, the runner and its verifiers;
- ``graphs``: graph cases, their disk cache and memos, sources, random programs;
- ``core``: the check registry and results, errors, run configuration, enums.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness.core.version import __version__

# public name -> module that defines it
_PUBLIC = {
    "check_pass": "harness.run.library",
    "assert_ir_spec": "harness.run.library",
    "IRSpecCheck": "harness.run.library",
    "IRSpecViolation": "harness.core.errors",
    "CheckResult": "harness.core.results",
    "Status": "harness.core.results",
    "Level": "harness.core.results",
    "CHECKS": "harness.core.results",
    "RunConfig": "harness.core.config",
    "ExitCode": "harness.core.kinds",
    "Catalog": "harness.catalog",
    "PassgateError": "harness.core.errors",
    "UsageError": "harness.core.errors",
    # the plugin API (@stable): what the entry-point groups of harness.core.pluginspec exchange
    "CatalogEntry": "harness.catalog",
    "entry": "harness.catalog",
    "known": "harness.catalog",
    "KnownFailure": "harness.catalog",
    "Build": "harness.catalog",
    "Config": "harness.catalog",
    "Lazy": "harness.catalog",
    "EntryFactory": "harness.catalog",
    "Pipeline": "harness.pipelines.pipeline",
    "Step": "harness.pipelines.pipeline",
    "CaseSpec": "harness.graphs.cases",
    "ModelInputs": "harness.graphs.cases",
    "Unit": "harness.run.plan",
    "BackendPartitioner": "harness.pipelines.partitioners",
    "check_backend_partitioner": "harness.pipelines.partitioners",
    "PT2EFlow": "harness.graphs.quantizers",
    "Unreachable": "harness.run.reachable",
}

__all__ = [
    "check_pass", "assert_ir_spec", "IRSpecCheck", "IRSpecViolation", "CheckResult", "Status", "Level", "CHECKS",
    "RunConfig", "ExitCode", "Catalog", "PassgateError", "UsageError", "__version__",
    "CatalogEntry", "entry", "known", "KnownFailure", "Build", "Config", "Lazy", "EntryFactory", "Pipeline", "Step",
    "CaseSpec", "ModelInputs", "Unit", "BackendPartitioner", "check_backend_partitioner", "PT2EFlow", "Unreachable",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from harness.catalog import Build, Catalog, CatalogEntry, Config, EntryFactory, KnownFailure, Lazy, entry, known
    from harness.core.config import RunConfig
    from harness.core.errors import IRSpecViolation, PassgateError, UsageError
    from harness.core.kinds import ExitCode
    from harness.core.results import CHECKS, CheckResult, Level, Status
    from harness.graphs.cases import CaseSpec, ModelInputs
    from harness.graphs.quantizers import PT2EFlow
    from harness.pipelines.partitioners import BackendPartitioner, check_backend_partitioner
    from harness.pipelines.pipeline import Pipeline, Step
    from harness.run.library import IRSpecCheck, assert_ir_spec, check_pass
    from harness.run.plan import Unit
    from harness.run.reachable import Unreachable


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
