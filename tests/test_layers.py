"""The import structure: the engine's layers and the Vulkan package's rooms import downward only.

Read from the source (every ``import``, including the ones inside functions),
so a lazy import cannot hide an upward arrow. The engine's order is the one
the layout page and ``harness/__init__.py`` describe, and the engine never
imports content; the Vulkan rooms' order is the one ``vulkan/__init__.py``
describes, along the data flow from cases to the entry points.
"""

from __future__ import annotations

import ast
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parent.parent / "harness"
VULKAN = ROOT.parent / "vulkan"
# lowest first; a layer may import itself and any layer before it
LAYERS = ("core", "graphs", "check", "pipelines", "catalog", "reduce", "report", "run", "fuzz", "mutate", "serve", "cli")
CONTENT = ("passes", "vulkan", "fixtures")
# vulkan/'s rooms, lowest first; a room may import itself and any room before it
VULKAN_ROOMS = ("cases", "backend", "judging", "search", "reports", "entry")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out += [(node.lineno, node.module)]
            if node.module in ("harness", "vulkan"):  # from harness import X: X may be a layer (a room)
                out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return out


def _upward(package: Path, order: tuple) -> list[str]:
    """Every import in ``package``'s floors (its subpackages, lowest first in ``order``) of a higher floor."""
    wrong = []
    for floor in order:
        for path in sorted((package / floor).rglob("*.py")):
            for line, module in _imports(path):
                parts = module.split(".")
                target = parts[1] if len(parts) > 1 and parts[0] == package.name and parts[1] in order else None
                if target is not None and order.index(target) > order.index(floor):
                    wrong.append(f"{path.relative_to(package.parent)}:{line} imports {module} ({floor} -> {target})")
    return wrong


def test_layers_import_downward_only():
    wrong = _upward(ROOT, LAYERS)
    assert not wrong, "imports that run back up:\n" + "\n".join(wrong)


def test_engine_never_imports_content():
    wrong = [f"{path.relative_to(ROOT.parent)}:{line} imports {module}"
             for path in sorted(ROOT.rglob("*.py")) for line, module in _imports(path)
             if module.split(".")[0] in CONTENT]
    assert not wrong, "the engine imports content (plug it in through an entry point):\n" + "\n".join(wrong)


def test_every_engine_module_declares_its_public_names():
    missing = [str(p.relative_to(ROOT.parent)) for p in sorted(ROOT.rglob("*.py"))
               if p.name != "__init__.py" and "__all__" not in p.read_text()]
    assert not missing, "modules without __all__: " + ", ".join(missing)


def test_public_api_resolves_lazily():
    import subprocess
    import sys

    code = ("import sys, harness; assert 'torch' not in sys.modules; "
            "names = [getattr(harness, n) for n in harness.__all__]; print(len(names))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert int(out) == len(harness.__all__)
    assert issubclass(harness.UsageError, harness.PassgateError)


def test_vulkan_rooms_import_downward_only():
    wrong = _upward(VULKAN, VULKAN_ROOMS)
    assert not wrong, "vulkan/ imports that run back up:\n" + "\n".join(wrong)


def test_every_vulkan_module_lives_in_a_room_and_declares_its_public_names():
    loose = [p.name for p in sorted(VULKAN.glob("*.py")) if p.name != "__init__.py"]
    rooms = sorted(p.name for p in VULKAN.iterdir() if (p / "__init__.py").exists())
    missing = [str(p.relative_to(ROOT.parent)) for p in sorted(VULKAN.rglob("*.py"))
               if p.name != "__init__.py" and "__all__" not in p.read_text()]
    assert not loose, f"modules on vulkan/'s floor, outside every room: {loose}"
    assert rooms == sorted(VULKAN_ROOMS), f"vulkan/'s rooms {rooms} are not the ones this test orders"
    assert not missing, "modules without __all__: " + ", ".join(missing)
