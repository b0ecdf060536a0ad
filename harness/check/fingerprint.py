"""Fingerprints of programs: did anything change, are two graphs the same?

Two flavours. :func:`exact` includes node names and metadata: it is for
``input_unchanged``, where any edit of the handed-in program counts.
:func:`canonical` drops names (ExportPass renames freely) and keeps structure,
targets, literal arguments, ``val`` shapes/dtypes and a digest of every
state tensor: it is for ``idempotent`` and ``deterministic``, where only what
the program computes and how matters.
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch
import torch.fx

__all__ = ["tensor_digest", "canonical", "exact", "of_shared", "first_difference"]


def tensor_digest(t: torch.Tensor) -> str:
    t = t.detach()
    if t.is_sparse or t.layout != torch.strided:
        return f"{t.layout}:{tuple(t.shape)}"
    raw = t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    # the layout of a non-contiguous tensor is part of it: convert_constant_dim_order_pass changes only that
    layout = "" if t.is_contiguous() else f"@{t.stride()}"
    return f"{t.dtype}{tuple(t.shape)}{layout}:{hashlib.sha1(raw).hexdigest()[:16]}"


def _arg(a: Any, index: dict) -> Any:
    if isinstance(a, torch.fx.Node):
        return ("%", index.get(a, a.name))
    if isinstance(a, (list, tuple)):
        return tuple(_arg(x, index) for x in a)
    if isinstance(a, dict):
        return tuple(sorted((k, _arg(v, index)) for k, v in a.items()))
    if isinstance(a, torch.Tensor):
        return ("tensor", tensor_digest(a))
    return repr(a)


def _val(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return (tuple(str(s) for s in v.shape), str(v.dtype))
    if isinstance(v, (list, tuple)):
        return tuple(_val(x) for x in v)
    return type(v).__name__


def _target(node: torch.fx.Node) -> str:
    t = node.target
    if isinstance(t, str):
        return t
    text = str(t)
    if " at 0x" in text:  # a Python function (executorch's memory.alloc): its address changes per process
        text = getattr(t, "__qualname__", text)
    return getattr(t, "__name__", None) and f"{getattr(t, '__module__', '')}.{text}" or text


def _state(ep) -> tuple:
    items = []
    for name, value in list(ep.state_dict.items()) + list(ep.constants.items()):
        items.append((name, tensor_digest(value) if isinstance(value, torch.Tensor) else repr(type(value))))
    return tuple(sorted(items))


def canonical(ep) -> tuple:
    """Structure of the program, independent of node names."""
    gm = ep.graph_module
    index = {n: i for i, n in enumerate(gm.graph.nodes)}
    nodes = tuple(
        (n.op, _target(n) if n.op != "placeholder" else "", _arg(n.args, index), _arg(n.kwargs, index), _val(n.meta.get("val")))
        for n in gm.graph.nodes
    )
    return nodes, _state(ep)


def _meta_summary(meta: dict) -> tuple:
    out = []
    for key in sorted(meta):
        value = meta[key]
        if key == "val":
            out.append((key, _val(value)))
        elif isinstance(value, (str, int, float, bool)) or value is None:
            out.append((key, value))
        elif isinstance(value, dict):
            out.append((key, tuple(sorted(map(str, value)))))
        else:
            out.append((key, type(value).__name__))
    return tuple(out)


def exact(gm: torch.fx.GraphModule, ep=None) -> str:
    """A digest of everything observable about a graph module (and the program's state)."""
    parts = [
        (n.name, n.op, str(n.target), repr(n.args), repr(n.kwargs), _meta_summary(n.meta))
        for n in gm.graph.nodes
    ]
    parts.append(tuple(sorted(name for name, _ in gm.named_children())))
    if ep is not None:
        parts.append(_state(ep))
        parts.append(repr(ep.graph_signature))
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def of_shared(case, stage: str) -> str:
    """:func:`exact` of the program ``case`` shares at ``stage`` (what ``input_unchanged`` and the spares' seal compare)."""
    ep = case.shared(stage)
    return exact(ep.graph_module, ep)


def first_difference(a: tuple, b: tuple) -> str:
    """A short description of where two canonical forms differ."""
    nodes_a, state_a = a
    nodes_b, state_b = b
    if len(nodes_a) != len(nodes_b):
        return f"{len(nodes_a)} nodes against {len(nodes_b)}"
    for i, (x, y) in enumerate(zip(nodes_a, nodes_b)):
        if x != y:
            return f"node {i} differs: {x[0]} {x[1].rsplit('.', 1)[-1]} against {y[0]} {y[1].rsplit('.', 1)[-1]}"
    if state_a != state_b:
        return "the programs' parameters/constants differ"
    return "no difference"
