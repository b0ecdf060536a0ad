"""Judging what a lowered program computes in the ExecuTorch runtime against its eager reference.

One comparison serves three places, so that they cannot disagree: the XNNPACK
end-to-end check (:mod:`harness.pipelines.partitioners`, ``runtime_numerics``
of ``partitioner.xnnpack``), the verdict on a BundledProgram's outputs read
back from a device (:mod:`harness.report.bundles`, ``device_numerics``) and
the runtime checks' verdict on a quantized edge program
(:mod:`harness.check.runtime`, ``runtime_numerics``).

- A float program is compared with its eager outputs within the per-dtype
  tolerance of :mod:`harness.check.numerics` (the tolerance a pass's
  ``numerics`` check uses).
- A quantized (Q/DQ) program, an ATen or an edge one, is judged the way
  the Vulkan ``fused_vs_float`` check judges a fusion: by SQNR against a
  float model, with the Q/DQ program's own SQNR as the bound
  (:data:`SQNR_SLACK_DB` of slack). A quantized case holds no float model,
  so its float twin is the Q/DQ program with every activation
  ``quantize -> dequantize`` pair bypassed (:func:`float_twin`; weights stay
  dequantized from their integers): the quantization noise the Q/DQ program
  itself adds is the yardstick, and a backend kernel may re-round but must
  not add noise beyond it. An output quantization does not reach is held to
  the float tolerance.

Running a ``.pte`` is :func:`harness.check.runtime_exec.run_pte`'s (a forked
child, so a kernel that aborts is a verdict, not a dead run).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Optional

import torch

from harness.check.numerics import compare_outputs, tolerance

__all__ = ["SQNR_SLACK_DB", "SQNR_CAP_DB", "Verdict", "sqnr", "is_quantized", "float_twin", "flat", "eager_outputs",
           "registered_backends", "judge_float", "judge_quantized", "judge"]

SQNR_SLACK_DB = 1.0  # as vulkan/judging/checks.py allows a fused program against its Q/DQ program's SQNR
SQNR_CAP_DB = 200.0  # a Q/DQ program identical to its float twin: the bound is this, less the slack


@dataclass
class Verdict:
    """Whether outputs match their reference, why not, and the figures."""

    ok: bool
    message: str = ""
    details: dict = field(default_factory=dict)


def sqnr(actual: torch.Tensor, reference: torch.Tensor) -> float:
    """10 log10(|ref|^2 / |actual - ref|^2) in dB; inf when identical, nan when the reference is all zeros."""
    ref = reference.detach().double()
    noise = float(((actual.detach().double() - ref) ** 2).sum())
    signal = float((ref**2).sum())
    if signal == 0.0:
        return math.nan
    return math.inf if noise == 0.0 else 10.0 * math.log10(signal / noise)


def _name(node: torch.fx.Node) -> str:
    """The op's name without its namespace (``quantize_per_tensor.default``), in an ATen or an edge program
    (an edge op's own ``__name__`` carries the namespace)."""
    target = node.target
    if isinstance(getattr(target, "_op", None), torch._ops.OpOverload):  # an EdgeOpOverload wraps the ATen op
        target = target._op
    return getattr(target, "__name__", str(target))


def _is_quantize(node) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and _name(node).startswith("quantize_per")


def is_quantized(ep) -> bool:
    """Does ``ep`` quantize activations (a quantize op feeding a dequantize)?"""
    return any(_name(n).startswith("dequantize_per") and n.args and _is_quantize(n.args[0])
               for n in ep.graph_module.graph.nodes if n.op == "call_function")


def float_twin(ep):
    """A copy of the Q/DQ program ``ep`` whose activation quantize -> dequantize pairs are bypassed."""
    twin = copy.deepcopy(ep)
    graph = twin.graph_module.graph
    for node in list(graph.nodes):
        if node.op == "call_function" and _name(node).startswith("dequantize_per") and node.args \
                and _is_quantize(node.args[0]):
            node.replace_all_uses_with(node.args[0].args[0])
    graph.eliminate_dead_code()
    twin.graph_module.recompile()
    return twin


def flat(outputs: Any) -> list:
    """A program's outputs as a flat list (a tensor, a tuple, nested containers)."""
    leaves, _ = torch.utils._pytree.tree_flatten(outputs)
    return list(leaves)


def eager_outputs(ep, inputs: tuple) -> list:
    """``ep`` run by torch on copies of ``inputs`` (mutated user inputs and buffers stay inside the module)."""
    with torch.no_grad():
        return [x.detach().clone() if isinstance(x, torch.Tensor) else x
                for x in flat(ep.module()(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]))]


