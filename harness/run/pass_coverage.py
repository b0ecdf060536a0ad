"""Coverage of pass code: which lines and branches of each catalog entry's own source the graph corpus executes.

A catalog run that is all green says little about a pass whose rewrite no
graph ever triggers: FusePatternsPass "passes" on a float MLP because none of
its patterns match. Two measures say so. The pass-level ``exercised`` check
(:mod:`harness.check.exercised`) says whether any case made the entry change
the program at all; coverage says how much of its logic the cases reached.
Branch coverage matters more than line coverage here: a pass is mostly
``if node.target == ...: rewrite``, and the line of the test runs on every
node while its true branch may never be taken.

What an entry's "own source" is: the file of its SPEC's module, and for a
class, the files of its base classes that live in the same package (a
backend's shared ``BaseFusePass``), since their logic runs as the entry's.
The framework above (``ExportPass``, torch.fx) is left out: every pass runs it.

Coverage must start before torch or any pass module is imported, so that
module-level lines count as executed the way a normal import executes them,
and the run is in-process (isolated workers are forked children coverage
would not see): :func:`measure` does both, around ``passgate run``.
"""

from __future__ import annotations

import inspect
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional

from harness.core.results import PASS_LEVEL
from harness.run import reachable

__all__ = ["OMIT", "CoverageCounts", "FileCoverage", "EntryCoverage", "executorch_root", "start",
           "entry_modules", "measured_modules", "file_coverage", "exercised_verdicts", "joined_verdicts", "why_not_exercised",
           "analyse"]

OMIT = ["*/test/*", "*/tests/*", "*/third-party/*"]


def executorch_root() -> str:
    from importlib.util import find_spec

    spec = find_spec("executorch")
    return list(spec.submodule_search_locations)[0]


def start(data_file: Optional[str] = None, started: bool = True):
    """A started coverage.py measurement of executorch's sources, lines and branches: call before torch loads.

    ``data_file``: where ``save()`` writes the data (a ``-j`` part); None keeps it in memory.
    ``started`` False: configured only, to ``combine`` the parts' data into.
    """
    import coverage

    cov = coverage.Coverage(data_file=data_file, source=[executorch_root()], branch=True, omit=OMIT)
    if started:
        cov.start()
    return cov


@dataclass
class CoverageCounts:
    """Statements and branches of some files, and how many of each the corpus executed."""

    statements: int = 0
    executed: int = 0
    branches: int = 0
    covered_branches: int = 0

    def add(self, other: "CoverageCounts") -> None:
        self.statements += other.statements
        self.executed += other.executed
        self.branches += other.branches
        self.covered_branches += other.covered_branches

    @property
    def line_percent(self) -> float:
        return 100.0 * self.executed / self.statements if self.statements else 100.0

    @property
    def branch_percent(self) -> float:
        return 100.0 * self.covered_branches / self.branches if self.branches else 100.0

    def to_json(self) -> dict:
        return {**asdict(self), "line_percent": round(self.line_percent, 2),
                "branch_percent": round(self.branch_percent, 2)}


@dataclass
class FileCoverage(CoverageCounts):
    module: str = ""
    missing_lines: list = field(default_factory=list)
    missing_branches: list = field(default_factory=list)  # [from line, to line] (negative: exit)
    path: str = ""  # the source file (not in the report)
    executed_lines: list = field(default_factory=list)  # not in the report: what checks a reachability claim

    def to_json(self) -> dict:
        return {k: v for k, v in super().to_json().items() if k not in ("path", "executed_lines")}


@dataclass
class EntryCoverage:
    name: str
    catalog: str
    modules: list  # the entry's own source modules (SPEC module first)
    counts: CoverageCounts
    exercised: Optional[dict] = None  # {status, cases_changed, ran, message} from the run's exercised record
    # why no graph can exercise it: the catalog's known ``exercised`` failure ({kind, reason, upstream}); None when
    # the catalog gives no reason (then a graph that triggers the pass is simply missing from the corpus)
    why_not: Optional[dict] = None

    def to_json(self) -> dict:
        return {"name": self.name, "catalog": self.catalog, "modules": self.modules, **self.counts.to_json(),
                "exercised": self.exercised, "why_not_exercised": self.why_not}


def why_not_exercised(entry) -> Optional[dict]:
    """The catalog's reason why no graph can make ``entry`` change a program (its known ``exercised`` failure)."""
    k = entry.known_for("exercised", PASS_LEVEL)  # as the run matches it to the pass-level record
    return {"kind": k.kind, "reason": k.reason, "upstream": k.upstream} if k else None


def entry_modules(entry) -> list[str]:
    """The modules of ``entry``'s own source: its SPEC's, plus its base classes' in the same package."""
    module, _, attr = entry.spec.partition(":")
    out = [module]
    package = module.rpartition(".")[0]
    try:
        from harness.catalog import resolve

        obj = resolve(entry.spec)
    except Exception:  # noqa: BLE001 - an entry that cannot be resolved: its SPEC module is all we know
        return out
    if inspect.isclass(obj):
        for base in obj.__mro__[1:]:
            owner = getattr(base, "__module__", "") or ""
            if package and owner.startswith(package + ".") and owner not in out:
                out.append(owner)
    return out


def measured_modules(catalogs: Iterable) -> dict:
    """module name -> catalog name: every module a runnable entry lives in, plus the Vulkan patterns."""
    out: dict = {}
    for c in catalogs:
        for e in c.entries:
            module = e.spec.partition(":")[0]
            if e.runnable and module.startswith("executorch."):
                out.setdefault(module, c.name)
        if c.name == "vulkan":
            import pkgutil

            import executorch.backends.vulkan.patterns as patterns

            out.setdefault(patterns.__name__, "vulkan")
            for info in pkgutil.iter_modules(patterns.__path__, patterns.__name__ + "."):
                out.setdefault(info.name, "vulkan")
    return out


