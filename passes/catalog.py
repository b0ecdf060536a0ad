"""passgate's own pass catalogs: every graph pass ExecuTorch ships, made runnable, each with its contract.

The catalogs are the ``catalog_*`` modules (one per upstream package or
backend), written with the engine's types (:mod:`harness.catalog`). The
engine knows them only through the ``passgate.catalogs`` entry point group,
where pyproject.toml registers :func:`builtin_catalogs` as ``passgate``;
third parties register theirs beside it.

This module imports neither torch nor executorch at import time; the
per-backend ``catalog_*`` modules it loads do. Which passes take constructor
parameters, the configurations (``Name[config]`` entries) the catalogs give
them and why the others get none: docs/reference/configurations.md.
"""

from __future__ import annotations

import importlib

from harness.catalog import Catalog

__all__ = ["BUILTIN_MODULES", "builtin_catalogs"]

BUILTIN_MODULES = (
    "passes.catalog_exir",
    "passes.catalog_transforms",
    "passes.catalog_vulkan",
    "passes.catalog_xnnpack",
    "passes.catalog_qualcomm",
    "passes.catalog_backends",
)


def builtin_catalogs() -> list[Catalog]:
    """passgate's own catalogs (registered as the ``passgate`` entry point of ``passgate.catalogs``)."""
    out: list[Catalog] = []
    for module in BUILTIN_MODULES:
        value = importlib.import_module(module).CATALOGS
        out.extend(value)
    return out
