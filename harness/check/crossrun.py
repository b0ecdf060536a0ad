"""The ``deterministic`` check's second run in another process, one started with another hash seed.

Two runs in one process share one ``PYTHONHASHSEED``, so a pass whose output
follows the iteration order of a set of strings (or of nodes, whose hash
comes from their names' order of creation only by accident) gives the same
graph twice and passes ``deterministic``, then gives another graph in the
next process. With ``RunConfig.hash_seed_check`` the second run happens in a
worker started with another hash seed, and the result's canonical
fingerprint comes back to be compared with the first run's.

This module is the check's side of it: what is shipped (a reference to the
pass and the case's program), what the worker does with it (the same
construction and call as the first run: :func:`harness.check.invoke.run_pass`
on a fresh copy seeded as :mod:`harness.check.runner` seeds it), and how the
answer is judged. The processes belong to the run layer
(:mod:`harness.run.hashseed`), which installs itself with :func:`set_runner`.

What is shipped is the case's program itself, serialized with the case
cache's serializer (once per case and worker: the worker keeps it), not a
reference into the disk cache: a reference would need the worker to rebuild
the case spec by name from the graph sources, which random graphs, shrunk
graphs and test cases do not allow, and a missed cache entry would be
lowered again in the worker. Exactness is checked, not assumed: the worker
returns the exact fingerprint of the copy it handed the pass, and a copy that
differs from the one handed to the first run means the second run happens
here, in this process, as without the switch (``details.cross_process`` says why).
"""

from __future__ import annotations

import os
import pickle
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from harness.check import fingerprint
from harness.check.invoke import run_pass
from harness.check.loading import LoadedPass, load_pass
from harness.check.metadata import seed_metadata
from harness.check.verifiers import Verdict
from harness.core.errors import PassgateError
from harness.core.kinds import Outcome
from harness.core.results import Status
from harness.graphs.cache import deserialize_program, serialize_program
from harness.graphs.cases import CaseSpec, GraphCase
from harness.graphs.forms import AS_LOWERED, as_lowered

__all__ = ["CrossRunFailed", "Request", "Shipment", "Answer", "Runner", "set_runner", "runner", "hash_seed",
           "pass_reference", "imported_modules", "modules_digest", "shipment", "WorkerState", "second_run", "deterministic", "first_difference"]


class CrossRunFailed(PassgateError):
    """The worker could not be reached or died: the check's verdict is ``error`` with this message."""


@dataclass(frozen=True)
class Request:
    """One second run: which pass, on which case, how long it may take, with how many threads (as the first)."""

    pass_ref: tuple
    case_key: str
    stage: str
    timeout: float
    threads: int
    modules: str = ""  # digest of the client's imported_modules(): the worker asks for the list when it is new


@dataclass(frozen=True)
class Shipment:
    """A case's program at one stage, as the worker rebuilds the case from it (the spec without its builder)."""

    spec: CaseSpec
    program: dict


@dataclass(frozen=True)
class Answer:
    """What the worker's run gave. ``outcome`` ``unusable``: it could not rebuild the pass or the case."""

    outcome: str
    hash_seed: str
    canonical: Optional[tuple] = None
    handed_exact: str = ""
    error: str = ""
    seconds: float = 0.0


Runner = Callable[[Request, Callable[[], Shipment]], Answer]
_RUNNER: Optional[Runner] = None


def set_runner(fn: Optional[Runner]) -> None:
    """Install the cross-process runner (:mod:`harness.run.hashseed` does); None removes it.

    ``fn(request, shipment)`` returns the worker's :class:`Answer`; it calls
    ``shipment()`` only when the worker does not hold the case yet, and raises
    :class:`CrossRunFailed` when the worker cannot be reached or dies.
    """
    global _RUNNER
    _RUNNER = fn


def runner() -> Optional[Runner]:
    return _RUNNER


def hash_seed() -> str:
    """This process's ``PYTHONHASHSEED``, as the results record it (``random`` when it was not set)."""
    value = os.environ.get("PYTHONHASHSEED", "")
    return value if value.isdigit() else "random"


def pass_reference(loaded: LoadedPass) -> tuple:
    """How a worker rebuilds ``loaded``: its SPEC when it was loaded from one, else the pickled LoadedPass
    (a catalog entry's ``EntryFactory`` with its ``Build``)."""
    location, sep, attr = loaded.spec.rpartition(":")
    if loaded.kind != "factory" and sep and location and attr and loaded.name == attr:
        return ("spec", loaded.spec, loaded.semantics, loaded.stage)
    return ("pickle", pickle.dumps(loaded, protocol=pickle.HIGHEST_PROTOCOL))


