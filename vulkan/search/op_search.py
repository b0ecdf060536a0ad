"""Vulkan fusion conformance as a search: draw cases over each op's space, shrink every failure to its smallest case.

For each op (:mod:`vulkan.search.space`), hypothesis' generate phase draws a
sequence of :class:`~vulkan.search.space.CaseDesc` examples from the op's strategy
(seeded: the same seed draws the same cases in every process, :func:`draws`)
and each is judged in turn (:func:`vulkan.search.evaluate.evaluate`, memoized on
the description). A draw failing a check that no defect found so far
explains is shrunk (:func:`_shrink`): a hypothesis run replays the same
sequence up to that draw, whose test body raises for it, and hypothesis' own
shrinker (``Phase.shrink``, no example database) reduces the description to
the smallest configuration and shape that still fails the SAME check.
:mod:`vulkan.search.boundary` probes around the shrunk case and names the traits
that separate it from passing neighbours; later draws those traits cover are
the same defect, the others go on being judged.

Budgets: ``budget_s`` bounds the time spent judging new exploration draws
of an op (``examples`` bounds their number); shrinking a defect and probing
around it get ``shrink_s`` more each. With ``examples`` alone (no budget) a
search is fully deterministic; with a budget the draws are a prefix of the
same deterministic sequence, as long as the machine allows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hseed

from vulkan.search import boundary
from vulkan.search.evaluate import Outcome, evaluate
from vulkan.search.space import CaseDesc, OpSpace

__all__ = ["Defect", "OpSearch", "replay_op", "search", "search_op"]

DEFAULT_EXAMPLES = 24
DEFAULT_SHRINK_S = 90.0
MAX_DEFECTS = 4
MAX_SHRINK_EVALS = 60
MIN_DRAWS = 3  # draws every op gets, whatever the budget left


@dataclass
class Defect:
    """A failure of one check on one op, shrunk, and where it stops failing."""

    op: str
    check: str
    first: CaseDesc  # the first failing draw
    case: CaseDesc  # the shrunk case
    outcome: Outcome  # the shrunk case's verdicts
    traits: list = field(default_factory=list)
    boundary: str = ""
    probes: list = field(default_factory=list)  # (desc, status of the check) around the shrunk case
    shrink_evals: int = 0
    seconds: float = 0.0
    repro: str = ""  # file name of the reproducer, when written

    def to_json(self) -> dict:
        return {"op": self.op, "check": self.check, "case": self.case.to_json(), "config": self.case.config_id(),
                "shape": self.case.shape_id(), "first": self.first.to_json(), "message":
                self.outcome.messages.get(self.check, ""), "traits": self.traits, "boundary": self.boundary,
                "probes": [{"case": p.to_json(), "status": s} for p, s in self.probes],
                "shrink_evals": self.shrink_evals, "seconds": round(self.seconds, 2), "repro": self.repro}


@dataclass
class OpSearch:
    op: str
    draws: list = field(default_factory=list)  # exploration outcomes, in draw order
    defects: list = field(default_factory=list)
    outcomes: list = field(default_factory=list)  # every distinct case judged (draws, shrinks, probes)
    seconds: float = 0.0
    explore_s: float = 0.0  # of which judging exploration draws (what the budget counts)
    stopped: str = ""  # why exploration ended: examples | budget | replay
    error: str = ""

    @property
    def configurations(self) -> list[str]:
        return sorted({o.desc.config_id() for o in self.draws})

    @property
    def failures(self) -> int:
        return sum(1 for o in self.draws if o.failed)


class _Found(Exception):
    """Raised by the hypothesis test body for the failure being hunted (so hypothesis shrinks it)."""


class _Hunt:
    """The state one op's search shares across hypothesis runs: the memo, budgets, known defects."""

    def __init__(self, sp: OpSpace, judge: Callable[[CaseDesc], Outcome], budget_s: Optional[float],
                 examples: int, progress=None):
        self.sp, self.judge, self.progress = sp, judge, progress
        self.memo: dict = {}
        self.explored: list = []
        self.explore_s, self.budget_s, self.examples = 0.0, budget_s, examples
        self.known: list[Defect] = []
        self.target: Optional[str] = None
        self.first: Optional[CaseDesc] = None
        self.last: Optional[CaseDesc] = None
        self.shrink_deadline = 0.0
        self.shrink_evals = 0
        self.shrink_s = DEFAULT_SHRINK_S

    def out_of_budget(self) -> bool:
        """Examples spent, or time spent once every op has had its few first draws (a late op gets them too)."""
        if len(self.explored) >= self.examples:
            return True
        return self.budget_s is not None and self.explore_s >= self.budget_s and len(self.explored) >= MIN_DRAWS

    def outcome(self, desc: CaseDesc) -> Optional[Outcome]:
        """The memoized verdict, or a new one if this phase may still afford it (None: it may not)."""
        if desc in self.memo:
            return self.memo[desc]
        exploring = self.target is None
        if exploring and self.out_of_budget():
            return None
        if not exploring and (time.perf_counter() > self.shrink_deadline or self.shrink_evals >= MAX_SHRINK_EVALS):
            return None
        out = self.judge(desc)
        self.memo[desc] = out
        if exploring:
            self.explore_s += out.seconds
            self.explored.append(out)
        else:
            self.shrink_evals += 1
        if self.progress:
            self.progress("draw" if exploring else "shrink", out)
        return out

    def explained(self, check: str, desc: CaseDesc) -> bool:
        """A known defect covers every check its shrunk case fails, wherever its traits hold.

        A fused output off the Q/DQ program is off the float model too, so a
        ``fused_vs_qdq`` defect also covers ``fused_vs_float`` failures.
        """
        def covers(d: Defect) -> bool:
            return check in d.outcome.failed or (check == "fused_vs_float" and d.check == "fused_vs_qdq")

        return any(covers(d) and boundary.explains(d.traits, desc) for d in self.known)

