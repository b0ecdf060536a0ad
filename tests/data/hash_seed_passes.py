"""Passes for tests/test_hash_seed_determinism.py: one whose output follows a set's iteration order, one that
does the same work in a fixed order, one that dies only in the hash-seed worker."""

from __future__ import annotations

import os
import sys

import torch
from executorch.exir.dialects._ops import ops as exir_ops

ABS = exir_ops.edge.aten.abs.default


def _abs_of_each(gm: torch.fx.GraphModule, names) -> torch.fx.GraphModule:
    """An unused abs of every named node, inserted before the output in the order ``names`` gives."""
    by_name = {n.name: n for n in gm.graph.nodes}
    out = next(n for n in gm.graph.nodes if n.op == "output")
    for name in names:
        node = by_name[name]
        with gm.graph.inserting_before(out):
            new = gm.graph.call_function(ABS, (node,))
        new.meta.update(node.meta)
    gm.recompile()
    return gm


def _todo(gm: torch.fx.GraphModule) -> list:
    """Float tensor nodes that have no abs yet (a second run changes nothing)."""
    return [n.name for n in gm.graph.nodes
            if n.op == "call_function" and n.target is not ABS and isinstance(n.meta.get("val"), torch.Tensor)
            and n.meta["val"].dtype.is_floating_point and not any(u.target is ABS for u in n.users)]


def abs_in_set_order(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Broken: the new nodes come in the iteration order of a set of strings, which the hash seed decides."""
    return _abs_of_each(gm, set(_todo(gm)))


def abs_in_sorted_order(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """The same work, in a fixed order."""
    return _abs_of_each(gm, sorted(set(_todo(gm))))


def dies_in_hash_seed_worker(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Kills its process when it runs in the hash-seed worker; changes nothing elsewhere."""
    if "hashseed_worker" in sys.argv[0]:
        os._exit(7)
    return gm
