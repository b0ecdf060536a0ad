"""What keeps the warm server warm: preloaded cases, primed caches, and knowing when its code went stale.

The server's children inherit everything the server holds at fork time, so
it spends its start-up on what every ``passgate check`` would otherwise pay:
the cases loaded into :data:`harness.graphs.memos.MEMOS` as the disk cache
gives them, torch's fake-tensor dispatch caches filled, every case's
reference outputs computed, and the private copies the checks are handed
made in advance (:class:`WarmCase`). It also records the file stamps of the
modules it imported, so an edit to a pass file or to passgate itself is
noticed before the next request (:func:`changed_modules`).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field, fields
from typing import Callable, Optional

from harness.check import fingerprint, runner
from harness.graphs import sources
from harness.graphs.cases import GraphCase, load_case
from harness.graphs.memos import MEMOS

__all__ = ["WARMUP_PASS", "SPARE_STAGES", "SPARES", "WarmCase", "watchable", "module_stamps", "changed_modules",
           "preload_cases", "prime", "precompute", "make_spares"]

WARMUP_PASS = "harness.serve.warmup:warmup_pass"
"""The pass of the server's one warm-up check: it pulls in every lazy import a check needs."""


def warmup_pass(gm):
    """A pass that changes nothing (the warm-up check runs it on one built-in graph)."""
    return gm


_INSTALLED: tuple = ()


def watchable(path: Optional[str]) -> bool:
    """Files of modules that can change under the server: not the standard library or installed packages."""
    global _INSTALLED
    if not path or not path.endswith(".py"):
        return False
    if not _INSTALLED:
        import sysconfig

        paths = sysconfig.get_paths()
        _INSTALLED = tuple(sorted({os.path.realpath(paths[k]) + os.sep
                                   for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}))
    return not os.path.realpath(path).startswith(_INSTALLED)


def module_stamps() -> dict:
    """module name -> (file, mtime, size) of every watchable module imported now."""
    stamps = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if watchable(path):
            try:
                st = os.stat(path)
                stamps[name] = (path, st.st_mtime_ns, st.st_size)
            except OSError:
                stamps[name] = (path, None, None)
    return stamps


def changed_modules(stamps: dict) -> list:
    """The modules of ``stamps`` whose file changed (or went) since."""
    out = []
    for name, (path, mtime, size) in stamps.items():
        try:
            st = os.stat(path)
            now = (st.st_mtime_ns, st.st_size)
        except OSError:
            now = (None, None)
        if now != (mtime, size):
            out.append(name)
    return sorted(out)


SPARE_STAGES = ("edge",)
"""The stages a :class:`WarmCase` keeps spare copies of: the default stage, the one :func:`precompute` prepares."""

SPARES = 2
"""Spare copies per case and stage: the two fresh inputs of one pass on the case (its run and the
``deterministic`` check's run on a second copy)."""


@dataclass(eq=False)
class WarmCase(GraphCase):
    """A preloaded case that hands out private copies of its program made when the server started.

    Every pass x case pair deep-copies the shared program twice (the pass's
    run and the ``deterministic`` check's run), ~4 ms each on the zoo, and
    that copying is the same for every pass. The server makes
    :data:`SPARES` copies per case at start-up (:func:`make_spares`); each
    process it forks (a request's child, each isolation worker) gets its own
    copy-on-write view of them, so each of those processes can take each
    spare once: :meth:`program` pops one while there are any left, and
    deep-copies the shared program as a :class:`GraphCase` does after that.

    A spare is what a deep copy made now would be only while the shared
    program is what it was when the spares were made, so one is handed out
    only while the shared program's exact fingerprint is still the one
    taken then (the equality ``input_unchanged`` trusts): after a pass
    changed the shared case it was never handed, the next copies are
    copies of the changed case, as without the server.
    """

    spares: dict = field(default_factory=dict, repr=False)
    """stage -> [private copy of the program at that stage], taken from the end."""
    seals: dict = field(default_factory=dict, repr=False)
    """stage -> exact fingerprint of the shared program when its spares were made."""

    @classmethod
    def of(cls, case: GraphCase) -> "WarmCase":
        return cls(**{f.name: getattr(case, f.name) for f in fields(GraphCase)})

    def make_spares(self, stage: str, count: int = SPARES) -> None:
        shared = self.shared(stage)
        self.seals[stage] = fingerprint.exact(shared.graph_module, shared)
        self.spares[stage] = [GraphCase.program(self, stage) for _ in range(count)]

    def program(self, stage: str):
        """A private deep copy of the program at ``stage``: a spare one while any is left."""
        spares = self.spares.get(stage)
        if spares:
            shared = self.shared(stage)
            if fingerprint.exact(shared.graph_module, shared) == self.seals[stage]:
                return spares.pop()
            spares.clear()  # the shared case changed: its spares are not copies of it any more
        return super().program(stage)


