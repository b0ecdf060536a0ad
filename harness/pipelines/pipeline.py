"""Ordered pass pipelines, run the way ExecuTorch runs them, verified after every pass.

A backend does not run one pass: ``VulkanBackend.preprocess`` runs about
twenty in a fixed order, ``XNNPACKPassManager`` seventeen, ``to_executorch``
ten. A pass that is correct on the graphs ``to_edge`` makes can still break
on the graph the previous pass leaves, so passgate runs pipelines as a whole
and, like MLIR's ``-verify-each``, judges every step on the very program it
was handed (:func:`verify_each`). :mod:`harness.reduce.bisect` builds on the same
pieces to find the first step after which a check fails.

Steps are built per program (:class:`Step` holds a picklable factory), and
:class:`PassSequence` applies them as ``vulkan_preprocess.apply_passes``
does: a pass that has an ``_exported_program`` attribute gets the current
program right before it runs; ``SpecPropPass`` is followed by
``update_placeholder_tensor_specs``; a pipeline may override the program's
verifiers (the Vulkan backend verifies its passes' output with an
"any op" verifier, since ``et_vk`` ops are not edge ops).
"""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult

from harness.check import spares
from harness.check.changes import handed_forms
from harness.check.invoke import run_pass
from harness.check.loading import LoadedPass, from_object, load_pass, resolve_spec
from harness.check.runner import check_pass_on_case
from harness.core import plugins
from harness.core.config import RunConfig
from harness.core.errors import StepFailed, UsageError
from harness.core.results import IR_CHECK_IDS, RERUN_CHECKS, STATE_CHECKS, Status
from harness.core.stability import stable
from harness.graphs.cases import GraphCase
from harness.graphs.memos import MEMOS

__all__ = ["ProgramFunctionPass", "GraphFunctionPass", "Step", "PassSequence", "SpecPropWithPlaceholders", "Pipeline",
           "step_of", "pipeline_of", "registered_pipelines", "resolve_pipeline", "PIPELINE_CHECKS",
           "StepReport", "derived_case", "forget", "verify_each"]


class ProgramFunctionPass(ExportedProgramPassBase):
    """A function ``fn(ep, *args) -> ExportedProgram`` (``insert_prepack_nodes``, ``constant_prop_pass``)."""

    def __init__(self, fn: Callable, args: tuple = (), kwargs: tuple = ()):
        self.fn, self.args, self.kwargs = fn, tuple(args), tuple(kwargs)

    def call(self, exported_program):
        out = self.fn(exported_program, *self.args, **dict(self.kwargs))
        return ExportedProgramPassResult(out if out is not None else exported_program, True)


class MemoryPlanningRun(ExportedProgramPassBase):
    """A memory-planning pass run as ``to_executorch`` runs its ``memory_planning_pass``: ``run(graph_module,
    graph_signature)`` when it has one (else called on the graph module), then ``run_multimethod()`` when it has
    one. Why not its ``call``: without the signature, ``MemoryPlanningPass`` cannot tell inputs, outputs and
    mutable buffers apart, so what it plans for them never runs."""

    def __init__(self, planner: Any):
        self.planner = planner

    def call(self, exported_program):
        gm = exported_program.graph_module
        if hasattr(self.planner, "run"):
            self.planner.run(gm, exported_program.graph_signature)  # plans the module in place, as to_executorch
        else:
            self.planner(gm)
        if hasattr(self.planner, "run_multimethod"):
            self.planner.run_multimethod()
        return ExportedProgramPassResult(exported_program, True)


class GraphFunctionPass:
    """A function ``fn(gm, *args) -> PassResult | GraphModule | None`` with its extra arguments bound."""

    def __init__(self, fn: Callable, args: tuple = (), kwargs: tuple = ()):
        self.fn, self.args, self.kwargs = fn, tuple(args), tuple(kwargs)

    def __call__(self, graph_module):
        return self.fn(graph_module, *self.args, **dict(self.kwargs))


