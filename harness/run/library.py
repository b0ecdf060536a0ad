"""passgate's checks as a library, for pass authors' own pipelines and tests.

``assert_ir_spec`` fits ``PassManager.add_checks`` (torch.fx's and
ExecuTorch's, with ``run_checks_after_each_pass=True``): it runs the checks
that need nothing but the graph module itself and raises on the first
violation, naming the check id.
"""

from __future__ import annotations

import torch.fx

from harness.check import verifiers
from harness.check.loading import from_object, load_pass
from harness.check.metadata import META_CHECKS, seed_metadata, snapshot
from harness.core.config import RunConfig
from harness.core.errors import IRSpecViolation
from harness.core.results import Status
from harness.graphs import sources
from harness.graphs.cases import load_case
from harness.run.scheduler import check_all

__all__ = ["assert_ir_spec", "IRSpecCheck", "IRSpecViolation", "check_pass", "violation_message"]


class _GraphOnly:
    """The slice of an ExportedProgram the graph-only verifiers read."""

    def __init__(self, gm: torch.fx.GraphModule):
        self.graph_module = gm


def assert_ir_spec(graph_module: torch.fx.GraphModule) -> None:
    program = _GraphOnly(graph_module)
    for check, verify in (
        ("no_call_module", verifiers.no_call_module),
        ("graph_lint", verifiers.graph_lint),
        ("meta_val", verifiers.meta_val),
    ):
        verdict = verify(program)
        if verdict.status is Status.FAIL:
            raise IRSpecViolation(check, verdict.message)


class IRSpecCheck:
    """A check for ``PassManager.add_checks`` that also holds metadata across passes.

    Both torch.fx's and ExecuTorch's PassManager call the check once before the
    first pass and, with ``run_checks_after_each_pass=True``, after each pass.
    The first call records which ``call_function`` nodes carry ``stack_trace``
    / ``nn_module_stack`` (and, with ``strict``, ``debug_handle``); every later
    call raises :class:`IRSpecViolation` naming the check id
    (``meta_stack_trace`` ...) when a node the graph had lost the key or a new
    node came without it, after the structural checks of :func:`assert_ir_spec`.
    ``calls`` counts the calls so a test can tell which pass broke the graph
    (call 0 is the input, call k is after the k-th pass). One instance per
    pipeline run.
    """

    def __init__(self, metadata: bool = True, strict: bool = False, seed: bool = False):

        self.seed = seed  # debugify: give every node of the input synthetic metadata, so any loss shows

        self.meta_checks = {c: k for c, k in META_CHECKS.items() if strict or c != "meta_debug_handle"} \
            if metadata else {}
        self.before: dict = {}
        self.calls = 0

    def __call__(self, graph_module: torch.fx.GraphModule) -> None:

        where = "on the input graph" if self.calls == 0 else f"after pass {self.calls}"
        if self.calls == 0 and self.seed:

            seed_metadata(graph_module)
        self.calls += 1
        try:
            assert_ir_spec(graph_module)
        except IRSpecViolation as exc:
            raise IRSpecViolation(exc.check, f"{where}: {str(exc).split('] ', 1)[-1]}") from None
        if self.calls > 1:
            program = _GraphOnly(graph_module)
            for check in self.meta_checks:
                verdict = verifiers.meta_key(check, self.before, program)
                if verdict.status is Status.FAIL:
                    raise IRSpecViolation(check, f"{where}: {verdict.message}")
        self.before = snapshot(graph_module)


def check_pass(pass_obj, graphs=("builtin",), *, stage=None, semantics=None, strict: bool = False,
               checks=None, timeout: float = 60.0, seed: int = 0, name=None) -> list:
    """Run ``pass_obj`` (a class, instance, function, or ``module:Name`` SPEC) over ``graphs``
    (sources or case names) with every IR check; returns the CheckResults.

    What the pytest fixture uses; usable from any script. Violations are
    ``[r for r in results if r.is_violation(strict)]``.
    """

    loaded = (load_pass(pass_obj, semantics=semantics, stage=stage) if isinstance(pass_obj, str)
              else from_object(pass_obj, name, semantics, stage))
    cases = [load_case(s) for s in sources.select(list(graphs), None, seed)]
    config = RunConfig(stage=stage, semantics=semantics, timeout=timeout, seed=seed,
                       checks=frozenset(checks) if checks else None)
    return check_all([loaded], cases, config)


def violation_message(results, strict: bool = False) -> str:
    """The report's failing lines, one per violation: ``pass x graph: check: message``."""
    bad = [r for r in results if r.is_violation(strict)]
    lines = [f"{len(bad)} IR-spec violation(s):"]
    lines += [f"  {r.pass_name} x {r.graph}: {r.check}: {r.message}" for r in bad]
    return "\n".join(lines)
