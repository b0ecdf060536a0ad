"""A random graph as data: inputs, parameters/modules, statements, outputs.

The generator (:mod:`harness.graphs.random.generate`) produces a :class:`Program`; the
shrinker (:mod:`harness.reduce.shrink`) edits it (drops outputs, cuts a value into a
fresh input, bypasses a statement) and the reproducer writer prints it. The
one textual form, :meth:`Program.code`, is plain torch code (an
``nn.Module``, ``make_inputs()``, the dynamic shapes and a ``build()``), so
it is at once the case definition hashed into the cache key, what
``CaseSpec.build`` executes, and what a reproducer embeds.
"""

from __future__ import annotations

import linecache
import re
from dataclasses import dataclass, replace
from typing import Optional

from harness.graphs.quantizers import HAND
from harness.graphs.random.types import Val, sample_code

__all__ = ["Decl", "Stmt", "Program"]

BATCH_MIN, BATCH_MAX = 2, 64


@dataclass(frozen=True)
class Decl:
    """A parameter, buffer or submodule: ``name`` (``p0``, ``b1``, ``m2``) and its ``__init__`` lines."""

    name: str
    lines: tuple  # code with ``{m}`` standing for ``self.<name>``

    @property
    def ref(self) -> str:
        return f"self.{self.name}"


@dataclass(frozen=True)
class Stmt:
    outs: tuple  # names bound (several for split/chunk/max.dim)
    expr: str  # with {0}, {1}, ... for ``args``
    args: tuple  # value names: inputs, earlier outs, ``self.p0`` parameters
    inplace: bool = False

    def line(self) -> str:
        lhs = self.outs[0] if len(self.outs) == 1 else ", ".join(self.outs)
        return f"{lhs} = {self.expr.format(*self.args)}"

    def uses(self) -> set:
        refs = set(self.args)
        refs.update(re.findall(r"self\.[a-z]\d+", self.expr))
        return refs


