"""Node metadata: seeding it before a pass and checking it survived after.

As LLVM's debugify does for debug info, the copy handed to a pass is seeded
with unique synthetic ``stack_trace`` / ``nn_module_stack`` / ``debug_handle``
on every ``call_function`` node that lacks them. Metadata loss is then caught
on every graph, not only on graphs that happened to carry the key, and a
pass's "new" nodes are held to the same bar as the nodes they replace.

The rule checked per key: if every ``call_function`` node handed to the pass
carried the key (after seeding, always), every ``call_function`` node in the
result must carry it. A node whose name and target also exist before the pass
is reported as a survivor that lost the key; any other as a new node that
never got it.
"""

from __future__ import annotations

from typing import Iterable

import torch.fx

__all__ = ["META_CHECKS", "SYNTHETIC_PREFIX", "seed_metadata", "snapshot", "missing_key", "meta_key_message",
           "names_preview", "VALUE_OPS", "returns_nothing", "nodes_without_val"]

META_CHECKS = {
    "meta_stack_trace": "stack_trace",
    "meta_nn_module_stack": "nn_module_stack",
    "meta_debug_handle": "debug_handle",
}

SYNTHETIC_PREFIX = "passgate-synthetic"


def _call_nodes(gm: torch.fx.GraphModule) -> Iterable[torch.fx.Node]:
    return (n for n in gm.graph.nodes if n.op == "call_function")


def seed_metadata(gm: torch.fx.GraphModule) -> int:
    """Give every call_function node the keys it lacks, unique per node. Returns how many were added."""
    added = 0
    next_handle = 1 + max(
        (n.meta["debug_handle"] for n in _call_nodes(gm) if isinstance(n.meta.get("debug_handle"), int)),
        default=0,
    )
    for node in _call_nodes(gm):
        if not node.meta.get("stack_trace"):
            node.meta["stack_trace"] = f'  File "{SYNTHETIC_PREFIX}", line 1, in {node.name}\n'
            added += 1
        if not node.meta.get("nn_module_stack"):
            node.meta["nn_module_stack"] = {
                f"{SYNTHETIC_PREFIX}.{node.name}": (f"{SYNTHETIC_PREFIX}.{node.name}", "passgate.Synthetic")
            }
            added += 1
        if node.meta.get("debug_handle") in (None, 0):
            node.meta["debug_handle"] = next_handle
            next_handle += 1
            added += 1
    return added


def _identity(node: torch.fx.Node) -> tuple:
    return (node.name, str(node.target))


def snapshot(gm: torch.fx.GraphModule) -> dict:
    """Which metadata keys each call_function node carries: taken before the pass runs,
    because a pass that edits in place leaves no "before" graph to look at afterwards."""
    keys = tuple(META_CHECKS.values())
    return {_identity(n): frozenset(k for k in keys if n.meta.get(k) not in (None, "", {})) for n in _call_nodes(gm)}


def missing_key(before: dict, after: torch.fx.GraphModule, key: str):
    """(survivors that lost ``key``, new nodes without it), or None if the input lacked it somewhere."""
    if not before or not all(key in present for present in before.values()):
        return None
    lost, never = [], []
    for node in _call_nodes(after):
        if node.meta.get(key) in (None, "", {}):
            (lost if _identity(node) in before else never).append(node.name)
    return lost, never


def meta_key_message(key: str, lost: list, never: list) -> str:
    parts = []
    if lost:
        parts.append(f"{len(lost)} surviving node(s) lost {key}: {names_preview(lost)}")
    if never:
        parts.append(f"{len(never)} new node(s) lack {key}: {names_preview(never)}")
    return "; ".join(parts)


def names_preview(names: list, limit: int = 6) -> str:
    """The first ``limit`` of ``names`` in natural order (``copy``, ``copy_1``, ``copy_2``, ``copy_10``), then how
    many more.

    Sorted, not in graph order: a pass that inserts nodes while iterating a set places them in string-hash
    order, which changes from process to process, and a message that changed with it would rewrite the
    baseline entry on every ``baseline update`` though nothing else did."""
    ordered = sorted(names, key=_natural)
    shown = ", ".join(ordered[:limit])
    return shown + (f" (+{len(names) - limit} more)" if len(names) > limit else "")


def _natural(name: str) -> tuple:
    stem, _, suffix = name.rpartition("_")
    return (stem, int(suffix)) if stem and suffix.isdigit() else (name, -1)


VALUE_OPS = ("placeholder", "call_function")


def returns_nothing(node: torch.fx.Node) -> bool:
    """Is ``node`` a call of an operator whose schema has no returns (``aten._assert_tensor_metadata``,
    ``aten._assert_scalar``)? torch.export gives such nodes no meta['val']: there is no value to describe."""
    schema = getattr(node.target, "_schema", None)
    return node.op == "call_function" and schema is not None and not schema.returns


def nodes_without_val(gm: torch.fx.GraphModule) -> list[str]:
    """Value-producing nodes (placeholders, calls of operators that return something) without meta['val']."""
    return [n.name for n in gm.graph.nodes if n.op in VALUE_OPS and "val" not in n.meta and not returns_nothing(n)]
