"""Random graphs: hypothesis draws a program over the typed op vocabulary.

:func:`programs` is a hypothesis strategy. It keeps a pool of typed values
(inputs, then every statement's results) and repeatedly draws an op rule of
:mod:`harness.graphs.random.ops` and an operand the rule accepts; the rule constructs
the other arguments so the call is valid (no draw is rejected for a shape
error). Each statement is evaluated at once on real tensors (tiny shapes,
microseconds): that gives the exact result types without a hand-written
shape function per op, and in dynamic programs a second evaluation with
another batch size tells which result dims follow the ``export.Dim``. A call
that nevertheless fails eagerly is undone and redrawn (counted in
:data:`STATS`, so a vocabulary bug shows up as a number, not as a silently
smaller graph).

What the rules draw from (hypothesis choices, the pool, makers of inputs,
parameters and buffers of every dtype) is :class:`harness.graphs.random.gen.Gen`.
An operand is mostly a recent value, and half the time an unused later
result of a multi-output statement (topk's indices, a layer norm's rstd)
or unused indices (argmax) when one fits, so every result of such ops is
read. The outputs are the values nothing reads, updates of buffers and
inputs first (an update nothing reads would be pruned with its write-back).

:func:`random_specs` draws graph ``i`` of seed ``s`` from hypothesis'
``ConjectureData`` fed by ``random.Random("passgate:s:i")``: same seed, same
graphs, and graph ``i`` does not depend on how many were asked for.
"""

from __future__ import annotations

import contextlib
import random
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Optional

from hypothesis import strategies as st

from harness.graphs.cases import CaseSpec, ModelInputs
from harness.graphs.quantizers import HAND, patterns_memoized
from harness.graphs.random.gen import BATCHES, Gen
from harness.graphs.random.ops import RULES
from harness.graphs.random.program import Program, Stmt
from harness.graphs.random.types import Emit, Val, is_input, is_input_name

__all__ = ["BATCHES", "MAX_OUTPUTS", "STATS", "REDRAWN_BY_RULE", "INPUT_DTYPES", "programs", "draw_program",
           "spec_of", "random_probes", "program_of", "random_specs", "LowerStat", "lower_stat"]

MAX_OUTPUTS = 6
STATS = {"redrawn": 0, "statements": 0}
REDRAWN_BY_RULE: Counter = Counter()  # rule name -> calls that failed eagerly (which rule has a vocabulary bug)
# A graph input's dtype: float32 most, then every other dtype the edge dialect carries.
INPUT_DTYPES = ["float32"] * 6 + ["float16", "bfloat16", "int64", "bool", "int8", "int16", "int32", "uint8"]
_WEIGHTED = [r for r in RULES for _ in range(r.weight)]
_PROGRAMS: dict[str, Program] = {}  # spec key -> program, for the shrinker


