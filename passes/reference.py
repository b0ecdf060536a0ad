"""The reference passes of ExecuTorch's pass-writing guide, as working code.

The guide (``shared/seeds/000_*.txt``) shows each way of writing a pass;
its snippets have slips (``ScalarToTensorPass.call_operator`` drops the
``meta`` argument, ``args_map`` reads ``self.op``, ``ReplaceAddPass.call``
iterates an undefined ``gm`` and matches ``torch.add``, which no exported
graph contains). These are the versions that run, each with the declarations
passgate reads (``passgate_stage``, ``passgate_semantics``).

Expected verdicts, asserted in ``tests/test_reference_passes.py``:

=================================  =======  =========  ===========================================
pass                               stage    semantics  verdict
=================================  =======  =========  ===========================================
ReplaceInPlaceReluWithOutOfPlace   export   preserving every must check passes
ReplaceAddWithMulSub               edge     changing   passes (numerics skipped, by declaration)
RemoveDetachPass                   export   preserving every must check passes
ScalarToTensorPass                 edge     preserving every must check passes
ReplaceAddPass (PassBase)          edge     changing   requires: not_applicable without an add
replace_add_mul_with_sub           export   changing   meta_val / meta_stack_trace /
  (subgraph rewriter)                                  meta_nn_module_stack fail, as the guide warns
ReplaceAddMulWithSubKeepingMeta    export   changing   the rewriter with metadata copied: passes
GuidePipeline (PassManager)        export   preserving every must check passes
=================================  =======  =========  ===========================================
"""

from __future__ import annotations

import torch
from executorch.exir.dialects._ops import ops as exir_ops
from executorch.exir.pass_base import ExportPass
from executorch.exir.pass_manager import PassManager
from torch.fx import subgraph_rewriter
from torch.fx.passes.infra.pass_base import PassBase, PassResult

ATEN = torch.ops.aten
EDGE = exir_ops.edge.aten


class ReplaceInPlaceReluWithOutOfPlaceReluPass(ExportPass):
    """relu_ is the in-place version; replace it with relu, the out-of-place one."""

    passgate_stage = "export"

    def call_operator(self, op, args, kwargs, meta):
        if op != ATEN.relu_.default:
            return super().call_operator(op, args, kwargs, meta)
        return super().call_operator(ATEN.relu.default, args, kwargs, meta)


class ReplaceAddWithMulSub(ExportPass):
    """One-to-two mapping: ``x + y`` becomes ``x * y - y``. Changes meaning, on purpose."""

    passgate_semantics = "changing"

    def call_operator(self, op, args, kwargs, meta):
        if op not in (ATEN.add.Tensor, EDGE.add.Tensor) or kwargs.get("alpha", 1) != 1:
            return super().call_operator(op, args, kwargs, meta)
        dialect = EDGE if op == EDGE.add.Tensor else ATEN
        x, y = args[:2]
        product = super().call_operator(dialect.mul.Tensor, (x, y), {}, meta)
        return super().call_operator(dialect.sub.Tensor, (product, y), {}, meta)


class RemoveDetachPass(ExportPass):
    """Remove an op by returning its input: detach is a no-op for inference."""

    passgate_stage = "export"

    def call_operator(self, op, args, kwargs, meta):
        if op not in (ATEN.detach.default, ATEN.detach_copy.default, EDGE.detach_copy.default):
            return super().call_operator(op, args, kwargs, meta)
        assert len(args) == 1
        return args[0]


def args_map(op, fn, args, kwargs):
    """Apply ``fn(value, schema_argument)`` to every argument of ``op``, by its schema."""
    assert isinstance(args, tuple) and isinstance(kwargs, dict)
    args = list(args)
    kwargs = kwargs.copy()
    for i, schema in enumerate(op._schema.arguments):
        if schema.name in kwargs:
            kwargs[schema.name] = fn(kwargs[schema.name], schema)
        elif not schema.kwarg_only and i < len(args):
            args[i] = fn(args[i], schema)
    return tuple(args), kwargs


class ScalarToTensorPass(ExportPass):
    """Turn scalars passed where the schema takes a Tensor into tensors.

    At the edge stage ``x * 2.0`` already is ``mul.Tensor(x, _lifted_tensor_constant)``,
    so what is left are scalars in Tensor slots of ops such as ``add.Tensor`` that
    some graphs (and other passes) produce.
    """

    def call_operator(self, op, args, kwargs, meta):
        def try_coerce(value, arg):
            # Build a real constant, not a fake tensor of the tracing mode.
            with torch.utils._python_dispatch._disable_current_modes():
                if isinstance(value, (float, int, bool)) and isinstance(arg.type, torch.TensorType):
                    return torch.tensor(value)
            return value

        if hasattr(op, "_schema"):
            args, kwargs = args_map(op, try_coerce, args, kwargs)
        return super().call_operator(op, args, kwargs, meta)


