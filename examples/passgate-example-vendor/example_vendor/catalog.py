"""The vendor's catalog: its passes, at their stage, with the contract each is held to.

Registered as ``example`` under ``passgate.catalogs``; ``passgate run
--catalog example`` runs its entries on the graphs they apply to.
"""

from __future__ import annotations

from harness import Catalog, entry

__all__ = ["CATALOG", "catalogs"]

CATALOG = "example"

_ENTRIES = (
    entry(CATALOG, "example_vendor.passes:FuseClampPairs",
          contract="two clamps in a row become one with the intersected range; metadata of the kept node intact"),
    # Broken on purpose, and not declared known here: passgate flags it (numerics) and the vendor's triage
    # table (example_vendor.triage) gives the reason `passgate baseline update` records.
    entry(CATALOG, "example_vendor.passes:FuseClampPairsLoose",
          contract="the same fusion, keeping only the outer clamp's range"),
)


def catalogs() -> list[Catalog]:
    """The vendor's catalogs; discovery walks ``example_vendor.passes`` to flag a pass that has no entry."""
    return [Catalog(CATALOG, ("example_vendor.passes",), _ENTRIES,
                    description="example vendor: clamp fusion (one correct, one broken on purpose)")]
