"""What a run is asked to do, in one frozen object, and the results' ``configuration`` built from it.

A :class:`RunConfig` travels from the CLI through the scheduler into forked
workers and the runner; it is frozen so no layer can change what another
was told (``dataclasses.replace`` makes a narrowed copy). :func:`configuration`
is the one place the results document's ``configuration`` section is built:
``--resume`` and ``passgate report merge`` compare it key by key, so every
command must spell the shared keys the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

__all__ = ["RunConfig", "configuration", "pass_record"]


@dataclass(frozen=True)
class RunConfig:
    """How each pass x graph pair is judged."""

    stage: Optional[str] = None
    """``export`` or ``edge``; None: the pass's own declared stage."""
    semantics: Optional[str] = None
    """``preserving`` or ``changing``; None: the pass's own declaration."""
    timeout: float = 60.0
    """Seconds one pass call may take (in-process deadline, then the isolation parent kills it)."""
    seed: int = 0
    """Seed of the numeric input draws."""
    draws: int = 5
    """Numeric input draws, the sample inputs included."""
    checks: Optional[frozenset] = None
    """The check ids judged; None: every IR check."""
    isolate: bool = False
    """Run each pair in a forked worker (:mod:`harness.run.isolation`), so a pass that crashes or hangs in
    native code is a verdict; off: in-process, for a debugger."""
    workers: int = 1
    """Worker processes when isolated."""
    skip: frozenset = frozenset()
    """(pass name, graph name) pairs already done (a resumed run): counted, not run."""
    skip_checks: tuple = ()
    """(check id, reason) pairs not judged but reported ``skip`` with their reason: checks that do not apply
    to how a catalog entry is built (e.g. a pass constructed afresh per call cannot be deterministic)."""
    hash_seed_check: bool = False
    """Make the ``deterministic`` check's second run in a worker process started with another
    ``PYTHONHASHSEED`` (:mod:`harness.check.crossrun`, :mod:`harness.run.hashseed`): a pass whose output follows
    the iteration order of a set of strings gives the same graph twice in one process."""
    runtime: bool = False
    """Also judge the runtime checks (``serialize_roundtrip``, ``runtime_runs``, ``runtime_numerics``) on each
    pass's result: ``passgate check --runtime`` (:mod:`harness.check.runtime`)."""
    record_deps: bool = False
    """Record the source files each pair executes (:mod:`harness.run.deps`), for the verdict cache; not part of
    any verdict, so it is left out of the cache key."""

    def wants(self, check: str) -> bool:
        if any(check == c for c, _ in self.skip_checks):
            return False
        return self.checks is None or check in self.checks


def pass_record(loaded: Any, stage: Optional[str] = None, semantics: Optional[str] = None) -> dict:
    """How a pass appears in ``configuration["passes"]``: its SPEC, name, stage and semantics."""
    return {"spec": loaded.spec, "name": loaded.name, "stage": stage or loaded.stage,
            "semantics": semantics or loaded.semantics}


_UNSET: Any = object()  # a key the command does not record (distinct from a recorded None)


def configuration(command: str, *, graphs: Iterable, graph_selection: Any = _UNSET, seed: Any = _UNSET,
                  count: Any = _UNSET, timeout: Any = _UNSET, strict: Any = _UNSET,
                  checks: Optional[Iterable[str]] = None, shard: Any = _UNSET, **extra: Any) -> dict:
    """The results' ``configuration``: ``command``, the command's own ``extra`` keys, then the shared ones.

    ``graphs`` are case names. The shared keys are recorded when given, always
    under the same name and in the same order (a :class:`harness.core.shards.Shard`
    as ``"I/N"``, no shard as None); ``checks`` only when a selection was asked for.
    """
    out: dict = {"command": command, **extra, "graphs": list(graphs)}
    shared = {"graph_selection": graph_selection, "seed": seed, "count": count, "timeout": timeout, "strict": strict}
    for key, value in shared.items():
        if value is not _UNSET:
            out[key] = list(value) if key == "graph_selection" else value
    if checks:
        out["checks"] = sorted(checks)
    if shard is not _UNSET:
        out["shard"] = str(shard) if shard else None
    return out