def file_coverage(cov, modules: Iterable[str]) -> dict[str, FileCoverage]:
    """module -> its coverage, through coverage.py's JSON report (its public per-file lines and branches)."""
    from harness.check.loading import source_file

    paths = {m: source_file(m) for m in dict.fromkeys(modules)}
    paths = {m: p for m, p in paths.items() if p}
    if not paths:
        return {}
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        cov.json_report(morfs=list(paths.values()), outfile=tmp, ignore_errors=True)
        files = json.loads(Path(tmp).read_text()).get("files", {})
    finally:
        os.unlink(tmp)
    by_path = {os.path.realpath(p): data for p, data in files.items()}
    out = {}
    for m, p in paths.items():
        data = by_path.get(os.path.realpath(p))
        if data is None:
            continue
        s = data["summary"]
        out[m] = FileCoverage(s["num_statements"], s["covered_lines"], s.get("num_branches", 0),
                              s.get("covered_branches", 0), m, data.get("missing_lines", []),
                              data.get("missing_branches", []), p, data.get("executed_lines", []))
    return out


def exercised_verdicts(results_doc: dict) -> dict[str, dict]:
    """entry name -> its ``exercised`` verdict in a results document (``passgate run``'s)."""
    out = {}
    for r in results_doc.get("results", ()):
        if r.get("check") == "exercised" and r.get("graph") == "*":
            d = r.get("details") or {}
            out[r["pass_name"]] = {"status": r["status"], "cases_changed": d.get("cases_changed"),
                                   "ran": d.get("ran"), "message": r.get("message", "")}
    return out


def joined_verdicts(*runs: dict[str, dict]) -> dict[str, dict]:
    """The ``exercised`` verdicts of several runs over disjoint graphs, as one run over all of them would judge:
    an entry is exercised when some run exercised it (cases changed and cases run added up)."""
    out: dict[str, dict] = {}
    for run in runs:
        for name, v in run.items():
            had = out.get(name)
            if had is None:
                out[name] = dict(v)
                continue
            changed = (had.get("cases_changed") or 0) + (v.get("cases_changed") or 0)
            ran = (had.get("ran") or 0) + (v.get("ran") or 0)
            both = (had["status"], v["status"])  # exercised on some run; else not, where some run judged it
            status = "pass" if "pass" in both else "fail" if "fail" in both else had["status"]
            out[name] = {"status": status, "cases_changed": changed, "ran": ran,
                         "message": v["message"] if v["status"] == status else had["message"]}
    return out


def _sum(files: Iterable[FileCoverage]) -> CoverageCounts:
    total = CoverageCounts()
    for f in files:
        total.add(f)
    return total


def _group(entries: list[EntryCoverage], files: dict[str, FileCoverage], ran: Callable[[str], bool],
           reach: Optional[dict[str, FileCoverage]] = None) -> dict:
    """Totals of some entries: their distinct files' coverage (as measured, and over the code declared reachable),
    and how many the corpus did not exercise."""
    mods = dict.fromkeys(m for e in entries for m in e.modules if m in files)
    reach = files if reach is None else reach
    not_exercised = [e for e in entries if (e.exercised or {}).get("status") == "fail"]
    return {"entries": len(entries), "files": len(mods), **_sum(files[m] for m in mods).to_json(),
            "reachable": _sum(reach[m] for m in mods).to_json(),
            "not_exercised": len(not_exercised), "not_run": sum(1 for e in entries if not ran(e.name)),
            "not_exercised_entries": [e.name for e in not_exercised],
            # not exercised with no reason in the catalog: what the corpus still lacks
            "not_exercised_unexplained": [e.name for e in not_exercised if e.why_not is None]}


def analyse(cov, catalogs: list, verdicts: dict[str, dict], ran: Optional[Iterable[str]] = None) -> dict:
    """The coverage document: per module, per runnable entry, per catalog and over all runnable entries.

    ``ran``: the entries the measured run's configuration lists. Resolving the catalogs again in the process
    that ran them can find more: a module whose import failed half-way during the run is in sys.modules now,
    and discovery reads its classes (an uncurated openvino entry appeared so), though no run planned them."""
    modules = measured_modules(catalogs)
    planned = set(ran) if ran is not None else None
    runnable = [e for c in catalogs for e in c.entries if e.runnable and e.spec.startswith("executorch.")
                and (planned is None or e.name in planned)]
    own = {e.name: entry_modules(e) for e in runnable}
    files = file_coverage(cov, list(modules) + [m for ms in own.values() for m in ms])
    entries = [EntryCoverage(e.name, e.catalog, [m for m in own[e.name] if m in files],
                             _sum(files[m] for m in own[e.name] if m in files), verdicts.get(e.name),
                             why_not_exercised(e))
               for e in runnable]
    ran = verdicts.__contains__
    reach, exclusions = reachable.exclude(files, reachable.declared())
    by_catalog = {c.name: _group([e for e in entries if e.catalog == c.name], files, ran, reach) for c in catalogs}
    return {
        "branch": True,
        "total": _group(entries, files, ran, reach),
        # code a catalog declares no program can reach, with why; "reachable" figures leave it out
        "unreachable": [x.to_json() for x in exclusions],
        "by_catalog": {k: v for k, v in by_catalog.items() if v["entries"]},
        "entries": [e.to_json() for e in entries],
        "modules": [{"module": m, "catalog": cat, **files[m].to_json(), "percent": round(files[m].line_percent, 2)}
                    for m, cat in sorted(modules.items(), key=lambda kv: (kv[1], kv[0])) if m in files],
    }
