"""The rule type of :mod:`passes.triage`: one cause, the passes, checks and messages it explains."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

__all__ = ["ET", "Rule"]

ET = "https://github.com/pytorch/executorch/blob/v1.5.1/"


@dataclass(frozen=True)
class Rule:
    passes: tuple[str, ...]  # globs over the pass's class / function name
    checks: tuple[str, ...]
    message: str  # regex searched in the violation's first line
    reason: str
    kind: str = "bug"  # bug | by-design | precondition | harness (passgate's own false positive, to fix here)
    upstream: str = ""
    # globs over the graph names it was traced on; empty: any graph. For a message that names no cause (a bare
    # AssertionError): a rule scoped to graphs is tried before the general ones (passes.triage.triage)
    graphs: tuple[str, ...] = ()

    def matches(self, attr: str, check: str, message: str, graph: str | None = None) -> bool:
        if self.graphs and not (graph and any(fnmatch.fnmatchcase(graph, g) for g in self.graphs)):
            return False
        return (check in self.checks and any(fnmatch.fnmatchcase(attr, p) for p in self.passes)
                and re.search(self.message, message) is not None)
