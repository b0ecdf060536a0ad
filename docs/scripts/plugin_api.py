"""Write docs/reference/plugin-api.md from the declarations of ``harness.core.pluginspec``.

The page is the spec in prose: one row per entry-point group (what an entry
is, what it gives, when passgate reads it), an example registration per
group, and the stable types. Run it after changing a declaration
(``python docs/scripts/plugin_api.py``; it imports only ``harness.core``, no
torch) and commit the page; ``tests/test_plugin_spec.py`` fails when the page
and the spec differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.core.pluginspec import GROUPS  # noqa: E402  (after the checkout is on the path)

__all__ = ["OUT", "page", "main"]

OUT = ROOT / "docs" / "reference" / "plugin-api.md"

_INTRO = """\
# Plugin API

<!-- written by docs/scripts/plugin_api.py from harness/core/pluginspec.py: edit those, then run the script -->

Content plugs into the engine through these entry-point groups, declared in `harness/core/pluginspec.py` (as
pytest declares its hooks in `hookspec.py`) and read by `harness/core/plugins.py`. passgate's own `passes/`,
`vulkan/` and `fixtures/` register under them exactly as a vendor's package does. Every group is read in one
stable order: the entry point named `passgate` first, then by name. A plugin that fails to load is bad input,
named in one line (exit status 2).

| group | an entry is | it gives | read when |
| --- | --- | --- | --- |
"""

_TYPES = """
## The stable types

A plugin imports what it needs from the public `harness` namespace: the types each group lists above are
marked `@stable` where they are defined (`harness/core/stability.py`, as torch.fx marks its surface with
`@compatibility`): they keep their names, fields and call signatures within a major version (fields and keyword
arguments may be added, with defaults). Anything imported from deeper modules may change without notice.
Their reference is the [Python API](api.md) page.

"""

_OUTRO = """
## An example plugin

`examples/passgate-example-vendor` is a plugin package to start from: its own `pyproject.toml` registers a
catalog (a clamp fusion written correctly, and the same fusion broken on purpose), a partitioner check (a unit
lowering two built-in graphs with its partitioner through `to_edge_transform_and_lower`) and a triage table.
`tests/test_plugin_spec.py` installs it into a fresh venv beside passgate and runs its catalog with
`passgate run --catalog example`. How to write one: [Writing a plugin](../guides/plugins.md).
"""


def _row(g) -> str:
    return f"| `{g.name}` | {g.entry} | {g.returns} | {g.read_when} |\n"


def _example(g) -> str:
    toml, _, python = g.example.partition("\n\n")
    text = f"### `{g.name}`\n\n```toml\n[project.entry-points.\"{g.name}\"]\n{toml}\n```\n"
    if python:
        text += f"\n```python\n{python}\n```\n"
    if g.types:
        text += "\nTypes: " + ", ".join(f"`harness.{t}`" for t in g.types) + ".\n"
    return text + "\n"


def page() -> str:
    """The page's text."""
    return (_INTRO + "".join(_row(g) for g in GROUPS) + "\n## Registrations, by group\n\n"
            + "".join(_example(g) for g in GROUPS) + _TYPES.rstrip("\n") + "\n" + _OUTRO)


def main() -> int:
    OUT.write_text(page())
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
