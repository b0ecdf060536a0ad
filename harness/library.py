"""passgate's checks as a library, for pass authors' own pipelines and tests.

``assert_ir_spec`` fits ``PassManager.add_checks`` (torch.fx's and
ExecuTorch's, with ``run_checks_after_each_pass=True``): it runs the checks
that need nothing but the graph module itself and raises on the first
violation, naming the check id.
"""

from __future__ import annotations

import torch.fx

from harness import verifiers
from harness.results import Status


class IRSpecViolation(AssertionError):
    def __init__(self, check: str, message: str):
        super().__init__(f"[{check}] {message}")
        self.check = check


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
