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


def _lowered_runtime(graph: str) -> dict:
    """The runtime verdicts of the XNNPACK partitioner's lowered program on ``graph``, lowered in a forked child
    (the quantized kernels' registrations die with it, as in a ``passgate run`` unit)."""
    from harness.graphs import sources
    from harness.graphs.cases import load_case
    from harness.run import forking

    def judge():
        run = check_backend_partitioner(PARTITIONERS["xnnpack"], load_case(sources.select([graph])[0]))
        return {r.check: (r.status, r.message) for r in run.results}

    return forking.call(judge)


def test_the_lowered_leg_emits_q_dq_ops_left_outside_the_delegates(passgate_cache):
    """targeted_quant_weight_only's per-channel dequantize is left outside the XNNPACK delegates: to_executorch
    needs the quantized kernels' out variants for it (without them: 'Missing out variants'), and the program
    then runs and matches eager."""
    got = _lowered_runtime("targeted_quant_weight_only")
    assert got["runtime_runs"][0] is Status.PASS, got["runtime_runs"]
    assert got["runtime_numerics"][0] is Status.PASS, got["runtime_numerics"]


def test_a_lowered_program_without_an_eager_reference_is_a_numerics_skip_not_a_lost_unit(passgate_cache):
    """targeted_exir_joint's export program (a joint graph) does not run as an nn.Module in torch: the lowered
    program still gets its runtime_runs verdict and the partition checks theirs; runtime_numerics is a skip that
    says why (it raised out of the unit before, losing every check of it)."""
    got = _lowered_runtime("targeted_exir_joint")
    assert got["runs"][0] is Status.PASS and got["runtime_runs"][0] is Status.PASS, got
    assert got["runtime_numerics"][0] is Status.SKIP and "reference" in got["runtime_numerics"][1]
