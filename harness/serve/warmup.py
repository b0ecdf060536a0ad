"""What keeps the warm server warm: preloaded cases, primed caches, and knowing when its code went stale.

The server's children inherit everything the server holds at fork time, so
it spends its start-up on what every ``passgate check`` would otherwise pay:
the cases loaded into :data:`harness.graphs.memos.MEMOS` as the disk cache
gives them, torch's fake-tensor dispatch caches filled, every case's
reference outputs computed, and the private copies the checks are handed
made in advance (:func:`make_spares`). It also records the file stamps of the
modules it imported, so an edit to a pass file or to passgate itself is
noticed before the next request (:func:`changed_modules`).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable, Optional

from harness.check import runner, spares
from harness.graphs import sources
from harness.graphs.cases import load_case
from harness.graphs.memos import MEMOS

__all__ = ["WARMUP_PASS", "SPARE_STAGES", "SPARES", "watchable", "module_stamps", "changed_modules",
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
"""The stages the server keeps spare copies of each case at: the default stage, the one :func:`precompute` prepares."""

SPARES = spares.COPIES
"""Spare copies per case and stage (:mod:`harness.check.spares`): the two fresh inputs of one pass on the case."""


def preload_cases(sources_to_preload: tuple, say: Callable[[str], None]) -> int:
    """Load every case of ``sources_to_preload`` into the process's memos, prime and
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
    cases = list({id(c): c for c in MEMOS.cases.values()}.values())
    prime(cases, say)
    precompute(cases, say)
    make_spares(cases, say)  # last: priming and precomputing take copies of their own
    return len(MEMOS.cases)


def make_spares(cases: list, say: Callable[[str], None]) -> None:
    """:data:`SPARES` private copies of each warm case's program at each of :data:`SPARE_STAGES`: every child
    the server forks (a request's, each isolation worker) takes each once (:mod:`harness.check.spares`)."""
    started = time.perf_counter()
    made = 0
    for case in cases:
        for stage in SPARE_STAGES:
            made += spares.stock(case, stage, SPARES)  # a case that cannot be copied gets none
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
