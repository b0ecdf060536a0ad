"""Content plugs into the engine through entry-point groups; this reads them, one way for every group.

The engine never imports ``passes/``, ``vulkan/`` or ``fixtures/``: they
register under the groups :mod:`harness.core.pluginspec` declares (what an
entry gives, when it is read), as third-party plugins do. Every group is
read in the same stable order (passgate's own entry point first, then by
name) and a plugin that fails to load is bad input, named in one line (exit
status 2). Reading a group nobody declared is a ValueError: the engine's
mistake, not a plugin's.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Any

from harness.core import pluginspec
from harness.core.errors import UsageError

__all__ = ["CATALOGS", "PIPELINES", "GRAPH_SOURCES", "UNITS", "SUITE_PASSES", "COMMANDS", "TRIAGE",
           "REPORT_SECTIONS", "QUANTIZERS", "UNREACHABLE", "points", "load", "load_all"]

# the group names the engine's readers pass to points() / load_all(), spelled once, in the spec
CATALOGS = pluginspec.CATALOGS.name
PIPELINES = pluginspec.PIPELINES.name
GRAPH_SOURCES = pluginspec.GRAPH_SOURCES.name
UNITS = pluginspec.UNITS.name
SUITE_PASSES = pluginspec.SUITE_PASSES.name
COMMANDS = pluginspec.COMMANDS.name
TRIAGE = pluginspec.TRIAGE.name
REPORT_SECTIONS = pluginspec.REPORT_SECTIONS.name
QUANTIZERS = pluginspec.QUANTIZERS.name
UNREACHABLE = pluginspec.UNREACHABLE.name


def points(group: str) -> list[EntryPoint]:
    """The entry points of ``group``: the one named ``passgate`` first, then by name. Imports nothing."""
    pluginspec.group(group)  # only declared groups: a typo here would silently find no plugin
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