_ADDS = (ATEN.add.Tensor, EDGE.add.Tensor)


class ReplaceAddPass(PassBase):
    """The guide's PassBase example: replace every add by ``replace_op`` (div by default).

    ``requires`` refuses graphs without an add (passgate reports them
    not_applicable); ``ensures`` checks that no add is left.
    """

    passgate_semantics = "changing"

    def __init__(self, replace_op=None):
        self.replace_op = replace_op

    def _replacement(self, target):
        if self.replace_op is not None:
            return self.replace_op
        return EDGE.div.Tensor if target == EDGE.add.Tensor else ATEN.div.Tensor

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        for node in graph_module.graph.nodes:
            if node.op == "call_function" and node.target in _ADDS:
                node.target = self._replacement(node.target)
                node.kwargs = {k: v for k, v in node.kwargs.items() if k != "alpha"}
        graph_module.recompile()
        return PassResult(graph_module, True)

    def requires(self, graph_module: torch.fx.GraphModule) -> None:
        for node in graph_module.graph.nodes:
            if node.op == "call_function" and node.target in _ADDS:
                return
        raise ValueError("No add ops!")

    def ensures(self, graph_module: torch.fx.GraphModule) -> None:
        left = [n.name for n in graph_module.graph.nodes if n.op == "call_function" and n.target in _ADDS]
        if left:
            raise ValueError(f"add ops left: {left}")


def _pattern(x, y):
    x = torch.ops.aten.add.Tensor(x, y)
    x = torch.ops.aten.mul.Tensor(x, y)
    return x


def _replacement(x, y):
    return torch.ops.aten.sub.Tensor(x, y)


def replace_add_mul_with_sub(graph_module: torch.fx.GraphModule) -> PassResult:
    """The guide's subgraph-rewriter example, as written: replacement nodes carry no metadata."""
    replaced = subgraph_rewriter.replace_pattern_with_filters(graph_module, _pattern, _replacement)
    graph_module.recompile()
    return PassResult(graph_module, bool(replaced))


replace_add_mul_with_sub.passgate_stage = "export"
replace_add_mul_with_sub.passgate_semantics = "changing"


class ReplaceAddMulWithSubKeepingMeta(PassBase):
    """The same rewrite, done right: each replacement node inherits the matched
    output node's metadata (stack trace, module stack, debug handle) and gets a
    ``val`` computed by running its op on the fake values of its inputs."""

    passgate_stage = "export"
    passgate_semantics = "changing"

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        replaced = subgraph_rewriter.replace_pattern_with_filters(graph_module, _pattern, _replacement)
        for match in replaced:
            anchor = match.nodes_map[match.anchor]
            for node in match.replacements:
                for key in ("stack_trace", "nn_module_stack", "debug_handle", "source_fn_stack", "from_node"):
                    if key in anchor.meta and key not in node.meta:
                        node.meta[key] = anchor.meta[key]
                if node.op == "call_function" and "val" not in node.meta:
                    node.meta["val"] = _fake_value(node)
        graph_module.recompile()
        return PassResult(graph_module, bool(replaced))


def _fake_value(node: torch.fx.Node):
    def val(a):
        return a.meta["val"] if isinstance(a, torch.fx.Node) else a

    args = torch.utils._pytree.tree_map(val, node.args)
    kwargs = torch.utils._pytree.tree_map(val, node.kwargs)
    fake_mode = torch._guards.detect_fake_mode(args)
    with fake_mode:
        return node.target(*args, **kwargs)


def passgate_ir_check(graph_module: torch.fx.GraphModule) -> None:
    """A check for ``PassManager.add_checks``: passgate's structural IR checks, raising on violation."""
    from harness.run.library import assert_ir_spec

    assert_ir_spec(graph_module)


class GuidePipeline:
    """A PassManager pipeline with a check after each pass, as the guide shows.

    Callable on a GraphModule like any pass; returns the PassManager's PassResult.
    """

    passgate_stage = "export"

    def __call__(self, graph_module: torch.fx.GraphModule) -> PassResult:
        pm = PassManager(
            passes=[ReplaceInPlaceReluWithOutOfPlaceReluPass(), RemoveDetachPass()],
            run_checks_after_each_pass=True,
            suppress_check_failures=False,
        )
        pm.add_checks(passgate_ir_check)
        return pm(graph_module)
