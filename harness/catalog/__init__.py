"""Pass catalogs in the engine: the entry types, discovery, and the registry content plugs into.

A catalog says which upstream passes passgate runs, how it builds each and
what it holds them to (:mod:`harness.catalog.entries`); discovery keeps it
complete (:mod:`harness.catalog.discovery`); the registry finds the catalogs
content registers under the ``passgate.catalogs`` entry point group and
selects the entries a run takes (:mod:`harness.catalog.registry`). The
catalogs themselves live outside the engine (``passes/``, a vendor's
package). Import-light: nothing here imports torch or executorch until a
pass is built or discovery runs.
"""

from __future__ import annotations

from harness.catalog.discovery import (
    CrossCheck,
    Discovered,
    Discovery,
    ImportFailure,
    cross_check,
    discover,
    static_discover,
    with_discovered,
)
from harness.catalog.entries import (
    CATALOG_STAGES,
    QUANTIZED,
    Build,
    Catalog,
    CatalogEntry,
    EntryFactory,
    KnownFailure,
    Lazy,
    entry,
    known,
    resolve,
)
from harness.catalog.registry import (
    all_entries,
    as_catalogs,
    load_catalogs,
    resolve_catalogs,
    select,
    select_entries,
)

__all__ = [
    "CATALOG_STAGES", "QUANTIZED", "KnownFailure", "Build", "Lazy", "resolve", "EntryFactory", "CatalogEntry",
    "Catalog", "entry", "known",
    "Discovered", "ImportFailure", "Discovery", "discover", "static_discover", "CrossCheck", "cross_check",
    "with_discovered",
    "as_catalogs", "load_catalogs", "select", "all_entries", "resolve_catalogs",
    "select_entries",
]
