"""Why a fused program disagrees with its Q/DQ program, and whose fault it is.

Two families of hypotheses, each tested by running real programs:

1. *Readings of the fused op* (:mod:`vulkan.judging.ref_ops`): the fused program is
   re-run with the ``et_vk`` op computed by our own reading of its
   arguments, in the layout the fusion pass wrote (``spec``) and in
   alternative layouts. If the ``spec`` reading matches the Q/DQ program
   while the CPU reference does not, the fused arguments are right and the
   **CPU reference** is wrong; the alternative reading that reproduces the
   CPU reference's output says how it misreads them.
2. *Changes to the Q/DQ program* that the fusion might have made silently:
   weight zero points dropped, a relu dropped, the whole output scaled by a
   constant. If the fused output matches such a changed Q/DQ program, the
   **fusion pass** lost that information: no reading of its arguments can
   recover it.

Shape-dependent failures ("fails only when output channels need padding")
are found across cases by :func:`shape_explanation`.
"""

from __future__ import annotations

import copy
from typing import Optional

import torch

from vulkan.judging import ref_ops, tolerance
from vulkan.judging.context import CaseContext

__all__ = ["readings", "HYPOTHESES", "pass_hypotheses", "diagnose_mismatch", "diagnose_crash",
           "diagnose_fusion_crash", "traits", "shape_explanation"]

def _fused_ops(ep) -> list[str]:
    ops = []
    for n in ep.graph_module.graph.nodes:
        name = tolerance.op_short(n.target) if n.op == "call_function" else ""
        if name.startswith("et_vk.") and ref_ops.reader(name) and name not in ops:
            ops.append(name)
    return ops


def _matches_qdq(outs: list, probe) -> bool:
    if len(outs) != len(probe.outputs):
        return False
    return all(tolerance.compare(a, e, tolerance.tolerance_for(probe, i)).ok
               for i, (a, e) in enumerate(zip(outs, probe.outputs)))


def _same(a: list, b: Optional[list]) -> bool:
    if b is None or len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.shape != y.shape:
            return False
        scale = float(y.double().abs().max()) if y.numel() else 0.0
        if float((x.double() - y.double()).abs().max() if x.numel() else 0.0) > 1e-5 * max(scale, 1.0):
            return False
    return True


def _draw_indices(ctx: CaseContext) -> list[int]:
    """The sample and the worst draws: enough to tell readings apart, cheap to run."""
    names = [n for n, _ in ctx.draws]
    return [i for i, n in enumerate(names) if n in ("sample", "random", "saturate")]


def readings(ctx: CaseContext) -> dict:
    """For each fused op and reading: does it match Q/DQ, does it reproduce the CPU reference?"""
    ep = ctx.run.program
    table = {}
    for op in _fused_ops(ep):
        short = op.split(".")[-1]
        for variant, desc in ref_ops.VARIANTS.get(short, {}).items():
            match_qdq, repro_cpu, error = True, True, None
            for i in _draw_indices(ctx):
                try:
                    outs = ref_ops.run_with_reading(ep, ctx.draws[i][1], op, variant)
                except Exception as exc:  # noqa: BLE001 - a reading that cannot apply is just not the answer
                    error = f"{type(exc).__name__}: {exc}"
                    match_qdq = repro_cpu = False
                    break
                match_qdq &= _matches_qdq(outs, ctx.probes[i])
                cpu = ctx.fused_outputs.per_draw[i] if ctx.fused_outputs.error is None else None
                repro_cpu &= _same(outs, cpu)
            table[(op, variant)] = {"op": op, "variant": variant, "reading": desc, "matches_qdq": match_qdq,
                                    "reproduces_cpu": repro_cpu, "error": error}
    return table


# --- changes to the Q/DQ program ---------------------------------------------------------------


def _const_store(ep, node):
    sig = ep.graph_signature
    for table in (sig.inputs_to_parameters, sig.inputs_to_buffers, sig.inputs_to_lifted_tensor_constants):
        if getattr(node, "name", None) in table:
            target = table[node.name]
            store = ep.state_dict if target in ep.state_dict else ep.constants
            return (store, target) if target in store else None
    return None


def _set(store: dict, target: str, value: torch.Tensor) -> None:
    """Replace a constant, keeping it a Parameter when it was one (the signature verifier insists)."""
    old = store[target]
    store[target] = torch.nn.Parameter(value, requires_grad=False) if isinstance(old, torch.nn.Parameter) else value


