"""A context combination as a program: the op, its operands' producers, its users, as plain torch source.

The program is a :class:`harness.graphs.random.program.Program`, the same
data the random generator makes, so everything downstream is shared: it
prints as a plain torch module with ``make_inputs()`` and ``build()`` (what
a corpus file and a reproducer hold), ``spec_of`` makes it a case, the
shrinker (:mod:`harness.reduce.shrink`) edits its statements, and a PT2E
flow quantizes it (``Program.quantized``). Each statement is run eagerly once
here, which gives every value's type (the shrinker needs them) and refuses a
combination torch itself rejects (``select`` on a zero-size dim) before
anything is exported. See :mod:`harness.fuzz.contexts` for the vocabulary.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field, replace
from typing import Optional

from harness.fuzz.contexts import FORMS, Combo
from harness.graphs.random.program import Decl, Program, Stmt
from harness.graphs.random.types import Val, sample_code

__all__ = ["SIZES", "BATCH", "build_program"]

SIZES = (2, 3, 4, 5, 6)
BATCH = 3  # sample size of a symbolic first dim (within the program's Dim range)
_VALUE_SLOTS = ("x", "y", "w", "wt", "b", "cw", "rm", "rv", "emb", "qs", "qz")
EMBEDDINGS = 8  # rows of an embedding table: int64 operands are drawn in [0, 8) (harness.graphs.random.types)


@dataclass
class _Builder:
    combo: Combo
    inputs: list = field(default_factory=list)
    decls: list = field(default_factory=list)
    stmts: list = field(default_factory=list)

    def value(self) -> str:
        return f"v{sum(len(s.outs) for s in self.stmts)}"

    def stmt(self, expr: str, args: tuple, outs: int = 1, inplace: bool = False) -> tuple:
        first = sum(len(s.outs) for s in self.stmts)
        names = tuple(f"v{first + i}" for i in range(outs))
        self.stmts.append(Stmt(names, expr, tuple(args), inplace))
        return names

    def input(self, shape: tuple, dtype: str, dyn: tuple = (), high: Optional[int] = None) -> str:
        name = f"x{len(self.inputs)}"
        self.inputs.append(Val(name, tuple(shape), dtype, tuple(dyn) or (False,) * len(shape), index_high=high))
        return name

    def decl(self, kind: str, shape: tuple, dtype: str, text: Optional[str] = None) -> str:
        name = f"{kind}{len(self.decls)}"
        text = text or sample_code(_shape_code(shape), dtype)
        line = {"p": f"{{m}} = nn.Parameter({text}, requires_grad=False)",
                "b": f'self.register_buffer("{name}", {text})', "c": f"{{m}} = {text}"}[kind]
        self.decls.append(Decl(name, (line,)))
        return f"self.{name}"


def _shape_code(shape: tuple) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _shape(c: Combo) -> tuple[tuple, tuple]:
    """(sample shape of the operand, which dims are dynamic)."""
    s = list(SIZES[: c.rank])
    if c.shape == "size1":
        s[-1] = 1
    elif c.shape == "zero":
        s[0] = 0
    elif c.shape == "symbolic":
        s[0] = BATCH
    dyn = tuple(c.shape == "symbolic" and d == 0 for d in range(c.rank))
    return tuple(s), dyn


def _operand(b: _Builder, shape: tuple, dyn: tuple) -> str:
    """The operand, made by the producer context."""
    c = b.combo
    p, dtype, rank = c.producer, c.dtype, len(shape)
    if p in ("parameter", "buffer", "constant"):
        return b.decl({"parameter": "p", "buffer": "b", "constant": "c"}[p], shape, dtype)
    if p == "view":
        if rank >= 2:
            swapped = (shape[-1],) + shape[1:-1] + (shape[0],)
            sdyn = (dyn[-1],) + dyn[1:-1] + (dyn[0],)
            return b.stmt("{0}.transpose(0, -1)", (b.input(swapped, dtype, sdyn),))[0]
        return b.stmt("{0}.view(-1)", (b.input(shape, dtype, dyn),))[0]
    if p == "layout":
        x = b.input(shape, dtype, dyn)
        expr = ("{0}.contiguous(memory_format=torch.channels_last)" if rank == 4 else
                "{0}.transpose(0, -1).contiguous().transpose(0, -1)" if rank >= 2 else "{0}.contiguous()")
        return b.stmt(expr, (x,))[0]
    if p == "nonzero":
        x, m = b.input(shape, dtype, dyn), b.input((shape[0],), "int64", (False,), high=8)
        return b.stmt("{0}.index_select(0, torch.nonzero({1} >= 0).squeeze(1))", (x, m))[0]
    if p == "mutated":
        buf = b.decl("b", shape, dtype)
        return b.stmt("{0}.logical_not_()" if dtype == "bool" else "{0}.add_(1)", (buf,), inplace=True)[0]
    if p == "item":
        x, n = b.input(shape, dtype, dyn), b.input((), "int64", (), high=shape[0] + 1)
        k = b.value()
        b.stmt(f"{{1}}.item(); torch._check({k} >= 0); torch._check({k} <= {{0}}.shape[0])", (x, n))
        return b.stmt("{0}[:{1}]", (x, k))[0]
    return b.input(shape, dtype, dyn)


def _literals(c: Combo, shape: tuple) -> dict:
    rank = len(shape)
    perm = tuple(reversed(range(rank)))
    return {"d": str(max(rank - 1, 0)), "perm": _shape_code(perm), "nperm": _shape_code(tuple(d - rank for d in perm)),
            "neg1": _shape_code((-1,) * rank), "to": "torch.float16" if c.dtype == "float32" else "torch.float32",
            "conv": "F.conv1d" if rank == 3 else "F.conv2d", "hw2": _shape_code(tuple(2 * n for n in shape[-2:]))}


def _slot(b: _Builder, slot: str, x: str, shape: tuple, dyn: tuple) -> str:
    c = b.combo
    last = shape[-1] if shape else 1
    chans = shape[1] if len(shape) > 1 else 1
    if slot == "x":
        return x
    if slot == "y":
        data_dependent = c.producer in ("nonzero", "item")
        if c.shape == "broadcast" or (data_dependent and FORMS[c.op[0]].key != "cat"):
            return b.input((1,) * (len(shape) - 1) + (last,) if shape else (), c.dtype)
        return b.input(shape, c.dtype, dyn)
    shapes = {"w": (3, last), "wt": (last, 3), "b": (3,), "cw": (2, chans) + (1,) * (len(shape) - 2),
              "rm": (chans,), "rv": (chans,), "emb": (EMBEDDINGS, 3)}
    if slot == "rv":
        return b.decl("b", shapes[slot], "float32", f"torch.rand({chans}, generator=g) + 0.5")
    if slot in ("qs", "qz"):  # per-channel quantization parameters along the last dim
        rows = last
        text = (f"torch.rand({rows}, generator=g) * 0.1 + 0.01" if slot == "qs" else
                f"torch.zeros({rows}, dtype=torch.int64)")
        return b.decl("b", (rows,), "float32", text)
    return b.decl("b" if slot == "rm" else "p", shapes[slot], "float32" if slot in ("rm", "emb") else c.dtype)


def _call(b: _Builder, template: str, x: str, shape: tuple, dyn: tuple, outs: int = 1) -> tuple:
    """One statement of ``template``: value slots become arguments, the rest literals."""
    literals = _literals(b.combo, shape)
    args: list = []
    slots: dict = {}

    def sub(m) -> str:
        key = m.group(1)
        if key not in _VALUE_SLOTS:
            return literals[key]
        if key not in slots:
            args.append(x if key == "x" else _slot(b, key, x, shape, dyn))
            slots[key] = "{" + str(len(args) - 1) + "}"
        return slots[key]

    expr = re.sub(r"\{(\w+)\}", sub, template)
    return b.stmt(expr, tuple(args), outs)


def _users(b: _Builder, r: str) -> list:
    c = b.combo
    boolean = c.dtype == "bool" and c.op[-1] not in ("to",)
    once, twice = ("~{0}", "{0} & {0}") if boolean else ("{0} * 2", "{0} * 3")
    if c.users == "one":
        return [b.stmt(once, (r,))[0]]
    if c.users == "several":
        return [b.stmt(once, (r,))[0], b.stmt(twice, (r,))[0]]
    if c.users == "inplace":
        return [b.stmt("{0}.logical_not_()" if boolean else "{0}.mul_(2)", (r,), inplace=True)[0]]
    if c.users == "getitem":
        return [b.stmt("torch.sort({0}, -1)", (r,), outs=2)[0]]
    if c.users == "far":
        shape, dyn = _shape(c)
        other = b.input(shape, c.dtype, dyn)
        between = b.stmt(once, (b.stmt(once, (other,))[0],))[0]
        return [between, b.stmt(once, (r,))[0]]
    return [r]


def build_program(c: Combo, name: str, seed: int = 0) -> Optional[Program]:
    """The program of ``c`` (None when torch refuses the combination eagerly)."""
    b = _Builder(c)
    shape, dyn = _shape(c)
    x = _operand(b, shape, dyn)
    r = x
    for key in c.op:
        form = FORMS[key]
        argform = c.argform if c.argform in form.argforms else form.argforms[0]
        r = _call(b, form.call(argform), r, shape, dyn, form.results)[0]
    extra = []
    neighbour = FORMS[c.op[-1]].neighbour
    if c.neighbour == "present" and neighbour:
        extra.append(_call(b, neighbour.replace("{0}", "{x}"), r, shape, dyn)[0])
    outputs = _users(b, r) + extra
    program = Program(name, seed, tuple(b.inputs), tuple(b.decls), tuple(b.stmts), tuple(outputs), (),
                      BATCH if c.shape == "symbolic" else None)
    typed = _typed(program)
    if typed is None:
        return None
    return typed.quantized(c.quant) if c.quant != "float" else typed


def _typed(program: Program) -> Optional[Program]:
    """``program`` with the types of its values, from one eager run; None when a statement fails."""
    import torch
    import torch.ao.quantization.fx._decomposed  # noqa: F401 - registers the Q/DQ ops the quantize forms call
    from torch import nn
    from torch.nn import functional as F

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model, inputs, _ = program.build_objects()
            ns = {"torch": torch, "nn": nn, "F": F, "self": model}
            ns.update({v.name: t for v, t in zip(program.inputs, inputs)})
            with torch.no_grad():
                for s in program.stmts:
                    exec(s.line(), ns)  # noqa: S102 - our own generated statement
    except Exception:  # noqa: BLE001 - a combination torch rejects is not built
        return None
    vals = []
    for s in program.stmts:
        for o in s.outs:
            t = ns.get(o)
            if isinstance(t, torch.Tensor):
                dtype = str(t.dtype).replace("torch.", "")
                dyn = tuple(program.batch is not None and d == 0 and n == program.batch for d, n in enumerate(t.shape))
                vals.append(Val(o, tuple(t.shape), dtype, dyn, owned=True, index_high=8 if dtype == "int64" else None))
    return replace(program, vals=tuple(vals))