@stable
@dataclass(frozen=True)
class Step:
    """One pipeline step: ``factory(ep)`` builds the pass for the program it will run on.

    ``semantics``: the step's own declaration (``changing``: its numerics are not judged), as a catalog entry's;
    None: the pipeline's. Declared per step because verify-each judges each step against the program it was
    handed: one step that changes meaning by design (XNNPACK's FuseActivationPass) must not leave every
    other step of its pipeline unjudged."""

    name: str
    factory: Callable[[Any], Any]
    semantics: Optional[str] = None

    def loaded(self, semantics: str = "preserving", stage: str = "edge"):
        """The step as one pass; ``semantics`` (the pipeline's) applies unless the step declares its own."""

        return LoadedPass(spec=self.name, name=self.name, obj=self.factory, kind="factory",
                          semantics=self.semantics or semantics, stage=stage)


def _prepare(p: Any, ep) -> Any:
    if hasattr(p, "_exported_program"):
        p._exported_program = ep  # what vulkan_preprocess.apply_passes does before every pass
    return p


class PassSequence(ExportedProgramPassBase):
    """Several steps as one pass on the program (a pipeline, or a prefix of one for bisection)."""

    def __init__(self, steps: list[Step], verifiers: Optional[Callable[[], list]] = None,
                 last_requires: bool = False):
        self.steps = list(steps)
        self.verifiers = verifiers  # None: keep the program's own
        # A catalog entry run after its prerequisites: the entry's own ``requires`` decides applicability.
        self.last_requires = last_requires
        self.entry_input = None  # last_requires: HandedForms of the program the last step was handed (set by call)
        self.entry_program = None  # and an untouched copy of that program: the reference of its execution checks
        self._prepared = None  # (program requires was given, the prerequisites' result on it): call's start

    def requires(self, exported_program) -> None:
        if not self.last_requires or not self.steps:
            return
        self._prepared = None
        ep = self._run_steps(copy.deepcopy(exported_program), self.steps[:-1])
        last = _prepare(self.steps[-1].factory(ep), ep)
        if hasattr(last, "requires"):
            last.requires(ep if isinstance(last, ExportedProgramPassBase) else ep.graph_module)
        # ``call`` follows on the same program: it starts from the prerequisites' result instead of
        # running them a second time (the identity check keeps it from serving any other program)
        self._prepared = (exported_program, ep)

    def call(self, exported_program):
        # A pipeline owns the program it transforms: work on a copy, so in-place steps followed by
        # copying ones do not read as "returned a new program but edited the one it was handed"
        # (each step's own input_unchanged is judged by verify_each).
        prepared, self._prepared = self._prepared, None
        if prepared is not None and prepared[0] is exported_program:
            ep, start = prepared[1], len(self.steps) - 1
        else:
            ep, start = copy.deepcopy(exported_program), 0
        self.entry_input = self.entry_program = None
        ep = self._run_steps(ep, self.steps[start:-1] if self.last_requires else self.steps[start:], start)
        if self.last_requires and self.steps:
            # what the entry itself is handed: its changes, not its prerequisites', say if it was exercised
            self.entry_input = handed_forms(ep)
            self.entry_program = copy.deepcopy(ep)
            ep = self._run_steps(ep, self.steps[-1:], len(self.steps) - 1)
        return ExportedProgramPassResult(ep, True)

    def _run_steps(self, ep, steps: list[Step], first: int = 0):
        """``steps`` in order on ``ep`` (numbered from ``first`` in a StepFailed); the last result."""
        for i, step in enumerate(steps, first):
            run = run_pass(replace(step.loaded(), obj=_Prepared(step.factory)), ep, None)
            if run.outcome != "ok":
                raise StepFailed(i, step.name, run.outcome, run.error)
            ep = run.program
            if self.verifiers is not None:
                ep._verifiers = self.verifiers()
        return ep


@dataclass(frozen=True)
class _Prepared:
    factory: Callable

    def __call__(self, ep):
        return _prepare(self.factory(ep), ep)


class SpecPropWithPlaceholders(ExportedProgramPassBase):
    """``SpecPropPass`` plus ``update_placeholder_tensor_specs``, as every ExecuTorch flow applies it."""

    def call(self, exported_program):
        from executorch.exir.passes import SpecPropPass


        p = SpecPropPass()
        run = run_pass(from_object(p, "SpecPropPass"), exported_program, None)
        if run.outcome != "ok":
            raise RuntimeError(run.error)
        p.update_placeholder_tensor_specs(run.program, run.program.graph_module)
        return ExportedProgramPassResult(run.program, True)


