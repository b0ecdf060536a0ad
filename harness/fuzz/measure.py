"""One draw measured: lowered once, every target run on it under coverage.py, what each did recorded.

For each target the pass runs the way ``passgate check`` runs it (the
runner's ``check_pass_on_case``, judging ``runs`` only: one pass call, no
reruns) inside ``coverage.Coverage(branch=True, include=<its files>)``
started and stopped around that one call. The in-process API, not
``coverage run``: the fuzzer needs the arcs of one pass on one graph, as a
set, at once, to decide whether to keep the graph.

What the pass did to the program is read from the ``runs`` record:
``details["change_signature"]`` when the runner records one (``+op -op
[kinds]``), else the ops it added and removed (``details["ops_changed"]``,
signs not counts). A signature is split into its parts (*atoms*): each op
added or removed, each kind of change, or how the run failed
(``raised:TypeError``). A graph makes a pass change the program "in a new
way" when it brings an atom that pass never showed before: a new
combination of known parts is not new (for a pass that rewrites every op it
meets, every graph is a new combination, and keeping them all would keep
everything).
"""

from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass, field, replace

from harness.core.config import RunConfig
from harness.core.results import CheckResult, Status

__all__ = ["RUNS_ONLY", "Observation", "lower_fresh", "change_atoms", "measure", "observe", "failed"]

RUNS_ONLY = frozenset({"runs"})
_QUIET = ["no-data-collected", "module-not-measured", "module-not-imported", "already-imported", "no-ctracer",
          "couldnt-parse"]


@dataclass
class Observation:
    """What measuring one graph gave: per target its arcs, change atoms and (if the run failed) why."""

    name: str
    ok: bool = True
    error: str = ""  # why the graph could not be measured (does not lower, the worker died)
    arcs: dict = field(default_factory=dict)  # target name -> frozenset of (file, from line, to line)
    atoms: dict = field(default_factory=dict)  # target name -> frozenset of change atoms
    failures: dict = field(default_factory=dict)  # target name -> first line of a failed runs record
    seconds: float = 0.0


def lower_fresh(spec):
    """``spec`` exported and lowered now, through the serialize round trip every case gets, without the disk
    cache: most draws are looked at once and dropped, and the cache would fill with them."""
    from harness.graphs.cache import roundtrip
    from harness.graphs.cases import GraphCase, export_and_lower

    inputs, exported, edge = export_and_lower(spec)
    return GraphCase(spec, inputs, roundtrip(exported), roundtrip(edge))


def _error_kind(message: str) -> str:
    """``TypeError`` from ``the pass raised: TypeError: unhashable ...`` (the exception type names the way)."""
    match = re.search(r"(?:raised|timed out)[^:]*:\s*([A-Za-z_][\w.]*)", message)
    return match.group(1) if match else "failed"


def change_atoms(runs: CheckResult) -> frozenset:
    """The parts of what one run did: ops added (+) / removed (-), kinds of change, or how it failed."""
    if runs.status is Status.NOT_APPLICABLE:
        return frozenset({"not_applicable"})
    if runs.status is not Status.PASS:
        outcome = str(runs.details.get("outcome") or runs.status.value)
        return frozenset({f"{outcome}:{_error_kind(runs.message)}"})
    atoms = set()
    signature = runs.details.get("change_signature")
    if isinstance(signature, str):
        for part in signature.split():
            if part.startswith("[") and part.endswith("]"):
                atoms.update(f"changed:{kind}" for kind in part[1:-1].split(",") if kind)
            else:
                atoms.add(part)
    elif signature is not None:
        atoms.add(str(signature))
    for op, delta in (runs.details.get("ops_changed") or {}).items():
        atoms.add(f"{'+' if delta > 0 else '-'}{op}")
    return frozenset(atoms or {"unchanged"})


def measure(target, case, config: RunConfig) -> tuple[frozenset, frozenset, str]:
    """(arcs in the target's files, change atoms, first line of a failure or "") of one run on ``case``."""
    import coverage

    from harness.check.runner import check_pass_on_case

    cov = coverage.Coverage(data_file=None, branch=True, include=list(target.files) or ["<none>"],
                            config_file=False)
    cov.set_option("run:disable_warnings", _QUIET)
    narrowed = replace(config, checks=RUNS_ONLY, isolate=False, skip_checks=())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cov.start()
        try:
            results = check_pass_on_case(target.loaded, case, narrowed)
        finally:
            cov.stop()
        data = cov.get_data()
    arcs = frozenset((f, a, b) for f in data.measured_files() for a, b in data.arcs(f) or ())
    runs = next(r for r in results if r.check == "runs")
    failure = "" if runs.status in (Status.PASS, Status.NOT_APPLICABLE) else runs.message.splitlines()[0][:300]
    return arcs, change_atoms(runs), failure


def observe(name: str, spec, targets: list, config: RunConfig, case=None) -> Observation:
    """Measure every target that applies to ``spec`` on it (lowered afresh unless ``case`` is given)."""
    started = time.perf_counter()
    obs = Observation(name)
    if case is None:
        try:
            case = lower_fresh(spec)
        except Exception as exc:  # noqa: BLE001 - a draw that does not lower is counted, not kept
            first = (str(exc).strip().splitlines() or [""])[0][:200]
            return Observation(name, ok=False, error=f"does not lower: {type(exc).__name__}: {first}",
                               seconds=time.perf_counter() - started)
    for t in targets:
        if not t.applies(spec):
            continue
        arcs, atoms, failure = measure(t, case, config)
        obs.arcs[t.name], obs.atoms[t.name] = arcs, atoms
        if failure:
            obs.failures[t.name] = failure
    obs.seconds = time.perf_counter() - started
    return obs


def failed(name: str, why: str) -> Observation:
    """The observation of a graph whose measuring worker did not come back."""
    return Observation(name, ok=False, error=why)
