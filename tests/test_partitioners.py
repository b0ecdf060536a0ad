"""Partitioner checks: support, convexity, and delegates reached only through executorch_call_delegate."""

from __future__ import annotations

import torch
from executorch.exir.dialects._ops import ops as exir_ops
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from harness.check import verifiers
from harness.core.results import Status
from harness.pipelines.partitioners import (
    PARTITIONERS,
    BackendPartitioner,
    check_backend_partitioner,
    check_capability_partitioner,
    config_oracle,
    delegate_call_only,
    judge_partitions,
)

EDGE = exir_ops.edge.aten


class AddMulOperatorSupport(OperatorSupportBase):
    """The guide's example operator support."""

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return node.op == "call_function" and node.target in (EDGE.add.Tensor, EDGE.mul.Tensor)


def _status(results, check):
    return next(r.status for r in results if r.check == check)


def test_capability_partitioner_proposal_holds(builtin_cases):
    gm = builtin_cases["inplace_views"].program("edge").graph_module
    results = check_capability_partitioner(gm, AddMulOperatorSupport(), "addmul", "inplace_views")
    assert _status(results, "partition_supported") is Status.PASS
    assert _status(results, "partition_convex") is Status.PASS
    assert results[0].details["partitions"] >= 1


def test_fuse_partitions_breaks_the_ir_spec_as_the_guide_warns(builtin_cases):
    ep = builtin_cases["inplace_views"].program("edge")
    partitioner = CapabilityBasedPartitioner(ep.graph_module, AddMulOperatorSupport())
    fused = partitioner.fuse_partitions(partitioner.propose_partitions())
    ep._graph_module = fused
    assert verifiers.no_call_module(ep).status is Status.FAIL
    verdict = delegate_call_only(ep, "fuse_partitions", "inplace_views")
    assert verdict.status is Status.FAIL and "call_module" in verdict.message


def test_non_convex_and_unsupported_partitions_are_flagged():
    g = torch.fx.Graph()
    x = g.placeholder("x")
    a = g.call_function(torch.relu, (x,))
    b = g.call_function(torch.neg, (a,))  # outside the partition, between two of its nodes
    c = g.call_function(torch.add, (a, b))
    g.output(c)
    results = judge_partitions({"tag0": [a, c]}, lambda n: n.target is not torch.add, "bad", "toy")
    convex = next(r for r in results if r.check == "partition_convex")
    assert convex.status is Status.FAIL and "through neg" in convex.message and "at add" in convex.message
    supported = next(r for r in results if r.check == "partition_supported")
    assert supported.status is Status.FAIL and supported.details["unsupported"] == {"tag0": ["add"]}


def _greedy_xnnpack():
    """XNNPACK's partitioner, then every call_function node tagged into its first partition: a buggy one."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    class Greedy(XnnpackPartitioner):
        def partition(self, exported_program):
            res = super().partition(exported_program)
            tag = next(iter(res.partition_tags))
            for n in res.tagged_exported_program.graph_module.graph.nodes:
                if n.op == "call_function":
                    n.meta["delegation_tag"] = tag
            return res

    return Greedy()


def test_xnnpack_partitioner_holds_and_lowers_to_delegate_calls(builtin_cases):
    run = check_backend_partitioner(PARTITIONERS["xnnpack"], builtin_cases["mlp"])
    assert {r.check: r.status for r in run.results} == {
        "runs": Status.PASS, "partition_supported": Status.PASS, "partition_convex": Status.PASS,
        "delegate_call_only": Status.PASS, "runtime_runs": Status.PASS, "runtime_numerics": Status.PASS}
    targets = [getattr(n.target, "__name__", "") for n in run.lowered.graph_module.graph.nodes]
    assert "executorch_call_delegate" in targets


def test_a_partitioner_that_tags_unsupported_nodes_is_caught(builtin_cases):
    greedy = BackendPartitioner("greedy_xnnpack", _greedy_xnnpack, config_oracle)
    run = check_backend_partitioner(greedy, builtin_cases["attention_block"])
    supported = next(r for r in run.results if r.check == "partition_supported")
    assert supported.status is Status.FAIL and "operator support rejects" in supported.message