def _evaluate(gen: Gen, emit: Emit) -> Optional[list]:
    """Run the statement in every environment; the results per environment, or None if it fails."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    results = []
    for env in gen.envs:
        ns = {"torch": torch, "nn": nn, "F": F, "self": gen.holder, **env}
        try:  # quiet: var/std over a size-1 dim warns, and that is a legitimate graph
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = eval(emit.expr.format(*emit.args), ns)  # noqa: S307 - our own generated code
        except Exception:  # noqa: BLE001 - an invalid call is undone and redrawn
            return None
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        if not outs or not all(isinstance(t, torch.Tensor) for t in outs):
            return None
        results.append(outs)
    if len(results) == 2 and any(a.dim() != b.dim() for a, b in zip(*results)):
        return None
    return results


def _apply(gen: Gen, rule, v: Val, stmts: list, vals: list) -> bool:
    marks = (len(gen.inputs), len(gen.decls), len(gen.pool), len(gen.buffers), dict(gen.holder._modules),
             dict(gen.holder._parameters), dict(gen.holder._buffers))
    emit = rule.build(gen, v)
    results = _evaluate(gen, emit) if emit is not None else None
    if results is None:  # undo what building the call added
        n_in, n_decl, n_pool, n_buf, mods, params, bufs = marks
        for extra in gen.inputs[n_in:]:
            for env in gen.envs:
                env.pop(extra.name, None)
        del gen.inputs[n_in:], gen.decls[n_decl:], gen.pool[n_pool:], gen.buffers[n_buf:]
        gen.holder._modules, gen.holder._parameters, gen.holder._buffers = mods, params, bufs
        if emit is not None:
            STATS["redrawn"] += 1
            REDRAWN_BY_RULE[rule.name] += 1
        return False
    base = len(vals)
    outs = tuple(f"v{base + i}" for i in range(len(results[0])))
    for i, t in enumerate(results[0]):
        val = _result_val(gen, emit, v, outs[i], t, results[-1][i], i)
        vals.append(val)
        gen.pool.append(val)
        for env, res in zip(gen.envs, results):
            env[outs[i]] = res[i]
    if emit.inplace:  # the mutated value lives on under its new name only
        gen.pool = [p for p in gen.pool if p.name != emit.args[0]]
    _track_state(gen, emit, outs, vals)
    stmts.append(Stmt(outs, emit.expr, tuple(emit.args), emit.inplace))
    STATS["statements"] += 1
    return True


def _track_state(gen: Gen, emit: Emit, outs: tuple, vals: list) -> None:
    """Note results that are a buffer's or input's new value, or may alias one (same type as a state argument)."""
    target = emit.args[0] if emit.args else ""
    if emit.inplace and (target.startswith("self.") or is_input_name(target)):
        gen.state_values.update(outs)
        return
    types = {(v.shape, v.dtype) for v in gen.inputs + vals if v.name in gen.state_values and v.name in emit.args}
    gen.state_values.update(v.name for v in vals[-len(outs):] if (v.shape, v.dtype) in types)


def _result_val(gen: Gen, emit: Emit, v: Val, name: str, t, other, i: int) -> Val:
    """The type of result ``i``: shape and dtype as evaluated, dynamic dims where the two evaluations differ."""
    dyn = tuple(a != b for a, b in zip(t.shape, other.shape))
    if emit.inplace:  # an update of an owned temporary stays owned; of an input or buffer, it aliases state
        target = next((p for p in gen.pool if p.name == emit.args[0]), None)
        owned = target is not None and target.owned and not is_input(target)
    else:
        owned = not emit.view
    high, dim = emit.index[i] if i < len(emit.index) and emit.index[i] else (None, None)
    if high is None and emit.view and v.index_high is not None and str(t.dtype) == "torch.int64":
        high = v.index_high  # a view of indices holds the same values (not necessarily distinct along a dim)
    return Val(name, tuple(t.shape), str(t.dtype).replace("torch.", ""), dyn, owned=owned, index_high=high,
               index_dim=dim)


@st.composite
def programs(draw, name: str = "random", seed: int = 0, min_ops: int = 3, max_ops: int = 16) -> Program:
    """A hypothesis strategy for random programs (see the module docstring)."""
    dynamic = draw(st.integers(0, 3)) == 0
    gen = Gen(draw, seed, dynamic)
    for _ in range(draw(st.integers(1, 3))):
        gen.new_input(draw(st.integers(1, 4)), draw(st.sampled_from(INPUT_DTYPES)))
    stmts: list[Stmt] = []
    vals: list[Val] = []
    target = draw(st.integers(min_ops, max_ops))
    for _ in range(target * 3):
        if len(stmts) >= target:
            break
        rule = draw(st.sampled_from(_WEIGHTED))
        fits = [v for v in gen.pool if rule.accepts(v)]
        if not fits:
            if rule.make is None:
                continue
            fits = [rule.make(gen)]
        v = _operand(draw, fits, stmts)
        _apply(gen, rule, v, stmts, vals)
    if not stmts:
        _apply(gen, next(r for r in RULES if r.name == "cast"), gen.pool[0], stmts, vals)
    outputs = _outputs(draw, stmts, vals)
    program = Program(name, seed, tuple(gen.inputs), tuple(gen.decls), tuple(stmts), tuple(outputs), tuple(vals),
                      gen.batch)
    return program.pruned()


def _operand(draw, fits: list, stmts: list) -> Val:
    """A recent value mostly; half the time an unused later result of a multi-output statement (topk's
    indices, a layer norm's mean) or unused indices (argmax) when one fits, so they are read, not only returned."""
    used = {a for s in stmts for a in s.args}
    later = {o for s in stmts if len(s.outs) > 1 for o in s.outs[1:] if o not in used}
    unused = [v for v in fits if v.name in later or (v.index_high is not None and v.name[0] == "v"
                                                     and v.name not in used)]
    if unused and draw(st.booleans()):
        return draw(st.sampled_from(unused))
    return draw(st.sampled_from(fits[-6:] if draw(st.integers(0, 3)) else fits))


def _outputs(draw, stmts: list, vals: list) -> list:
    """The values nothing uses (the last few), and maybe one used one; updates of state come first, so the
    program keeps them (an unused update of a buffer or an input would be pruned with its statement)."""
    used = {a for s in stmts for a in s.args}
    mutated = {s.args[0] for s in stmts if s.inplace}
    leaves = [v.name for v in vals if v.name not in used and v.name not in mutated]
    extra = [v.name for v in vals if v.name not in leaves and v.name not in mutated]
    state = {s.outs[0] for s in stmts if s.inplace and (s.args[0].startswith("self.") or is_input_name(s.args[0]))}
    first = [n for n in leaves if n in state][-MAX_OUTPUTS // 2:]
    rest = [n for n in leaves if n not in first]
    outputs = first + rest[max(0, len(rest) - (MAX_OUTPUTS - len(first))):]
    if extra and draw(st.booleans()):
        outputs.append(draw(st.sampled_from(extra)))
    return outputs


def _provider():
    """Hypothesis' own provider, minus its "constants found in local source code".

    With probability 0.05 per integer it returns a number that appears in any
    project module imported so far (a user's pass file included), so the same
    seed would draw other graphs depending on what the run had imported.
    """
    from hypothesis.internal.conjecture.providers import HypothesisProvider

    class SeededProvider(HypothesisProvider):
        def _maybe_draw_constant(self, *args, **kwargs):
            return None

    return SeededProvider


def draw_program(seed: int, index: int) -> Program:
    """Graph ``index`` of ``seed``: hypothesis' ConjectureData fed by a seeded Random."""
    from hypothesis.errors import StopTest
    from hypothesis.internal.conjecture.data import ConjectureData

    name = f"random_s{seed}_{index:03d}"
    for attempt in range(3):  # a draw uses ~200 choices of hypothesis' 8 KiB buffer: overrun is not expected
        data = ConjectureData(random=random.Random(f"passgate:{seed}:{index}" + (f":{attempt}" if attempt else "")),
                              provider=_provider())
        try:
            return data.draw(programs(name=name, seed=seed * 100_003 + index))
        except StopTest:
            continue
    raise RuntimeError(f"could not draw {name}: hypothesis' choice buffer overran three times")


def spec_of(program: Program, source: str = "random") -> CaseSpec:
    def build() -> ModelInputs:
        with patterns_memoized() if program.quantizer else contextlib.nullcontext():
            model, inputs, dynamic_shapes = program.build_objects()
        return ModelInputs(model, inputs, dynamic_shapes)

    ops = sorted({s.expr.split("(")[0] for s in program.stmts})
    tags = {"random"} | ({"dynamic"} if program.dynamic else set())
    tags |= {"quantized", "int8"} if program.quantizer else set()  # the passes for quantized graphs run on it
    how = {"": "", HAND: ", quantized by hand"}.get(program.quantizer, f", PT2E-quantized ({program.quantizer})")
    spec = CaseSpec(name=program.name, source=source, build=build, definition=program.code(), tags=frozenset(tags),
                    description=f"{program.size} statements, {len(program.inputs)} inputs, "
                                f"{len(program.outputs)} outputs{', dynamic batch' if program.dynamic else ''}"
                                f"{how}: " + " ".join(ops))
    _PROGRAMS[spec.key] = program
    return spec


def random_probes(quantized: bool) -> list[CaseSpec]:
    """Specs tagged as random cases are (static and dynamic; float, or quantized): what a catalog entry's
    ``applies`` is asked to know whether it runs on random graphs at all. Nothing is built."""
    extra = {"quantized", "int8"} if quantized else set()
    return [CaseSpec("random_probe", "random", lambda: None, "", frozenset(tags | extra))
            for tags in ({"random"}, {"random", "dynamic"})]


def program_of(spec: CaseSpec) -> Optional[Program]:
    """The program a random case was built from (None for other sources)."""
    return _PROGRAMS.get(spec.key)


def random_specs(count: int, seed: int) -> list[CaseSpec]:
    return [spec_of(draw_program(seed, i)) for i in range(count)]


@dataclass
class LowerStat:
    name: str
    ok: bool
    seconds: float
    edge_ops: dict  # op -> count in the edge program (empty when it failed)
    error: str = ""


def lower_stat(spec: CaseSpec) -> LowerStat:
    """Export and lower ``spec`` afresh (no cache), timing it: the generator's success measure."""
    import time

    from harness.graphs.cache import roundtrip
    from harness.graphs.cases import export_and_lower
    from harness.graphs.op_coverage import program_ops

    started = time.perf_counter()
    try:
        _, exported, edge = export_and_lower(spec)
        roundtrip(edge)
    except Exception as exc:  # noqa: BLE001 - a draw that does not lower is what we measure
        first = (str(exc).strip().splitlines() or [""])[0]
        return LowerStat(spec.name, False, time.perf_counter() - started, {}, f"{type(exc).__name__}: {first[:200]}")
    ops = program_ops(exported) | program_ops(edge)
    return LowerStat(spec.name, True, time.perf_counter() - started, ops)
