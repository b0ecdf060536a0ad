"""Shared fixtures: one lowered-graph cache for the whole run, shared by xdist workers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # broken_passes and other test helpers
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # benchmarks/ (not an installed package) for the tests of the chaos campaign


@pytest.fixture(scope="session", autouse=True)
def passgate_cache(tmp_path_factory) -> Path:
    """A cache folder every worker and subprocess of this run shares (lower once per run)."""
    from harness.core.quiet import silence_third_party
    from harness.graphs import cache

    silence_third_party()
    root = os.environ.get("PASSGATE_CACHE_DIR")
    path = Path(root) if root else tmp_path_factory.getbasetemp().parent / "passgate-cache"
    os.environ["PASSGATE_CACHE_DIR"] = str(path)
    cache.configure(path)
    return path


@pytest.fixture(scope="session")
def builtin_cases(passgate_cache) -> dict:
    from fixtures.builtin import BUILTIN_SPECS
    from harness.graphs.cases import load_case

    return {spec.name: load_case(spec) for spec in BUILTIN_SPECS}


def failing_ids(results) -> set:
    from harness.core.results import Status

    return {r.check for r in results if r.status in (Status.FAIL, Status.ERROR)}
