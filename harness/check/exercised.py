"""The pass-level ``exercised`` check: did any case make the pass change the program?

A check can only flag what a graph makes the pass do. A fusion pass whose
pattern matches no graph "passes" every IR check on every graph, and that
green says nothing about it: it was never tested. So after a pass has run on
its cases, one more verdict is judged for the pass as a whole, from the
``changed`` measurement each passing ``runs`` record carries
(:func:`harness.check.runner.check_pass_on_case`):

- ``pass``: at least one case changed the program (ops, structure or metadata);
- ``fail``: the pass ran on cases and changed none of them;
- ``not_applicable``: every case was not applicable to it (``requires`` failed),
  or it is an *observer* (semantics ``observing``: a debug printer, an
  analysis filling a table of its own): by contract it changes no program,
  so "it changed none" is its contract kept, not an untested pass;
- ``skip``: no case ran (it raised or timed out on all of them: ``runs`` says why).

The record's graph is :data:`~harness.core.results.PASS_LEVEL` (``"*"``):
it belongs to no single graph. It is ``should`` level in the registry (a
pass author iterating on a pass is not failed for a small graph set) and
``must`` in a certification, which passes ``level=Level.MUST``.

Only the runs of a whole run are judged: a shard, or an interrupted run,
saw part of a pass's cases, and "no case changed it" would be a claim about
cases it did not see (``passgate report merge`` judges the joined shards).
Nothing here imports torch: the report layer judges merged documents too.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Iterable, Optional

from harness.core.results import PASS_LEVEL, CheckResult, Level, Status, result

__all__ = ["CHECK", "PASS_LEVEL", "MAX_LISTED", "CHANGE_KINDS", "RETRACE_KEYS", "meta_form", "change_signature",
           "Tally", "tally", "rewrote", "judge", "judge_one", "without", "judged_passes", "judge_records"]

CHECK = "exercised"
MAX_LISTED = 50  # graphs and change signatures listed in details; the counts are exact
CHANGE_KINDS = ("ops", "structure", "metadata")  # the keys of a runs record's details["changed"]

# Node metadata every ExportPass retrace rewrites whatever the pass does: an identity ExportPass sets them on
# every node of every graph. Counting them would make every ExportPass "exercised" on every graph.
RETRACE_KEYS = frozenset({"seq_nr", "from_node", "tensor_meta"})


# -- measuring one run: what the runner records in details["changed"] ---------------------------------------

def _meta_value(key: str, value) -> object:
    if key == "val":
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            return tuple(str(s) for s in value.shape), str(value.dtype)
        if isinstance(value, (list, tuple)):
            return tuple(_meta_value(key, v) for v in value)
        return type(value).__name__
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return tuple(sorted(map(str, value)))
    if hasattr(value, "__dict__") and not callable(value):
        # a record such as TensorSpec: memory planning and shape evaluation change its fields, not its type
        return type(value).__name__, tuple((k, _field(v)) for k, v in sorted(vars(value).items()))
    return type(value).__name__


def _field(value) -> object:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return tuple(_field(v) for v in value)
    if isinstance(value, enum.Enum) or (type(value).__module__.startswith("torch") and not hasattr(value, "shape")):
        return str(value)  # dtype, layout, device: a short text that names the value
    return type(value).__name__


def meta_form(ep) -> tuple:
    """The program's metadata, name-blind: per node in graph order (its meta without :data:`RETRACE_KEYS`),
    the signature's kinds and targets, the submodules (a key whose value is None counts as absent). Equal
    structure and different forms: the pass changed
    metadata (``changed.metadata``). Names are left out as the canonical form leaves them out: a retrace
    renames nodes freely, and a rename alone changes nothing a check judges."""
    gm = ep.graph_module
    # a key set to None counts as absent: a retrace sets meta['val'] = None on ops that return nothing
    # (_assert_tensor_metadata), which is no change a check could flag
    nodes = tuple(tuple((k, _meta_value(k, n.meta[k])) for k in sorted(n.meta)
                        if k not in RETRACE_KEYS and n.meta[k] is not None)
                  for n in gm.graph.nodes)
    sig = getattr(ep, "graph_signature", None)
    specs = tuple((str(getattr(spec, "kind", "")), str(getattr(spec, "target", "")))
                  for spec in list(getattr(sig, "input_specs", ())) + list(getattr(sig, "output_specs", ())))
    return nodes, specs, tuple(sorted(name for name, _ in gm.named_children()))


def change_signature(changes: dict, changed: dict) -> str:
    """What changed, as a short stable string: the ops added (+) and removed (-), sorted, then the kinds.

    E.g. ``+relu.default -relu_.default [ops,structure]``, ``[metadata]``,
    ``unchanged``. Signs, not counts: a pass that folds every batch norm
    removes more of them from a deeper model, and that is not a new way of
    changing it. Two cases with one signature made the pass do the same kind
    of thing; ``passgate fuzz`` keeps a graph whose signature is new.
    """
    kinds = [k for k in CHANGE_KINDS if changed.get(k)]
    if not kinds:
        return "unchanged"
    ops = sorted(f"{'+' if d > 0 else '-'}{op}" for op, d in changes.items())
    return " ".join(ops + [f"[{','.join(kinds)}]"])


# -- judging a pass over its cases --------------------------------------------------------------------------


@dataclass
class Tally:
    """One pass's ``runs`` records, counted by what each says about the program."""

    cases: int = 0
    ran: int = 0
    measured: int = 0  # ran, with a ``changed`` measurement (reports older than this check have none)
    ops: int = 0
    structure_only: int = 0  # structure changed with the op counts equal
    metadata_only: int = 0
    not_applicable: int = 0
    did_not_run: int = 0  # runs failed, errored or was skipped
    observing: int = 0  # runs of a pass declared an observer (details["observing"]): exercised does not apply
    exercised_by: list = field(default_factory=list)  # graphs whose case changed the program
    signatures: set = field(default_factory=set)

    @property
    def changed(self) -> int:
        return self.ops + self.structure_only + self.metadata_only

    def add(self, r: CheckResult) -> None:
        self.cases += 1
        if r.status is Status.NOT_APPLICABLE:
            self.not_applicable += 1
            return
        if r.status is not Status.PASS:
            self.did_not_run += 1
            return
        self.ran += 1
        self.observing += bool(r.details.get("observing"))
        changed = r.details.get("changed")
        if not isinstance(changed, dict):
            return
        self.measured += 1
        if changed.get("ops"):
            self.ops += 1
        elif changed.get("structure"):
            self.structure_only += 1
        elif changed.get("metadata"):
            self.metadata_only += 1
        else:
            return
        self.exercised_by.append(r.graph)
        if r.details.get("change_signature"):
            self.signatures.add(str(r.details["change_signature"]))

    def details(self) -> dict:
        return {"cases": self.cases, "ran": self.ran, "cases_changed": self.changed, "ops": self.ops,
                "structure_only": self.structure_only, "metadata_only": self.metadata_only,
                "not_applicable": self.not_applicable, "did_not_run": self.did_not_run, "observing": self.observing,
                "exercised_by": self.exercised_by[:MAX_LISTED],
                "change_signatures": sorted(self.signatures)[:MAX_LISTED]}


