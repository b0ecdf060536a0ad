"""The vendor's partitioner, and the units that have passgate check it on two built-in graphs.

``ExampleAddPartitioner`` proposes every ``aten.add.Tensor`` for the
backend (a CapabilityBasedPartitioner over its operator support), delegating
to ``BackendWithCompilerDemo``, the demo backend the ExecuTorch wheel ships,
standing in for the vendor's own. passgate lowers a graph with it through
the real ``to_edge_transform_and_lower`` and judges the proposal:
``partition_supported``, ``partition_convex``, ``delegate_call_only``
(:func:`harness.check_backend_partitioner`). A partitioner check is a unit,
registered under ``passgate.units``: profile runs (``passgate run``, the
conformance suite) add it; a run narrowed by ``--catalog`` does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

# the demo backend registers itself ("BackendWithCompilerDemo") when its module is imported
import executorch.exir.backend.test.backend_with_compiler_demo  # noqa: F401
from executorch.exir.backend.canonical_partitioners.pattern_op_partitioner import generate_pattern_op_partitions
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from executorch.exir.dialects._ops import ops as exir_ops
from torch.fx.passes.operator_support import OperatorSupportBase

from harness import BackendPartitioner, Unit, check_backend_partitioner

__all__ = ["GRAPHS", "PARTITIONER", "AddSupport", "ExampleAddPartitioner", "PartitionerCheck", "units"]

GRAPHS = ("residual_block", "attention_block")  # built-in graphs (in every profile) that hold adds


class AddSupport(OperatorSupportBase):
    """The backend's operator support: edge ``aten.add.Tensor``."""

    def is_node_supported(self, submodules, node) -> bool:
        return node.op == "call_function" and node.target == exir_ops.edge.aten.add.Tensor


class ExampleAddPartitioner(Partitioner):
    """Tags every group of connected adds as one partition for the demo backend."""

    def __init__(self):
        super().__init__()
        self.op_support = AddSupport()
        self.delegation_spec = DelegationSpec("BackendWithCompilerDemo", [])

    def partition(self, exported_program) -> PartitionResult:
        tags = {}
        for p in generate_pattern_op_partitions(exported_program.graph_module, op_support=self.op_support):
            for node in p.nodes:
                node.meta["delegation_tag"] = f"example{p.id}"
                tags[f"example{p.id}"] = self.delegation_spec
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)


def _oracle(partitioner, exported_program):
    """Which nodes the partitioner's own operator support accepts: what each proposed node is held to."""
    return lambda node: partitioner.op_support.is_node_supported({}, node)


PARTITIONER = BackendPartitioner("example", ExampleAddPartitioner, _oracle)


@dataclass(frozen=True)
class PartitionerCheck(Unit):
    """The example partitioner on one graph (``graph``), judged on the partitioner checks."""

    kind: ClassVar[str] = "example-partitioner"
    heaviness: ClassVar[int] = 4

    def items(self) -> list[tuple[str, str]]:
        return [(f"partitioner.{self.name}", c) for c in PARTITIONER.checks_with(False)]

    def judge(self, case, config) -> list[tuple[str, str, list]]:
        return [(self.graph, f"partitioner.{self.name}", check_backend_partitioner(PARTITIONER, case, False).results)]


def units(profile, seed: int) -> list[Unit]:
    """One partitioner check per graph of :data:`GRAPHS`, in every profile (the seed draws nothing here)."""
    return [PartitionerCheck(PARTITIONER.name, g) for g in GRAPHS]
