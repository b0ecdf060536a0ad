"""What a fuzz run steers by: the passes under test and the source files whose branches count.

A :class:`Target` is one pass: a ``--pass SPEC`` or one runnable catalog
entry. Its *files* are the pass's own source: the file that defines the
class or function (for a catalog entry, the object its ``module:attr``
resolves to, which may live in a submodule of the module the SPEC names),
not the helpers and torch code it calls. That is the code a graph has to
reach for the pass to "do its work"; counting torch's own branches would
keep every graph that happens to take a new path through the tracer.

Branch coverage is coverage.py's own measure (``branch=True``): the arcs
leaving lines with more than one exit, counted by coverage's file reporter
over the arcs a run recorded, so the numbers here are the ones ``coverage
report --branch`` would print for the same files.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

__all__ = ["Target", "source_files", "for_pass", "for_catalogs", "on_random_graphs", "on_quantized_graphs",
           "flows_for", "BranchCounter"]


@dataclass(frozen=True)
class Target:
    """A pass the fuzzer runs on every draw and steers by."""

    name: str
    loaded: Any = field(compare=False, repr=False)  # harness.check.loading.LoadedPass
    files: tuple[str, ...] = ()  # canonical paths of the pass's own source
    catalog: str = ""  # "" for a --pass SPEC
    entry: Any = field(default=None, compare=False, repr=False)  # harness.catalog.CatalogEntry

    def applies(self, spec) -> bool:
        """Does the pass run on case ``spec``? (A catalog entry says; a --pass runs on every graph.)"""
        return self.entry.applies(spec) if self.entry is not None else True

    @property
    def skip_checks(self) -> tuple:
        """Checks that do not apply to how a catalog entry is built (see CatalogEntry.skipped_checks)."""
        return tuple(self.entry.skipped_checks.items()) if self.entry is not None else ()


def _canonical(path: str) -> str:
    from coverage.files import canonical_filename

    return canonical_filename(path)


def source_files(obj: Any) -> tuple[str, ...]:
    """The file defining ``obj`` (a class, function, or the class of an instance), canonical; () if none."""
    target = obj if inspect.isclass(obj) or inspect.isroutine(obj) else type(obj)
    target = inspect.unwrap(target) if inspect.isroutine(target) else target
    try:
        path = inspect.getsourcefile(target)
    except TypeError:  # a builtin
        return ()
    return (_canonical(path),) if path else ()


def for_pass(spec: str, stage: Optional[str] = None, semantics: Optional[str] = None) -> Target:
    """The target of ``--pass SPEC`` (UsageError when it does not load)."""
    from harness.check.loading import load_pass

    loaded = load_pass(spec, semantics=semantics, stage=stage)
    return Target(loaded.name, loaded, source_files(loaded.obj))


def for_catalogs(names: Optional[list[str]], only: Optional[list[str]] = None) -> tuple[list[Target], list]:
    """(a target per runnable entry of the catalogs, in catalog order; the entries left out: unavailable)."""
    from harness.catalog import resolve_catalogs, select_entries
    from harness.catalog.entries import resolve

    entries, runnable, _slow = select_entries(resolve_catalogs(names), only, include_slow=True)
    targets = []
    for e in runnable:
        try:
            files = source_files(resolve(e.spec))
        except Exception:  # noqa: BLE001 - a pass that does not resolve still runs (and fails ``runs``)
            files = ()
        targets.append(Target(e.name, e.loaded(), files, e.catalog, e))
    return targets, [e for e in entries if not e.runnable]


def on_random_graphs(targets: list[Target], quantized: bool = False) -> tuple[list[Target], list[Target]]:
    """(targets that run on random graphs, static or with a dynamic batch, and with ``quantized`` PT2E-quantized
    ones too; those that never do: entries for named graphs only, or for quantized graphs without it)."""
    from harness.graphs.random.generate import random_probes

    probes = random_probes(quantized=False) + (random_probes(quantized=True) if quantized else [])
    runs = [t for t in targets if any(t.applies(p) for p in probes)]
    return runs, [t for t in targets if t not in runs]


def on_quantized_graphs(targets: list[Target]) -> list[Target]:
    """The targets that run on quantized random graphs."""
    from harness.graphs.random.generate import random_probes

    return [t for t in targets if any(t.applies(p) for p in random_probes(quantized=True))]


def flows_for(asked: Optional[list[str]], targets: list[Target], default_all: bool) -> tuple[str, ...]:
    """The quantization flows draws go through: the ones ``asked`` (``["none"]``: none; UsageError for an
    unknown one), or by default every registered flow when ``default_all`` (catalog entries, not a ``--pass``)
    and a target runs on quantized graphs."""
    from harness.graphs.quantizers import flow, flows

    if asked is None:
        return tuple(flows()) if default_all and on_quantized_graphs(targets) else ()
    if asked == ["none"]:
        return ()
    return tuple(dict.fromkeys(flow(name).name for name in asked))


class BranchCounter:
    """Branch coverage of a target's files for a set of arcs: (branches taken, branches)."""

    def __init__(self):
        import coverage

        self._cov = coverage.Coverage(data_file=None, branch=True, config_file=False)
        self._reporters: dict = {}

    def _reporter(self, path: str):
        from coverage.python import PythonFileReporter

        if path not in self._reporters:
            try:
                reporter = PythonFileReporter(path, coverage=self._cov)
                reporter.exit_counts()  # parses now: an unreadable file counts as no branches
            except Exception:  # noqa: BLE001
                reporter = None
            self._reporters[path] = reporter
        return self._reporters[path]

    def totals(self, files: Iterable[str], arcs: Iterable[tuple]) -> tuple[int, int]:
        """(taken, total) branches of ``files`` under ``arcs`` ((file, from line, to line) triples)."""
        from coverage.data import CoverageData
        from coverage.results import analysis_from_file_reporter

        by_file: dict[str, list] = {}
        for f, a, b in arcs:
            by_file.setdefault(f, []).append((a, b))
        taken = total = 0
        for path in files:
            reporter = self._reporter(path)
            if reporter is None:
                continue
            branches = sum(n for n in reporter.exit_counts().values() if n > 1)
            total += branches
            if by_file.get(path):
                data = CoverageData(no_disk=True)
                data.add_arcs({path: by_file[path]})
                taken += branches - analysis_from_file_reporter(data, 1, reporter, path).numbers.n_missing_branches
        return taken, total