@dataclass(frozen=True)
class Program:
    name: str
    seed: int
    inputs: tuple  # Val, named x0, x1, ...
    decls: tuple  # Decl
    stmts: tuple  # Stmt
    outputs: tuple  # value names
    vals: tuple  # Val of every statement output (types, for the shrinker)
    batch: Optional[int] = None  # sample size of the dynamic dimension; None: static shapes
    # "" a float program; a flow's name (harness.graphs.quantizers): build() quantizes the model with it; "hand":
    # the statements call the Q/DQ ops themselves (a quantized graph rewritten as code)
    quantizer: str = ""

    # ------------------------------------------------------------ rendering
    def code(self) -> str:
        lines = [
            "import torch",
            "from torch import nn",
            "from torch.nn import functional as F",
        ]
        if any("quantized_decomposed" in s.expr for s in self.stmts):
            lines.append("import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers its Q/DQ ops)")
        lines += ["", f"SEED = {self.seed}"]
        if self.dynamic:
            lines.append(f'BATCH = torch.export.Dim("batch", min={BATCH_MIN}, max={BATCH_MAX})')
        lines += ["", "", "class Program(nn.Module):", "    def __init__(self):", "        super().__init__()"]
        if self.decls:
            lines.append("        g = torch.Generator().manual_seed(SEED)")
            for d in self.decls:
                for text in d.lines:
                    lines.append("        " + text.format(m=d.ref))
        args = ", ".join(["self"] + [v.name for v in self.inputs])
        lines += ["", f"    def forward({args}):"]
        lines += ["        " + s.line() for s in self.stmts]
        outs = ", ".join(self.outputs)
        lines.append(f"        return ({outs}{',' if len(self.outputs) == 1 else ''})")
        lines += ["", "", "def make_inputs():", "    g = torch.Generator().manual_seed(SEED + 1)"]
        for v in self.inputs:
            lines.append(f"    {v.name} = {_input_code(v)}")
        names = ", ".join(v.name for v in self.inputs)
        lines.append(f"    return ({names}{',' if len(self.inputs) == 1 else ''})")
        lines += ["", ""]
        if self.dynamic:
            entries = ", ".join(f'"{v.name}": {_dyn_spec(v)}' for v in self.inputs)
            lines.append(f"DYNAMIC_SHAPES = {{{entries}}}")
        else:
            lines.append("DYNAMIC_SHAPES = None")
        flow = self.quantizer not in ("", HAND)
        lines += [
            "", "",
            f"def {'build_float' if flow else 'build'}():",
            '    """The model (weights seeded, eval mode), its sample inputs and dynamic shapes."""',
            "    with torch.random.fork_rng(devices=[]):",
            "        torch.manual_seed(SEED)",
            "        model = Program().eval()",
            "    return model, make_inputs(), DYNAMIC_SHAPES",
            "",
        ]
        if self.quantizer:
            lines += _quantized_tail(self.quantizer)
        return "\n".join(lines)

    def quantized(self, flow: str) -> "Program":
        """This program quantized by ``flow`` (a registered flow or ``hand``), named ``<name>_q<flow>``."""
        return replace(self, name=f"{self.name}_q{flow}", quantizer=flow)

    @property
    def dynamic(self) -> bool:
        return self.batch is not None and any(any(v.dyn) for v in self.inputs)

    @property
    def size(self) -> int:
        return len(self.stmts)

    def build_objects(self):
        """Execute :meth:`code`: (model, inputs, dynamic_shapes)."""
        text = self.code()
        filename = f"<passgate {self.name}>"
        # Registered so tracebacks and export's stack traces show the program's lines.
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        ns: dict = {"__name__": f"passgate_random_{self.name}"}
        exec(compile(text, filename, "exec"), ns)  # noqa: S102 - our own generated program
        return ns["build"]()

    # ------------------------------------------------------------ edits (shrinking)
    def val(self, name: str) -> Optional[Val]:
        for v in self.inputs + self.vals:
            if v.name == name:
                return v
        return None

    def keep_outputs(self, names) -> "Program":
        return replace(self, outputs=tuple(names)).pruned()

    def cut(self, name: str) -> Optional["Program"]:
        """Every use of value ``name`` reads a fresh input of the same type instead."""
        v = self.val(name)
        if v is None or name.startswith("x"):
            return None
        fresh = f"x{_next_index(self.inputs)}"
        batch = self.batch
        dyn = tuple(bool(f) and batch is not None and s == batch for f, s in zip(v.dyn or (False,) * v.rank, v.shape))
        # indices keep their bound (a cut argmax result still indexes the dim it came from)
        high = (v.index_high or 8) if v.dtype == "int64" else None
        new_input = Val(fresh, v.shape, v.dtype, dyn, index_high=high)
        return self._rename(name, fresh, extra_input=new_input)

    def bypass(self, stmt_index: int, arg: str) -> Optional["Program"]:
        """Statement ``stmt_index`` is skipped: users of its output read ``arg`` (same type) instead."""
        s = self.stmts[stmt_index]
        if len(s.outs) != 1 or arg.startswith("self."):
            return None
        out, a = self.val(s.outs[0]), self.val(arg)
        if out is None or a is None or (out.shape, out.dtype) != (a.shape, a.dtype):
            return None
        stmts = list(self.stmts)
        del stmts[stmt_index]
        renamed = replace(self, stmts=tuple(stmts))._rename(s.outs[0], arg, from_index=stmt_index)
        return renamed

    def _rename(self, old: str, new: str, extra_input: Optional[Val] = None, from_index: int = 0) -> "Program":
        stmts = []
        for i, s in enumerate(self.stmts):
            if i >= from_index and old in s.args and old not in s.outs:
                s = replace(s, args=tuple(new if a == old else a for a in s.args))
            stmts.append(s)
        outputs = []
        for o in self.outputs:
            o = new if o == old else o
            if o not in outputs:
                outputs.append(o)
        inputs = self.inputs + ((extra_input,) if extra_input else ())
        return replace(self, stmts=tuple(stmts), outputs=tuple(outputs), inputs=inputs).pruned()

    def pruned(self) -> "Program":
        """Dead statements, unused inputs, parameters and modules removed."""
        produced = {o for s in self.stmts for o in s.outs}
        outputs = tuple(o for o in self.outputs if o in produced)  # never an input returned as it came
        live = set(outputs)
        kept = []
        for s in reversed(self.stmts):
            # an in-place statement is live when what it mutates is live (later uses read the mutation)
            if live & set(s.outs) or (s.inplace and s.args[0] in live):
                kept.append(s)
                live.update(s.uses())
        kept.reverse()
        inputs = tuple(v for v in self.inputs if v.name in live)
        decls = tuple(d for d in self.decls if d.ref in live)
        names = {o for s in kept for o in s.outs}
        vals = tuple(v for v in self.vals if v.name in names)
        return replace(self, stmts=tuple(kept), inputs=inputs, decls=decls, vals=vals, outputs=outputs)


def _quantized_tail(name: str) -> list[str]:
    """The lines that make a program a quantized case: its TAGS (what ``corpus`` reads to run the passes for
    quantized graphs on it) and, for a flow, the flow's source and the ``build()`` that applies it."""
    lines = ['TAGS = ("quantized", "int8")', ""]
    if name == HAND:
        return lines
    from harness.graphs.quantizers import flow

    f = flow(name)
    lines += ["", f"# PT2E quantization: the passgate.quantizers flow {name!r}" + (f" ({f.description})" if
                                                                                     f.description else "")]
    lines += f.source.strip("\n").splitlines()
    lines += [
        "", "",
        "def build():",
        '    """The model quantized by the flow above, its sample inputs and dynamic shapes."""',
        "    model, inputs, dynamic_shapes = build_float()",
        "    return quantize(model, inputs, dynamic_shapes), inputs, dynamic_shapes",
        "",
    ]
    return lines


def _next_index(inputs) -> int:
    return max((int(v.name[1:]) for v in inputs), default=-1) + 1


def _input_code(v: Val) -> str:
    shape = "(" + ", ".join(map(str, v.shape)) + ("," if v.rank == 1 else "") + ")"
    if v.dtype == "int64":
        code = f"torch.randint(0, {v.index_high or 8}, {shape}, generator=g)"
    else:
        code = sample_code(shape, v.dtype)
    if v.channels_last:
        code += ".contiguous(memory_format=torch.channels_last)"
    return code


def _dyn_spec(v: Val) -> str:
    dims = [d for d in range(v.rank) if v.is_dyn(d)]
    return "{" + ", ".join(f"{d}: BATCH" for d in dims) + "}" if dims else "None"
