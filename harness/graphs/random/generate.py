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

:func:`random_specs` draws graph ``i`` of seed ``s`` from hypothesis'
``ConjectureData`` fed by ``random.Random("passgate:s:i")``: same seed, same
graphs, and graph ``i`` does not depend on how many were asked for.
"""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass
from typing import Callable, Optional

from hypothesis import strategies as st

from harness.graphs.cases import CaseSpec, ModelInputs
from harness.graphs.random.ops import RULES
from harness.graphs.random.program import Decl, Program, Stmt
from harness.graphs.random.types import FLOATS, Emit, Val

__all__ = ["BATCHES", "MAX_OUTPUTS", "STATS", "programs", "draw_program", "spec_of", "program_of", "random_specs",
           "LowerStat", "lower_stat"]

BATCHES = (3, 5)  # sample size of the dynamic dim, and the size of the second (probing) evaluation
MAX_OUTPUTS = 6
STATS = {"redrawn": 0, "statements": 0}
_WEIGHTED = [r for r in RULES for _ in range(r.weight)]
_PROGRAMS: dict[str, Program] = {}  # spec key -> program, for the shrinker


class _Gen:
    """What op rules draw from: hypothesis choices, the value pool, makers of new arguments."""

    def __init__(self, draw: Callable, seed: int, dynamic: bool):
        import torch

        self.draw = draw
        self.seed = seed
        self.batch = BATCHES[0] if dynamic else None
        self.inputs: list[Val] = []
        self.decls: list[Decl] = []
        self.pool: list[Val] = []
        self.holder = torch.nn.Module()  # parameters and modules, for evaluation
        self.envs: list[dict] = [{} for _ in (BATCHES if dynamic else BATCHES[:1])]
        self.torch_gen = torch.Generator().manual_seed(seed)

    # -------------------------------------------------------- hypothesis choices
    def int(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def choice(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def flip(self) -> bool:
        return self.draw(st.booleans())

    def permutation(self, seq) -> list:
        return self.draw(st.permutations(seq))

    def size(self) -> int:
        return self.draw(st.integers(1, 7))

    # -------------------------------------------------------- new arguments
    def new_input(self, rank: int, dtype: str, static_tail: bool = False, index: bool = False,
                  shape: Optional[tuple] = None, dyn: Optional[tuple] = None) -> Val:
        import torch

        if shape is None:
            shape = tuple(self.size() for _ in range(rank))
            dyn = (False,) * rank
            if self.batch is not None and rank >= 2 and not index:
                shape, dyn = (self.batch,) + shape[1:], (True,) + (False,) * (rank - 1)
        v = Val(f"x{len(self.inputs)}", tuple(shape), dtype, tuple(dyn or (False,) * len(shape)),
                index_high=8 if dtype == "int64" else None)
        self.inputs.append(v)
        self.pool.append(v)
        for env, b in zip(self.envs, BATCHES):
            real = tuple(b if f else s for s, f in zip(v.shape, v.dyn))
            env[v.name] = _sample(torch, real, dtype, self.torch_gen)
        return v

    def _decl(self, prefix: str, lines: list[str]) -> str:
        name = f"{prefix}{len(self.decls)}"
        d = Decl(name, tuple(lines))
        self.decls.append(d)
        import torch
        from torch import nn
        from torch.nn import functional as F

        ns = {"torch": torch, "nn": nn, "F": F, "self": self.holder, "g": self.torch_gen}
        for text in d.lines:
            exec(text.format(m=d.ref), ns)  # noqa: S102 - our own generated code
        return d.ref

    def param(self, shape: tuple, dtype: str = "float32") -> str:
        init = {"float32": "torch.randn({s}, generator=g)", "int64": "torch.randint(-3, 4, {s}, generator=g)",
                "bool": "torch.randint(0, 2, {s}, generator=g).bool()"}.get(dtype, f"torch.randn({{s}}, generator=g).to(torch.{dtype})")
        text = init.format(s=_shape(shape))
        if dtype in FLOATS and self.flip():
            return self._decl("p", [f"{{m}} = nn.Parameter({text})"])
        return self._decl("b", [f'self.register_buffer("b{len(self.decls)}", {text})'])

    def buffer_index(self, n: int, high: int) -> str:
        idx = [self.int(0, high - 1) for _ in range(n)]
        return self._decl("b", [f'self.register_buffer("b{len(self.decls)}", torch.tensor({idx!r}))'])

    def module(self, ctor: str, init: Optional[list] = None) -> str:
        return self._decl("m", [f"{{m}} = {ctor}", *(init or [])])

    # -------------------------------------------------------- partners
    def partner(self, v: Val, dtypes=("float32",), scalar_ok: bool = False, into: bool = False,
                same_dtype_only: bool = False) -> str:
        """A second operand that broadcasts with ``v`` (into ``v``'s shape when ``into``)."""
        dtype = v.dtype if v.dtype in dtypes else dtypes[0]
        kind = self.int(0, 5)
        if scalar_ok and kind == 0:
            return repr(self.choice([2, -1, 3]) if dtype == "int64" else self.choice([0.5, -1.25, 2.0, 3]))
        fits = [u for u in self.pool if u.dtype == dtype and u.name != v.name and _broadcasts(v, u, into)]
        if fits and kind <= 3:
            return self.choice(fits[-8:]).name
        shape, dyn = [], []
        keep = self.int(1, v.rank) if v.rank else 0
        for d in range(v.rank - keep, v.rank):
            if v.is_dyn(d):  # a parameter broadcasts over the dynamic dim; a new input shares it
                shared = not (kind == 4 or into)
                shape.append(v.shape[d] if shared else 1)
                dyn.append(shared)
            elif v.shape[d] == 1 and not into and self.flip():
                shape.append(self.size())
                dyn.append(False)
            else:
                shape.append(v.shape[d] if self.int(0, 2) else 1)
                dyn.append(False)
        if any(dyn):
            return self.new_input(len(shape), dtype, shape=tuple(shape), dyn=tuple(dyn)).name
        if kind == 4 or not v.rank:
            return self.param(tuple(shape), dtype)
        return self.new_input(len(shape), dtype, shape=tuple(shape), dyn=tuple(dyn)).name

    def partner_cat(self, v: Val, d: int) -> str:
        fits = [u for u in self.pool if u.dtype == v.dtype and u.rank == v.rank and u.name != v.name
                and all(u.shape[i] == v.shape[i] and u.is_dyn(i) == v.is_dyn(i) for i in range(v.rank) if i != d)
                and not u.is_dyn(d)]
        if fits and self.flip():
            return self.choice(fits[-8:]).name
        shape = list(v.shape)
        shape[d] = self.size()
        if any(v.dyn):
            return self.new_input(v.rank, v.dtype, shape=tuple(shape), dyn=v.dyn).name
        return self.param(tuple(shape), v.dtype)

    def partner_same(self, v: Val) -> str:
        fits = [u for u in self.pool if (u.shape, u.dtype, u.dyn) == (v.shape, v.dtype, v.dyn) and u.name != v.name]
        if fits and self.flip():
            return self.choice(fits[-8:]).name
        if any(v.dyn):
            return self.new_input(v.rank, v.dtype, shape=v.shape, dyn=v.dyn).name
        return self.param(v.shape, v.dtype)


def _shape(shape: tuple) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _sample(torch, shape, dtype: str, gen):
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=gen).bool()
    if dtype == "int64":
        return torch.randint(0, 8, shape, generator=gen)
    return torch.randn(shape, generator=gen).to(getattr(torch, dtype))


