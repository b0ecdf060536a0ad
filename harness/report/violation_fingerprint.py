"""What a known violation looked like when it was recorded, so one that gets worse is not silently known.

A baseline entry keys on pass x graph x check. Without more, a run that fails
the same check on the same graph for a new reason (more or other offending
nodes, another exception, a larger numeric error) matches the entry and is
waived. Betterer's rule holds instead: a known issue may only get better. So
each entry records a :class:`Fingerprint` of its violation and the gate
compares the run's violation with it (:func:`worse`).

A fingerprint holds what the checks report in a comparable form:

- ``nodes``: the offending node names (or operators) by role: ``lost`` and
  ``new_without`` (the ``meta_*`` checks: survivors that lost the key, new
  nodes that never had it), ``nodes`` (``meta_val``, ``no_call_module``,
  ``val_matches_execution``), ``ops`` (the operator a dialect verifier
  rejected); ``more`` counts those of a role a message did not name
  (``(+34 more)``);
- ``exceptions``: the exception types the message names, outermost first
  (``StepFailed``, then the ``RuntimeError`` it wraps);
- ``error``: the worst numeric error (``numerics``' max abs error, a fused
  program's worst LSB, dB beyond the SQNR allowed).

It is computed from a CheckResult's ``details`` where the check records them
(complete node lists, the unrounded error), else from the first line of its
message (what a baseline entry stores as ``message``): messages name nodes in
natural order, the first six of each role, then how many more. A message is
cut at :data:`MESSAGE_LIMIT` characters; a fingerprint read from a cut one is
marked ``cut``: what lies past the cut (a later role, a later exception) is
unknown, not absent.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Optional

__all__ = ["ERROR_MARGIN", "MESSAGE_LIMIT", "Fingerprint", "first_line", "from_json", "from_message", "from_result",
           "worse"]

MESSAGE_LIMIT = 300
# A recorded error is read back from a message that prints it to 3 significant digits (a rounding of at most 0.5%
# of it), and the same seed draws the same inputs: an error more than 1% above the recorded one is a real change.
ERROR_MARGIN = 0.01
_ERROR_FLOOR = 1e-12  # below this an error "grows" only by float noise

_GROUP = re.compile(r"^(\d+) (surviving |new |call_module )?node\(s\)(?: lost| lack)?[^:]*: (.*)$")
_ROLE = {"surviving ": "lost", "new ": "new_without", "call_module ": "nodes", "": "nodes"}
_VAL_MISMATCH = re.compile(r"^(\d+) node\(s\) compute something other than meta\['val'\] claims; ([\w.]+): ")
_MORE = re.compile(r" \(\+(\d+) more\)$")
_MORE_CUT = re.compile(r" \(\+\d*(?: m?o?r?e?)?\s*$")  # "(+7 more)" cut short: the names before it are whole
_OPS = (re.compile(r"\boperator '([^']+)'"), re.compile(r"<EdgeOpOverload: ([^>]+)>"),
        re.compile(r"\bOperator (?:torch\._ops\.)?(\S+) is not\b"))
_EXCEPTION = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)*([A-Z]\w*?(?:Error|Exception|Failed|Failure|Violation|Interrupt"
                        r"|Exit|NotFound|SymNode))(?=:)")
_NUMBER = r"([-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf|nan))"
_ERRORS = (re.compile(rf"max abs err {_NUMBER}"), re.compile(rf"; worst {_NUMBER} \w+ LSB"),
           re.compile(rf": {_NUMBER} dB beyond"))
_ERROR_DETAILS = ("max_abs_err", "worst_lsb")


def first_line(text: str) -> str:
    """The first line of a message, cut at :data:`MESSAGE_LIMIT`: what a baseline entry records as ``message``."""
    return (text or "").strip().splitlines()[0][:MESSAGE_LIMIT] if (text or "").strip() else ""


def _natural(name: str) -> tuple:
    """The order ``harness.check.metadata.names_preview`` lists names in (``copy_2`` before ``copy_10``)."""
    stem, _, suffix = name.rpartition("_")
    return (stem, int(suffix)) if stem and suffix.isdigit() else (name, -1)


@dataclass(frozen=True)
class Fingerprint:
    """What a violation knew: offending nodes by role, exception types, worst error."""

    nodes: dict = field(default_factory=dict)  # role -> tuple of names, natural order
    more: dict = field(default_factory=dict)  # role -> how many offending nodes beyond those named
    exceptions: tuple = ()
    error: Optional[float] = None
    cut: bool = False  # read from a message cut at MESSAGE_LIMIT: what lies past the cut is unknown

    def __hash__(self) -> int:  # the dict fields are never mutated: hash what they hold
        return hash(json.dumps(self.to_json(), sort_keys=True))

    @property
    def empty(self) -> bool:
        return not any(self.nodes.values()) and not self.exceptions and self.error is None

    def count(self, role: str) -> int:
        return len(self.nodes.get(role, ())) + int(self.more.get(role, 0))

    def complete(self, role: str) -> bool:
        return not self.more.get(role)

    def to_json(self) -> dict:
        d: dict = {}
        if self.nodes:
            d["nodes"] = {role: list(names) for role, names in sorted(self.nodes.items())}
        if any(self.more.values()):
            d["more"] = {role: n for role, n in sorted(self.more.items()) if n}
        if self.exceptions:
            d["exceptions"] = list(self.exceptions)
        if self.error is not None:
            d["error"] = self.error if math.isfinite(self.error) else str(self.error)
        if self.cut:
            d["cut"] = True
        return d


def _names(role_names: dict, keep_empty: bool = False) -> dict:
    """role -> its names, deduplicated, in natural order (an empty role only when ``keep_empty``: a check that
    lists every offending node says "none" for it, where a message says nothing)."""
    return {role: tuple(sorted(set(names), key=_natural)) for role, names in role_names.items()
            if names or keep_empty}


def from_json(d) -> Optional[Fingerprint]:
    """A stored fingerprint (``Fingerprint.to_json``), or None when ``d`` is not one."""
    if not isinstance(d, dict):
        return None
    nodes = {str(r): [str(n) for n in ns] for r, ns in (d.get("nodes") or {}).items() if isinstance(ns, list)}
    more = {str(r): int(n) for r, n in (d.get("more") or {}).items() if isinstance(n, int) and n > 0}
    error = d.get("error")
    try:
        error = None if error is None else float(error)
    except (TypeError, ValueError):
        error = None
    fp = Fingerprint(_names(nodes, keep_empty=True), more, tuple(str(e) for e in d.get("exceptions") or ()), error,
                     bool(d.get("cut")))
    return None if fp.empty else fp


def _groups(line: str, cut: bool) -> tuple[dict, dict]:
    """role -> names, role -> how many more, from the node lists a message names."""
    nodes: dict = {}
    more: dict = {}
    m = _VAL_MISMATCH.match(line)
    if m:  # names only the first node in graph order: the rest are counted
        return {"nodes": [m.group(2)]}, {"nodes": int(m.group(1)) - 1}
    segments = line.split("; ")
    for i, segment in enumerate(segments):
        g = _GROUP.match(segment)
        if not g:
            continue
        count, role, listed = int(g.group(1)), _ROLE[g.group(2) or ""], g.group(3)
        listed = _MORE.sub("", listed)
        tail = _MORE_CUT.search(listed)
        listed = listed[:tail.start()] if tail else listed
        names = [n for n in listed.split(", ") if n]
        if cut and not tail and i == len(segments) - 1 and names:
            names = names[:-1]  # the last name may be cut short
        nodes[role] = nodes.get(role, []) + names
        more[role] = more.get(role, 0) + max(0, count - len(names))
    return nodes, more


def _number(text: str) -> float:
    value = float(text)
    return math.inf if math.isnan(value) else value


def from_message(message: str) -> Optional[Fingerprint]:
    """The fingerprint a message's first line gives, or None when it names nothing comparable."""
    line = first_line(message)
    if not line:
        return None
    cut = len(line) >= MESSAGE_LIMIT
    nodes, more = _groups(line, cut)
    ops = [m.group(1) for rx in _OPS for m in rx.finditer(line)]
    if ops:
        nodes["ops"] = nodes.get("ops", []) + ops
    error = next((_number(m.group(1)) for rx in _ERRORS for m in [rx.search(line)] if m), None)
    fp = Fingerprint(_names(nodes), {r: n for r, n in more.items() if n},
                     tuple(m.group(1) for m in _EXCEPTION.finditer(line)), error, cut)
    return None if fp.empty else fp


