"""What the versioned suite runs beside the catalogs: the pass-writing guide's reference passes.

Registered under the ``passgate.suite_passes`` entry-point group, so the
engine's profiles (:mod:`harness.run.profiles`) name no content. Imports
nothing heavy: the conformance suite reads it while collecting.
"""

from __future__ import annotations

__all__ = ["REFERENCE_PASSES", "known_violations", "suite_passes"]

# The pass-writing guide's reference passes (SPECs, :mod:`passes.reference`): the float workload of a
# certification and of the conformance suite, beside the catalogs.
REFERENCE_PASSES = (
    "passes.reference:ReplaceInPlaceReluWithOutOfPlaceReluPass",
    "passes.reference:ReplaceAddWithMulSub",
    "passes.reference:RemoveDetachPass",
    "passes.reference:ScalarToTensorPass",
    "passes.reference:ReplaceAddPass",
    "passes.reference:replace_add_mul_with_sub",
    "passes.reference:ReplaceAddMulWithSubKeepingMeta",
    "passes.reference:GuidePipeline",
)

_GUIDE_REWRITER = "the guide: nodes created by the subgraph rewriter lack stack_trace, val and nn_module_stack"
_SCALARS_GONE = ("the guide's ScalarToTensorPass turns scalar arguments into tensors, which to_edge has already "
                 "done on every edge-stage graph: nothing is left for it to change there")


def known_violations(graphs=("inplace_views",)) -> dict:
    """The guide's own rewriter example loses metadata wherever its pattern (add then mul) matches."""
    # must-level checks only: a should-level failure does not fail the gate, so it needs no waiver;
    # exercised is must-level in a certification (pass-level: graph "*")
    known = {("ScalarToTensorPass", "*", "exercised"): _SCALARS_GONE}
    for graph in graphs:
        for check in ("meta_val", "meta_stack_trace", "meta_nn_module_stack"):
            known[("replace_add_mul_with_sub", graph, check)] = _GUIDE_REWRITER
    return known


def suite_passes():
    """The ``passgate.suite_passes`` entry point: (SPECs, known-violations function of graph names)."""
    return REFERENCE_PASSES, known_violations