def rewrote(r: CheckResult) -> Optional[bool]:
    """Did this ``runs`` record's pass change its case's program? None when the record cannot say (the pass
    failed, or no change was measured); False when it ran and left the program as handed, or no longer applied.

    What the baseline records per pass x graph and the gate's ``still_exercised`` compares with: a pass that
    rewrote a graph and now leaves it alone is no longer tested there, however green every other check is.
    """
    if r.check != "runs" or r.graph == PASS_LEVEL:
        return None
    if r.status is Status.NOT_APPLICABLE:
        return False
    changed = r.details.get("changed") if r.status is Status.PASS else None
    return any(changed.get(k) for k in CHANGE_KINDS) if isinstance(changed, dict) else None


def tally(results: Iterable[CheckResult]) -> dict[str, Tally]:
    """pass name -> the tally of its ``runs`` records, passes in the order they first appear."""
    out: dict[str, Tally] = {}
    for r in results:
        if r.check == "runs" and r.graph != PASS_LEVEL:
            out.setdefault(r.pass_name, Tally()).add(r)
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _verdict(t: Tally) -> tuple[Status, str]:
    others = ", ".join(x for x in (f"{t.not_applicable} not applicable" if t.not_applicable else "",
                                   f"{t.did_not_run} did not run" if t.did_not_run else "") if x)
    others = f"; {others}" if others else ""
    if t.ran and t.observing == t.ran:
        return Status.NOT_APPLICABLE, (f"an observer (semantics 'observing'): it records or prints and by contract "
                                       f"changes no program; {t.changed} of {_plural(t.ran, 'case')} changed"
                                       f"{' (see runs)' if t.changed else ''}{others}")
    if t.changed:
        kinds = ", ".join(f"{n} {what}" for n, what in ((t.ops, "ops"), (t.structure_only, "structure only"),
                                                        (t.metadata_only, "metadata only")) if n)
        return Status.PASS, f"{t.changed} of {_plural(t.ran, 'case')} changed the program ({kinds}){others}"
    if t.measured:
        return Status.FAIL, (f"no case changed the program: ops, structure and metadata identical on all "
                             f"{_plural(t.measured, 'case')}{others}")
    if t.ran:
        return Status.SKIP, "the runs records carry no change measurement (a report older than this check)"
    if t.cases and t.not_applicable == t.cases:
        return Status.NOT_APPLICABLE, f"the pass was not applicable to any of its {_plural(t.cases, 'case')}"
    return Status.SKIP, f"no case ran: the pass did not run on any of its {_plural(t.cases, 'case')} (see runs){others}"