@stable
@dataclass(frozen=True)
class Pipeline:
    """A named, ordered list of steps, and how ExecuTorch verifies what they produce."""

    name: str
    steps: tuple[Step, ...]
    stage: str = "edge"
    description: str = ""
    source: str = ""  # where upstream defines the order
    verifiers: Optional[Callable[[], list]] = None  # None: the program's own
    semantics: str = "preserving"  # the steps that declare none (Step.semantics); a prefix: prefix_semantics

    def prefix(self, n: int) -> PassSequence:
        return PassSequence(list(self.steps[:n]), self.verifiers)

    def step_semantics(self, index: int) -> str:
        """What step ``index`` declares, else what the pipeline does."""
        return self.steps[index].semantics or self.semantics

    def prefix_semantics(self, n: int) -> str:
        """The first ``n`` steps as one pass: meaning-changing when any of them is."""
        own = {self.step_semantics(i) for i in range(min(n, len(self.steps)))}
        return "changing" if "changing" in own else self.semantics

    def loaded(self, n: Optional[int] = None):
        """The first ``n`` steps (all by default) as one LoadedPass, named after the last step."""

        n = len(self.steps) if n is None else n
        label = f"{self.name}[:{n}]" if n < len(self.steps) else self.name
        return LoadedPass(spec=label, name=label, obj=_PrefixFactory(self, n), kind="factory",
                          semantics=self.prefix_semantics(n), stage=self.stage)


@dataclass(frozen=True)
class _PrefixFactory:
    pipeline: Pipeline
    n: int

    def __call__(self, ep):
        return self.pipeline.prefix(self.n)


# -- resolving --pipeline SPEC|NAME ------------------------------------------------------------------------

def step_of(obj: Any, name: Optional[str] = None) -> Step:
    """A Step for a pass class, instance, function, factory or LoadedPass."""

    if isinstance(obj, Step):
        return obj
    if isinstance(obj, LoadedPass):
        return Step(name or obj.name, _LoadedFactory(obj))
    loaded = from_object(obj, name)
    return Step(name or loaded.name, _LoadedFactory(loaded))


@dataclass(frozen=True)
class _LoadedFactory:
    loaded: Any

    def __call__(self, ep):
        return self.loaded.make(ep)


def _unique_names(steps: list[Step]) -> tuple[Step, ...]:
    seen: dict[str, int] = {}
    out = []
    for s in steps:
        seen[s.name] = seen.get(s.name, 0) + 1
        out.append(s if seen[s.name] == 1 else replace(s, name=f"{s.name}#{seen[s.name]}"))
    return tuple(out)


def pipeline_of(obj: Any, name: str, stage: Optional[str] = None) -> Pipeline:
    if isinstance(obj, Pipeline):
        return replace(obj, stage=stage or obj.stage)
    if callable(obj) and not isinstance(obj, (list, tuple)) and inspect.isfunction(obj) \
            and not inspect.signature(obj).parameters:
        return pipeline_of(obj(), name, stage)  # a zero-argument function returning the list
    passes = getattr(obj, "passes", obj)  # a PassManager
    if not isinstance(passes, (list, tuple)) or not passes:
        raise UsageError(f"pipeline {name} is not a Pipeline, a non-empty list of passes or a PassManager")
    return Pipeline(name, _unique_names([step_of(p) for p in passes]), stage=stage or "edge")




def registered_pipelines() -> dict[str, Callable[[], Pipeline]]:
    """Pipeline name -> zero-argument callable building it, from the ``passgate.pipelines`` entry point group.

    An entry point gives one such callable (registered under its own name)
    or a dict of them; passgate's own are in ``passes/pipelines.py``.
    """
    out: dict[str, Callable[[], Pipeline]] = {}
    for ep, value in plugins.load_all(plugins.PIPELINES, "pipeline"):
        out.update(value if isinstance(value, dict) else {ep.name: value})
    return out


def resolve_pipeline(text: str, stage: Optional[str] = None) -> Pipeline:
    """``--pipeline NAME`` (a registered pipeline) or ``SPEC`` (module:attr / file.py:attr) or a
    comma-separated list of pass SPECs."""

    registered = registered_pipelines()
    if text in registered:
        p = registered[text]()
        return replace(p, stage=stage or p.stage)
    if "," in text:
        loaded = [load_pass(s.strip(), stage=stage) for s in text.split(",") if s.strip()]
        return Pipeline("+".join(p.name for p in loaded), _unique_names([step_of(p) for p in loaded]),
                        stage=stage or loaded[0].stage)
    _location, sep, attr = text.rpartition(":")
    if not sep:
        known = ", ".join(sorted(registered))
        raise UsageError(f"unknown pipeline {text!r}: not a built-in ({known}) or a module:attr / file.py:attr SPEC")
    return pipeline_of(resolve_spec(text, "pipeline", "package.module:attr or path/to/file.py:attr"), attr, stage)


