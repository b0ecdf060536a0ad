"""``passgate fuzz --contexts``: search (op, context) combinations for each pass, keep what is new, shrink failures.

For each target (a ``--pass`` or a catalog entry):

1. *what it rewrites*: the target runs on the baseline graphs (``builtin``)
   under :func:`harness.fuzz.measure.observe`; the ops it removes (the ``-op``
   change atoms of its ``runs`` records) are mapped to op forms of
   :data:`harness.fuzz.contexts.FORMS`, and two ops removed from the same graph
   make a short chain (``permute>reshape``). A pass that removes no op there
   gets every form;
2. *the plain graph of an op* (the first context of every family) is measured
   first for the first op, and for any other op before a violation on it counts:
   a violation there is the pass's trouble with the op itself, not with a context;
3. *the search* is hypothesis' own ``find`` over :func:`harness.fuzz.contexts.combos`
   with a seeded ``random``: every draw is built (:mod:`harness.fuzz.contexts_build`),
   exported, lowered and measured in a forked child (the pass under coverage for
   its arcs and change atoms, then every check for the verdicts); the condition
   records what the draw brought and is true when the target shows a must-level
   violation the plain graph of that op does not. Hypothesis then shrinks the
   combination toward the plain contexts (its choices are ``sampled_from`` lists,
   plain first), so the failure keeps only the contexts it needs; the search
   goes on with the rest of the budget for other failures;
4. a draw is *kept* when it reaches an arc of the target's files no earlier
   graph reached, shows a verdict pattern (the set of (check, status)) not seen
   before, or a ``keep_reason(target, graph)`` hook says why (the mutation engine's:
   it kills a surviving mutant). Kept graphs are written as a corpus folder
   (``passgate corpus distill --from DIR`` takes them into the gate's corpus);
5. each failure is checked through the session (the report, exit status 1),
   its program shrunk statement by statement (:func:`harness.reduce.shrink.shrink`)
   and given a standalone ``repro_*.py`` (:func:`harness.reduce.repro.write_repro`).

Determinism: same seed, same draws, same verdicts, same kept graphs: the
search's ``random`` is seeded from the seed and the target's name, draws are
measured one at a time in children forked from the same parent, and the
budget in draws (``--draws``) is exact; a time budget only decides when to stop.
"""

from __future__ import annotations

import contextlib
import random
import re
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from harness.core.config import RunConfig
from harness.fuzz.contexts import FORMS, Combo, combos, forms_for_atom, plain
from harness.fuzz.contexts_build import build_program

__all__ = ["ContextGraph", "Seen", "KeptContext", "Failure", "KeepReason", "source_forms", "qdq_chains", "rewritten_items", "observe_context",
           "ContextSearch"]

KeepReason = Callable[[object, "ContextGraph"], Optional[str]]
"""``keep_reason(target, graph)``: why to keep a drawn graph for a reason of the caller's (``passgate fuzz --contexts
--mutants``: it kills a mutant of the target that the suite lets survive, :class:`harness.mutate.hunt.Hunt`)."""
MAX_CHAINS = 4  # chains of two co-removed ops per target
MAX_SOURCE_CHAINS = 16  # chains around the Q/DQ ops a pass's source names, per target
_THREES = 4  # of which chains of two ops and a Q/DQ op
_MOVABLE = 6  # the ops of those chains: the first few single-operand ops the source names


@contextlib.contextmanager
def _without_local_constants():
    """Hypothesis' provider draws, with probability 0.05 per choice, a constant found in the source of a local
    module imported so far (the pass under test's own file included), so editing the pass would change what a
    seed draws. The random generator's draws use a provider without them (harness.graphs.random.generate);
    ``find`` takes no provider, so around it the provider's constant draw is switched off the same way."""
    from hypothesis.internal.conjecture.providers import HypothesisProvider

    original = HypothesisProvider._maybe_draw_constant
    HypothesisProvider._maybe_draw_constant = lambda self, *args, **kwargs: None
    try:
        yield
    finally:
        HypothesisProvider._maybe_draw_constant = original