def preload_cases(sources_to_preload: tuple, say: Callable[[str], None]) -> int:
    """Load every case of ``sources_to_preload`` into the process's memos as a :class:`WarmCase`, prime and
    precompute them and make their spare copies; how many."""

    for source in sources_to_preload:
        try:
            specs = sources.select([source])
        except Exception as exc:  # noqa: BLE001 - a source this build lacks: preload the others
            say(f"preload {source}: {exc}")
            continue
        for spec in specs:
            try:
                case = load_case(spec)
                if not case.from_cache:  # memoize it as the cache gives it: runs say "cached", as without us
                    MEMOS.drop(case)
                    load_case(spec)
            except Exception as exc:  # noqa: BLE001 - the check itself will report a case that fails to lower
                say(f"preload {spec.name}: {type(exc).__name__}: {exc}")
    for case in list({id(c): c for c in MEMOS.cases.values()}.values()):
        if not isinstance(case, WarmCase):
            MEMOS.replace(case, WarmCase.of(case))
    cases = list({id(c): c for c in MEMOS.cases.values()}.values())
    prime(cases, say)
    precompute(cases, say)
    make_spares(cases, say)  # last: priming and precomputing take copies of their own
    return len(MEMOS.cases)


def make_spares(cases: list, say: Callable[[str], None]) -> None:
    """:data:`SPARES` private copies of each warm case's program at each of :data:`SPARE_STAGES`."""
    started = time.perf_counter()
    made = 0
    for case in cases:
        for stage in SPARE_STAGES:
            try:
                case.make_spares(stage)
                made += SPARES
            except Exception:  # noqa: BLE001 - a case that cannot be copied: its checks will say so
                case.spares.pop(stage, None)
    say(f"made {made} spare copies of {len(cases)} cases in {time.perf_counter() - started:.1f}s")

def precompute(cases: list, say: Callable[[str], None]) -> None:
    """Each case's reference outputs and fingerprint, at the edge stage with the default seed and draws.

    Computed once here (one thread, as in the isolation workers); every child inherits them, so a
    rerun spends its time on the pass and its checks.
    """

    started = time.perf_counter()
    for case in cases:
        try:
            runner.prepare_case(case)
        except Exception:  # noqa: BLE001 - a case that cannot run: its checks will say so
            pass
    say(f"computed reference outputs of {len(cases)} cases in {time.perf_counter() - started:.1f}s")

def prime(cases: list, say: Callable[[str], None]) -> None:
    """Retrace each memoized case once through ExportPass (the base of most ExecuTorch passes).

    torch keeps a process-wide cache of fake-tensor dispatches (op, shapes, dtypes -> result); the first
    retrace of a graph fills it and later ones run ~1.5-2x faster. Filled here, every child inherits it,
    so a pass's first run on a case costs what its reruns cost. Nothing else is kept.
    """
    from executorch.exir.pass_base import ExportPass

    started = time.perf_counter()
    for case in cases:
        try:
            ExportPass()(case.program("edge").graph_module)
        except Exception:  # noqa: BLE001 - a case ExportPass cannot retrace: its checks will say so
            pass
    say(f"primed torch's dispatch caches on {len(cases)} cases in {time.perf_counter() - started:.1f}s")
