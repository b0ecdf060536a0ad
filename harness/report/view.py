"""What every human-facing report agrees on: verdict per record and per cell, ordering, loading.

JUnit, Markdown and HTML render the same ``results.json`` document, and must
never disagree with each other or with the exit status about what failed:
a reader who sees red in the HTML matrix and green in the CI job would stop
trusting both. So the classification lives here, once:

- a record is a *violation* when the gate counts it (``must`` fail, any
  ``error``, a ``should`` fail under ``--strict``) and it is not a known
  violation the suite records (``known_violations``);
- a ``should`` fail without ``--strict`` is a *warning* (also when a
  baseline records it: it does not gate, and that entry is stale);
- a recorded known violation is *known* (shown, never gating).

The run's headline (verdict, new / known / fixed / stale / warning counts)
is :mod:`harness.report.headline`'s, computed from this view.

Keys the renderers read from ``details`` when present (other issues fill
them; everything is optional): ``repro`` (path of a standalone reproducer
script), ``shrunk_graph`` (the minimal failing graph as code; ``shrunk_code``
and ``minimal_graph`` are accepted too), ``traceback``. Optional document
sections: ``gate`` (``regressions`` / ``fixed`` / ``unchanged`` / ``known``
lists of ``{pass, graph, check, message}``, as the baseline gate and
``passgate report diff`` write them; ``gate.known`` entries are waived like
``known_violations``; ``gate.worsened`` entries, known violations whose
fingerprint got worse, are not: they gate like new ones, and
:attr:`View.worsened` names them), ``op_coverage`` (op -> case count, plus ``"<op>@<dtype>"`` keys: see
:func:`op_coverage` and :func:`op_dtype_coverage`), ``shards``,
``certification``.

Pass-level records (``exercised``: did any case make the pass change the
program) have the graph :data:`PASS_LEVEL` (``"*"``). They are verdicts like
any other (failures, JUnit, the exit status) but belong to no pass x graph
cell: the view keeps them apart (:attr:`View.pass_level`), so the matrix has
no ``*`` column and the graph count is the count of real graphs.

This module is the read-only model of a results document (load, validate,
view, gate, headline, op coverage, timings) and imports no renderer: the
renderers import it, and :mod:`harness.report.writers` is the one module that
knows them all. Nothing here imports torch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Optional

from harness.core.errors import UsageError
from harness.core.results import PASS_LEVEL
from harness.report import results_json as report_json

__all__ = [
    "CELL_VERDICT", "EXERCISED", "OUTCOMES", "PASS_LEVEL", "SCHEMA_PATH", "SHRUNK_KEYS", "SUPPORTED_MAJOR", "Cell",
    "View", "exercised", "gate", "graph_label", "is_strict", "is_violation", "key", "known_set", "load",
    "not_exercised", "op_coverage", "op_dtype_coverage", "outcome", "pass_of", "pass_timings", "schema",
    "shrunk_graph", "validation_errors", "view", "worsened_by_key",
]

EXERCISED = "exercised"

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "reports" / "schema" / "results.schema.json"
SUPPORTED_MAJOR = "1"

# record outcomes, worst first (the cell takes the worst of its records). A known violation ranks above a
# should-level warning: it is a real must-level violation, only waived, so a cell holding both reads "known"
OUTCOMES = ("error", "fail", "known", "warning", "pass", "skip", "not_applicable")
CELL_VERDICT = {"error": "error", "fail": "fail", "warning": "warn", "known": "known",
                "pass": "ok", "skip": "ok", "not_applicable": "n/a"}
SHRUNK_KEYS = ("shrunk_graph", "shrunk_code", "minimal_graph")


def key(record: dict) -> tuple[str, str, str]:
    return record["pass_name"], record["graph"], record["check"]


def pass_of(entry: dict) -> str:
    """Gate and known-violation entries name the pass ``pass``; result records ``pass_name``."""
    return entry.get("pass") or entry.get("pass_name") or ""


def worsened_by_key(doc: dict) -> dict:
    """Known violations whose fingerprint got worse (``gate.worsened``), recorded yet gating: key -> how."""
    return {(pass_of(k), k.get("graph"), k.get("check")): str(k.get("worse") or "")
            for k in (doc.get("gate") or {}).get("worsened") or ()}


def known_set(doc: dict) -> set:
    """Violations recorded as known, so waived: the suite's ``known_violations`` and the baseline's ``gate.known``,
    except the worsened ones (:func:`worsened_by_key`)."""
    entries = list(doc.get("known_violations") or ()) + list((doc.get("gate") or {}).get("known") or ())
    return {(pass_of(k), k.get("graph"), k.get("check")) for k in entries} - set(worsened_by_key(doc))


def is_strict(doc: dict) -> bool:
    return bool((doc.get("configuration") or {}).get("strict", False))


def outcome(record: dict, strict: bool = False, known: frozenset | set = frozenset()) -> str:
    """One of :data:`OUTCOMES` for a results.json record."""
    status = record["status"]
    if status == "fail" and record.get("level") == "should" and not strict:
        return "warning"  # never gates, so never "known": a baseline entry for it is stale (headline)
    if status in ("fail", "error") and key(record) in known:
        return "known"
    return status


def is_violation(record: dict, strict: bool = False, known: frozenset | set = frozenset()) -> bool:
    return outcome(record, strict, known) in ("fail", "error")


def shrunk_graph(details: dict) -> Optional[str]:
    for k in SHRUNK_KEYS:
        if isinstance(details.get(k), str) and details[k].strip():
            return details[k]
    return None


@dataclass
class Cell:
    """One pass x graph: its verdict and the check ids behind it."""

    pass_name: str
    graph: str
    records: list = field(default_factory=list)
    verdict: str = "ok"  # ok | fail | error | warn | known | n/a
    failing: list = field(default_factory=list)  # check ids that failed or errored, any level
    seconds: float = 0.0


@dataclass
class View:
    """A document digested once for every renderer."""

    doc: dict
    strict: bool
    known: set
    passes: list  # in the order the run visited them
    graphs: list
    cells: dict  # (pass, graph) -> Cell
    problems: list  # records that failed or errored (violations, warnings, known), worst first
    pass_level: dict = field(default_factory=dict)  # pass -> its pass-level records (graph PASS_LEVEL)
    derived: dict = field(default_factory=dict)  # what readers compute from the view once (the headline)
    worsened: dict = field(default_factory=dict)  # key -> how a known violation got worse: it gates (fail, error)

    @property
    def violations(self) -> list:
        return [r for r in self.problems if outcome(r, self.strict, self.known) in ("fail", "error")]

    def outcome(self, record: dict) -> str:
        return outcome(record, self.strict, self.known)

    def cell_checks(self, cell: "Cell") -> list[tuple[str, str]]:
        """(outcome, check id) of the cell's failed checks, worst first: a known ``verifier`` beside a
        should-level ``idempotent`` warning reads as exactly that, never as a second warning."""
        rows = {(self.outcome(r), r["check"]) for r in cell.records if r["status"] in ("fail", "error")}
        return sorted(rows, key=lambda oc: (OUTCOMES.index(oc[0]), oc[1]))


_last: list = []  # [(document, its shape when digested, view)]: one slot, the document being rendered


def _shape(doc: dict) -> tuple:
    """What a document's view depends on that a writer could replace between two renders of it."""
    return (len(doc.get("results", ())), id(doc.get("results")), id(doc.get("gate")), id(doc.get("configuration")),
            id(doc.get("summary")), doc.get("complete"), doc.get("exit_status"), id(doc.get("known_violations")))