_REPLAYED = ("executorch", "torchao", "passes", "vulkan", "fixtures")
_MODULES_DIGEST: list = [0, ""]  # (len(sys.modules), digest) of the last imported_modules() digest taken


def imported_modules() -> list:
    """The modules of executorch, torchao and passgate's content packages this process imported, in the order it
    imported them: what the worker imports, in that order, before it builds a pass. Importing registers custom
    ops (Cadence's ``idma_load``, ``edge.cadence.quantize_per_tensor``), which a pass module reads when it
    loads or runs, and some upstream modules import each other and load only in some orders."""
    return [name for name in list(sys.modules) if name.split(".", 1)[0] in _REPLAYED]


def modules_digest() -> str:
    """A digest of :func:`imported_modules`, taken again only when this process has imported something since."""
    import hashlib

    if _MODULES_DIGEST[0] != len(sys.modules):
        _MODULES_DIGEST[:] = [len(sys.modules),
                              hashlib.sha1("\n".join(imported_modules()).encode()).hexdigest()[:16]]
    return _MODULES_DIGEST[1]


def shipment(case: GraphCase, stage: str) -> Shipment:
    return Shipment(replace(case.spec, build=None), serialize_program(case.shared(stage)))


@dataclass
class WorkerState:
    """A worker's passes and cases, kept between runs (the worker forks a child per run from this state)."""

    passes: dict = field(default_factory=dict)
    cases: dict = field(default_factory=dict)
    modules: set = field(default_factory=set)  # digests of the module lists imported

    def load_pass(self, ref: tuple) -> LoadedPass:
        if ref not in self.passes:
            if ref[0] == "spec":
                loaded = load_pass(ref[1], semantics=ref[2], stage=ref[3])
            else:
                loaded = pickle.loads(ref[1])
            _import_modules(loaded)
            self.passes[ref] = loaded
        return self.passes[ref]

    def import_in_order(self, digest: str, modules: list) -> None:
        """Import ``modules`` in the order the client process imported them (:func:`imported_modules` says why;
        ``fuse_conv_with_clamp`` alone fails, after ``vulkan_preprocess`` it loads)."""
        import importlib

        self.modules.add(digest)
        for name in modules:
            if name in sys.modules:
                continue
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - what matters is the pass's module; its import says why
                pass

    def add_case(self, key: str, shipped: Shipment) -> None:
        ep = deserialize_program(shipped.program)
        if AS_LOWERED in shipped.spec.tags:  # as load_case hands it (harness.graphs.forms)
            ep = as_lowered(ep)
        # one program at both stages: a case built here is only ever asked for the stage it was shipped at
        self.cases[key] = case = GraphCase(shipped.spec, (), ep, ep)
        _warm(case, key)


def _warm(case: GraphCase, key: str) -> None:
    """What the first run on a case would do the first time in every runner forked from here (fake tensor
    kernels, edge op overloads, ExportPass's retrace), done once here. ExportPass itself: no pass under test."""
    from executorch.exir.pass_base import ExportPass

    try:
        ep = case.program(key.split(":")[1])
        seed_metadata(ep.graph_module)
        fingerprint.canonical(ep)
        ExportPass()(ep.graph_module)
    except Exception:  # noqa: BLE001 - only a warm-up: the run says what fails
        pass


def _import_modules(loaded: LoadedPass) -> None:
    """Import the modules a catalog entry builds its pass from once, here, not in every forked run."""
    import importlib

    for spec in [getattr(loaded.obj, "spec", ""), *getattr(getattr(loaded.obj, "build", None), "after", ())]:
        module = spec.partition(":")[0]
        if module and ":" in spec:
            importlib.import_module(module)


def second_run(state: WorkerState, request: Request) -> Answer:
    """In the worker (a forked child): the pass on a fresh, seeded copy of the case, as the first run was made."""
    import torch

    torch.set_num_threads(request.threads)
    seed = hash_seed()
    try:
        loaded = state.load_pass(request.pass_ref)
        ep = state.cases[request.case_key].program(request.stage)
        seed_metadata(ep.graph_module)
        handed = fingerprint.exact(ep.graph_module, ep)
    except Exception as exc:  # noqa: BLE001 - the worker cannot rebuild what was run: the run happens in the parent
        return Answer("unusable", seed, error=f"{type(exc).__name__}: {exc}")
    started = time.perf_counter()
    run = run_pass(loaded, ep, request.timeout, label="deterministic")
    seconds = time.perf_counter() - started
    if run.outcome != Outcome.OK:
        return Answer(str(run.outcome), seed, handed_exact=handed, error=run.error, seconds=seconds)
    try:
        canonical = fingerprint.canonical(run.program)
    except Exception as exc:  # noqa: BLE001
        return Answer("unusable", seed, handed_exact=handed, error=f"fingerprint: {type(exc).__name__}: {exc}")
    return Answer("ok", seed, canonical, handed, seconds=seconds)


