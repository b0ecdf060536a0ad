"""The Vulkan checks of DESIGN.md: fusion_expected, fused_vs_qdq, fused_vs_float, device_vs_reference.

Each returns a :class:`harness.core.results.CheckResult` for (fusion, case). The
truth is the un-fused Q/DQ program and the float eager model, never the
``et_vk`` CPU implementations: those only *run* the fused program (the
``reference`` executor), and when a comparison fails :mod:`vulkan.judging.diagnose`
says whether the fused arguments or the CPU reading of them is at fault.
"""

from __future__ import annotations

import math
from collections import Counter

import torch
import torch.fx

from harness.core.results import CheckResult, Status, result
from vulkan.judging import tolerance
from vulkan.judging.context import CaseContext

__all__ = ["FUSED_PREFIX", "NOT_FUSIONS", "EXTRA_FUSED", "SQNR_SLACK_DB", "op_counts", "fusion_expected",
           "compare_to_qdq", "fused_vs_qdq", "fused_vs_float", "device_vs_reference", "CHECK_FUNCTIONS"]

FUSED_PREFIX = "et_vk."
NOT_FUSIONS = {"et_vk.prepack"}  # inserted by insert_prepack_nodes after partitioning, handled by the builder
EXTRA_FUSED = {"_weight_int8pack_mm"}
SQNR_SLACK_DB = 1.0


def op_counts(ep) -> Counter:
    return Counter(tolerance.op_short(n.target) for n in ep.graph_module.graph.nodes if n.op == "call_function")


def _is_fused_op(name: str) -> bool:
    return (name.startswith(FUSED_PREFIX) and name not in NOT_FUSIONS) or name in EXTRA_FUSED


def _is_constant(ep, arg) -> bool:
    """A weight/scale/bias: a lifted parameter, buffer or constant (or a prepack of one)."""
    if not isinstance(arg, torch.fx.Node):
        return True
    if arg.op == "call_function" and tolerance.op_short(arg.target) == "et_vk.prepack":
        return _is_constant(ep, arg.args[0])
    sig = ep.graph_signature
    return arg.op == "placeholder" and (arg.name in sig.inputs_to_parameters or arg.name in sig.inputs_to_buffers
                                        or arg.name in sig.inputs_to_lifted_tensor_constants)


def _registry_rejections(ep, before: Counter) -> dict:
    """Emitted ops (new, or et_vk) the Vulkan op registry has no implementation for, or whose
    *activation* dtypes it rejects (``op_registry.vulkan_supported_ops``).

    Constant arguments (weights, scales, sums, bias) are prepacked by the op
    itself; a registry entry that declares one dtype set for every argument
    (``FP_T`` broadcast) says nothing about them, so they are not judged.
    """
    from executorch.backends.vulkan.op_registry import vulkan_supported_ops

    rejected = {}
    for node in ep.graph_module.graph.nodes:
        if node.op != "call_function":
            continue
        name = tolerance.op_short(node.target)
        if name in NOT_FUSIONS or name == "getitem" or (name in before and not _is_fused_op(name)):
            continue
        features = vulkan_supported_ops.get(node.target)
        if features is None and hasattr(node.target, "name"):
            features = vulkan_supported_ops.get(node.target.name())
        if features is None:
            rejected[name] = "no operator implementation in op_registry"
            continue
        for i, arg in enumerate(node.args):
            allowed = features.inputs_dtypes[i]
            val = arg.meta.get("val") if isinstance(arg, torch.fx.Node) else None
            if allowed and isinstance(val, torch.Tensor) and not _is_constant(ep, arg) and val.dtype not in allowed:
                rejected[name] = f"activation input {i} is {val.dtype}; the registry takes {sorted(map(str, allowed))}"
                break
        else:
            try:
                if not features.are_node_inputs_supported_fn(node):
                    rejected[name] = "the registry's argument check rejects this node"
            except Exception as exc:  # noqa: BLE001 - a support check that chokes on the node is a rejection
                rejected[name] = f"the registry's argument check raised {type(exc).__name__}: {exc}"
    return rejected