def view(doc: dict) -> View:
    """The view of ``doc``, digested once for all the reports a run writes of it.

    Why a memo: every renderer (JUnit, Markdown, HTML, the terminal, the
    headline) reads the same document, and digesting a standard run's
    ~230,000 records takes half a second each time. It is keyed on the
    document object and on what a writer may replace (a gate section set
    after the run, the results list), not on content: a document edited in
    place record by record is not a use any caller has."""
    if _last and _last[0][0] is doc and _last[0][1] == _shape(doc):
        return _last[0][2]
    v = _digest(doc)
    _last[:] = [(doc, _shape(doc), v)]
    return v


def _digest(doc: dict) -> View:
    strict, known = is_strict(doc), known_set(doc)
    passes: dict[str, None] = {}
    graphs: dict[str, None] = {}
    for g in (doc.get("configuration") or {}).get("graphs") or ():
        graphs.setdefault(g, None)
    cells: dict[tuple[str, str], Cell] = {}
    pass_level: dict[str, list] = {}
    for r in doc.get("results", ()):
        passes.setdefault(r["pass_name"], None)
        if r["graph"] == PASS_LEVEL:
            pass_level.setdefault(r["pass_name"], []).append(r)
            continue
        graphs.setdefault(r["graph"], None)
        cell = cells.setdefault((r["pass_name"], r["graph"]), Cell(r["pass_name"], r["graph"]))
        cell.records.append(r)
        cell.seconds += float(r.get("duration_s") or 0.0)
    used = {g for _, g in cells}
    for cell in cells.values():
        outs = [outcome(r, strict, known) for r in cell.records]
        worst = min(outs, key=OUTCOMES.index) if outs else "pass"
        cell.verdict = "n/a" if outs and all(o == "not_applicable" for o in outs) else CELL_VERDICT[worst]
        cell.failing = sorted({r["check"] for r in cell.records if r["status"] in ("fail", "error")})
    problems = [r for r in doc.get("results", ()) if r["status"] in ("fail", "error")]
    problems.sort(key=lambda r: OUTCOMES.index(outcome(r, strict, known)))
    return View(doc, strict, known, list(passes), [g for g in graphs if g in used], cells, problems, pass_level,
                worsened=worsened_by_key(doc))


