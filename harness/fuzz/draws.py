"""Fuzz draws: random programs as replayable hypothesis choice sequences, named by how they were made.

A *fresh* draw is exactly ``draw_program(seed, i)`` of
:mod:`harness.graphs.random.generate`, so it keeps its name
``random_s<seed>_<iii>`` and ``passgate graphs --show`` prints it. Beside the
program we keep the choice sequence hypothesis' ``ConjectureData`` recorded
while drawing it (here: integers and booleans), replayed by drawing once more
with the same seeded ``Random`` and provider; a replay that does not give the
very same program (the generator changed how it seeds a draw) leaves the
draw without choices, so it is simply never mutated.

A *mutant* is mutation ``k`` of a kept draw ``P``, named ``P_m<k>``: the
parent's choices edited by a ``random.Random`` seeded with that name, fed
back as ``ConjectureData(prefix=...)``. Choices that no longer fit where they
land (a different op rule was drawn upstream) become the simplest choice
that fits, which is hypothesis' own misalignment rule, and once the prefix
runs out the draw continues from the same seeded ``Random``. So the name is
the recipe: :func:`by_name` rebuilds ``random_s0_012_m3_m1`` from nothing,
in any process, without the fuzz run that found it. Two edits:

- *tail*: keep the first choices (the inputs, their dtypes, whether the batch
  is dynamic, the first statements) and draw the rest afresh;
- *point*: change one to four choices in place and keep the others, so most
  of the program survives around a different op, operand or size.

A *quantized* draw is a draw put through a PT2E quantization flow
(:mod:`harness.graphs.quantizers`), named ``<draw>_q<flow>``
(``random_s0_012_m3_qxnnpack``): the passes for quantized graphs run on it.
Its mutants edit the float program and go through the same flow.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Optional

from harness.graphs.random.program import Program

__all__ = ["NAME", "Draw", "fresh", "quantized", "mutant", "by_name", "is_fuzz_name"]

NAME = re.compile(r"^random_s(-?\d+)_(\d+)((?:_m\d+)*)(?:_q([a-z][a-z0-9]*))?$")
_SEED_STRIDE = 100_003  # program seed of graph i of seed s: s * stride + i (harness.graphs.random.generate)


@dataclass(frozen=True)
class Draw:
    """A drawn program, its name, and the choices that replay it (empty: it cannot be mutated)."""

    name: str
    program: Program
    choices: tuple = ()  # ((choice type, value, constraints), ...)
    parent: str = ""  # the draw this one mutates ("" for a fresh draw)

    @property
    def code(self) -> str:
        return self.program.code()

    @property
    def flow(self) -> str:
        """The quantization flow the program goes through ("" for a float draw)."""
        return self.program.quantizer


def is_fuzz_name(name: str) -> bool:
    return NAME.match(name) is not None


def _provider():
    """Hypothesis' provider without "constants found in local source code" (the same as the generator's:
    with them, what a run had imported would change the draws)."""
    from hypothesis.internal.conjecture.providers import HypothesisProvider

    class SeededProvider(HypothesisProvider):
        def _maybe_draw_constant(self, *args, **kwargs):
            return None

    return SeededProvider


def _run(name: str, program_seed: int, rng: random.Random, prefix=None) -> Optional[tuple[Program, tuple]]:
    """Draw one program through ``ConjectureData``; (program, its choices), or None when the draw overran."""
    from hypothesis.errors import StopTest
    from hypothesis.internal.conjecture.data import ConjectureData

    from harness.graphs.random.generate import programs

    data = ConjectureData(random=rng, provider=_provider(), prefix=prefix)
    try:
        program = data.draw(programs(name=name, seed=program_seed))
    except StopTest:
        return None
    return program, tuple((n.type, n.value, dict(n.constraints)) for n in data.nodes)


def fresh(seed: int, index: int) -> Draw:
    """Graph ``index`` of ``seed``: ``draw_program``'s program, with its choices when a replay reproduces it."""
    from harness.graphs.random.generate import draw_program

    program = draw_program(seed, index)
    for attempt in range(3):  # draw_program's own retry on an overrun, with the same seeds
        rng = random.Random(f"passgate:{seed}:{index}" + (f":{attempt}" if attempt else ""))
        got = _run(program.name, seed * _SEED_STRIDE + index, rng)
        if got is not None:
            break
    same = got is not None and got[0].code() == program.code()
    return Draw(program.name, program, got[1] if same else ())


def _other(kind: str, value, constraints: dict, rng: random.Random):
    """Another value a choice of this kind and constraints allows (the value itself when there is none)."""
    if kind == "boolean":
        return not value
    if kind == "integer":
        lo, hi = constraints.get("min_value"), constraints.get("max_value")
        if lo is not None and hi is not None and hi > lo:
            return rng.randint(lo, hi)
    return value


def edited(choices: tuple, rng: random.Random) -> list:
    """The values of ``choices`` after one tail or point edit (see the module docstring)."""
    values = [v for _, v, _ in choices]
    if len(values) > 1 and rng.random() < 0.35:
        return values[: rng.randrange(1, len(values))]
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(values))
        kind, _, constraints = choices[i]
        values[i] = _other(kind, values[i], constraints, rng)
    return values


def quantized(draw: Draw, flow: str) -> Draw:
    """``draw`` put through quantization flow ``flow`` (:mod:`harness.graphs.quantizers`): ``<name>_q<flow>``. The
    choices stay the float program's: a mutant edits the program, then goes through the same flow."""
    program = draw.program.quantized(flow)
    return Draw(program.name, program, draw.choices, draw.parent)


def _float_name(d: Draw) -> str:
    return d.name[: -len(f"_q{d.flow}")] if d.flow else d.name


def mutant(parent: Draw, k: int) -> Optional[Draw]:
    """Mutation ``k`` of ``parent``, named ``<parent>_m<k>`` (before a ``_q<flow>`` suffix, which it keeps); None
    when the parent has no choices or the draw overran. The same parent and ``k`` give the same program in every
    process."""
    if not parent.choices:
        return None
    name = f"{_float_name(parent)}_m{k}"
    rng = random.Random(f"passgate:mutate:{name}")
    got = _run(name, parent.program.seed, rng, prefix=edited(parent.choices, rng))
    if got is None:
        return None
    child = Draw(name, got[0], got[1], parent.name)
    return quantized(child, parent.flow) if parent.flow else child


def by_name(name: str) -> Optional[Draw]:
    """The draw a fuzz name stands for (``random_s0_012``, ``random_s0_012_m3_m1``, ``random_s0_012_m3_qxnnpack``);
    None if it is not one or a step of its recipe cannot be drawn (UsageError for an unknown flow)."""
    match = NAME.match(name)
    if match is None:
        return None
    draw: Optional[Draw] = fresh(int(match.group(1)), int(match.group(2)))
    for k in re.findall(r"_m(\d+)", match.group(3)):
        draw = mutant(draw, int(k)) if draw is not None else None
    if draw is not None and match.group(4):
        from harness.graphs.quantizers import flow

        draw = quantized(draw, flow(match.group(4)).name)
    return draw
