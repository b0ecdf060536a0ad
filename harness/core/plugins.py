"""Content plugs into the engine through entry-point groups; this reads them, one way for every group.

The engine never imports ``passes/``, ``vulkan/`` or ``fixtures/``: they
register under the groups below (see ``pyproject.toml``), as third-party
catalogs, pipelines and graph sources do. Every group is read in the same
stable order (passgate's own entry point first, then by name) and a plugin
that fails to load is bad input, named in one line (exit status 2).
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Any

from harness.core.errors import UsageError

__all__ = ["CATALOGS", "PIPELINES", "GRAPH_SOURCES", "UNITS", "SUITE_PASSES", "COMMANDS", "TRIAGE",
           "REPORT_SECTIONS", "QUANTIZERS", "UNREACHABLE", "points", "load", "load_all"]

CATALOGS = "passgate.catalogs"
PIPELINES = "passgate.pipelines"
GRAPH_SOURCES = "passgate.graph_sources"
UNITS = "passgate.units"
SUITE_PASSES = "passgate.suite_passes"
COMMANDS = "passgate.commands"
TRIAGE = "passgate.triage"
REPORT_SECTIONS = "passgate.report_sections"
QUANTIZERS = "passgate.quantizers"
UNREACHABLE = "passgate.unreachable"


def points(group: str) -> list[EntryPoint]:
    """The entry points of ``group``: the one named ``passgate`` first, then by name. Imports nothing."""
    return sorted(entry_points(group=group), key=lambda ep: (ep.name != "passgate", ep.name))


def load(ep: EntryPoint, what: str) -> Any:
    """What ``ep`` names; UsageError naming the plugin when it does not load."""
    try:
        return ep.load()
    except Exception as exc:  # noqa: BLE001 - a broken plugin is bad input, named
        raise UsageError(f"{what} entry point {ep.name} ({ep.value}) failed to load: "
                         f"{type(exc).__name__}: {exc}") from None


def load_all(group: str, what: str) -> list[tuple[EntryPoint, Any]]:
    """(entry point, loaded value) for every entry point of ``group``, in :func:`points` order."""
    return [(ep, load(ep, what)) for ep in points(group)]
