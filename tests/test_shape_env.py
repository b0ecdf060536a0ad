"""Passgate's own execution never changes a dynamic case's shared ShapeEnv.

Every deep copy of a case shares its fake mode and ShapeEnv (a FakeTensor
deep-copies into its own mode). A pass that leaves a SymInt in a node's
arguments produces a program whose real execution turns that SymInt into an
int; unguarded, that specializes the batch symbol in the ShapeEnv of the case
every later pass is handed, and ``input_unchanged`` blamed the pass for it.
"""

from __future__ import annotations

import torch
from torch import nn

from harness.check.fingerprint import of_shared
from harness.check.loading import from_object
from harness.check.runner import check_pass_on_case
from harness.core.results import Status
from harness.graphs.cases import CaseSpec, ModelInputs, load_case

VIEW_COPY = "aten::view_copy"


class _Flatten(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        return self.fc(x).view(x.shape[0], 2, 3) * 2.0


def _build() -> ModelInputs:
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=2, max=16)
    return ModelInputs(_Flatten().eval(), (torch.randn(4, 6),), {"x": {0: batch}})


SPEC = CaseSpec(name="dynamic_view", source="fixture", build=_build, definition="tests/test_shape_env.py v1")


def _bake_batch_symint(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Writes the view's batch size as the SymInt of its ``meta['val']`` (as vulkan's
    SqueezeUnsqueezeInputs does) instead of the ``sym_size`` node the graph had."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and VIEW_COPY in str(node.target):
            node.args = (node.args[0], [node.meta["val"].shape[0], *node.args[1][1:]])
    gm.recompile()
    return gm


def _batch_dim(case) -> object:
    out = next(n for n in case.shared("edge").graph.nodes if n.op == "output").args[0][0]
    return out.meta["val"].shape[0]


def test_running_a_result_with_a_baked_symint_leaves_the_shared_case_alone(passgate_cache):
    case = load_case(SPEC)
    assert isinstance(_batch_dim(case), torch.SymInt) and not _batch_dim(case).node.is_constant()
    before = of_shared(case, "edge")

    results = {r.check: r for r in check_pass_on_case(from_object(_bake_batch_symint), case)}

    # a kernel refuses a symbolic size: the program cannot run, and that is the pass's verdict
    assert results["runnable"].status is Status.FAIL and "SymInt" in results["runnable"].message
    assert results["input_unchanged"].status is Status.PASS, results["input_unchanged"].message
    assert of_shared(case, "edge") == before
    assert not _batch_dim(case).node.is_constant()  # the batch symbol is still a symbol


def _guard_on_batch(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """Compares the input's symbolic batch size with a number, as vulkan's SqueezeUnsqueezeInputs does
    (``should_squeeze`` reads ``meta['val']`` sizes): a guard in the program's ShapeEnv, no edit."""
    x = next(n for n in gm.graph.nodes if n.op == "placeholder" and n.name == "x")
    _ = bool(x.meta["val"].shape[0] == 4)  # noqa: F841 - deciding the comparison guards: it specializes the symbol
    return gm


def _input_batch(ep) -> torch.SymInt:
    return next(n for n in ep.graph.nodes if n.name == "x").meta["val"].shape[0]


def _specialized(sym: torch.SymInt) -> bool:
    """Has the symbol's ShapeEnv replaced it by a number (a guard on ``==``)?"""
    return sym.node.shape_env.simplify(sym.node.expr).is_number


def test_a_guard_a_pass_adds_stays_in_its_own_copy(passgate_cache):
    case = load_case(SPEC)
    first, second = case.program("edge"), case.program("edge")
    _guard_on_batch(first.graph_module)
    assert _specialized(_input_batch(first))
    # the next copy (the deterministic check's input, the next pass's input) keeps its symbol
    assert not _specialized(_input_batch(second))
    assert not _specialized(_input_batch(case.program("edge")))
    assert not _specialized(_input_batch(case.shared("edge")))


def test_a_pass_that_guards_is_deterministic_and_leaves_the_case_alone(passgate_cache):
    case = load_case(SPEC)
    results = {r.check: r for r in check_pass_on_case(from_object(_guard_on_batch), case)}
    # before: the deterministic run got the copy the first run had specialized, and the shared case was changed
    for check in ("input_unchanged", "deterministic", "idempotent", "runs"):
        assert results[check].status is Status.PASS, (check, results[check].message)
    # what the pass did is its own result's: a batch dimension fixed to 4 where the input had a symbol
    assert results["runs"].details["changed"]["structure"], results["runs"].details
    assert not _specialized(_input_batch(case.shared("edge")))
    again = {r.check: r for r in check_pass_on_case(from_object(lambda gm: gm), case)}
    assert not any(again["runs"].details["changed"].values()), "an identity pass after it sees the symbol"


def test_a_pipeline_state_of_a_dynamic_case_is_copied_with_its_metadata(passgate_cache):
    """A state a pipeline reached is deep-copied, not reloaded: a save and load would drop what its steps
    wrote (SpecPropPass's meta['spec'], ExportPass's tensor_meta), which later steps read."""
    from executorch.exir.passes import SpecPropPass

    from harness.pipelines.pipeline import derived_case

    case = load_case(SPEC)
    state = SpecPropPass()(case.program("edge").graph_module).graph_module
    ep = case.program("edge")
    ep.graph_module.graph = state.graph  # the program a pipeline's first step left
    here = derived_case(case, "edge", ep, "after SpecPropPass")
    copied = here.program("edge")
    assert all("spec" in n.meta for n in copied.graph.nodes if n.op == "call_function")
