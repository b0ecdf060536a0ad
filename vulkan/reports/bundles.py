"""The search's passing cases as BundledPrograms for a vendor's device (``passgate vulkan --bundles DIR``).

A search judges the fusion on CPU (the reference executor); what a vendor
certifies on their GPU is the program ``to_edge_transform_and_lower`` with
the VulkanPartitioner makes of the same quantized case. This module picks
the cases worth that run and hands them to :func:`harness.run.bundle.write_bundles`,
which writes one ``.bpte`` per case and backend with the index ``passgate
device run`` / ``passgate device ingest`` read (the bundle folder format of
``passgate bundle``, :mod:`harness.report.bundles`).

Which cases: a drawn case passes when, under every fusion that judged it,
none of the search's checks (:data:`vulkan.search.evaluate.SEARCH_CHECKS`, and the
device check when a device executor was plugged in) fails or errs, and at
least one fusion applies to it. Its IR checks do not decide: they judge the
fused graph's metadata, not what a device computes. One case per op x
configuration, the first passing draw (draw order: the same for a seed),
because lowering for the VulkanPartitioner costs ~20 s a case: a default
search draws hundreds, a device run needs each configuration once.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["PROFILE", "passing_cases", "summary", "write"]

PROFILE = "vulkan-search"  # the index's profile field: where its cases came from
_BAD = ("fail", "error")


def passing_cases(per_fusion: dict) -> list:
    """The first passing draw (a :class:`~vulkan.search.space.CaseDesc`) of each op x configuration, in draw order."""
    from vulkan.search.evaluate import DEVICE_CHECK, SEARCH_CHECKS

    judged = SEARCH_CHECKS + (DEVICE_CHECK,)
    order: dict = {}  # desc -> ok so far (insertion order: the first fusion's draw order)
    applies: set = set()
    for searches in per_fusion.values():
        for r in searches:
            for o in r.draws:
                ok = not any(o.statuses.get(c) in _BAD for c in judged)
                order[o.desc] = order.get(o.desc, True) and ok
                if o.applicable:
                    applies.add(o.desc)
    chosen: dict = {}
    for desc, ok in order.items():
        if ok and desc in applies:
            chosen.setdefault((desc.op, desc.config_id()), desc)
    return list(chosen.values())


def write(out, descs: list, backends: tuple, progress: Callable[[str], None] = lambda _m: None):
    """Bundle each case for each backend into ``out``; the :class:`harness.report.bundles.Index` written."""
    from pathlib import Path

    from harness.report.results_json import environment
    from harness.run.bundle import write_bundles
    from vulkan.cases import lowering
    from vulkan.search import spaces

    cases = (lowering.load(spaces.desc_case(d).spec) for d in descs)  # quantized as bundling reaches them
    return write_bundles(Path(out), cases, tuple(backends), PROFILE, environment(), progress)


def summary(out, index) -> dict:
    """What results.json records of the bundles: where, how many, which were not lowered."""
    return {"dir": str(out), "profile": index.profile, "bundles": len(index.entries),
            "backends": sorted({e.backend for e in index.entries}), "skipped": index.skipped,
            "complete": index.complete}
