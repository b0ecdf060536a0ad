"""Numerics judged per pipeline step: only the steps that change meaning by design are declared so.

Why: the whole ``xnnpack`` pipeline used to be declared meaning-changing for the sake of one step
(FuseActivationPass drops an activation into its producer's output clamp, which the edge-program interpreter does
not honour), so a step that broke the numbers (a bad layout rewrite) passed green. Each step is judged against
the program it was handed, the previous step's result, so a step after the meaning-changing one stays judgeable.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult

from harness import catalog
from harness.check.invoke import run_pass
from harness.check.loading import from_object
from harness.core.config import RunConfig
from harness.core.results import Status
from harness.pipelines.pipeline import Step, registered_pipelines, resolve_pipeline, verify_each

CHECKS = frozenset({"runs", "runnable", "numerics"})
CASE = "conv_bn_relu"  # conv -> batch norm -> relu: the batch norm folds, the relu fuses into the conv
FUSE = "FuseActivationPass"


def _numerics(reports) -> dict:
    """step name -> its numerics record."""
    return {rep.step: next(r for r in rep.results if r.check == "numerics") for rep in reports}


@pytest.fixture(scope="module")
def xnnpack():
    return resolve_pipeline("xnnpack")


@pytest.fixture(scope="module")
def declared(xnnpack, builtin_cases):
    return _numerics(verify_each(xnnpack, builtin_cases[CASE], RunConfig(stage="edge", checks=CHECKS)))


def test_only_fuse_activation_is_declared_meaning_changing(xnnpack):
    assert xnnpack.semantics == "preserving"
    assert [s.name for s in xnnpack.steps if s.semantics == "changing"] == [FUSE]
    fuse = [s.name for s in xnnpack.steps].index(FUSE)
    assert xnnpack.prefix_semantics(fuse) == "preserving" and xnnpack.prefix_semantics(fuse + 1) == "changing"
    assert xnnpack.loaded().semantics == "changing"  # the whole pipeline, as one pass (bisection), drops the relu


def test_every_other_step_has_its_numerics_judged(declared):
    assert declared[FUSE].status is Status.SKIP and "declared meaning-changing" in declared[FUSE].message
    others = {step: r.status for step, r in declared.items() if step != FUSE}
    assert len(others) == 16 and set(others.values()) == {Status.PASS}, others


def test_fuse_activation_changes_meaning_when_judged(xnnpack, builtin_cases):
    """The evidence for its declaration: undeclared, its result differs from what it was handed (the relu is
    gone), while the steps after it still pass against the fused program they are handed."""
    steps = tuple(replace(s, semantics=None) for s in xnnpack.steps)
    reports = verify_each(replace(xnnpack, steps=steps), builtin_cases[CASE], RunConfig(stage="edge", checks=CHECKS))
    num = _numerics(reports)
    assert num[FUSE].status is Status.FAIL and "not close" in num[FUSE].message
    after = [s.name for s in steps][[s.name for s in steps].index(FUSE) + 1:]
    assert {num[s].status for s in after} == {Status.PASS}


class _ShiftFirstWeight(ExportedProgramPassBase):
    """A real step, then a broken edit: the first floating-point parameter the graph reads, shifted by 0.5."""

    def __init__(self, inner):
        self.inner = inner

    def call(self, exported_program):
        run = run_pass(from_object(self.inner, "inner"), exported_program, None)
        assert run.outcome == "ok", run.error
        ep = run.program
        used = {n.name for n in ep.graph.nodes if n.op == "placeholder" and n.users}
        name, weight = next((s.target, ep.state_dict[s.target]) for s in ep.graph_signature.input_specs
                            if s.target in ep.state_dict and s.arg.name in used
                            and ep.state_dict[s.target].is_floating_point())
        shifted = weight.detach() + 0.5
        ep.state_dict[name] = torch.nn.Parameter(shifted, False) if isinstance(weight, torch.nn.Parameter) else shifted
        return ExportedProgramPassResult(ep, True)


def _shifted(factory):
    return lambda ep: _ShiftFirstWeight(factory(ep))


def test_a_broken_step_is_flagged_by_numerics(xnnpack, builtin_cases):
    """ChannelsLastTaggedReshapePass (a layout rewrite) made to change a weight: only its step fails numerics,
    and the step after it, judged against the broken program it is handed, is not blamed."""
    names = [s.name for s in xnnpack.steps]
    k = names.index("ChannelsLastTaggedReshapePass")
    broken = replace(xnnpack.steps[k], factory=_shifted(xnnpack.steps[k].factory))
    steps = xnnpack.steps[:k] + (broken,) + xnnpack.steps[k + 1:]
    reports = verify_each(replace(xnnpack, steps=steps), builtin_cases[CASE], RunConfig(stage="edge", checks=CHECKS))
    rep = reports[k]
    (num,) = [r for r in rep.results if r.check == "numerics"]
    assert num.status is Status.FAIL and num.pass_name == f"xnnpack/{k + 1:02d}:ChannelsLastTaggedReshapePass"
    assert "not close" in num.message
    assert _numerics(reports)[names[k + 1]].status is Status.PASS


def test_pipeline_steps_declare_what_their_catalog_entries_declare():
    """A step runs the pass a catalog entry names: both say the same about its meaning, so a declaration made
    for the entry (after a run showed it) is not forgotten in the pipeline, nor the other way round."""
    entries = {e.spec: e.semantics for e in catalog.all_entries(catalog.select(None)) if not e.config}
    compared = []
    for name, build in registered_pipelines().items():
        pipeline = build()
        for i, step in enumerate(pipeline.steps):
            spec = getattr(step.factory, "spec", None)
            if spec in entries:
                assert (pipeline.step_semantics(i) == "changing") == (entries[spec] == "changing"), (name, step.name)
                compared.append(step.name)
    assert FUSE in compared and len(compared) >= 30


def test_a_step_without_a_declaration_takes_the_pipelines():
    step = Step("s", lambda ep: None)
    assert step.loaded("changing").semantics == "changing"
    assert replace(step, semantics="preserving").loaded("changing").semantics == "preserving"
