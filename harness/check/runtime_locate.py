"""Eager references for the runtime checks, and the first op whose runtime output diverges from eager's.

The reference of a program run in the runtime is the same program run by
torch (:func:`eager_calls`): call after call, with each call's mutated
buffers carried into the next (the runtime keeps them in the loaded
module), so a buffer the ``.pte`` fails to write back shows as the next
call's outputs. A joint (training) program's ``.pte`` returns the weights
whose gradients it computes after its own outputs (``to_executorch`` appends
them), and so does its reference.

When the runtime's outputs differ, :func:`first_divergence` names the op:
the runtime is run again with ETDump intermediate outputs
(:mod:`harness.check.runtime_exec`), each instruction is mapped through the
emitter's debug-handle map (instruction -> the ``debug_handle`` of the edge
nodes it came from, what the devtools Inspector maps through) to the
reference program's node with that handle, whose value torch recorded in the
same call, and the first instruction in execution order whose output is out
of tolerance is the answer. Why not ``Inspector.calculate_numeric_gap``: it
needs an ETRecord made by ``to_edge`` with representative inputs and one
run (it merges runs and asserts they are equal), and a pass's result or a
stateful program's second call has neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import torch
import torch.fx
from torch.export.graph_signature import InputKind, OutputKind
from torch.utils import _pytree as pytree

from harness.check.execution import flat_args
from harness.check.numerics import compare_outputs

__all__ = ["EagerCall", "returned_weights", "eager_calls", "Divergence", "emitted_ops", "first_divergence",
           "failing_op"]


@dataclass
class EagerCall:
    """One call of the program in torch: its user outputs and, when recorded, every node's value."""

    outputs: list
    values: Optional[dict] = None  # node name -> value


class _Recorder(torch.fx.Interpreter):
    def __init__(self, gm):
        super().__init__(gm, garbage_collect_values=False)
        self.values: dict[str, Any] = {}

    def run_node(self, n):
        out = super().run_node(n)
        if n.op == "call_function":
            self.values[n.name] = pytree.tree_map(lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x, out)
        return out


def returned_weights(ep) -> list[int]:
    """The input positions of the weights ``to_executorch`` appends to a joint program's outputs.

    ``weights_to_outputs_pass``, which ``to_executorch`` runs on every program, appends each parameter whose
    gradient the program returns (GRADIENT_TO_PARAMETER), in input order, after the program's own outputs, so
    that memory planning places the weights where a training runtime updates them: the ``.pte`` returns them."""
    specs = ep.graph_signature
    with_gradient = {s.target for s in specs.output_specs if s.kind == OutputKind.GRADIENT_TO_PARAMETER}
    return [j for j, s in enumerate(specs.input_specs) if s.kind == InputKind.PARAMETER and s.target in with_gradient]


def eager_calls(ep, inputs: tuple, calls: int, record_call: Optional[int] = None) -> list[EagerCall]:
    """``calls`` calls of ``ep`` in torch on ``inputs``, mutated buffers carried from call to call.

    The outputs are the ``.pte``'s: the program's, then the weights a joint program returns
    (:func:`returned_weights`). ``record_call`` (0-based): record every node's value in that call."""
    specs = ep.graph_signature.input_specs
    weights = returned_weights(ep)
    state: dict[str, torch.Tensor] = {}
    out: list[EagerCall] = []
    for i in range(calls):
        args = flat_args(ep, inputs)
        for j, spec in enumerate(specs):
            if spec.kind == InputKind.BUFFER and spec.target in state:
                args[j] = state[spec.target].clone()
        with torch.no_grad():
            if i == record_call:
                rec = _Recorder(ep.graph_module)
                flat = rec.run(*args)
            else:
                rec, flat = None, ep.graph_module(*args)
        flat = [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in pytree.tree_leaves(flat)]
        user = []
        for spec, value in zip(ep.graph_signature.output_specs, flat):
            if spec.kind == OutputKind.BUFFER_MUTATION:
                state[spec.target] = value
            elif spec.kind != OutputKind.USER_INPUT_MUTATION:  # user outputs, a joint graph's loss and gradients
                user.append(value)
        user += [args[j].detach().clone() for j in weights]
        out.append(EagerCall(user, rec.values if rec else None))
    return out