def graph_label(graph: str) -> str:
    """How a record's graph reads in a report: a pass-level record is about every case of its pass."""
    return "all its cases" if graph == PASS_LEVEL else graph


def exercised(v: View) -> dict[str, dict]:
    """pass -> its ``exercised`` record, for the passes the run judged it for."""
    return {p: r for p, rs in v.pass_level.items() for r in rs if r["check"] == EXERCISED}


def not_exercised(v: View) -> list[str]:
    """The passes that ran on cases and changed none: their green says nothing about them."""
    return [p for p, r in exercised(v).items() if r["status"] == "fail"]


def pass_timings(v: View) -> list[tuple[str, float, int, str, float]]:
    """Per pass: (name, total seconds, graphs, slowest graph, its seconds), slowest pass first."""
    by_pass: dict[str, list] = {}
    for (p, _), c in v.cells.items():  # one walk over the cells: a pass at a time is passes x cells
        by_pass.setdefault(p, []).append(c)
    rows = []
    for p in v.passes:
        cells = by_pass.get(p)
        if not cells:
            continue  # only pass-level records
        slow = max(cells, key=lambda c: c.seconds)
        rows.append((p, sum(c.seconds for c in cells), len(cells), slow.graph, slow.seconds))
    return sorted(rows, key=lambda row: -row[1])


DTYPE_SEP = "@"  # "<op>@<dtype>" keys (harness.graphs.op_coverage.DTYPE_SEP; no torch import here)


def _raw_coverage(doc: dict) -> dict[str, int]:
    cov = doc.get("op_coverage") or {}
    if isinstance(cov, dict) and isinstance(cov.get("ops"), dict):
        cov = cov["ops"]
    if not isinstance(cov, dict):
        return {}
    return {str(op): int(n) for op, n in cov.items() if isinstance(n, (int, float))}


def op_coverage(doc: dict) -> dict[str, int]:
    """op -> case count, from ``doc['op_coverage']`` (a flat dict, or one under an ``ops`` key).

    Ops only: the ``"<op>@<dtype>"`` keys are :func:`op_dtype_coverage`'s, so "N ops" counts ops.
    """
    return {op: n for op, n in _raw_coverage(doc).items() if DTYPE_SEP not in op}


def op_dtype_coverage(doc: dict) -> dict[str, dict[str, int]]:
    """op -> {dtype -> case count}: the dtypes each op's nodes produce in the cases (empty for older reports)."""
    out: dict[str, dict[str, int]] = {}
    for k, n in _raw_coverage(doc).items():
        op, sep, dtype = k.partition(DTYPE_SEP)
        if sep:
            out.setdefault(op, {})[dtype] = n
    return out


def gate(doc: dict) -> dict:
    """The gate section with every entry carrying ``pass_name`` (whichever key its writer used)."""
    g = doc.get("gate") or {}
    out = {k: [{**e, "pass_name": pass_of(e)} for e in g.get(k) or ()]
           for k in ("regressions", "worsened", "fixed", "unchanged", "known", "not_evaluated")}
    return out | {"baseline": g.get("baseline")}


# ----------------------------------------------------------------------------- loading and validation


@lru_cache(maxsize=1)
def schema() -> Optional[dict]:
    try:
        return json.loads(SCHEMA_PATH.read_text())
    except OSError:
        return None  # an installed wheel without the repository's reports/ folder: report_json.load's check only


def validation_errors(doc: dict, limit: int = 5) -> list[str]:
    """Schema violations of ``doc`` as one-line strings (empty when valid)."""
    s = schema()
    if s is None:
        return []
    import jsonschema

    validator = jsonschema.Draft202012Validator(s)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    out = []
    for e in errors[:limit]:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path).lstrip(".")
        out.append(f"{where or '(top level)'}: {e.message[:200]}")
    return out


def load(path) -> dict:
    """A results.json that follows the schema, or a one-line UsageError saying what is wrong."""

    doc = report_json.load(path)
    version = str(doc.get("schema_version"))
    if version.split(".")[0] != SUPPORTED_MAJOR:
        raise UsageError(f"results file {path} has schema_version {version}; this passgate reads {SUPPORTED_MAJOR}.x")
    errors = validation_errors(doc, limit=1)
    if errors:
        raise UsageError(f"results file {path} does not follow the passgate results schema: {errors[0]}")
    return doc

