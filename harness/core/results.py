"""Check results: the stable vocabulary of DESIGN.md, as data.

Check ids, levels and statuses are a public contract (CI jobs and vendors
script against them): add, never rename.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, Iterable, Optional

from harness.core.stability import stable

__all__ = ["Status", "Level", "CheckInfo", "CHECKS", "check_ids", "IR_CHECK_IDS", "RERUN_CHECKS", "STATE_CHECKS",
           "PASS_LEVEL", "ir_checks_at", "CheckResult", "summarize", "result"]


@stable
class Status(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    NOT_APPLICABLE = "not_applicable"
    ERROR = "error"  # the harness itself failed: never silent


class Level(str, Enum):
    MUST = "must"
    SHOULD = "should"


@dataclass(frozen=True)
class CheckInfo:
    id: str
    level: Level
    holds_when: str
    group: str = "ir"  # ir | vulkan | partition | runtime | device | pass (judged once per pass over all its cases)
    #                    | gate (judged by the baseline gate, from what a run's records say against what it recorded)
    state: bool = False  # judged on the program the pass leaves, not on what it did (verify-each inherits it)
    reruns: bool = False  # runs the pass again (a pipeline step is not promised to be rerunnable alone)


CHECKS: dict[str, CheckInfo] = {
    c.id: c
    for c in (
        CheckInfo("runs", Level.MUST, "the pass returns without raising, within the timeout"),
        CheckInfo("no_call_module", Level.MUST, "no call_module node is left in the graph", state=True),
        CheckInfo("meta_val", Level.MUST, "every value-producing node has meta['val']", state=True),
        CheckInfo("val_matches_execution", Level.MUST, "real execution gives the shapes/dtypes meta['val'] claims", state=True),
        CheckInfo("meta_stack_trace", Level.MUST, "nodes that had a stack trace keep one; new nodes get one"),
        CheckInfo("meta_nn_module_stack", Level.MUST, "likewise for nn_module_stack"),
        CheckInfo("meta_debug_handle", Level.SHOULD, "likewise for debug_handle"),
        CheckInfo("graph_lint", Level.MUST, "Graph.lint() passes", state=True),
        CheckInfo("signature", Level.MUST, "the signature matches the placeholders and outputs", state=True),
        CheckInfo("verifier", Level.MUST, "ExecuTorch's dialect verifier accepts the result", state=True),
        CheckInfo("runnable", Level.MUST, "the transformed program runs on CPU on the sample inputs", state=True),
        CheckInfo("numerics", Level.MUST, "outputs match the pre-pass program within tolerance"),
        CheckInfo("ensures", Level.MUST, "the pass's own ensures hook holds"),
        CheckInfo("input_unchanged", Level.MUST, "the input program and the shared case are left as they were"),
        CheckInfo("idempotent", Level.SHOULD, "running the pass a second time changes nothing", reruns=True),
        CheckInfo("deterministic", Level.SHOULD, "two runs on copies of the same input give the same graph", reruns=True),
        CheckInfo("exercised", Level.SHOULD, "at least one case made the pass change the program (ops, structure "
                  "or metadata); must in certification", "pass"),
        CheckInfo("still_exercised", Level.MUST, "(against a baseline) a pass x graph the baseline records as "
                  "exercised (the pass changed the program) still changes it", "gate"),
        CheckInfo("fusion_expected", Level.MUST, "the expected et_vk op appears and absorbed Q/DQ nodes are gone", "vulkan"),
        CheckInfo("fused_vs_qdq", Level.MUST, "fused output matches the unfused Q/DQ program", "vulkan"),
        CheckInfo("fused_vs_float", Level.MUST, "fused output is within its SQNR bound of the float model", "vulkan"),
        CheckInfo("device_vs_reference", Level.MUST, "a device executor matches the reference", "vulkan"),
        CheckInfo("partition_supported", Level.MUST, "every node of a proposed partition is one its operator "
                  "support accepts", "partition"),
        CheckInfo("partition_convex", Level.MUST, "no path leaves a partition and comes back into it", "partition"),
        CheckInfo("delegate_call_only", Level.MUST, "the lowered program reaches delegates only through "
                  "executorch_call_delegate, never call_module", "partition"),
        CheckInfo("serialize_roundtrip", Level.MUST, "the exported program and the .pte survive serialize / "
                  "deserialize", "runtime"),
        CheckInfo("runtime_runs", Level.MUST, "the ExecuTorch runtime loads and executes the .pte (the full "
                  "to_executorch flow, write-back and memory planning included)", "runtime"),
        CheckInfo("runtime_numerics", Level.MUST, "the runtime's outputs and mutated buffers match eager within "
                  "tolerance; a failure names the first diverging op", "runtime"),
        CheckInfo("device_numerics", Level.MUST, "a BundledProgram run on a named device and runtime matches its "
                  "expected outputs", "device"),
    )
}


PASS_LEVEL = "*"
"""The ``graph`` of a pass-level record (``exercised``): judged over every case of the pass, not on one graph.