def _qdq_with(ctx: CaseContext, change: str, factor: float = 1.0):
    """A copy of the Q/DQ program with one thing a fusion might silently do done to it, or None."""
    ep = copy.deepcopy(ctx.qdq_case.shared("edge"))
    gm = ep.graph_module
    changed = False
    for n in list(gm.graph.nodes):
        name = tolerance.op_short(n.target) if n.op == "call_function" else ""
        weight_dq = tolerance.is_dequant(n.target) and n.op == "call_function" and _const_store(ep, n.args[0])
        if change in ("zero_points", "weight_scales") and weight_dq:
            si = 2 if name == "dequantize_affine" else 1
            i = si + 1 if change == "zero_points" else si
            arg = n.args[i] if len(n.args) > i else None
            found = _const_store(ep, arg) if isinstance(arg, torch.fx.Node) else None
            if found is not None:
                store, target = found
                if change == "zero_points" and bool((store[target] != 0).any()):
                    _set(store, target, torch.zeros_like(store[target]))
                    changed = True
                elif change == "weight_scales":
                    _set(store, target, store[target].detach() * factor)
                    changed = True
            elif change == "weight_scales" and isinstance(arg, float):
                n.update_arg(i, arg * factor)
                changed = True
        elif change == "relu" and name == "relu":
            n.replace_all_uses_with(n.args[0])
            gm.graph.erase_node(n)
            changed = True
        elif change == "folded" and name.startswith("quantize"):
            for user in list(n.users):
                if tolerance.is_dequant(getattr(user, "target", None)):
                    user.replace_all_uses_with(n.args[0])
                    changed = True
    if change == "folded":
        gm.graph.eliminate_dead_code()
    gm.recompile()
    return ep if changed else None


HYPOTHESES = {
    "zero_points": "matches if the weight zero points are ignored",
    "relu": "matches if the relu is dropped",
    "folded": "matches if every quantize -> dequantize pair is removed (the pattern runs in float: no activation "
              "or output quantization, no saturation; FoldQDQPass does this to patterns nothing fused)",
}


def _matches_changed(ctx: CaseContext, changed) -> bool:
    from harness.check.execution import execute

    ok = True
    for i in _draw_indices(ctx):
        ex = execute(changed, ctx.draws[i][1])
        probe = copy.copy(ctx.probes[i])
        probe.outputs = ex.outputs if ex.ok else []
        ok &= ex.ok and _matches_qdq(ctx.fused_outputs.per_draw[i], probe)
    return ok


def pass_hypotheses(ctx: CaseContext) -> list[str]:
    found = []
    if ctx.fused_outputs.error is not None:
        return found
    for key, words in HYPOTHESES.items():
        changed = _qdq_with(ctx, key)
        if changed is not None and _matches_changed(ctx, changed):
            found.append(words)
    alpha = _weight_scale_factor(ctx)
    if alpha is not None:
        changed = _qdq_with(ctx, "weight_scales", alpha)
        if changed is not None and _matches_changed(ctx, changed):
            found.append(f"matches if the weight scales are multiplied by {alpha:.3f}")
            return found
    alpha = _scale_factor(ctx)
    if alpha is not None:
        found.append(f"is close to the Q/DQ output scaled by {alpha:.3f}")
    return found


def _weight_scale_factor(ctx: CaseContext) -> Optional[float]:
    """alpha such that the Q/DQ program with weight scales x alpha explains the fused output.

    Estimated along the direction a 10 % weight-scale change moves the Q/DQ
    output (a real run of the changed program), away from clipped elements;
    the caller verifies the estimate by running the changed program.
    """
    from harness.check.execution import execute

    probe_ep = _qdq_with(ctx, "weight_scales", 1.1)
    if probe_ep is None:
        return None
    num = den = 0.0
    for i in _draw_indices(ctx):
        ex = execute(probe_ep, ctx.draws[i][1])
        if not ex.ok:
            return None
        for a, e, e2 in zip(ctx.fused_outputs.per_draw[i], ctx.probes[i].outputs, ex.outputs):
            if a.shape != e.shape or not e.numel():
                return None
            a, e, e2 = a.double(), e.double(), e2.double()
            top = float(e.abs().max())
            keep = (e.abs() < 0.98 * top) & (e2.abs() < 0.98 * top)
            d = (e2 - e)[keep]
            num += float(((a - e)[keep] * d).sum())
            den += float((d * d).sum())
    if den == 0.0:
        return None
    alpha = round(1.0 + 0.1 * num / den, 3)
    return None if abs(alpha - 1.0) < 1e-3 else alpha


def _scale_factor(ctx: CaseContext) -> Optional[float]:
    """Least-squares alpha with fused ~= alpha * qdq over float outputs, away from the clipping extremes."""
    num = den = 0.0
    for i in _draw_indices(ctx):
        for a, e in zip(ctx.fused_outputs.per_draw[i], ctx.probes[i].outputs):
            if not e.dtype.is_floating_point or a.shape != e.shape or not e.numel():
                return None
            a, e = a.double(), e.double()
            keep = e.abs() < 0.98 * float(e.abs().max())
            num += float((a * e)[keep].sum())
            den += float((e * e)[keep].sum())
    if den == 0.0:
        return None
    alpha = round(num / den, 3)
    return None if abs(alpha - 1.0) < 1e-3 else alpha


# --- verdicts ------------------------------------------------------------------------------------


