"""The vendor's triage table: why its passes fail the checks they fail, for violations no catalog entry names.

``passgate baseline update`` asks every ``passgate.triage`` plugin about each
new violation (passgate's own rules first); the first answer is the reason
recorded in the baseline. A table keeps one cause per row.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Optional

from harness import KnownFailure

__all__ = ["TABLE", "triage"]

# (pass name glob, checks, regex searched in the message's first line, reason, kind)
TABLE: tuple[tuple[str, tuple[str, ...], str, str, str], ...] = (
    ("example.FuseClampPairsLoose", ("numerics",), r"not close",
     "keeps the outer clamp's range and drops the inner one's (hardswish's clamp(min=0) is lost)", "bug"),
)


def triage(pass_name: str, check: str, message: str, graph: Optional[str] = None) -> Optional[KnownFailure]:
    """The first row explaining this violation, as a KnownFailure; None when no row does."""
    first = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    for glob, checks, pattern, reason, kind in TABLE:
        if check in checks and fnmatch.fnmatchcase(pass_name, glob) and re.search(pattern, first):
            return KnownFailure(check, reason, "examples/passgate-example-vendor", (), kind)
    return None