@dataclass(frozen=True)
class ContextGraph:
    """A drawn combination and its program."""

    name: str
    combo: Combo
    program: object  # harness.graphs.random.program.Program

    @property
    def code(self) -> str:
        return self.program.code()


@dataclass
class Seen:
    """What one graph made one target do."""

    name: str
    ok: bool = True
    error: str = ""
    arcs: frozenset = frozenset()
    atoms: frozenset = frozenset()
    verdicts: frozenset = frozenset()  # (check, status)
    violations: dict = field(default_factory=dict)  # check -> first line of its message


@dataclass
class KeptContext:
    graph: ContextGraph
    draw: int
    reasons: list
    seen: Seen


@dataclass
class Failure:
    graph: ContextGraph
    check: str
    message: str
    draws: int  # draws until it was first met


# an op with an overload (``aten.add.Tensor``) or as an overload packet (``exir_ops.edge.aten.permute_copy``: sets
# of ops a pass treats alike, Cadence's trivially quantizable ops among them)
_SOURCE_OP = re.compile(r"\b(?:aten|edge|exir_ops\.edge\.aten|torch\.ops\.aten)\.(\w+)(?:\.(?:default|Tensor|Scalar|int|"
                        r"dim|dims|self|out|\w+))?\b")


# the Q/DQ ops, named by namespace (``exir_ops.edge.quantized_decomposed.quantize_per_tensor``, with or without
# an overload), which the aten pattern above would read as an op called ``quantized_decomposed``
_SOURCE_QDQ = re.compile(r"\b(?:quantized_decomposed|cadence)\.((?:de)?quantize_per_(?:tensor|channel))\b")


def source_forms(files) -> list:
    """The forms of the ops a pass's source names (``exir_ops.edge.aten.permute_copy.default``, ``aten.add.Tensor``):
    what it matches, whether or not the baseline graphs made it rewrite them."""
    keys: list = []
    for path in files:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError:
            continue
        for name in _SOURCE_OP.findall(text) + _SOURCE_QDQ.findall(text):
            keys += [k for k in forms_for_atom(f"aten.{name}.default") if k not in keys]
    return keys


def rewritten_items(target_name: str, observations: list, files=()) -> tuple:
    """The op items the target rewrites on the baseline graphs, then those its source names (``files``): single
    forms, then chains of two. Every form when neither names one."""
    singles: list = []
    chains: list = []
    for obs in observations:
        removed = [a for a in sorted(obs.atoms.get(target_name, ())) if a.startswith("-")]
        keys = list(dict.fromkeys(k for a in removed for k in forms_for_atom(a[1:])))
        singles += [k for k in keys if k not in singles]
        for first, second in zip(keys, keys[1:]):
            pair = (first, second)
            if not FORMS[second].binary and pair not in chains and len(chains) < MAX_CHAINS:
                chains.append(pair)
    named = source_forms(files)
    singles += [k for k in named if k not in singles]
    if not singles:
        singles = list(FORMS)
    chains += [c for c in qdq_chains(named) if c not in chains]
    return tuple((k,) for k in singles) + tuple(chains)


def qdq_chains(named: list) -> list:
    """Chains around the Q/DQ ops a source names: one or two of the other ops it names before a quantize, after a
    dequantize. A pass that moves a quantize above its operand's definition (or a dequantize below its use) walks
    such chains; the ops one at a time never give it one to walk. The ops of a chain are those a quantized tensor
    can pass through (they take int8), the first few the source names."""
    from harness.fuzz.contexts import QDQ_FORMS

    movable = [k for k in named if k not in QDQ_FORMS and not FORMS[k].binary and "int8" in FORMS[k].dtypes]
    movable = movable[:_MOVABLE]
    qs = [q for q in named if q in QDQ_FORMS]

    def chain(q: str, ops: tuple) -> tuple:
        return (q,) + ops if q.startswith("de") else ops + (q,)

    twos = [chain(q, (m,)) for m in movable for q in qs]
    threes = [chain(q, pair) for pair in zip(movable[::2], movable[1::2]) for q in qs]
    return twos[:MAX_SOURCE_CHAINS - _THREES] + threes[:_THREES]


