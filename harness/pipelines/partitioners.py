"""Partitioner checks: what a partitioner proposes, and what lowering makes of it.

The pass-writing guide warns that FX partitioners do not necessarily keep the
IR spec: ``fuse_partitions`` turns partitions into submodules reached through
``call_module``, which ExecuTorch does not allow. A partitioner is right when

- ``partition_supported``: every node of every partition is one its operator
  support accepts (for a configuration-based partitioner such as XNNPACK's:
  an anchor a config accepts, or a node that config's ``get_partition`` pulls
  in with it; getitems of an accepted node; constant inputs);
- ``partition_convex``: no path leaves a partition and comes back into it
  (otherwise the fused delegate would depend on its own output);
- ``delegate_call_only``: the lowered program reaches each delegate only as
  ``executorch_call_delegate(get_attr lowered_module, ...)`` and holds no
  ``call_module`` at all.

Backend partitioners (Vulkan, XNNPACK) are checked through the real
``to_edge_transform_and_lower``: :class:`_Recording` forwards every call to
the real partitioner and judges its proposal on the tagged program before
lowering consumes it. Nothing is stubbed. One whose backend the installed
runtime registers (XNNPACK) is also judged end to end: its lowered program
goes through ``to_executorch``, is run by the runtime and compared with eager
(``runtime_runs``, ``runtime_numerics``: :mod:`harness.pipelines.lowered_runtime`).
"""

from __future__ import annotations

import operator
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

import torch
from executorch.exir.backend.partitioner import Partitioner

from harness.core.results import CheckResult, Status, check_ids, result
from harness.core.stability import stable

__all__ = ["PARTITION_CHECKS", "Accepts", "convexity_violation", "judge_partitions",
           "check_capability_partitioner", "delegate_call_only", "vulkan_oracle", "config_oracle",
           "BackendPartitioner", "PARTITIONERS", "PartitionerRun", "check_backend_partitioner"]

PARTITION_CHECKS = ("runs",) + check_ids("partition")  # "runs" first: the order items are collected in
Accepts = Callable[[torch.fx.Node], bool]


def convexity_violation(nodes: Iterable[torch.fx.Node]) -> Optional[tuple[str, str]]:
    """(first node outside, node re-entered) when some path leaves ``nodes`` and comes back, else None."""
    inside = set(nodes)
    frontier = [u for n in inside for u in n.users if u not in inside]
    seen: set = set()
    origin = {u: u for u in frontier}
    while frontier:
        n = frontier.pop()
        if n in seen:
            continue
        seen.add(n)
        for u in n.users:
            if u in inside:
                return origin[n].name, u.name
            if u not in seen:
                origin.setdefault(u, origin[n])
                frontier.append(u)
    return None


def _accepted(node: torch.fx.Node, accepts: Accepts, members: set) -> bool:
    if node.op in ("placeholder", "get_attr", "output"):
        return True  # constants and inputs travel with the partition that uses them
    if node.target is operator.getitem and node.args and node.args[0] in members:
        return True
    return accepts(node)


def judge_partitions(partitions: dict, accepts: Accepts, pass_name: str, graph: str) -> list[CheckResult]:
    """``partition_supported`` and ``partition_convex`` for ``{tag: [nodes]}``."""
    unsupported, cycles = {}, {}
    for tag, nodes in partitions.items():
        members = set(nodes)
        bad = [n.name for n in nodes if not _accepted(n, accepts, members)]
        if bad:
            unsupported[tag] = bad
        cycle = convexity_violation(n for n in nodes if n.op == "call_function")
        if cycle:
            cycles[tag] = cycle
    details = {"partitions": len(partitions), "nodes": sum(len(v) for v in partitions.values())}
    if unsupported:
        tag, names = next(iter(unsupported.items()))
        sup = result(pass_name, graph, "partition_supported", Status.FAIL,
                     f"{sum(map(len, unsupported.values()))} node(s) its operator support rejects; {tag}: "
                     f"{', '.join(names[:6])}", {**details, "unsupported": unsupported})
    else:
        sup = result(pass_name, graph, "partition_supported", Status.PASS, f"{details['partitions']} partition(s)",
                     details)
    if cycles:
        tag, (leave, back) = next(iter(cycles.items()))
        conv = result(pass_name, graph, "partition_convex", Status.FAIL,
                      f"{tag}: a path leaves the partition through {leave} and re-enters it at {back}",
                      {**details, "cycles": {k: list(v) for k, v in cycles.items()}})
    else:
        conv = result(pass_name, graph, "partition_convex", Status.PASS, "", details)
    return [sup, conv]


