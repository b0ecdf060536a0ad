"""Op coverage: for each ATen / edge op, how many graph cases contain it.

A pass is only tested on the ops its graphs contain, so every report lists
the ops of its cases (both stages: in-place ops and ``detach`` exist only in
the ``torch.export`` program, ``_to_copy`` and the ``*_copy`` views only in
the edge one) and, with a count of 0, the core ATen ops no case exercises:
the edge dialect's op set is core ATen, so a 0 there is a gap in the graphs.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Iterable

__all__ = ["op_name", "program_ops", "case_ops", "core_aten_ops", "op_coverage"]


def op_name(target) -> str:
    """``add.Tensor`` for both ``aten::add.Tensor`` and the edge op ``aten.add.Tensor``; namespaced otherwise."""
    name = str(getattr(target, "__name__", target))
    name = name.split("::")[-1] if "::" in name else name
    if name.startswith("aten."):
        name = name[len("aten."):]
    return name


def program_ops(ep) -> dict:
    """op -> node count of an ExportedProgram (operator.getitem and other builtins left out)."""
    counts: Counter = Counter()
    for node in ep.graph_module.graph.nodes:
        if node.op != "call_function" or getattr(node.target, "__module__", "") == "_operator":
            continue
        counts[op_name(node.target)] += 1
    return dict(counts)


def case_ops(case) -> set:
    """The ops a lowered :class:`harness.graphs.cases.GraphCase` contains at either stage."""
    return set(program_ops(case.exported)) | set(program_ops(case.edge))


@lru_cache(maxsize=1)
def core_aten_ops() -> frozenset:
    """Every core ATen overload (``torch.Tag.core``) but the ``*_backward`` ones: the op set of an inference edge program."""
    import torch

    names = set()
    for packet_name in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, packet_name, None)
        if not hasattr(packet, "overloads"):
            continue
        for overload in packet.overloads():
            op = getattr(packet, overload, None)
            if op is not None and torch.Tag.core in getattr(op, "tags", ()) and "backward" not in packet_name:
                names.add(f"{packet_name}.{overload}")
    return frozenset(names)


def op_coverage(op_sets: Iterable[set], include_core: bool = True) -> dict:
    """op -> number of cases containing it; core ATen ops no case has appear with 0. Sorted by op."""
    counts: Counter = Counter()
    for ops in op_sets:
        counts.update(set(ops))
    if include_core:
        for name in core_aten_ops():
            counts.setdefault(name, 0)
    return {op: counts[op] for op in sorted(counts)}