def fusion_expected(ctx: CaseContext) -> CheckResult:
    rec, run = ctx.recipe, ctx.run
    add = _adder(ctx, "fusion_expected")
    if not ctx.applicable:
        return add(Status.NOT_APPLICABLE, f"{rec.op} is fused only by {', '.join(rec.modes)}, not by {run.mode}")
    if not run.ok:
        from vulkan.judging.diagnose import diagnose_fusion_crash

        what = "must decline it, not crash" if rec.negative else "the fusion crashed"
        diag = diagnose_fusion_crash(run) if run.outcome == "raised" else {}
        details = {"outcome": run.outcome, "traceback": run.traceback, "diagnosis": diag}
        return add(Status.FAIL, _with_diag(f"{what}: {run.error}", details), details)
    before, after = op_counts(ctx.qdq_case.shared("edge")), op_counts(run.program)
    if not any(tolerance.is_dequant_name(k) for k in before) and not rec.notes.startswith("no-qdq"):
        return add(Status.ERROR, f"recipe {rec.name} produced no Q/DQ pattern on this shape (the quantizer left it "
                   "in float): passgate's recipe is wrong, not the fusion", {"ops_before": dict(before)})
    emitted = {k: after[k] - before.get(k, 0) for k in after if _is_fused_op(k) and after[k] > before.get(k, 0)}
    details = {"emitted": emitted, "ops_before": dict(before), "ops_after": dict(after)}
    if rec.negative:
        emitted = {k: v for k, v in emitted.items() if k not in rec.other_fusions}
        if emitted:
            return add(Status.FAIL, f"fused a pattern it must decline ({rec.notes or rec.op}): emitted "
                       + ", ".join(f"{v} {k}" for k, v in emitted.items()), details)
        return add(Status.PASS, "left unfused, as it must be", details)
    missing = [op for op in rec.expected if after.get(op, 0) < 1]
    if missing:
        got = ", ".join(emitted) or "nothing"
        return add(Status.FAIL, f"expected {', '.join(missing)}; the fusion emitted {got}", details)
    left = {}
    for op, n in rec.absorbs.items():
        if (n == 0 and after.get(op, 0) > 0) or (n > 0 and before.get(op, 0) - after.get(op, 0) < n):
            left[op] = after.get(op, 0)
    if left:
        return add(Status.FAIL, "the fused op is there but absorbed nodes remain: "
                   + ", ".join(f"{v} {k}" for k, v in left.items()), {**details, "left": left})
    rejected = _registry_rejections(run.program, before)
    if rejected:
        return add(Status.FAIL, "emits ops the Vulkan partitioner rejects: "
                   + "; ".join(f"{k} ({v})" for k, v in rejected.items()), {**details, "rejected": rejected})
    n_fused = sum(after.get(op, 0) for op in rec.expected)
    return add(Status.PASS, f"{n_fused} {', '.join(rec.expected)}; absorbed nodes gone", {**details, "fused": n_fused})


def _adder(ctx: CaseContext, check: str):
    def add(status, message, details=None):
        return result(ctx.fusion_name, ctx.vcase.name, check, status, message, details or {})

    return add


def compare_to_qdq(ctx: CaseContext, per_draw: list) -> dict:
    """Compare executor outputs with the Q/DQ program on every draw; worst figures and failures."""
    worst = {"lsb": 0.0, "ratio": 0.0, "unit": "", "draw": None, "output": None, "where": None}
    failures = []
    for (name, _), probe, outs in zip(ctx.draws, ctx.probes, per_draw):
        if outs is None:
            continue
        if len(outs) != len(probe.outputs):
            failures.append({"draw": name, "why": f"{len(outs)} outputs, Q/DQ has {len(probe.outputs)}"})
            continue
        for i, (a, e) in enumerate(zip(outs, probe.outputs)):
            tol = tolerance.tolerance_for(probe, i)
            cmp = tolerance.compare(a, e, tol)
            if cmp.worst_ratio > worst["ratio"] or (worst["draw"] is None):
                worst.update(lsb=cmp.worst_lsb, ratio=cmp.worst_ratio, unit=cmp.unit_name, draw=name, output=i,
                             where=cmp.where, basis=tol.basis)
            if not cmp.ok:
                failures.append({"draw": name, "output": i, "worst_lsb": cmp.worst_lsb, "unit": cmp.unit_name,
                                 "bad": cmp.bad, "total": cmp.total, "max_abs": cmp.max_abs, "where": cmp.where,
                                 "shape": None if a.shape == e.shape else [list(a.shape), list(e.shape)]})
    return {"worst": worst, "failures": failures}


def fused_vs_qdq(ctx: CaseContext, diagnose: bool = True) -> CheckResult:
    add = _adder(ctx, "fused_vs_qdq")
    if not ctx.applicable:
        return add(Status.NOT_APPLICABLE, f"not fused by {ctx.run.mode}")
    if not ctx.run.ok:
        return add(Status.SKIP, "the fusion raised (see fusion_expected)")
    fused = ctx.fused_outputs
    details = {"executor": ctx.reference.name}
    if fused.error is not None:
        details.update(error=fused.error, draw=fused.error_draw)
        if diagnose:
            from vulkan.judging.diagnose import diagnose_crash

            details["diagnosis"] = diagnose_crash(ctx)
        msg = f"the fused program does not run on the {ctx.reference.name} executor (draw {fused.error_draw}): {fused.error}"
        return add(Status.FAIL, _with_diag(msg, details), details)
    cmp = compare_to_qdq(ctx, fused.per_draw)
    w = cmp["worst"]
    details.update(worst_lsb=w["lsb"], unit=w["unit"], worst_ratio=w["ratio"], tolerance=w.get("basis", ""),
                   failures=cmp["failures"][:8], draws=len(ctx.draws))
    if not cmp["failures"]:
        return add(Status.PASS, f"{len(ctx.draws)} draws within tolerance; worst {w['lsb']:.3g} {w['unit']}", details)
    f0 = cmp["failures"][0]
    if f0.get("shape"):
        msg = (f"output {f0['output']} has shape {tuple(f0['shape'][0])}, the Q/DQ program's has "
               f"{tuple(f0['shape'][1])}")
    else:
        msg = (f"{len(cmp['failures'])} of {len(ctx.draws)} draws off; worst {w['lsb']:.3g} {w['unit']} "
               f"({w['ratio']:.3g}x tolerance) on draw {w['draw']}, {f0.get('bad', '?')}/{f0.get('total', '?')} "
               f"elements off on draw {f0['draw']}")
    if diagnose:
        from vulkan.judging.diagnose import diagnose_mismatch

        details["diagnosis"] = diagnose_mismatch(ctx)
    return add(Status.FAIL, _with_diag(msg, details), details)