def check_capability_partitioner(graph_module: torch.fx.GraphModule, op_support, pass_name: str, graph: str,
                                 **kwargs) -> list[CheckResult]:
    """A ``CapabilityBasedPartitioner``'s proposal for ``graph_module`` under ``op_support``."""
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner

    submodules = dict(graph_module.named_modules())
    partitioner = CapabilityBasedPartitioner(graph_module, op_support, **kwargs)
    proposal = {f"p{p.id}": list(p.nodes) for p in partitioner.propose_partitions()}
    return judge_partitions(proposal, lambda n: op_support.is_node_supported(submodules, n), pass_name, graph)


def delegate_call_only(ep, pass_name: str, graph: str) -> CheckResult:
    from executorch.exir.lowered_backend_module import LoweredBackendModule

    gm = ep.graph_module
    problems, delegates = [], 0
    modules = {n.name for n in gm.graph.nodes if n.op == "get_attr"
               and isinstance(getattr(gm, str(n.target), None), LoweredBackendModule)}
    for n in gm.graph.nodes:
        if n.op == "call_module":
            problems.append(f"{n.name} is a call_module")
        elif n.op == "call_function" and getattr(n.target, "__name__", "") == "executorch_call_delegate":
            delegates += 1
            if not (n.args and getattr(n.args[0], "name", None) in modules):
                problems.append(f"{n.name} calls something that is not a lowered module")
        elif n.op == "get_attr" and n.name in modules:
            other = [u.name for u in n.users if getattr(u.target, "__name__", "") != "executorch_call_delegate"]
            if other:
                problems.append(f"lowered module {n.name} is used by {', '.join(other)}")
    if problems:
        return result(pass_name, graph, "delegate_call_only", Status.FAIL, "; ".join(problems[:4]),
                      {"problems": problems, "delegates": delegates})
    return result(pass_name, graph, "delegate_call_only", Status.PASS, f"{delegates} delegate call(s)",
                  {"delegates": delegates})


# -- backend partitioners ----------------------------------------------------------------------------

def vulkan_oracle(partitioner, ep) -> Accepts:
    """The operator support ``VulkanPartitioner.partition`` builds, built the same way."""
    from executorch.backends.vulkan import utils
    from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanSupportedOperators
    from executorch.backends.vulkan.patterns import get_all_fusable_subgraphs

    opts = partitioner.options
    limits = opts.get("texture_limits") or (utils.SMALL_TEXTURE_LIMITS if opts.get("small_texture_limits")
                                            else utils.DEFAULT_TEXTURE_LIMITS)
    support = VulkanSupportedOperators(
        limits, opts.get("buffer_limit", utils.DEFAULT_BUFFER_LIMIT),
        require_dynamic_shape=opts.get("require_dynamic_shapes", False),
        skip_bool_tensors=opts.get("skip_bool_tensors", False),
        operator_blocklist=partitioner.operator_blocklist, operator_allowlist=partitioner.operator_allowlist,
        fusable_subgraphs=get_all_fusable_subgraphs(ep.graph_module),
        nn_module_blocklist=partitioner.nn_module_blocklist, nn_module_allowlist=partitioner.nn_module_allowlist)
    return lambda n: support.is_node_supported({}, n)


def config_oracle(partitioner, ep) -> Accepts:
    """For a ConfigerationBasedPartitioner (XNNPACK): anchors its configs accept, with what they pull in."""
    from executorch.exir.backend.canonical_partitioners.config_partitioner import format_target_name

    accepted: set = set()
    for node in ep.graph_module.graph.nodes:
        if node.op != "call_function" or not hasattr(node.target, "__name__"):
            continue
        config = partitioner.target_partitioner_configs.get(format_target_name(node.target.__name__))
        if config is not None and config.check_constraints(node, ep):
            accepted.add(node)
            accepted.update(config.get_partition(node, ep))
    return lambda n: n in accepted


