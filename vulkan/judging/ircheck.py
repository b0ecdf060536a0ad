"""The core IR checks, applied to the fused program of a Vulkan case.

They are the lead's (``harness.check.verifiers`` / ``harness.check.metadata``), called
on the program the fusion returned rather than through
``harness.check.runner.check_pass_on_case``: that would run the 3-4 s fusion again
(and twice more for ``idempotent`` / ``deterministic``), while the fused
program is already at hand (and cached). The handed copy was seeded with
synthetic metadata before fusing (:func:`vulkan.backend.fusion.fuse`), so a fused
node without ``stack_trace`` / ``nn_module_stack`` / ``debug_handle`` is a
new node that never got them.

``signature`` and ``verifier`` are left out: after fusion the program holds
``et_vk`` ops and, in preprocess mode, backend-private metadata the edge
dialect verifier was never meant to accept; the backend's own
``_any_op`` verifier is what preprocess applies.
"""

from __future__ import annotations

import time

from harness.core.results import CheckResult, Status, result

__all__ = ["IR_CHECKS_ON_FUSED", "ir_checks"]

IR_CHECKS_ON_FUSED = ("no_call_module", "graph_lint", "meta_val", "val_matches_execution", "meta_stack_trace",
                      "meta_nn_module_stack", "meta_debug_handle")


def ir_checks(ctx, wanted=IR_CHECKS_ON_FUSED) -> list[CheckResult]:
    """The IR checks of DESIGN.md on ``ctx.run.program`` (a :class:`vulkan.judging.context.CaseContext`)."""
    from harness.check import verifiers
    from harness.check.execution import execute
    from harness.check.metadata import META_CHECKS

    out = []
    wanted = [c for c in wanted if c in IR_CHECKS_ON_FUSED]
    if not ctx.applicable or not ctx.run.ok:
        why = "the fusion raised (see fusion_expected)" if ctx.applicable else f"not fused by {ctx.run.mode}"
        status = Status.SKIP if ctx.applicable else Status.NOT_APPLICABLE
        return [result(ctx.fusion_name, ctx.vcase.name, c, status, why) for c in wanted]
    ep = ctx.run.program
    sample = None

    def verdict(check):
        nonlocal sample
        if check == "no_call_module":
            return verifiers.no_call_module(ep)
        if check == "graph_lint":
            return verifiers.graph_lint(ep)
        if check == "meta_val":
            return verifiers.meta_val(ep)
        if check in META_CHECKS:
            return verifiers.meta_key(check, ctx.run.before_meta, ep)
        if check == "val_matches_execution":
            if sample is None:
                sample = execute(ep, ctx.qdq_case.sample_inputs(), record=True)
            if not sample.ok:
                return verifiers.Verdict(Status.SKIP, "the fused program does not run on CPU (see fused_vs_qdq)")
            return verifiers.val_matches_execution(ep, sample)
        raise KeyError(check)

    for check in wanted:
        started = time.perf_counter()
        try:
            v = verdict(check)
        except Exception as exc:  # noqa: BLE001 - a verifier that crashes is the harness's fault: say so
            v = verifiers.Verdict(Status.ERROR, f"passgate's {check} check crashed: {type(exc).__name__}: {exc}")
        out.append(result(ctx.fusion_name, ctx.vcase.name, check, v.status, v.message, v.details,
                          time.perf_counter() - started))
    return out
