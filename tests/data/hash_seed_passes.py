"""Passes for tests/test_hash_seed_determinism.py: one whose output follows a set's iteration order, one that
does the same work in a fixed order, one that dies only in a process with another hash seed."""

from __future__ import annotations

import os

import torch
from executorch.exir.dialects._ops import ops as exir_ops


def _clone_each(gm: torch.fx.GraphModule, names) -> torch.fx.GraphModule:
    """An abs of every named node, inserted before the output in the order ``names`` gives."""
    by_name = {n.name: n for n in gm.graph.nodes}
    out = next(n for n in gm.graph.nodes if n.op == "output")
    for name in names:
        node = by_name[name]
        with gm.graph.inserting_before(out):
            new = gm.graph.call_function(exir_ops.edge.aten.abs.default, (node,))
        new.meta.update(node.meta)
    gm.recompile()
    return gm


def _tensor_nodes(gm: torch.fx.GraphModule) -> list:
    return [n.name for n in gm.graph.nodes
            if n.op == "call_function" and isinstance(n.meta.get("val"), torch.Tensor)]


def clone_in_set_order(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Broken: the clones come in the iteration order of a set of strings, which the hash seed decides."""
    return _clone_each(gm, set(_tensor_nodes(gm)))


def clone_in_sorted_order(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """The same work, in a fixed order."""
    return _clone_each(gm, sorted(set(_tensor_nodes(gm))))


def dies_in_other_seed(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Kills its process when it runs in the hash-seed worker (told apart by its seed); a no-op elsewhere."""
    if os.environ.get("PASSGATE_TEST_KILL_SEED") == os.environ.get("PYTHONHASHSEED"):
        os._exit(7)
    return gm