def _verdict(ctx: CaseContext, crashed: bool) -> dict:
    table = readings(ctx)
    rows = list(table.values())
    spec = [r for r in rows if r["variant"] == "spec"]
    spec_ok = bool(spec) and all(r["matches_qdq"] for r in spec)
    cpu_like = [r for r in rows if r["variant"] != "spec" and r["reproduces_cpu"]]
    other_ok = [r for r in rows if r["variant"] != "spec" and r["matches_qdq"]]
    hyps = [] if spec_ok or other_ok else pass_hypotheses(ctx)
    ops = ", ".join(sorted({r["op"] for r in rows})) or "fused op"
    if spec_ok:
        fault = "cpu-reference"
        how = (f"its output equals reading {cpu_like[0]['reading']}" if cpu_like else
               "it raises" if crashed else "it computes something else")
        summary = (f"Fault: CPU reference. Read as the pass wrote them ({spec[0]['reading']}), the fused "
                   f"{ops} arguments match the Q/DQ program; the CPU implementation does not: {how}")
    elif other_ok:
        fault = "fusion-pass"
        summary = (f"Fault: fusion pass. The fused {ops} arguments match the Q/DQ program only when read as "
                   f"{other_ok[0]['reading']}, which is not the op's contract ({spec[0]['reading'] if spec else '?'})")
    elif hyps:
        fault = "fusion-pass"
        lead = f"No reading of the fused {ops} arguments matches the Q/DQ program; the" if rows else "The"
        summary = f"Fault: fusion pass. {lead} fused program {'; '.join(hyps)}"
    else:
        fault = "undetermined"
        summary = (f"Fault undetermined: neither our reading of the fused {ops} arguments nor a known change to the "
                   "Q/DQ program matches")
    return {"fault": fault, "summary": summary, "readings": rows, "hypotheses": hyps}


def diagnose_mismatch(ctx: CaseContext) -> dict:
    try:
        return _verdict(ctx, crashed=False)
    except Exception as exc:  # noqa: BLE001 - a diagnosis that fails must not hide the verdict
        return {"fault": "undetermined", "summary": "", "error": f"diagnosis failed: {type(exc).__name__}: {exc}"}


def diagnose_crash(ctx: CaseContext) -> dict:
    try:
        return _verdict(ctx, crashed=True)
    except Exception as exc:  # noqa: BLE001
        return {"fault": "undetermined", "summary": "", "error": f"diagnosis failed: {type(exc).__name__}: {exc}"}


def diagnose_fusion_crash(run) -> dict:
    """A fusion that raised: in the pass's own logic, or in an et_vk CPU implementation it ran?

    ``FusePatternsPass`` re-traces the graph after replacing (``ExportPass``),
    which runs every fused op's CompositeExplicitAutograd implementation on
    fake tensors as its shape function; a CPU implementation that cannot take
    the (padded) arguments the pass wrote makes lowering crash.
    """
    tb = run.traceback or ""
    if "custom_ops_lib.py" in tb:
        fn = ""
        for line in tb.splitlines():
            if "custom_ops_lib.py" in line and ", in " in line:
                fn = line.rsplit(", in ", 1)[1].strip()
        return {"fault": "cpu-reference",
                "summary": (f"Fault: CPU reference. The crash is in custom_ops_lib's {fn or 'implementation'}, which the "
                            "pass's re-trace runs as the fused op's shape function on the arguments the pass wrote "
                            "(padded to a multiple of 4)")}
    return {"fault": "fusion-pass", "summary": "Fault: fusion pass. The pass itself raised instead of declining"}


# --- across cases ----------------------------------------------------------------------------------


def traits(shape: dict) -> dict[str, bool]:
    """Shape properties the kernels care about, as named booleans."""
    t: dict[str, bool] = {}
    n = shape.get("N", shape.get("C_out"))
    if n is not None:
        t["output channels % 4 != 0 (padded)"] = n % 4 != 0
    if "K" in shape:
        t["K % 8 != 0"] = shape["K"] % 8 != 0
        t["K % 4 != 0"] = shape["K"] % 4 != 0
    if "lead" in shape:
        t["M == 1"] = shape["lead"][-1] == 1
        t["3-D input"] = len(shape["lead"]) > 1
    if "C_in" in shape:
        g = shape.get("groups", 1)
        t["in channels per group > 1"] = shape["C_in"] // g > 1
        t["kernel > 1"] = shape.get("k", 1) > 1
        t["groups > 1"] = g > 1
        t["stride > 1"] = shape.get("stride", 1) > 1
        t["padding > 0"] = shape.get("padding", 0) > 0
        t["dilation > 1"] = shape.get("dilation", 1) > 1
    for flag in ("bias", "relu"):
        if flag in shape or flag == "relu":
            t[flag] = bool(shape.get(flag, False))
    return t


def shape_explanation(shapes_failing: list[dict], shapes_passing: list[dict]) -> list[str]:
    """Traits that hold on every failing case and on no passing one ("fails only when ...")."""
    if not shapes_failing or not shapes_passing:
        return []
    f_traits = [traits(s) for s in shapes_failing]
    p_traits = [traits(s) for s in shapes_passing]
    names = set.intersection(*(set(t) for t in f_traits + p_traits))
    out = []
    for name in sorted(names):
        if all(t[name] for t in f_traits) and not any(t[name] for t in p_traits):
            out.append(f"fails only when {name}")
        elif not any(t[name] for t in f_traits) and all(t[name] for t in p_traits):
            out.append(f"fails only when not {name}")
    return out
