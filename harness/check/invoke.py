"""Running one pass on one program, the way ExecuTorch runs it.

ExecuTorch's ``ExportedProgramPassManager`` calls a graph-module pass on
``ep.graph_module`` and folds the result back into a shallow copy of the
program (updated signature, duplicate getitems removed, range constraints
recomputed); an ``ExportedProgramPassBase`` gets the program itself. We do
the same, with two differences that make verdicts precise:

- ``requires`` / ``call`` / ``ensures`` of a ``PassBase`` are called one by
  one, so a failing ``requires`` means *not applicable* and a failing
  ``ensures`` is a violation of its own (torch's ``PassBase.__call__`` also
  hands ``ensures`` the *input* module; we hand it the result);
- the call runs under a deadline, so a pass that hangs is a ``runs`` failure.
"""

from __future__ import annotations

import copy
import signal
import threading
import time
import traceback
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch
import torch.fx
from torch.fx.passes.infra.pass_base import PassBase, PassResult

from harness.core.errors import PassTimeout
from harness.core.kinds import Outcome

__all__ = ["deadline", "PassRun", "fold_back", "as_graph_module", "Watcher", "set_watch", "run_pass", "invocations"]


@contextmanager
def deadline(seconds: Optional[float]):
    """Raise PassTimeout in this thread after ``seconds`` (main thread only; else no limit)."""
    usable = seconds and seconds > 0 and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def on_alarm(signum, frame):
        raise PassTimeout(f"the pass did not return within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class PassRun:
    outcome: Outcome
    program: Any = None  # the resulting ExportedProgram
    returned_input: bool = False  # the pass edited in place and returned what it was handed
    has_ensures: bool = False
    ensures_error: Optional[str] = None
    signature_error: Optional[str] = None
    error: str = ""
    traceback: str = ""
    seconds: float = 0.0
    # The forms (changes.HandedForms) of the program the pass under test was handed when it runs after
    # prerequisites (a PassSequence built with ``last_requires``): what "did the pass change the program"
    # compares to; None: the input itself.
    entry_input: Any = None
    # With entry_input: an untouched copy of that program, what the result's execution is compared with
    entry_program: Any = None


def _overrides(p: Any, base: type, name: str) -> bool:
    return getattr(type(p), name, None) is not getattr(base, name, None)


def fold_back(ep, new_gm: torch.fx.GraphModule):
    """ExecuTorch's ExportedProgramPassManager update, on a shallow copy of ``ep``."""
    from executorch.exir._program_utils import (
        _get_updated_graph_signature,
        _get_updated_range_constraints,
    )
    from executorch.exir.pass_manager import _can_eliminate_common_getitems
    from torch.export.exported_program import _common_getitem_elimination_pass

    out = copy.copy(ep)
    signature_error = None
    try:
        new_sig = _get_updated_graph_signature(ep.graph_signature, new_gm)
        if _can_eliminate_common_getitems(new_gm):
            _common_getitem_elimination_pass(new_gm, new_sig, ep.module_call_graph)
        out._graph_signature = new_sig
    except Exception as exc:  # noqa: BLE001 - a signature that cannot be rebuilt is a verdict
        signature_error = f"{type(exc).__name__}: {exc}"
    new_gm.recompile()
    out._graph_module = new_gm
    try:
        out._range_constraints = _get_updated_range_constraints(new_gm)
    except Exception:  # noqa: BLE001 - keep the old constraints; signature/verifier checks report it
        pass
    return out, signature_error


def as_graph_module(res: Any, handed: torch.fx.GraphModule) -> torch.fx.GraphModule:
    if res is None:
        return handed
    if isinstance(res, PassResult):
        return res.graph_module
    if isinstance(res, torch.fx.GraphModule):
        return res
    raise TypeError(f"the pass returned a {type(res).__name__}; expected a PassResult, a GraphModule or None")


Watcher = Callable[[str, str, Optional[float]], None]
_watch: Optional[Watcher] = None


def set_watch(watcher: Optional[Watcher]) -> None:
    """Call ``watcher("start" | "end", label, timeout)`` around every pass call of this process.

    A worker process of :mod:`harness.run.isolation` sets one, so its parent
    knows when the pass itself is running and can kill one stuck in native
    code, where the SIGALRM deadline cannot reach it. None (the default): no cost.
    """
    global _watch
    _watch = watcher


_INVOCATIONS: Counter = Counter()


def invocations() -> Counter:
    """How many pass calls :func:`run_pass` made in this process so far, by label (a copy).

    Pass runs are most of a check's cost, so what sharing runs between checks
    saves is counted here, for tests and benchmarks to read (two snapshots,
    subtracted). A forked isolation worker counts in its own copy; a nested
    call (a step of a pass sequence) counts under the label it is made with.
    """
    return Counter(_INVOCATIONS)


def run_pass(loaded, ep, timeout: Optional[float], label: str = "run") -> PassRun:
    """Run ``loaded`` (a LoadedPass) on ``ep`` (a private copy). Never raises (but KeyboardInterrupt).

    ``label`` names the call for the watcher (:func:`set_watch`) and :func:`invocations`: ``run``,
    ``idempotent`` or ``deterministic``.
    """
    _INVOCATIONS[label] += 1
    watcher = _watch
    if watcher is None:
        return _run_pass(loaded, ep, timeout)
    watcher("start", label, timeout)
    try:
        return _run_pass(loaded, ep, timeout)
    finally:
        watcher("end", label, timeout)


def _run_pass(loaded, ep, timeout: Optional[float]) -> PassRun:
    from executorch.exir.pass_base import ExportedProgramPassBase

    started = time.perf_counter()
    run = PassRun(Outcome.OK)
    try:
        with deadline(timeout):
            p = loaded.make(ep)
            if isinstance(p, ExportedProgramPassBase):
                run.has_ensures = _overrides(p, ExportedProgramPassBase, "ensures")
                refused = _requires(p, ep)
                if refused is not None:
                    return _not_applicable(refused, started)
                res = p.call(ep)
                run.entry_input = getattr(p, "entry_input", None)
                run.entry_program = getattr(p, "entry_program", None)
                out = getattr(res, "exported_program", res)
                run.returned_input = out is ep
                run.program = out
                if run.has_ensures:
                    run.ensures_error = _try(p.ensures, out)
            else:
                gm = ep.graph_module
                split = isinstance(p, PassBase) and not _overrides(p, PassBase, "__call__")
                if split:
                    run.has_ensures = _overrides(p, PassBase, "ensures")
                    refused = _requires(p, gm)
                    if refused is not None:
                        return _not_applicable(refused, started)
                    res = p.call(gm)
                else:
                    res = p(gm)
                new_gm = as_graph_module(res, gm)
                run.returned_input = new_gm is gm
                if split and run.has_ensures:
                    run.ensures_error = _try(p.ensures, new_gm)
                run.program, run.signature_error = fold_back(ep, new_gm)
    except PassTimeout as exc:
        run = PassRun(Outcome.TIMEOUT, error=str(exc))
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - whatever the pass raises is its verdict, sys.exit too
        run = PassRun(Outcome.RAISED, error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=12))
    run.seconds = time.perf_counter() - started
    return run


def _requires(p: Any, arg: Any) -> Optional[BaseException]:
    """What the pass's ``requires`` hook raised on ``arg`` (the pass does not apply), or None."""
    try:
        p.requires(arg)
        return None
    except Exception as exc:  # noqa: BLE001 - whatever requires raises means "not for this program"
        return exc


def _try(fn, arg) -> Optional[str]:
    try:
        fn(arg)
        return None
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"


def _not_applicable(exc: BaseException, started: float) -> PassRun:
    return PassRun(
        Outcome.NOT_APPLICABLE,
        error=f"requires: {type(exc).__name__}: {exc}",
        seconds=time.perf_counter() - started,
    )