def _broadcasts(v: Val, u: Val, into: bool) -> bool:
    if u.rank > v.rank and into:
        return False
    for i in range(1, min(v.rank, u.rank) + 1):
        a, b = v.shape[-i], u.shape[-i]
        ad, bd = v.is_dyn(v.rank - i), u.is_dyn(u.rank - i)
        if ad != bd:
            if (ad and b != 1) or (bd and (a != 1 or into)):
                return False
            continue
        if a != b and not (b == 1 or (a == 1 and not into)):
            return False
    if u.rank > v.rank and any(u.dyn[: u.rank - v.rank]):
        return False
    return True


def _evaluate(gen: _Gen, emit: Emit) -> Optional[list]:
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


def _apply(gen: _Gen, rule, v: Val, stmts: list, vals: list) -> bool:
    marks = (len(gen.inputs), len(gen.decls), len(gen.pool), dict(gen.holder._modules), dict(gen.holder._parameters),
             dict(gen.holder._buffers))
    emit = rule.build(gen, v)
    results = _evaluate(gen, emit) if emit is not None else None
    if results is None:  # undo what building the call added
        n_in, n_decl, n_pool, mods, params, bufs = marks
        for extra in gen.inputs[n_in:]:
            for env in gen.envs:
                env.pop(extra.name, None)
        del gen.inputs[n_in:], gen.decls[n_decl:], gen.pool[n_pool:]
        gen.holder._modules, gen.holder._parameters, gen.holder._buffers = mods, params, bufs
        if emit is not None:
            STATS["redrawn"] += 1
        return False
    base = len(vals)
    outs = tuple(f"v{base + i}" for i in range(len(results[0])))
    first = results[0]
    for i, t in enumerate(first):
        other = results[-1][i]
        dyn = tuple(a != b for a, b in zip(t.shape, other.shape))
        owned = (not emit.view and not emit.inplace) or (emit.inplace and v.owned)
        val = Val(outs[i], tuple(t.shape), str(t.dtype).replace("torch.", ""), dyn, owned=owned)
        vals.append(val)
        gen.pool.append(val)
        for env, res in zip(gen.envs, results):
            env[outs[i]] = res[i]
    if emit.inplace:  # the mutated value lives on under its new name only
        gen.pool = [p for p in gen.pool if p.name != emit.args[0]]
    stmts.append(Stmt(outs, emit.expr, tuple(emit.args), emit.inplace))
    STATS["statements"] += 1
    return True


