"""The order of the suite's items: xdist groups, most likely to fail first, the same in every worker.

pytest-xdist's ``--dist loadgroup`` hands out groups in collection order,
so the order of the parametrized items is the order of judging. The tiers
(:mod:`harness.run.outlook`) are computed once, on the controller, and sent
to each worker in its ``workerinput`` (:func:`shared_tiers`): a worker that
computed its own could see another run's records land in the shared cache
meanwhile, and xdist stops a run whose workers collected different orders.
"""

from __future__ import annotations

from collections import Counter
from typing import Optional

__all__ = ["WORKERINPUT_KEY", "unit_id", "group_of", "shared_tiers", "ordered_units", "edited_files", "suffix_groups"]

WORKERINPUT_KEY = "passgate_tiers"


def unit_id(unit) -> str:
    """The parameter id of a unit's item (what JUnit XML and ``-k`` name): its kind, name and graph.

    The kind is part of it because a pipeline and a partitioner may share a name (``xnnpack``)."""
    return f"{unit.kind}:{unit.name}-{unit.graph}"


_NO_BRACKETS = str.maketrans("[]", "()")


def group_of(unit) -> str:
    """The xdist group of ``unit``: a pass's units on all its graphs run together (one worker pool per pass).

    Written without square brackets (``entry:P(config)`` for the entry ``P[config]``): xdist's loadgroup reads a
    group only after the node id's last ``]``, so a group ending in one named no group, each item of a configured
    entry was scheduled alone, and both workers judged the whole entry."""
    return (f"{unit.kind}:{unit.name}" if unit.batched else unit.key).translate(_NO_BRACKETS)


def shared_tiers(units: list, outlooks: dict) -> tuple:
    """(the commonest tier, group -> tier of the other groups): the order's whole input, small enough to send."""
    from harness.run.outlook import group_tiers

    tiers = group_tiers(units, outlooks, group_of)
    default = Counter(tiers.values()).most_common(1)[0][0] if tiers else 0
    return default, {g: t for g, t in tiers.items() if t != default}


def ordered_units(units: list, shared: tuple) -> list:
    """``units`` in judging order, from :func:`shared_tiers`' output (heavier kinds first within a tier)."""
    from harness.run.outlook import ordered

    default, tiers = shared
    return ordered(units, tiers, group_of, default)


def edited_files(root: str, changed: Optional[set]) -> set:
    """The files edited in the working tree at ``root`` against HEAD (untracked ones too), and ``changed``."""
    from harness.core.errors import UsageError
    from harness.run import affected

    try:
        edited = affected.changed_since("HEAD", root)
    except UsageError:  # not a git checkout: no edits to know of
        edited = set()
    return edited | set(changed or ())


def suffix_groups(items: list) -> None:
    """Suffix each item's node id with its ``xdist_group``, which is what ``--dist loadgroup`` schedules by.

    pytest-xdist 3.8 does this in its workers by assigning ``item._nodeid``,
    which pytest 9 no longer reads (the id lives in ``item._id``): every item
    became its own group, the items of one pass landed on both workers and
    each judged the pass (measured: -n 2 no faster than -n 1). Harmless once
    xdist catches up: an id that already carries a group is left alone.
    """
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if not mark or not mark.args or "@" in item.nodeid.rpartition("]")[2]:
            continue
        grouped = f"{item.nodeid}@{mark.args[0]}"
        if hasattr(item, "_id"):  # pytest >= 9
            from _pytest.nodeid import coerce_node_id

            item._id = coerce_node_id(grouped)
        else:
            item._nodeid = grouped