_SETTINGS = dict(database=None, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False,
                 report_multiple_bugs=False, verbosity=Verbosity.quiet, print_blob=False)


def _runner(sp: OpSpace, seed: int, examples: int, phases: list, body):
    """A seeded hypothesis test over the op's strategy; the same seed and size give the same draws."""

    @hseed(seed)
    @settings(max_examples=max(1, examples) * 3, phases=phases, **_SETTINGS)
    @given(sp.strategy(seed))
    def test(desc):
        body(desc)

    return test


def draws(sp: OpSpace, seed: int, examples: int) -> list[CaseDesc]:
    """The exploration sequence: hypothesis' generate phase, deterministic in ``seed``, duplicates dropped."""
    seq: dict = {}
    _runner(sp, seed, examples, [Phase.generate], lambda d: seq.setdefault(d, None))()
    return list(seq)


def _shrink(hunt: _Hunt, seed: int, first: CaseDesc, check: str) -> CaseDesc:
    """Hypothesis' shrinker from ``first`` to the smallest case failing ``check`` that no known defect explains.

    The run replays the exploration sequence (same seed, same size, every
    draw before ``first`` passes untouched, as it did in :func:`draws`), so
    its first failure is ``first`` itself; from there ``Phase.shrink`` works
    on the choice sequence, keeping only cases that fail the SAME check.
    """
    hunt.target, reached = check, []
    hunt.shrink_deadline, hunt.shrink_evals = time.perf_counter() + hunt.shrink_s, 0

    def body(desc: CaseDesc) -> None:
        if not reached:
            if desc != first:
                return
            reached.append(desc)
        out = hunt.outcome(desc)
        if out is not None and check in out.failed and not hunt.explained(check, desc):
            hunt.last = desc  # one raise site: hypothesis tells failures apart by where they are raised
            raise _Found(check)

    hunt.last = first
    try:
        _runner(hunt.sp, seed, hunt.examples, [Phase.generate, Phase.shrink], body)()
    except _Found:
        pass
    hunt.target = None
    return hunt.last