A name no graph case can have (case names are identifiers and paths), so a
report tells pass-level records from pass x graph pairs by it alone.
"""


def check_ids(group: str) -> tuple[str, ...]:
    """The check ids of one group (``ir``, ``vulkan``, ``partition``, ``pass``), in registry order.

    Query the registry instead of keeping a list of ids beside it: a list
    kept in parallel drifts the day a check is added.
    """
    return tuple(c.id for c in CHECKS.values() if c.group == group)


IR_CHECK_IDS: tuple[str, ...] = check_ids("ir")
RERUN_CHECKS: frozenset = frozenset(c.id for c in CHECKS.values() if c.reruns)
STATE_CHECKS: frozenset = frozenset(c.id for c in CHECKS.values() if c.state)


def ir_checks_at(level: Level) -> frozenset:
    """The IR check ids of one level (``passgate check --checks must``)."""
    return frozenset(c for c in IR_CHECK_IDS if CHECKS[c].level is level)


@stable
@dataclass
class CheckResult:
    """One verdict: pass x graph x check."""

    pass_name: str
    graph: str
    check: str
    status: Status
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    level_override: Optional[Level] = None
    """This record's level when it is not the registry's: ``passgate certify`` judges ``exercised`` at must.
    Serialized as the record's ``level``, so a report read back gates the way the run did."""

    def __post_init__(self):
        if self.level_override is not None:
            self.level_override = Level(self.level_override)
            if self.level_override is self._registry_level():
                self.level_override = None  # one spelling per level: a record equals its JSON round trip

    def _registry_level(self) -> Level:
        return CHECKS[self.check].level if self.check in CHECKS else Level.MUST

    @property
    def level(self) -> Level:
        return self.level_override or self._registry_level()

    def is_violation(self, strict: bool = False) -> bool:
        """Does this result fail the gate? ``error`` always does: never silent."""
        if self.status is Status.ERROR:
            return True
        if self.status is not Status.FAIL:
            return False
        return self.level is Level.MUST or strict

    def to_json(self) -> dict:
        return {"pass_name": self.pass_name, "graph": self.graph, "check": self.check, "status": self.status.value,
                "message": self.message, "details": _plain(self.details), "duration_s": round(self.duration_s, 6),
                "level": self.level.value}

    @classmethod
    def from_json(cls, d: dict) -> "CheckResult":
        return cls(
            pass_name=d["pass_name"],
            graph=d["graph"],
            check=d["check"],
            status=Status(d["status"]),
            message=d.get("message", ""),
            details=d.get("details", {}),
            duration_s=d.get("duration_s", 0.0),
            level_override=Level(d["level"]) if d.get("level") in (Level.MUST.value, Level.SHOULD.value) else None,
        )


_ATOMS = (str, int, float, bool, type(None))


def _plain(value):
    """``value`` converted as :func:`dataclasses.asdict` converts a field, without copying what cannot change.

    Why not ``asdict``: it deep-copies every leaf, strings and numbers included, and a standard run serializes
    ~200,000 records (seconds of every warm gate); a str / int / float / bool / None is returned as it is."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {k: _plain(v) for k, v in value.items()}
    if kind is list:
        return [_plain(v) for v in value]
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple, as asdict rebuilds it
        return kind(*[_plain(v) for v in value])
    if isinstance(value, (list, tuple)):
        return kind(_plain(v) for v in value)
    if isinstance(value, dict):
        return kind((_plain(k), _plain(v)) for k, v in value.items())
    return copy.deepcopy(value)


def summarize(results: Iterable[CheckResult], strict: bool = False) -> dict:
    results = list(results)
    counts = {s.value: 0 for s in Status}
    for r in results:
        counts[r.status.value] += 1
    violations = [r for r in results if r.is_violation(strict)]
    return {
        "total": len(results),
        "by_status": counts,
        "violations": len(violations),
        "passes": len({r.pass_name for r in results}),
        "graphs": len({r.graph for r in results if r.graph != PASS_LEVEL}),
    }


def result(pass_name: str, graph: str, check: str, status: Status, message: str = "",
           details: Optional[dict] = None, duration_s: float = 0.0, level: Optional[Level] = None) -> CheckResult:
    return CheckResult(pass_name, graph, check, status, message, details or {}, duration_s, level)