def judge_one(pass_name: str, t: Tally, level: Optional[Level] = None) -> CheckResult:
    """The ``exercised`` record of one pass from its tally."""
    status, message = _verdict(t)
    return result(pass_name, PASS_LEVEL, CHECK, status, message, t.details(), level=level)


def judge(results: Iterable[CheckResult], passes: Optional[Iterable[str]] = None,
          level: Optional[Level] = None) -> list[CheckResult]:
    """One ``exercised`` record per pass of ``passes`` (default: every pass with a ``runs`` record) that ran on cases.

    ``passes`` names the passes a command runs as such (``run``: its catalog
    entries, not the pipeline steps or partitioners that also report ``runs``);
    a pass with no case at all gets no record (the catalog section lists it).
    """
    tallies = tally(results)
    names = list(tallies) if passes is None else [p for p in dict.fromkeys(passes) if p in tallies]
    return [judge_one(p, tallies[p], level) for p in names]


def without(results: Iterable[CheckResult]) -> list[CheckResult]:
    """``results`` without pass-level ``exercised`` records (a resumed report's, about to be judged again)."""
    return [r for r in results if not (r.check == CHECK and r.graph == PASS_LEVEL)]


def judged_passes(configuration: dict) -> list[str]:
    """The passes a results document's command judges ``exercised`` for, from its configuration.

    ``check`` and ``certify`` list their passes (``passes[].name``), ``run``
    its catalog entries (``entries``); what else reports a ``runs`` record
    (pipeline steps, partitioners) is not a pass under test of its own.
    """
    names = [p["name"] for p in configuration.get("passes") or () if isinstance(p, dict) and p.get("name")]
    return names + [e for e in configuration.get("entries") or () if isinstance(e, str)]


def judge_records(records: list[dict], configuration: dict) -> list[dict]:
    """``records`` (results.json dicts) with their ``exercised`` records judged afresh, appended as a run appends
    them (``passgate report merge``: no shard saw every case of a pass). ``certify`` judges at must."""
    kept = [r for r in records if not (r.get("check") == CHECK and r.get("graph") == PASS_LEVEL)]
    level = Level.MUST if configuration.get("command") == "certify" else None
    judged = judge((CheckResult.from_json(r) for r in kept), judged_passes(configuration), level)
    return kept + [r.to_json() for r in judged]