def from_result(message: str, details: Optional[dict]) -> Optional[Fingerprint]:
    """A violation's fingerprint: node lists and the error from ``details`` where the check records them,
    the rest from the first line of ``message``."""
    base = from_message(message) or Fingerprint()
    d = details if isinstance(details, dict) else {}
    recorded = {}
    for role in ("lost", "new_without", "nodes"):
        value = d.get(role)
        if isinstance(value, (list, dict)) and all(isinstance(n, str) for n in value):
            recorded[role] = list(value)
    nodes, more = dict(base.nodes), dict(base.more)
    if recorded:  # the check listed every offending node: they replace what the message previewed
        for role in ("lost", "new_without", "nodes"):
            nodes.pop(role, None)
            more.pop(role, None)
        nodes.update(_names(recorded, keep_empty=True))
    error = next((float(d[k]) for k in _ERROR_DETAILS if isinstance(d.get(k), (int, float))
                  and not isinstance(d.get(k), bool)), base.error)
    if error is not None and math.isnan(error):
        error = math.inf
    fp = Fingerprint(nodes, more, base.exceptions, error, base.cut)
    return None if fp.empty else fp


def _worse_nodes(now: Fingerprint, then: Fingerprint) -> list[str]:
    out = []
    for role in sorted(now.nodes.keys() | now.more.keys()):
        if then.cut and role not in then.nodes and role not in then.more:
            continue  # past the recorded message's cut: unknown
        grown = now.count(role) - then.count(role)
        unseen = [n for n in now.nodes.get(role, ()) if n not in then.nodes.get(role, ())]
        if then.complete(role) and unseen:
            out.append(f"{len(unseen)} {role} not recorded: {', '.join(unseen[:6])}"
                       + (f" (+{len(unseen) - 6} more)" if len(unseen) > 6 else ""))
        elif grown > 0:
            out.append(f"{now.count(role)} {role}, {then.count(role)} recorded")
    return out