@stable
@dataclass(frozen=True)
class BackendPartitioner:
    """A backend partitioner passgate checks: ``make()`` builds it, ``oracle(partitioner, ep)`` says which nodes
    its operator support accepts (what ``partition_supported`` holds each proposed node to).

    A vendor's partitioner is checked with :func:`check_backend_partitioner` from a unit its plugin registers
    under ``passgate.units``.
    """

    name: str
    make: Callable[[], Partitioner]
    oracle: Callable[[Any, Any], Accepts]
    # the runtime backend that runs its lowered program here: judged end to end (runtime_runs, runtime_numerics)
    runtime_backend: Optional[str] = None

    @property
    def checks(self) -> tuple[str, ...]:
        """The check ids one case of this partitioner records, in order (its runtime leg included)."""
        return self.checks_with(True)

    def checks_with(self, runtime: bool) -> tuple[str, ...]:
        """The check ids one case records with its runtime leg judged (``runtime``) or not."""
        from harness.pipelines.lowered_runtime import RUNTIME_CHECKS

        return PARTITION_CHECKS + (RUNTIME_CHECKS if self.runtime_backend and runtime else ())


def _vulkan() -> Partitioner:
    from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner

    return VulkanPartitioner()


def _xnnpack() -> Partitioner:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    return XnnpackPartitioner()


PARTITIONERS = {
    "vulkan": BackendPartitioner("vulkan", _vulkan, vulkan_oracle),
    "xnnpack": BackendPartitioner("xnnpack", _xnnpack, config_oracle, runtime_backend="XnnpackBackend"),
}


class _Recording(Partitioner):
    """Forwards to the real partitioner and judges its proposal before lowering consumes it."""

    def __init__(self, inner: Partitioner, oracle, pass_name: str, graph: str):
        super().__init__()
        self.inner, self.oracle, self.pass_name, self.graph = inner, oracle, pass_name, graph
        self.judged: list[CheckResult] = []

    def ops_to_not_decompose(self, ep):
        return self.inner.ops_to_not_decompose(ep)

    def partition(self, exported_program):
        accepts = self.oracle(self.inner, exported_program)  # on the graph the partitioner sees
        res = self.inner.partition(exported_program)
        tags: dict = {}
        for n in res.tagged_exported_program.graph_module.graph.nodes:
            if "delegation_tag" in n.meta:
                tags.setdefault(n.meta["delegation_tag"], []).append(n)
        self.judged = judge_partitions(tags, accepts, self.pass_name, self.graph)
        return res


@dataclass
class PartitionerRun:
    results: list = field(default_factory=list)
    lowered: Any = None


@stable
def check_backend_partitioner(bp: BackendPartitioner, case, runtime: bool = True) -> PartitionerRun:
    """Lower ``case``'s export program with ``bp`` through to_edge_transform_and_lower and judge it; with
    ``runtime`` (and a runtime backend), its lowered program through the runtime too."""
    from executorch.exir import to_edge_transform_and_lower

    from harness.graphs.cases import edge_compile_config

    pass_name = f"partitioner.{bp.name}"
    out = PartitionerRun()
    rec = _Recording(bp.make(), bp.oracle, pass_name, case.name)
    started = time.perf_counter()
    try:
        manager = to_edge_transform_and_lower(
            case.program("export"), partitioner=[rec],
            compile_config=edge_compile_config(case.spec.check_ir_validity, case.spec.preserve_ops))
        out.lowered = manager.exported_program()
    except Exception as exc:  # noqa: BLE001 - a partitioner that raises is its verdict
        seconds = time.perf_counter() - started
        out.results.append(result(pass_name, case.name, "runs", Status.FAIL,
                                  f"partitioning / lowering raised {type(exc).__name__}: {exc}",
                                  {"traceback": traceback.format_exc(limit=12)}, seconds))
        for check in PARTITION_CHECKS[1:]:
            judged = next((r for r in rec.judged if r.check == check), None)
            out.results.append(judged or result(pass_name, case.name, check, Status.SKIP, "lowering did not finish"))
        out.results += [result(pass_name, case.name, c, Status.SKIP, "lowering did not finish")
                        for c in bp.checks_with(runtime)[len(PARTITION_CHECKS):]]
        return out
    out.results.append(result(pass_name, case.name, "runs", Status.PASS, "", {}, time.perf_counter() - started))
    out.results.extend(rec.judged or [result(pass_name, case.name, c, Status.NOT_APPLICABLE,
                                             "the partitioner was never asked (nothing to partition)")
                                      for c in ("partition_supported", "partition_convex")])
    out.results.append(delegate_call_only(out.lowered, pass_name, case.name))
    if bp.runtime_backend and runtime:
        from harness.pipelines.lowered_runtime import runtime_verdicts

        out.results += runtime_verdicts(manager, case, pass_name, bp.runtime_backend)
    return out
