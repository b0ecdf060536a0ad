"""A lowered graph turned back into a :class:`harness.graphs.random.program.Program` of single ATen calls.

One statement of a random program can lower to several nodes (``hardswish``
becomes add, two clamps, mul and div at the edge stage), so a shrink over
statements stops at one statement that may still be seven nodes. Rewriting
the graph the pass was handed as one ``torch.ops.aten.<op>.<overload>`` call
per node lets the same reducer (:mod:`harness.reduce.shrink`) cut *inside* such a
decomposition, node by node, as torch's fx minifier does, while the result
stays a module that exports and lowers to the same ops.

Small parameters, buffers and lifted constants keep their exact values
(``torch.tensor([...])``); larger ones become seeded random parameters of
the same shape. Shapes are the sample's (the reduced program is static);
channels-last inputs stay channels-last, and the SymInt arithmetic of a
dynamic graph (``operator.mul`` of sizes) is int arithmetic. Updates of state (the signature's
BUFFER_MUTATION and USER_INPUT_MUTATION outputs) become ``copy_`` of the
new value into the buffer or input at the end, so the rewritten program
exports to the same write-backs instead of to plain outputs. Multi-output
nodes bind their tuple, read by one ``getitem`` statement per result used.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from harness.graphs.op_coverage import op_name
from harness.graphs.random.program import Decl, Program, Stmt
from harness.graphs.random.types import Val

__all__ = ["EXACT_NUMEL", "from_graph"]

EXACT_NUMEL = 64  # tensors up to this many elements are written out value by value


def _hint(x: Any) -> Any:
    node = getattr(x, "node", None)
    if node is not None and getattr(node, "hint", None) is not None:
        return int(node.hint)
    return x


def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def _literal(x: Any, names: dict) -> Optional[str]:
    """Python source for an argument; None when it cannot be written (the conversion gives up)."""
    import torch

    if isinstance(x, torch.fx.Node):
        return names.get(x.name)
    if isinstance(x, (list, tuple)):
        parts = [_literal(a, names) for a in x]
        if any(p is None for p in parts):
            return None
        return "[" + ", ".join(parts) + "]"
    if isinstance(x, bool) or x is None:
        return repr(x)
    if isinstance(x, int) or hasattr(x, "node"):
        return repr(_hint(x))
    if isinstance(x, float):
        return repr(x) if math.isfinite(x) else f"float({str(x)!r})"
    if isinstance(x, torch.dtype):
        return f"torch.{_dtype_name(x)}"
    if isinstance(x, torch.device):
        return f"torch.device({str(x)!r})"
    if isinstance(x, (torch.memory_format, torch.layout)):
        return str(x)
    if isinstance(x, str):
        return repr(x)
    return None


def _target_code(target) -> Optional[str]:
    import operator

    if target is operator.getitem:
        return "getitem"
    infix = {operator.mul: "*", operator.add: "+", operator.sub: "-", operator.floordiv: "//", operator.mod: "%"}
    if target in infix:  # SymInt arithmetic of a dynamic graph: int arithmetic in the static rewrite
        return "infix " + infix[target]
    name = op_name(target)
    parts = name.split(".")
    if len(parts) == 2:  # an ATen op: add.Tensor
        return f"torch.ops.aten.{name}"
    if len(parts) == 3:  # a namespaced op: dim_order_ops._to_dim_order_copy.default
        return f"torch.ops.{name}"
    return None


def _tensor_decl(name: str, t, parameter: bool) -> Decl:
    dtype = _dtype_name(t.dtype)
    if t.numel() <= EXACT_NUMEL:
        values = t.detach().reshape(-1).tolist()
        text = f"torch.tensor({values!r}, dtype=torch.{dtype}).reshape({tuple(t.shape)!r})"
        text = text.replace("inf", "float('inf')").replace("nan", "float('nan')")
    elif t.dtype.is_floating_point:
        text = f"torch.randn({tuple(t.shape)!r}, generator=g).to(torch.{dtype})"
    else:
        text = f"torch.zeros({tuple(t.shape)!r}, dtype=torch.{dtype})"
    if parameter and t.dtype.is_floating_point:
        return Decl(name, (f"{{m}} = nn.Parameter({text})",))
    return Decl(name, (f'self.register_buffer("{name}", {text})',))


def from_graph(ep, name: str, seed: int) -> Optional[Program]:
    """The program of ``ep``'s graph, one statement per node; None when a node cannot be written as code."""
    import torch

    sig = {s.arg.name: s for s in ep.graph_signature.input_specs if hasattr(s.arg, "name")}
    names: dict[str, str] = {}
    state: dict[tuple, Val] = {}  # (kind, buffer target or input name) -> the buffer or input to write back into
    inputs, decls, stmts, vals = [], [], [], []
    for node in ep.graph_module.graph.nodes:
        if node.op == "placeholder":
            if not _placeholder(ep, node, sig.get(node.name), names, state, inputs, decls):
                return None
        elif node.op == "call_function":
            code = _target_code(node.target)
            if code is None:
                return None
            out = f"v{len(stmts)}"
            if code == "getitem":
                src = names.get(node.args[0].name)
                if src is None:
                    return None
                stmts.append(Stmt((out,), f"{{0}}[{int(node.args[1])}]", (src,)))
            else:
                args = [_literal(a, names) for a in node.args]
                args += [None if lit is None else f"{k}={lit}"
                         for k, lit in ((k, _literal(a, names)) for k, a in node.kwargs.items())]
                if any(a is None for a in args):
                    return None
                refs = [names[n.name] for n in node.all_input_nodes]
                expr = f" {code[6:]} ".join(args) if code.startswith("infix ") else f"{code}({', '.join(args)})"
                for i, r in enumerate(dict.fromkeys(refs)):  # value names become {i} slots
                    expr = _slot(expr, r, i)
                stmts.append(Stmt((out,), expr, tuple(dict.fromkeys(refs))))
            names[node.name] = out
            val = node.meta.get("val")
            if isinstance(val, torch.Tensor):
                shape = tuple(_hint(d) for d in val.shape)
                vals.append(Val(out, shape, _dtype_name(val.dtype), (False,) * len(shape)))
        elif node.op == "output":
            user_outs = _outputs(ep, node, names, state, stmts, vals)
            if not user_outs:
                return None
            return Program(name, seed, tuple(inputs), tuple(decls), tuple(stmts), tuple(dict.fromkeys(user_outs)),
                           tuple(vals), None).pruned()
        else:
            return None
    return None