def _worse_exceptions(now: Fingerprint, then: Fingerprint) -> Optional[str]:
    a, b = now.exceptions, then.exceptions
    if now.cut or then.cut:  # compare what both messages show
        n = min(len(a), len(b))
        a, b = a[:n], b[:n]
    if a == b:
        return None
    return f"raises {' > '.join(now.exceptions) or 'no exception'}, recorded {' > '.join(then.exceptions) or 'none'}"


def _worse_error(now: Fingerprint, then: Fingerprint) -> Optional[str]:
    if now.error is None or then.error is None:
        return None
    if now.error > then.error * (1 + ERROR_MARGIN) and now.error - then.error > _ERROR_FLOOR:
        return f"error {now.error:.3g}, recorded {then.error:.3g} (more than {ERROR_MARGIN:.0%} above it)"
    return None


def worse(now: Optional[Fingerprint], then: Optional[Fingerprint]) -> str:
    """How ``now`` is worse than the recorded ``then`` ("" when it is not, or nothing was recorded to compare).

    Worse: offending nodes not a subset of the recorded ones (where a
    recorded list was previewed, more of them than it counted), a different
    exception type, or an error more than :data:`ERROR_MARGIN` above the recorded one.
    """
    if then is None:
        return ""
    now = now or Fingerprint()
    parts = _worse_nodes(now, then)
    parts += [p for p in (_worse_exceptions(now, then), _worse_error(now, then)) if p]
    return "; ".join(parts)