def observe_context(target, graph: ContextGraph, config: RunConfig, strict: bool = False) -> Seen:
    """Lower ``graph``, measure the target on it under coverage, then run every check (in the calling process)."""
    from harness.check.runner import check_pass_on_case
    from harness.fuzz.measure import lower_fresh, measure
    from harness.graphs.random.generate import spec_of

    try:
        case = lower_fresh(spec_of(graph.program, source="contexts"))
    except Exception as exc:  # noqa: BLE001 - a combination that does not lower is counted, not kept
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        return Seen(graph.name, ok=False, error=f"does not lower: {type(exc).__name__}: {first}")
    arcs, atoms, _failure = measure(target, case, config)
    results = check_pass_on_case(target.loaded, case, replace(config, isolate=False, skip_checks=target.skip_checks))
    return Seen(graph.name, arcs=arcs, atoms=atoms, verdicts=frozenset((r.check, r.status.value) for r in results),
                violations={r.check: (r.message.splitlines() or [""])[0][:200] for r in results
                            if r.is_violation(strict)})


@dataclass
class ContextSearch:
    """The search for one target (see the module docstring)."""

    target: object  # harness.fuzz.targets.Target
    items: tuple
    seed: int = 0
    config: RunConfig = field(default_factory=RunConfig)
    strict: bool = False
    flows: tuple = ()
    isolate: bool = True
    max_draws: int = 120
    seconds: float = 180.0
    shrink_seconds: float = 45.0
    limit: float = 300.0
    base_arcs: frozenset = frozenset()
    keep_reason: Optional[KeepReason] = None
    note: Callable[[str], None] = lambda message: None
    progress_every: float = 15.0  # seconds between progress lines

    def __post_init__(self):
        self.arcs: set = set(self.base_arcs)
        self.patterns: set = set()
        self.kept: list[KeptContext] = []
        self.failures: list[Failure] = []
        self.plain_violations: dict = {}
        self.draws = self.not_built = self.not_lowered = 0
        self._cache: dict = {}
        self._graphs: dict = {}
        self._hunting: Optional[set] = None  # while hypothesis shrinks a failure: the checks it must keep failing
        self._found: set = set()
        self._last_note = time.monotonic()

    # ------------------------------------------------------------ one draw
    def graph(self, combo: Combo) -> Optional[ContextGraph]:
        if combo not in self._graphs:
            slug = re.sub(r"[^a-z0-9]+", "", self.target.name.rsplit(".", 1)[-1].lower())[:24]
            name = f"ctx_s{self.seed}_{slug}_{len(self._graphs):04d}"
            program = build_program(combo, name, self.seed)
            self._graphs[combo] = ContextGraph(program.name, combo, program) if program is not None else None
        return self._graphs[combo]

    def seen(self, combo: Combo) -> Optional[Seen]:
        """The target on ``combo``'s graph, measured in a forked child (once per combination)."""
        from harness.fuzz.workers import evaluate

        if combo not in self._cache:
            graph = self.graph(combo)
            if graph is None:
                self._cache[combo] = None
            else:
                (got,) = evaluate([graph], lambda g: observe_context(self.target, g, self.config, self.strict),
                                  lambda g, why: Seen(g.name, ok=False, error=why), 1, self.isolate, self.limit)
                self._cache[combo] = got
        return self._cache[combo]

    def _record(self, combo: Combo, seen: Optional[Seen]) -> None:
        self.draws += 1
        if time.monotonic() - self._last_note >= self.progress_every:
            self._last_note = time.monotonic()
            self.note(self.progress())
        if seen is None:
            self.not_built += 1
            return
        if not seen.ok:
            if seen.error.startswith("does not lower"):
                self.not_lowered += 1
                return
            seen.violations = {"runs": seen.error}  # the measuring child died: the pass crashed the process
        graph = self._graphs[combo]
        reasons = []
        new_arcs = seen.arcs - self.arcs
        if new_arcs:
            reasons.append(f"+{len(new_arcs)} arcs")
        if seen.verdicts and seen.verdicts not in self.patterns:
            reasons.append("verdicts " + " ".join(f"{c}:{s}" for c, s in sorted(seen.verdicts) if s != "pass"))
        self.arcs |= seen.arcs
        self.patterns.add(seen.verdicts)
        if self.keep_reason is not None:
            why = self.keep_reason(self.target, graph)
            if why:
                reasons.append(why)
        if reasons:
            self.kept.append(KeptContext(graph, self.draws, reasons, seen))
            self.note(f"{self.target.name}: kept {graph.name} (draw {self.draws}) {combo.label}: {'; '.join(reasons)}")

    def _plain_checks(self, item: tuple) -> set:
        """The violations of ``item``'s plain graph (measured, and counted as a draw, the first time asked)."""
        if item not in self.plain_violations:
            combo = plain(item)
            fresh = combo not in self._cache
            seen = self.seen(combo)
            if fresh:
                self._record(combo, seen)
            self.plain_violations[item] = set(seen.violations) if seen is not None and seen.ok else set()
        return self.plain_violations[item]

    def _new_violations(self, combo: Combo, seen: Optional[Seen]) -> set:
        if seen is None or (not seen.ok and seen.error.startswith("does not lower")) or not seen.violations:
            return set()
        return set(seen.violations) - self._plain_checks(combo.op) - self._found

    # ------------------------------------------------------------ the search
    def _condition(self, deadline: float, shrink_deadline: list) -> Callable[[Combo], bool]:
        def condition(combo: Combo) -> bool:
            if self._hunting is not None:  # hypothesis is shrinking: does this one still fail the same way?
                if combo not in self._cache and time.monotonic() > shrink_deadline[0]:
                    return False
                return bool(self._new_violations(combo, self.seen(combo)) & self._hunting)
            if combo in self._cache:
                return bool(self._new_violations(combo, self._cache[combo]))
            if self.draws >= self.max_draws or time.monotonic() > deadline:
                return False
            seen = self.seen(combo)
            self._record(combo, seen)
            new = self._new_violations(combo, seen)
            if new:
                self._hunting = new
                shrink_deadline[0] = time.monotonic() + self.shrink_seconds
                self.note(f"{self.target.name}: {combo.label} fails {', '.join(sorted(new))} (draw {self.draws}); "
                          "shrinking the contexts")
            return bool(new)
        return condition

    def run(self) -> None:
        from hypothesis import HealthCheck, Phase, find, settings
        from hypothesis.errors import NoSuchExample, Unsatisfiable

        deadline = time.monotonic() + self.seconds
        self._plain_checks(self.items[0])  # the plain graph of the first op: the search's first draw
        strategy = combos(self.items, self.flows)
        rounds = 0
        while self.draws < self.max_draws and time.monotonic() < deadline:
            self._hunting, shrink_deadline = None, [0.0]
            quiet = settings(database=None, deadline=None, max_examples=max(1, 2 * (self.max_draws - self.draws)),
                             suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink])
            rng = random.Random(f"passgate:contexts:{self.seed}:{self.target.name}:{rounds}")
            rounds += 1
            try:
                with _without_local_constants():
                    found = find(strategy, self._condition(deadline, shrink_deadline), settings=quiet, random=rng)
            except (NoSuchExample, Unsatisfiable):
                break
            seen = self._cache[found]
            for check in sorted(self._new_violations(found, seen) & self._hunting):
                self.failures.append(Failure(self._graphs[found], check, seen.violations[check], self.draws))
                self._found.add(check)
                self.note(f"{self.target.name}: shrunk to {found.label}: {check}: {seen.violations[check]}")
        self._hunting = None

    def progress(self) -> str:
        return (f"{self.target.name}: {self.draws} draws ({self.not_built} not built, {self.not_lowered} not "
                f"lowered), {len(self.kept)} kept, {len(self.failures)} failure(s), {len(self.arcs)} arcs")