def _placeholder(ep, node, spec, names: dict, state: dict, inputs: list, decls: list) -> bool:
    """A user input (``xN``) or a parameter/buffer/constant declaration for ``node``; False if it cannot be one."""
    import torch
    from torch.export.graph_signature import InputKind, OutputKind

    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor) or spec is None:
        return False
    shape = tuple(_hint(d) for d in val.shape)
    if spec.kind == InputKind.USER_INPUT:
        v = Val(f"x{len(inputs)}", shape, _dtype_name(val.dtype), (False,) * len(shape),
                index_high=_index_high(node, ep), channels_last=_channels_last(val))
        inputs.append(v)
        names[node.name] = v.name
        state[(OutputKind.USER_INPUT_MUTATION, node.name)] = v
        return True
    value = ep.state_dict.get(spec.target) if spec.target in ep.state_dict else ep.constants.get(spec.target)
    if not isinstance(value, torch.Tensor):
        return False
    decl = _tensor_decl(f"{'p' if spec.kind == InputKind.PARAMETER else 'b'}{len(decls)}", value,
                        spec.kind == InputKind.PARAMETER)
    decls.append(decl)
    names[node.name] = decl.ref
    state[(OutputKind.BUFFER_MUTATION, spec.target)] = Val(decl.ref, shape, _dtype_name(val.dtype), (False,) * len(shape))
    return True


def _outputs(ep, node, names: dict, state: dict, stmts: list, vals: list) -> list:
    """The program's outputs: user outputs as they are, each state update as a ``copy_`` into its target
    (appended to ``stmts``), returned so the write stays live."""
    import torch
    from torch.export.graph_signature import OutputKind

    leaves = torch.utils._pytree.tree_leaves(node.args[0])
    specs = ep.graph_signature.output_specs
    outs = []
    for i, a in enumerate(leaves):
        ref = names.get(getattr(a, "name", None))
        kind = specs[i].kind if i < len(specs) else OutputKind.USER_OUTPUT
        target = state.get((kind, specs[i].target)) if i < len(specs) else None
        if target is not None and ref is not None and ref != target.name:
            out = f"v{len(stmts)}"
            stmts.append(Stmt((out,), "{0}.copy_({1})", (target.name, ref), inplace=True))
            vals.append(Val(out, target.shape, target.dtype, target.dyn))
            outs.append(out)
        elif ref and ref.startswith("v"):
            outs.append(ref)
    return outs


def _channels_last(val) -> bool:
    import torch

    return val.dim() == 4 and not val.is_contiguous() and val.is_contiguous(memory_format=torch.channels_last)


def _slot(expr: str, ref: str, i: int) -> str:
    """Replace whole-word occurrences of value name ``ref`` with ``{i}``."""
    import re

    return re.sub(rf"(?<![\w.]){re.escape(ref)}(?!\w)", "{%d}" % i, expr)


def _index_high(node, ep) -> Optional[int]:
    """int64 user inputs keep indexing safely: their values stay within [0, 8) as the generator's do."""
    val = node.meta.get("val")
    return 8 if val is not None and str(val.dtype) == "torch.int64" else None
