"""What each unit of work executed: the source files it reached, recorded while it runs, and their hashes.

A verdict may be reused only while everything it depends on is unchanged
(DESIGN.md). The code a unit depends on is not knowable in advance: an
ExecuTorch pass reaches ``exir/pass_base.py``, torch.fx, its backend's
helpers and passgate's verifiers, and which of them depends on the graph.
So it is measured: while a pass x graph pair (or a pipeline / partitioner /
plugged unit) is judged, the Python functions it calls are recorded, and
their files are the unit's dependencies.

How, and why not the alternatives (measured on 30 exir entry x builtin
pairs, in-process, ``python -m benchmarks.incremental --recording-only``;
2.7 s bare, on a shared 2-core machine):

- :mod:`cProfile` (a C profiler, ``builtins=False, subcalls=False``): +45 % / +71 % (two
  runs), every file;
- ``sys.setprofile`` with a Python callback keeping ``f_code``: +70 % / +96 %,
  the same files (the callback is a Python call per function call);
- coverage.py (the C tracer, file-level use of its line data): +90 % for
  only the project's own files, +117 % once torch is measured too;
- pytest-testmon (the anchor) is built on coverage.py, keys its data by
  pytest test function and keeps it in its own sqlite file in the
  process that runs the test. Here one pytest item does not run a pass:
  the first item of a pass judges it on all its graphs, in forked isolation
  workers (:mod:`harness.run.isolation`) that pytest never sees, and the same
  units also run outside pytest (``passgate run``). It is not installed and
  would record the wrong granularity, so the recording is done here, per
  unit, in the process that actually runs the pass.

Recording happens only for a unit that actually runs (a reused verdict
records nothing) and only when the run asks for it
(``RunConfig.record_deps``). Module-level code of a pass's module runs at
import, before any unit: the files of a pass's class and its bases are added
explicitly (:func:`explicit_files`). Files of the standard library are left
out (the Python version is part of every key), as is generated code
(``<eval_with_key>``). Threads a pass starts are not profiled: a pass whose
work happens in another thread depends on more than is recorded.

Hashing: one content hash per file per process (:func:`file_hash`).
``PASSGATE_DEPS_REDIRECT`` (``ORIGINAL=COPY`` pairs joined by ``os.pathsep``)
hashes COPY in place of ORIGINAL, so a benchmark or test can pretend a file
in site-packages changed without editing it.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sysconfig
from typing import Any, Callable, Iterable, Optional

__all__ = ["REDIRECT_ENV", "Recorder", "recorded", "note", "take", "clear", "explicit_files", "file_hash",
           "digest", "forget_hashes"]

REDIRECT_ENV = "PASSGATE_DEPS_REDIRECT"

_STDLIB = tuple(sorted({os.path.realpath(p) + os.sep for k in ("stdlib", "platstdlib")
                        if (p := sysconfig.get_paths().get(k))}))
_SITE = ("site-packages", "dist-packages")
_SELF = os.path.realpath(__file__)  # the recorder's own frames (stop, recorded) judge nothing


def _kept(filename: str) -> bool:
    """A real source file other than the standard library's (site-packages below it are kept)."""
    if not filename or filename[0] == "<" or not os.path.isabs(filename):
        return False
    if filename.startswith(_STDLIB) and not any(s in filename for s in _SITE):
        return False
    return True


class Recorder:
    """The files of the Python functions called between :meth:`start` and :meth:`stop`, in this thread."""

    def __init__(self) -> None:
        import cProfile

        # no caller/callee pairs (subcalls): only which functions ran is read, and getstats() then costs ~1/3
        self._profile = cProfile.Profile(builtins=False, subcalls=False)
        self.files: frozenset = frozenset()

    def start(self) -> "Recorder":
        self._profile.enable()
        return self

    def stop(self) -> frozenset:
        self._profile.disable()
        names = {e.code.co_filename for e in self._profile.getstats() if not isinstance(e.code, str)}
        self.files = frozenset(os.path.realpath(f) for f in names if _kept(f)) - {_SELF}
        return self.files


def recorded(fn: Callable[[], Any]) -> Callable[[], tuple]:
    """``fn`` made to return ``(its value, the files it executed)`` (to run where ``fn`` runs: a forked child)."""

    def run() -> tuple:
        rec = Recorder().start()
        try:
            value = fn()
        finally:
            files = rec.stop()
        return value, files

    return run


# ----------------------------------------------------------------------------- the process's recordings

_RECORDED: dict = {}


def note(key: tuple, files: Iterable[str]) -> None:
    """Keep the files ``key`` executed (a (pass name, graph) pair, or ("unit", unit key)) until taken."""
    _RECORDED[key] = frozenset(files)


def take(key: tuple) -> Optional[frozenset]:
    """The files recorded for ``key``, forgotten here; None when nothing was recorded."""
    return _RECORDED.pop(key, None)


def clear() -> None:
    _RECORDED.clear()


def explicit_files(obj: Any) -> set:
    """The files defining ``obj`` (a pass class, instance or function) and, for a class, its bases.

    Module-level code (constants, tables a pass reads) runs at import, where
    no unit is recorded: the defining files are dependencies whatever runs.
    """
    out: set = set()
    target = obj if inspect.isclass(obj) or inspect.isfunction(obj) else type(obj)
    chain = inspect.getmro(target) if inspect.isclass(target) else (target,)
    for c in chain:
        if c is object:
            continue
        try:
            f = inspect.getsourcefile(c) or inspect.getfile(c)
        except (TypeError, OSError):
            continue
        if f and _kept(f):
            out.add(os.path.realpath(f))
    return out


# ----------------------------------------------------------------------------- content hashes

_HASHES: dict = {}


_PARSED: dict = {}


def _redirects() -> dict:
    raw = os.environ.get(REDIRECT_ENV, "")
    if raw in _PARSED:
        return _PARSED[raw]
    pairs = [p.split("=", 1) for p in raw.split(os.pathsep) if "=" in p]
    _PARSED[raw] = {os.path.realpath(a): b for a, b in pairs}
    return _PARSED[raw]


def file_hash(path: str) -> Optional[str]:
    """sha256 of ``path``'s bytes (memoized per process); None when it cannot be read."""
    redirect = _redirects().get(path)
    memo = (path, redirect)
    if memo in _HASHES:
        return _HASHES[memo]
    try:
        with open(redirect or path, "rb") as f:
            h = hashlib.sha256(f.read()).hexdigest()
    except OSError:
        h = None
    _HASHES[memo] = h
    return h


def forget_hashes() -> None:
    """Hash files afresh (a long-lived process whose files may have been edited: tests, the warm server)."""
    _HASHES.clear()


def digest(files: dict) -> Optional[str]:
    """One hash of every file's name and content; None when any of them cannot be read.

    ``files`` maps the name each file is hashed under to the path to read: the name is the path relative
    to a root (:func:`harness.run.verdicts.portable`), so a relocated cache digests alike.
    """
    h = hashlib.sha256()
    for name in sorted(files):
        fh = file_hash(files[name])
        if fh is None:
            return None
        h.update(f"{name}\0{fh}\n".encode())
    return h.hexdigest()