def search_op(sp: OpSpace, fuse, seed: int = 0, budget_s: Optional[float] = None,
              examples: int = DEFAULT_EXAMPLES, shrink_s: float = DEFAULT_SHRINK_S, use_cache: bool = True,
              probe: bool = True, progress=None, timeout: float = 120.0, device=None) -> OpSearch:
    """Search one op's space under ``fuse``: draws, and each distinct failure shrunk with its boundary."""
    started = time.perf_counter()
    hunt = _Hunt(sp, lambda d: evaluate(d, fuse, use_cache=use_cache, timeout=timeout, device=device), budget_s,
                 examples, progress)
    hunt.shrink_s = shrink_s
    result = OpSearch(sp.name)
    try:
        for desc in draws(sp, seed, examples):
            out = hunt.outcome(desc)
            if out is None:
                break
            new = [c for c in out.failed if not hunt.explained(c, desc)]
            if new and len(hunt.known) < MAX_DEFECTS:
                t0 = time.perf_counter()
                shrunk = _shrink(hunt, seed, desc, new[0])
                defect = Defect(sp.name, new[0], desc, shrunk, hunt.memo[shrunk], shrink_evals=hunt.shrink_evals)
                if probe:
                    _probe(hunt, defect)
                defect.seconds = time.perf_counter() - t0
                hunt.known.append(defect)
                if progress:
                    progress("defect", defect)
    except Exception as exc:  # noqa: BLE001 - a search that breaks is reported with what it found so far
        result.error = f"{type(exc).__name__}: {exc}"
    result.stopped = ("budget" if budget_s is not None and hunt.explore_s >= budget_s else "examples")
    result.draws, result.defects, result.outcomes = hunt.explored, hunt.known, list(hunt.memo.values())
    result.explore_s = hunt.explore_s
    result.seconds = time.perf_counter() - started
    return result


def _probe(hunt: _Hunt, defect: Defect) -> None:
    """Judge one-field variations of the shrunk case on the same check; name the separating traits."""
    hunt.target = defect.check  # probes are charged to the shrink allowance, not to exploration
    hunt.shrink_deadline = max(hunt.shrink_deadline, time.perf_counter() + 15.0)
    hunt.shrink_evals = 0
    failing, passing = [defect.case], []
    for p in boundary.probes(hunt.sp, defect.case):
        out = hunt.outcome(p)
        if out is None:
            break
        status = out.statuses.get(defect.check, "?")
        defect.probes.append((p, status))
        if status in ("fail", "error"):
            failing.append(p)
        elif status == "pass":
            passing.append(p)
    defect.traits, defect.boundary = boundary.explain(failing, passing)
    hunt.target = None


def search(spaces: list, fuse, seed: int = 0, budget_s: Optional[float] = None, examples: int = DEFAULT_EXAMPLES,
           shrink_s: float = DEFAULT_SHRINK_S, use_cache: bool = True, progress=None,
           timeout: float = 120.0, device=None) -> list[OpSearch]:
    """Every op's search; a total ``budget_s`` of exploration is shared out, what a quick op leaves goes to the next.

    Only exploration draws count against it: shrinking and probing a
    failure have their own allowance (``shrink_s`` each), so an op full of
    defects does not starve the ops after it.
    """
    out = []
    for i, sp in enumerate(spaces):
        share = None
        if budget_s is not None:
            left = budget_s - sum(r.explore_s for r in out)
            share = max(0.0, left / (len(spaces) - i))
        out.append(search_op(sp, fuse, seed, share, examples, shrink_s, use_cache, progress=progress,
                             timeout=timeout, device=device))
    return out


def replay_op(op: str, descs: list, fuse, device, use_cache: bool, timeout: float):
    """Judge the committed cases of one op (no drawing, no shrinking), each once, in file order."""
    started = time.perf_counter()
    r = OpSearch(op, stopped="replay")
    r.draws = [evaluate(d, fuse, use_cache=use_cache, timeout=timeout, device=device) for d in dict.fromkeys(descs)]
    r.outcomes, r.seconds = list(r.draws), time.perf_counter() - started
    return r
