"""Pass catalogs in the engine: the entry types, discovery, and the registry content plugs into.

A catalog says which upstream passes passgate runs, how it builds each and
what it holds them to (:mod:`harness.catalog.entries`); discovery keeps it
complete (:mod:`harness.catalog.discovery`); the registry finds the catalogs
content registers under the ``passgate.catalogs`` entry point group and
selects the entries a run takes (:mod:`harness.catalog.registry`). The
catalogs themselves live outside the engine (``passes/``, a vendor's
package). Import-light: nothing here imports torch or executorch until a
pass is built or discovery runs. A pass built several ways is one entry per
construction (``Name`` for the default, ``Name[config]`` for the others:
:class:`harness.catalog.entries.Config`).
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
    ANY_GRAPH,
    CATALOG_STAGES,
    CONFIG_LABEL,
    QUANTIZED,
    Build,
    Catalog,
    CatalogEntry,
    Config,
    EntryFactory,
    KnownFailure,
    Lazy,
    config_name,
    entry,
    known,
    resolve,
    split_config,
)
from harness.catalog.registry import (
    all_entries,
    as_catalogs,
    load_catalogs,
    name_matches,
    resolve_catalogs,
    select,
    select_entries,
)

__all__ = [
    "CATALOG_STAGES", "QUANTIZED", "ANY_GRAPH", "KnownFailure", "Build", "Lazy", "resolve", "EntryFactory",
    "CatalogEntry", "Catalog", "entry", "known", "Config", "CONFIG_LABEL", "config_name", "split_config",
    "Discovered", "ImportFailure", "Discovery", "discover", "static_discover", "CrossCheck", "cross_check",
    "with_discovered",
    "as_catalogs", "load_catalogs", "select", "all_entries", "resolve_catalogs",
    "name_matches", "select_entries",
]
