"""A result that differs from what the pass was handed only by the getitems nobody reads is not a change: the
``exercised`` check must not be satisfied by the dead-code elimination a pass ends with when its own rewrite
matched nothing."""

from __future__ import annotations

from executorch.exir.pass_base import ExportPass
from torch.fx.passes.infra.pass_base import PassBase, PassResult

from harness.check.loading import from_object
from harness.check.runner import check_pass_on_case


class NothingButCleanUp(PassBase):
    """What a QNN decomposition that matched nothing does: its closing dead-code elimination only."""

    def call(self, graph_module):
        graph_module.graph.eliminate_dead_code()
        graph_module.recompile()
        return PassResult(graph_module, True)


class ReluToSigmoid(ExportPass):
    """A real rewrite (an ExportPass retrace, which keeps the unused getitems)."""

    def call_operator(self, op, args, kwargs, meta):
        from executorch.exir.dialects._ops import ops

        if op == ops.edge.aten.relu.default:
            op = ops.edge.aten.sigmoid.default
        return super().call_operator(op, args, kwargs, meta)


def _runs(obj, case):
    return next(r for r in check_pass_on_case(from_object(obj, type(obj).__name__), case) if r.check == "runs")


def test_dropping_the_deserializers_unused_getitems_is_not_a_change():
    """residual_block's batch norms come back from the case cache with a getitem for each output, the unused
    ones too; a closing dead-code elimination drops those. ops_changed says so, changed does not count it."""
    from harness.graphs import sources
    from harness.graphs.cases import load_case

    case = load_case(sources.select(["residual_block"])[0])
    runs = _runs(NothingButCleanUp(), case)
    assert runs.details["ops_changed"].get("getitem", 0) < 0  # the deserializer's <node>_unused_N
    assert runs.details["changed"] == {"ops": False, "structure": False, "metadata": False}
    assert runs.details["change_signature"] == "unchanged"
    rewrite = _runs(ReluToSigmoid(), case)
    assert rewrite.details["changed"]["ops"] is True
    assert "+aten.sigmoid.default" in rewrite.details["change_signature"]
