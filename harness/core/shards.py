"""``--shard I/N``: which of N machines a run is, as a value every layer can parse and print.

The split itself lives in :mod:`harness.run.sharding` and the joining of the
parts in :mod:`harness.report.merge`; both need the same notion of a shard
and the same list of environment fields that must agree between parts.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import Optional

from harness.core.errors import UsageError

__all__ = ["SAME_ENVIRONMENT", "Shard", "parse", "argument"]

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
# environment fields that must agree between parts: the verdicts depend on them
SAME_ENVIRONMENT = ("python", "torch", "executorch", "torchao", "passgate")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def bounds(self, total: int) -> tuple[int, int]:
        """[start, end) of this shard's run among ``total`` sorted items."""
        return (self.index - 1) * total // self.count, self.index * total // self.count


def parse(text: Optional[str]) -> Optional[Shard]:
    if text is None or isinstance(text, Shard):
        return text
    m = _SHARD.match(str(text))
    if not m:
        raise UsageError(f"--shard expects I/N, e.g. 2/4, got {text!r}")
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1 or not 1 <= index <= count:
        raise UsageError(f"--shard {text}: I must be between 1 and N (N >= 1)")
    return Shard(index, count)


def argument(text: str) -> Shard:
    """argparse ``type=``: a malformed value becomes argparse's one-line usage error (exit 2)."""
    try:
        return parse(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