def deterministic(loaded: LoadedPass, first: Callable[[], tuple], case: GraphCase, stage: str, timeout: float,
                  handed_fp: str, case_fp: str, local: Callable[[], Verdict]) -> Verdict:
    """``deterministic`` with its second run in a worker of another hash seed.

    ``first()``: the first run's canonical form; ``handed_fp``: the exact
    fingerprint of the copy that run was handed; ``case_fp``: the shared
    case's. ``local()`` is the in-process second run, made instead when the
    worker cannot reproduce the input exactly (then ``details.cross_process``
    says why).
    """
    fn = _RUNNER
    if fn is None:
        return Verdict(Status.ERROR, "the hash-seed check is on but no hash-seed worker runs in this process "
                                     "(harness.run.hashseed starts one)")
    if not case.loaded_form:
        return _here(local, "the program is a state a pipeline reached, which a save and load would change")
    import torch

    request = Request(pass_reference(loaded), f"{case.spec.key}:{stage}:{case_fp}", stage, timeout,
                      torch.get_num_threads(), modules_digest())
    try:
        answer = fn(request, lambda: shipment(case, stage))
    except CrossRunFailed as exc:
        return Verdict(Status.ERROR, f"the deterministic check's run in another process failed: {exc}",
                       {"hash_seeds": _seeds(None)})
    if answer.outcome == "unusable":
        return _here(local, f"the worker could not rebuild the pass or the case: {answer.error}")
    if answer.handed_exact != handed_fp:
        return _here(local, "the worker's copy of the input is not an exact copy of the one the first run was handed")
    return _judge(answer, first)


def _seeds(answer: Optional[Answer]) -> dict:
    return {"first": hash_seed(), "second": answer.hash_seed if answer is not None else None}


def _judge(answer: Answer, first: Callable[[], tuple]) -> Verdict:
    details: dict[str, Any] = {"hash_seeds": _seeds(answer), "cross_process": True}
    where = f"PYTHONHASHSEED={hash_seed()} here, {answer.hash_seed} in the worker"
    if answer.outcome != "ok":
        return Verdict(Status.FAIL, f"the run on a second copy, in another process ({where}), ended {answer.outcome}: "
                       f"{answer.error}", details)
    a, b = first(), answer.canonical
    if a != b:
        diff = first_difference(a, b)
        details["first_difference"] = diff
        return Verdict(Status.FAIL, f"the output changed with the hash seed ({where}): {diff}", details)
    return Verdict(Status.PASS, f"two runs with different hash seeds ({where}) gave the same graph", details)


def first_difference(a: tuple, b: tuple) -> str:
    """Where two canonical forms first differ, with the nodes' targets and arguments when those tell them apart
    (:func:`harness.check.fingerprint.first_difference` names only the ops, which two differently ordered
    copies of one op share)."""
    nodes_a, nodes_b = a[0], b[0]
    for i, (x, y) in enumerate(zip(nodes_a, nodes_b)):
        if x != y:
            return f"node {i} differs: {_node_text(x, nodes_a)} against {_node_text(y, nodes_b)}"
    return fingerprint.first_difference(a, b)


def _node_text(node: tuple, nodes: tuple) -> str:
    """``call_function clone.default(%3 add.Tensor)``: op, target, and arguments (a node argument by its index
    and target)."""
    op, target, args = node[0], _short(node[1]), node[2]

    def arg(a: Any) -> str:
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "%":
            i = a[1]
            return f"%{i} {_short(nodes[i][1]) or nodes[i][0]}" if isinstance(i, int) else f"%{i}"
        if isinstance(a, tuple):
            return "[" + ", ".join(arg(x) for x in a) + "]"
        return str(a)

    text = ", ".join(arg(x) for x in args)
    return f"{op} {target}({text[:120]})"


def _short(target: str) -> str:
    """``aten.clone.default`` for the canonical form's target text of an ATen or edge op."""
    if "<EdgeOpOverload: " in target:
        target = target.split("<EdgeOpOverload: ", 1)[1].split(">", 1)[0]
    return ".".join(target.split(".")[-2:])


def _here(local: Callable[[], Verdict], why: str) -> Verdict:
    verdict = local()
    details = dict(verdict.details)
    details["cross_process"] = f"not run in another process: {why}"
    details["hash_seeds"] = {"first": hash_seed(), "second": hash_seed()}
    return Verdict(verdict.status, verdict.message, details)
