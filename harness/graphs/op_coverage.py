"""Op coverage: for each ATen / edge op, how many graph cases contain it, and with which output dtypes.

A pass is only tested on the ops its graphs contain, so every report lists
the ops of its cases (both stages: in-place ops and ``detach`` exist only in
the ``torch.export`` program, ``_to_copy`` and the ``*_copy`` views only in
the edge one) and, with a count of 0, the core ATen ops no case exercises:
the edge dialect's op set is core ATen, so a 0 there is a gap in the graphs.

An op is also only tested on the dtypes it meets: :func:`op_coverage` adds,
beside each op's key, one key per (op, dtype) pair, ``"<op>@<dtype>"``
(``"add.Tensor@int8"``), counting the cases with a node of that op whose
output (``node.meta["val"]``; every tensor of a multi-output node) has that
dtype. The op keys and their counts are what they always were; the new keys
only appear with a count of at least 1.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import Iterable

__all__ = ["DTYPE_SEP", "op_name", "program_ops", "program_op_dtypes", "op_dtype_key", "OpSet", "case_ops",
           "core_aten_ops", "op_coverage"]

DTYPE_SEP = "@"  # "<op>@<dtype>": never part of an op name


def op_name(target) -> str:
    """``add.Tensor`` for both ``aten::add.Tensor`` and the edge op ``aten.add.Tensor``; namespaced otherwise."""
    name = str(getattr(target, "__name__", target))
    name = name.split("::")[-1] if "::" in name else name
    if name.startswith("aten."):
        name = name[len("aten."):]
    return name


def _op_nodes(ep):
    """The call_function nodes of an ExportedProgram but operator.getitem and other builtins."""
    for node in ep.graph_module.graph.nodes:
        if node.op != "call_function" or getattr(node.target, "__module__", "") == "_operator":
            continue
        yield node


def program_ops(ep) -> dict:
    """op -> node count of an ExportedProgram (operator.getitem and other builtins left out)."""
    return dict(Counter(op_name(node.target) for node in _op_nodes(ep)))


def _dtypes(val) -> set:
    """The dtype names of the tensors in a node's ``meta["val"]`` (a tensor, or a list/tuple of them)."""
    if isinstance(val, (list, tuple)):
        return set().union(*(_dtypes(v) for v in val)) if val else set()
    dtype = getattr(val, "dtype", None)
    if dtype is None or not hasattr(val, "shape"):  # SymInt, None, ...
        return set()
    return {str(dtype).replace("torch.", "")}


def program_op_dtypes(ep) -> dict:
    """(op, dtype) -> node count of an ExportedProgram: the dtypes each op's nodes produce."""
    counts: Counter = Counter()
    for node in _op_nodes(ep):
        for dtype in _dtypes(node.meta.get("val")):
            counts[(op_name(node.target), dtype)] += 1
    return dict(counts)


def op_dtype_key(op: str, dtype: str) -> str:
    return f"{op}{DTYPE_SEP}{dtype}"


class OpSet(set):
    """The ops of a case (a plain set of op names, as before) carrying ``dtype_keys``: its ``op@dtype`` keys."""

    dtype_keys: frozenset = frozenset()


def case_ops(case) -> OpSet:
    """The ops a lowered :class:`harness.graphs.cases.GraphCase` contains at either stage.

    A set of op names (as it always was) whose ``dtype_keys`` attribute holds the case's ``op@dtype`` keys,
    which :func:`op_coverage` counts too.
    """
    ops = OpSet(set(program_ops(case.exported)) | set(program_ops(case.edge)))
    pairs = set(program_op_dtypes(case.exported)) | set(program_op_dtypes(case.edge))
    ops.dtype_keys = frozenset(op_dtype_key(op, dtype) for op, dtype in pairs)
    return ops


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
    """op -> number of cases containing it; core ATen ops no case has appear with 0. Sorted by key.

    Op sets from :func:`case_ops` add their ``op@dtype`` keys: the number of cases with that op producing
    that dtype (never 0: only pairs some case has are listed).
    """
    counts: Counter = Counter()
    for ops in op_sets:
        counts.update(set(ops) | set(getattr(ops, "dtype_keys", ())))
    if include_core:
        for name in core_aten_ops():
            counts.setdefault(name, 0)
    return {op: counts[op] for op in sorted(counts)}
