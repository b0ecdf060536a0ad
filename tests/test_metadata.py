"""harness/check/metadata.py and val_matches_execution: which nodes must carry meta['val'], and what it must say."""

import torch
import torch.fx

from harness.check.metadata import nodes_without_val, returns_nothing


def _graph() -> torch.fx.GraphModule:
    """x -> _assert_tensor_metadata(x) (returns nothing, no val, as torch.export emits it) -> relu(x) (no val)."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    x.meta["val"] = torch.empty(2, 3)
    g.call_function(torch.ops.aten._assert_tensor_metadata.default, (x,), {"dtype": torch.float32})
    relu = g.call_function(torch.ops.aten.relu.default, (x,))
    g.output((relu,))
    return torch.fx.GraphModule(torch.nn.Module(), g)


def test_an_op_that_returns_nothing_needs_no_val():
    gm = _graph()
    assert_node, relu = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert returns_nothing(assert_node) and not returns_nothing(relu)
    assert nodes_without_val(gm) == [relu.name]  # the relu still has to carry one
    relu.meta["val"] = torch.empty(2, 3)
    assert nodes_without_val(gm) == []


def test_placeholders_still_need_val():
    gm = _graph()
    x = next(n for n in gm.graph.nodes if n.op == "placeholder")
    del x.meta["val"]
    assert x.name in nodes_without_val(gm)


def test_alloc_buffers_of_a_dynamic_dim_are_upper_bound_sized():
    """memory.alloc evaluates a symbolic dim to its upper bound (exir.sym_util.eval_shape): for an alloc node
    val_matches_execution accepts the bound as well as the sample's size, for any other node only the size."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext
    from torch.utils._sympy.value_ranges import ValueRanges

    from harness.check.verifiers import _val_mismatch

    env = ShapeEnv()
    fake = FakeTensorMode(shape_env=env).from_tensor(
        torch.empty(3, 2), symbolic_context=StatelessSymbolicContext([DimDynamic.DYNAMIC, DimDynamic.STATIC]))
    env.var_to_range[fake.shape[0].node.expr] = ValueRanges(2, 64)

    def ran(*shape):
        return ("tensor", shape, torch.float32)

    assert _val_mismatch(fake, ran(3, 2)) is None and _val_mismatch(fake, ran(3, 2), upper_bound=True) is None
    assert _val_mismatch(fake, ran(64, 2)) and _val_mismatch(fake, ran(64, 2), upper_bound=True) is None
    assert _val_mismatch(fake, ran(63, 2), upper_bound=True)
    assert not env.guards  # read from the ranges, never guarded: the ShapeEnv is shared by every copy of a case