@st.composite
def programs(draw, name: str = "random", seed: int = 0, min_ops: int = 3, max_ops: int = 16) -> Program:
    """A hypothesis strategy for random programs (see the module docstring)."""
    dynamic = draw(st.integers(0, 3)) == 0
    gen = _Gen(draw, seed, dynamic)
    for _ in range(draw(st.integers(1, 3))):
        gen.new_input(draw(st.integers(1, 4)), draw(st.sampled_from(["float32"] * 6 + ["float16", "bfloat16",
                                                                                        "int64", "bool"])))
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
        v = draw(st.sampled_from(fits[-6:] if draw(st.integers(0, 3)) else fits))
        _apply(gen, rule, v, stmts, vals)
    if not stmts:
        _apply(gen, next(r for r in RULES if r.name == "cast"), gen.pool[0], stmts, vals)
    used = {a for s in stmts for a in s.args}
    mutated = {s.args[0] for s in stmts if s.inplace}
    leaves = [v.name for v in vals if v.name not in used and v.name not in mutated]
    extra = [v.name for v in vals if v.name not in leaves and v.name not in mutated]
    outputs = leaves[-MAX_OUTPUTS:]
    if extra and draw(st.booleans()):
        outputs.append(draw(st.sampled_from(extra)))
    program = Program(name, seed, tuple(gen.inputs), tuple(gen.decls), tuple(stmts), tuple(outputs), tuple(vals),
                      gen.batch)
    return program.pruned()


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
        model, inputs, dynamic_shapes = program.build_objects()
        return ModelInputs(model, inputs, dynamic_shapes)

    ops = sorted({s.expr.split("(")[0] for s in program.stmts})
    spec = CaseSpec(name=program.name, source=source, build=build, definition=program.code(),
                    tags=frozenset({"random", "dynamic"} if program.dynamic else {"random"}),
                    description=f"{program.size} statements, {len(program.inputs)} inputs, "
                                f"{len(program.outputs)} outputs{', dynamic batch' if program.dynamic else ''}: "
                                + " ".join(ops))
    _PROGRAMS[spec.key] = program
    return spec


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