# -- verify-each ---------------------------------------------------------------------------------------

# idempotent / deterministic re-run steps in isolation: not what a pipeline promises
PIPELINE_CHECKS = frozenset(IR_CHECK_IDS) - RERUN_CHECKS


@dataclass
class StepReport:
    index: int
    step: str
    results: list = field(default_factory=list)
    outcome: str = "ok"  # ok | stopped (the step did not produce a program: later steps not run)


def derived_case(case, stage: str, program, label: str):
    """A GraphCase whose program at ``stage`` is ``program`` (the state a pipeline reached)."""

    spec = replace(case.spec, name=case.spec.name, definition=f"{case.spec.definition}\n# {label}")
    exported = program if stage == "export" else case.exported
    edge = program if stage == "edge" else case.edge
    return GraphCase(spec, case.inputs, exported, edge, 0.0, case.from_cache, loaded_form=False)


def forget(cases: list) -> None:
    """Drop the runner's per-case memos of derived cases, so a reused ``id()`` cannot hit them."""

    MEMOS.forget(cases)


def verify_each(pipeline: Pipeline, case, config=None, on_step: Optional[Callable] = None,
                on_final: Optional[Callable] = None) -> list[StepReport]:
    """Run ``pipeline`` on ``case`` step by step; judge each step on the program it was handed.

    A step's numerics compare its result with that program, the previous step's result, under the step's own
    declaration (:meth:`Pipeline.step_semantics`): a step after a meaning-changing one is judged against the
    changed program it received, so it stays judgeable.
    ``on_final(program)``: called with the pipeline's result when every step ran (the runtime checks judge it)."""

    config = config or RunConfig(stage=pipeline.stage, checks=PIPELINE_CHECKS)
    stage = config.stage or pipeline.stage
    reports: list[StepReport] = []
    current = spares.fresh(case, stage)  # a spare made before this process forked, if any
    derived: list = []
    failing_before: dict = {}
    try:
        for i, step in enumerate(pipeline.steps):
            here = derived_case(case, stage, current, f"after {i} steps of {pipeline.name}")
            derived.append(here)
            loaded = replace(step.loaded(pipeline.semantics, stage), obj=_Prepared(step.factory),
                             name=f"{pipeline.name}/{i + 1:02d}:{step.name}")
            results = check_pass_on_case(loaded, here, config)
            failing_before = _inherit(results, failing_before, i)
            report = StepReport(i, step.name, results)
            reports.append(report)
            if on_step:
                on_step(report)
            run = run_pass(loaded, copy.deepcopy(current), config.timeout)
            if run.outcome != "ok" or any(r.check == "runs" and r.status is not Status.PASS for r in results):
                report.outcome = "stopped"
                break
            current = run.program
            if pipeline.verifiers is not None:
                current._verifiers = pipeline.verifiers()
        else:
            if on_final is not None and pipeline.steps:
                on_final(current)
    finally:
        forget(derived)
    return reports


# Checks judged on the state a step leaves (CheckInfo.state; not on what the step did): a failure already
# present in the step's input is inherited, reported once at the step that caused it, as MLIR's
# verify-each stops at the first pass that breaks the IR.


def _inherit(results: list, failing_before: dict, index: int) -> dict:
    """Turn failures of state checks that the input already had into skips; return the new state."""

    now = dict(failing_before)
    for r in results:
        if r.check not in STATE_CHECKS:
            continue
        if r.status is Status.FAIL and r.check in failing_before:
            since = failing_before[r.check]
            r.details = {**r.details, "inherited_from_step": since + 1, "original_status": "fail"}
            r.message = f"already failing since step {since + 1}: {r.message}"
            r.status = Status.SKIP
        elif r.status is Status.FAIL:
            now[r.check] = index
        elif r.status is Status.PASS:
            now.pop(r.check, None)
    return now
