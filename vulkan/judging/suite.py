"""Running the Vulkan conformance: recipes -> cases -> fusion -> checks -> results and per-case records.

:func:`run` is what ``passgate vulkan`` and the tests call. It returns
:class:`harness.core.results.CheckResult` objects (so the lead's reports include
them) plus one :class:`CaseRecord` per (fusion, case) with the figures the
per-op table needs (:mod:`vulkan.reports.table`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable, Optional

from harness.core.results import CheckResult, Status, check_ids, result
from vulkan.backend import fusion
from vulkan.backend.executors import ReferenceExecutor
from vulkan.cases import catalog, lowering, recipes
from vulkan.judging import checks
from vulkan.judging.context import CaseContext
from vulkan.judging.ircheck import IR_CHECKS_ON_FUSED, ir_checks

__all__ = ["VULKAN_CHECKS", "ALL_CHECKS", "CaseRecord", "VulkanRun", "check_case", "run"]

VULKAN_CHECKS = check_ids("vulkan")
ALL_CHECKS = VULKAN_CHECKS + IR_CHECKS_ON_FUSED


@dataclass
class CaseRecord:
    fusion: str
    mode: str
    recipe: str
    op: str
    negative: bool
    case: str
    shape: dict
    statuses: dict = field(default_factory=dict)  # check -> status value
    fused: int = 0
    worst_lsb: Optional[float] = None
    unit: str = ""
    sqnr_fused_db: Optional[float] = None
    sqnr_qdq_db: Optional[float] = None
    sqnr_fused_vs_qdq_db: Optional[float] = None
    fault: str = ""
    diagnosis: str = ""
    messages: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class VulkanRun:
    results: list = field(default_factory=list)
    records: list = field(default_factory=list)
    seconds: float = 0.0


def check_case(vcase: recipes.VulkanCase, fuse: fusion.Fusion, device=None, wanted: Iterable[str] = ALL_CHECKS,
               use_cache: bool = True, timeout: float = 120.0) -> tuple[list[CheckResult], CaseRecord]:
    """Every wanted Vulkan check of ``fuse`` on one case."""
    wanted = tuple(wanted)
    timings: dict = {}
    rec = CaseRecord(fuse.name, fuse.mode, vcase.recipe.name, vcase.recipe.op, vcase.recipe.negative, vcase.name,
                     vcase.shape)
    try:
        qdq = lowering.load(vcase.spec)
    except Exception as exc:  # noqa: BLE001 - the harness could not build the case: never silent
        msg = f"passgate could not build the case: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        res = [result(fuse.name, vcase.name, c, Status.ERROR, msg) for c in wanted]
        rec.statuses = {c: "error" for c in wanted}
        return res, rec
    timings.update(lowering.TIMINGS.get(vcase.spec.key, {}))
    run = fusion.fuse(fuse, vcase, qdq, timeout=timeout, use_cache=use_cache)
    timings.update(fusion_s=round(run.seconds, 4), fusion_from_cache=run.from_cache, stages=run.stages)
    ctx = CaseContext(vcase, qdq, fuse.name, run, ReferenceExecutor(), device, timings)
    out = []
    for check in wanted:
        if check not in checks.CHECK_FUNCTIONS:
            continue
        started = time.perf_counter()
        try:
            r = checks.CHECK_FUNCTIONS[check](ctx)
        except Exception as exc:  # noqa: BLE001 - a check that crashes is the harness's fault: say so
            r = result(fuse.name, vcase.name, check, Status.ERROR,
                       f"passgate's {check} check crashed: {type(exc).__name__}: {exc}")
        r.duration_s = time.perf_counter() - started
        if check == "fusion_expected":
            r.duration_s += 0.0 if run.from_cache else run.seconds
            r.details.setdefault("fusion_seconds", round(run.seconds, 4))
            r.details.setdefault("fusion_stages", run.stages)
        out.append(r)
    out += ir_checks(ctx, [c for c in wanted if c in IR_CHECKS_ON_FUSED])
    _fill_record(rec, out, ctx)
    return out, rec


def _fill_record(rec: CaseRecord, res: list, ctx: CaseContext) -> None:
    for r in res:
        rec.statuses[r.check] = r.status.value
        rec.messages[r.check] = r.message
        d = r.details
        if r.check == "fusion_expected":
            rec.fused = int(d.get("fused", sum((d.get("emitted") or {}).values())))
            diag = d.get("diagnosis") or {}
            if diag:
                rec.fault, rec.diagnosis = diag.get("fault", ""), diag.get("summary", "")
        if r.check == "fused_vs_qdq":
            if "worst_lsb" in d:
                rec.worst_lsb, rec.unit = d["worst_lsb"], d.get("unit", "")
            diag = d.get("diagnosis") or {}
            if diag:
                rec.fault, rec.diagnosis = diag.get("fault", ""), diag.get("summary", "")
        if r.check == "fused_vs_float":
            rec.sqnr_fused_db = d.get("sqnr_fused_db")
            rec.sqnr_qdq_db = d.get("sqnr_qdq_db")
            rec.sqnr_fused_vs_qdq_db = d.get("sqnr_fused_vs_qdq_db")
    rec.timings = ctx.timings


def run(recipes_: Optional[list] = None, count: int = 3, seed: int = 0, fuse: Optional[fusion.Fusion] = None,
        device=None, wanted: Iterable[str] = ALL_CHECKS, use_cache: bool = True,
        progress: Optional[Callable[[int, int, CaseRecord, list], None]] = None) -> VulkanRun:
    """All checks of ``fuse`` (default: the Vulkan preprocess pipeline) on ``count`` cases per recipe."""
    started = time.perf_counter()
    fuse = fuse or fusion.builtin()
    chosen = recipes_ if recipes_ is not None else catalog.select()
    all_cases = [c for r in chosen for c in recipes.cases(r, count, seed)]
    out = VulkanRun()
    for i, vcase in enumerate(all_cases, 1):
        res, rec = check_case(vcase, fuse, device, wanted, use_cache)
        out.results.extend(res)
        out.records.append(rec)
        if progress:
            progress(i, len(all_cases), rec, res)
    out.seconds = time.perf_counter() - started
    return out