def _with_diag(msg: str, details: dict) -> str:
    diag = details.get("diagnosis") or {}
    return f"{msg}. {diag['summary']}" if diag.get("summary") else msg


def fused_vs_float(ctx: CaseContext) -> CheckResult:
    """SQNR against the float model, over many draws at once (one output element says nothing).

    Two input sets are judged: typical values (the sample and random draws)
    and saturating ones. Each set is topped up with extra random draws until it
    has at least ``context.SQNR_MIN_ELEMENTS`` output elements.
    """
    add = _adder(ctx, "fused_vs_float")
    if not ctx.applicable:
        return add(Status.NOT_APPLICABLE, f"not fused by {ctx.run.mode}")
    if not ctx.run.ok:
        return add(Status.SKIP, "the fusion raised (see fusion_expected)")
    if ctx.fused_outputs.error is not None:
        return add(Status.SKIP, "the fused program does not run (see fused_vs_qdq)")
    sets = ctx.sqnr_sets
    details = {"sets": sets, "slack_db": SQNR_SLACK_DB}
    typical = sets.get("typical", {})
    details.update(sqnr_fused_db=typical.get("fused"), sqnr_qdq_db=typical.get("qdq"),
                   sqnr_fused_vs_qdq_db=typical.get("fused_vs_qdq"))
    worst, worst_name = math.inf, None
    for name, row in sets.items():
        if row.get("error"):
            return add(Status.FAIL, f"on the {name} set: {row['error']}", details)
        f, q = row["fused"], row["qdq"]
        if math.isnan(f) or math.isnan(q):
            continue
        margin = math.inf if math.isinf(q) and math.isinf(f) else (f - (min(q, 200.0) - SQNR_SLACK_DB))
        row["margin_db"] = margin
        if margin < worst:
            worst, worst_name = margin, name
    if worst_name is None:
        return add(Status.SKIP, "the float model's outputs are all zeros", details)
    row = sets[worst_name]
    text = (f"SQNR vs float on {worst_name} inputs ({row['elements']} elements): fused {row['fused']:.1f} dB, "
            f"Q/DQ {row['qdq']:.1f} dB")
    if worst < 0:
        return add(Status.FAIL, f"{text}: {-worst:.1f} dB beyond the {SQNR_SLACK_DB:g} dB allowed", details)
    return add(Status.PASS, text, details)


def _min(rows: list, key: str) -> float:
    vals = [r[key] for r in rows if not math.isnan(r[key])]
    return min(vals) if vals else math.nan


def device_vs_reference(ctx: CaseContext) -> CheckResult:
    add = _adder(ctx, "device_vs_reference")
    device = ctx.device
    if device is None or not getattr(device, "is_device", True):
        return add(Status.SKIP, "no device executor plugged in (--executor executorch-vulkan or a vendor's)")
    ok, why = device.available()
    if not ok:
        return add(Status.SKIP, why, {"executor": device.name})
    if not ctx.applicable:
        return add(Status.NOT_APPLICABLE, f"not fused by {ctx.run.mode}")
    out = ctx.device_outputs
    if out.error is not None:
        return add(Status.FAIL, f"{device.name} failed on draw {out.error_draw}: {out.error}", {"executor": device.name})
    cmp = compare_to_qdq(ctx, out.per_draw)
    w = cmp["worst"]
    details = {"executor": device.name, "worst_lsb": w["lsb"], "unit": w["unit"], "failures": cmp["failures"][:8]}
    if cmp["failures"]:
        return add(Status.FAIL, f"{device.name} off the Q/DQ program by {w['lsb']:.3g} {w['unit']} on draw {w['draw']}",
                   details)
    return add(Status.PASS, f"{device.name} within tolerance of the Q/DQ program; worst {w['lsb']:.3g} {w['unit']}",
               details)


CHECK_FUNCTIONS = {
    "fusion_expected": fusion_expected,
    "fused_vs_qdq": fused_vs_qdq,
    "fused_vs_float": fused_vs_float,
    "device_vs_reference": device_vs_reference,
}