def registered_backends() -> list[str]:
    """The delegate backends the installed runtime registers (``XnnpackBackend``, ...)."""
    from executorch.extension.pybindings.portable_lib import _get_registered_backend_names

    return list(_get_registered_backend_names())


def judge_float(actual: list, expected: list) -> Verdict:
    """Per-dtype tolerance, as a pass's ``numerics`` check."""
    cmp = compare_outputs(expected, actual)
    details = {"max_abs_err": cmp.max_abs_err, "max_rel_err": cmp.max_rel_err,
               "tolerance": {str(e.dtype): list(tolerance(e.dtype)) for e in expected if isinstance(e, torch.Tensor)}}
    if not cmp.ok:
        return Verdict(False, cmp.message.replace("before the pass", "in eager"), details)
    return Verdict(True, f"max abs err {cmp.max_abs_err:.3g} against eager", details)


def _untouched(q, f) -> bool:
    """Does quantization not reach this output (the Q/DQ program computes exactly what its float twin does)?"""
    return isinstance(q, torch.Tensor) and isinstance(f, torch.Tensor) and q.shape == f.shape \
        and q.dtype == f.dtype and bool(torch.equal(q, f))


def judge_quantized(actual: list, qdq: list, twin: list, slack_db: float = SQNR_SLACK_DB) -> Verdict:
    """SQNR against the float twin, bounded by the Q/DQ program's own (as vulkan's ``fused_vs_float``).

    An output quantization does not reach (the Q/DQ program's equals its twin's) has no quantization noise to
    measure against: the per-dtype tolerance judges it, as a float program's (its bound would otherwise be
    :data:`SQNR_CAP_DB`, which a float kernel's last-bit differences fail)."""
    if not (len(actual) == len(qdq) == len(twin)):
        return Verdict(False, f"the program returns {len(actual)} outputs, the Q/DQ program {len(qdq)}")
    rows, worst, worst_i = [], math.inf, None
    for i, (a, q, f) in enumerate(zip(actual, qdq, twin)):
        if not isinstance(a, torch.Tensor) or a.shape != q.shape:
            return Verdict(False, f"output {i}: {type(a).__name__} {tuple(getattr(a, 'shape', ()))}, "
                                  f"the Q/DQ program gives {tuple(q.shape)}")
        if _untouched(q, f):
            cmp = compare_outputs([q], [a])
            rows.append({"output": i, "elements": int(a.numel()), "not_quantized": True,
                         "max_abs_err": cmp.max_abs_err})
            if not cmp.ok:
                told = cmp.message.replace("before the pass", "in eager").removeprefix("output 0")
                return Verdict(False, f"output {i}{told}; quantization does not reach it (the Q/DQ program computes "
                               "it as its float twin does): judged by the float tolerance",
                               {"outputs": rows, "slack_db": slack_db, "max_abs_err": cmp.max_abs_err})
            continue
        got, own = sqnr(a.float(), f.float()), sqnr(q.float(), f.float())
        row = {"output": i, "elements": int(a.numel()), "sqnr_db": got, "qdq_sqnr_db": own,
               "vs_qdq_db": sqnr(a.float(), q.float())}
        rows.append(row)
        if math.isnan(got) or math.isnan(own):
            continue
        margin = math.inf if math.isinf(got) and math.isinf(own) else got - (min(own, SQNR_CAP_DB) - slack_db)
        row["margin_db"] = margin
        if margin < worst:
            worst, worst_i = margin, i
    details = {"outputs": rows, "slack_db": slack_db}
    if worst_i is None:
        return Verdict(True, "no output SQNR can judge (quantization reaches none, or the float twin's are all "
                       "zeros); those it does not reach are within the float tolerance", details)
    row = rows[worst_i]  # one row per output, in order
    text = (f"output {worst_i}: SQNR vs float {row['sqnr_db']:.1f} dB, Q/DQ program {row['qdq_sqnr_db']:.1f} dB "
            f"({row['vs_qdq_db']:.1f} dB vs Q/DQ)")
    if worst < 0:
        return Verdict(False, f"{text}: {-worst:.1f} dB beyond the {slack_db:g} dB allowed", details)
    return Verdict(True, text, details)


def judge(actual: list, expected: list, twin: Optional[list] = None) -> Verdict:
    """:func:`judge_quantized` when a float twin's outputs are given, else :func:`judge_float`."""
    return judge_float(actual, expected) if twin is None else judge_quantized(actual, expected, twin)