@dataclass
class Divergence:
    """The first runtime instruction whose output is out of tolerance of eager's."""

    op: str  # the emitted operator, e.g. aten.mul.out
    node: str  # the reference program's node it came from
    instruction: int
    call: int  # 1-based
    message: str
    compared: int  # instructions compared before it (those with a reference value)

    def to_details(self) -> dict:
        return {"op": self.op, "node": self.node, "instruction": self.instruction, "call": self.call,
                "error": self.message, "instructions_compared": self.compared}


def _handles_to_nodes(ep) -> dict:
    out: dict = {}
    for n in ep.graph.nodes:
        handle = n.meta.get("debug_handle")
        if n.op == "call_function" and handle is not None:
            out.setdefault(handle, []).append(n)
    return out


def emitted_ops(exec_ep) -> dict:
    """Instruction id -> the emitted node's target (the emitter writes the instruction id as its debug_handle)."""
    out = {}
    for n in exec_ep.graph.nodes:
        handle = n.meta.get("debug_handle")
        if n.op == "call_function" and isinstance(handle, int):
            out[handle] = str(getattr(n.target, "__name__", n.target)).replace("::", ".")
    return out


def _stem(name: str) -> str:
    """An op's name without namespace and overload: ``dequantize_per_tensor`` of ``dequantize_per_tensor.out``
    and of ``quantized_decomposed.dequantize_per_tensor.default``."""
    parts = name.split(".")
    return parts[-2] if len(parts) > 1 else name


def _reference_for(nodes: list, values: dict, runtime_out: list, op: str = "") -> tuple[Optional[str], Optional[list]]:
    """The reference node of an instruction's handle whose value looks like the runtime's output: the shapes
    must match; a node of the instruction's own op, then one of the same dtypes, is preferred (a quantized
    program's quantize and dequantize nodes share the handle of the op they follow, and have its shape)."""
    want = [(tuple(x.shape), x.dtype) for x in runtime_out if isinstance(x, torch.Tensor)]
    best, rank = (None, None), 3
    for node in nodes:
        value = values.get(node.name)
        leaves = [x for x in pytree.tree_leaves(value) if isinstance(x, torch.Tensor)][: len(want)]
        if not leaves or [tuple(x.shape) for x in leaves] != [shape for shape, _ in want]:
            continue
        same_op = bool(op) and _stem(str(getattr(node.target, "__name__", node.target))) == _stem(op)
        same_dtype = [x.dtype for x in leaves] == [dtype for _, dtype in want]
        r = 0 if same_op else 1 if same_dtype else 2
        if r < rank:
            best, rank = (node.name, leaves), r
    return best


def first_divergence(reference_ep, exec_ep, handle_map: dict, runtime_calls: list, call: int,
                     inputs: tuple) -> Optional[Divergence]:
    """Name the first instruction of call ``call`` (0-based) whose ETDump output differs from eager's.

    ``runtime_calls``: per call, the runtime's InstructionOutput list; ``handle_map``: the emitter's
    instruction id -> debug handle(s) of ``forward``."""
    if call >= len(runtime_calls):
        return None
    values = eager_calls(reference_ep, inputs, call + 1, record_call=call)[call].values or {}
    by_handle = _handles_to_nodes(reference_ep)
    ops = emitted_ops(exec_ep)
    compared = 0
    for item in runtime_calls[call]:
        handles = handle_map.get(item.instruction)
        handles = handles if isinstance(handles, list) else [handles]
        nodes = [n for h in handles if h is not None for n in by_handle.get(h, [])]
        runtime_out = [x for x in item.outputs if isinstance(x, torch.Tensor) and x.numel()]
        op = ops.get(item.instruction, item.name.removeprefix("native_call_"))
        name, expected = _reference_for(nodes, values, runtime_out, op)
        if name is None:
            continue
        compared += 1
        cmp = compare_outputs(expected, runtime_out)
        if not cmp.ok:
            message = cmp.message.replace("before the pass", "in eager")
            return Divergence(op, name, item.instruction, call + 1, message, compared)
    return None


def failing_op(exec_ep, runtime_calls: list, call: int) -> Optional[tuple[str, int]]:
    """(op, instruction) of the first emitted op after the last instruction ETDump logged in call ``call``
    (0-based): a guess at the op the runtime stopped at, for a failure the runtime logs no kernel for (a kernel
    that fails a call is logged by the ETDump too: the runtime's own log names it)."""
    ops = emitted_ops(exec_ep)
    done = [item.instruction for item in runtime_calls[call]] if call < len(runtime_calls) else []
    last = max(done) if done else -1
    after = sorted(i for i in ops if i > last)
    return (ops[after[0]], after[0]) if after else None
