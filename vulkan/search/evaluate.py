"""One draw of the search: build the case a :class:`~vulkan.search.space.CaseDesc` names, fuse it, judge it, measure errors.

The verdicts are the very checks of :mod:`vulkan.judging.checks` (``fusion_expected``,
``fused_vs_qdq``, ``fused_vs_float``) on a :class:`vulkan.judging.context.CaseContext`,
without the diagnosis: a search judges hundreds of draws and only the
shrunk failure needs to be explained (``passgate vulkan`` re-checks it with
the full :func:`vulkan.judging.suite.check_case`). The IR checks of the fused
program (:mod:`vulkan.judging.ircheck`, the ones a ``--count`` recipe run judges, by
the same ids) are judged on every draw too and recorded with its verdicts,
but they do not steer the hunt: executorch 1.5.1 fails ``meta_stack_trace``
on every fused node, so shrinking on them would spend every op's defect
allowance on one structural fault and drown every numeric boundary.
:attr:`Outcome.failed` (what is shrunk) is the search's checks;
:attr:`Outcome.ir_failed` the IR checks a draw fails.

Error statistics are the ones ExecuTorch's backend test suite logs
(``backends/test/harness/error_statistics.py``: max abs error, mean abs
error, SQNR) plus the error in LSBs of the output (abs error / the LSB the
Q/DQ program's own quantization gives each element, :mod:`vulkan.judging.tolerance`),
for the fused program against the Q/DQ program and against the float model.
They are kept as sums so that a configuration's cases pool into one row.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch

from vulkan.judging import tolerance
from vulkan.judging.ircheck import IR_CHECKS_ON_FUSED, ir_checks

__all__ = ["SEARCH_CHECKS", "IR_CHECKS", "DEVICE_CHECK", "COMPARISONS", "TYPICAL_DRAWS", "ErrStats", "Outcome",
           "evaluate", "error_stats"]

SEARCH_CHECKS = ("fusion_expected", "fused_vs_qdq", "fused_vs_float")
IR_CHECKS = IR_CHECKS_ON_FUSED  # judged on every draw as well, recorded, not shrunk (module docstring)
DEVICE_CHECK = "device_vs_reference"  # judged too when a device executor is plugged in
COMPARISONS = ("fused_vs_qdq", "fused_vs_float")
TYPICAL_DRAWS = ("sample", "random", "random2")
_BAD = ("fail", "error")
_KEPT = ("worst_lsb", "unit", "sqnr_fused_db", "sqnr_qdq_db", "sqnr_fused_vs_qdq_db", "emitted", "fused")


@dataclass
class ErrStats:
    """Pooled error figures of one comparison (sums, so cases add up)."""

    elements: int = 0
    max_abs: float = 0.0
    sum_abs: float = 0.0
    max_lsb: float = 0.0
    sum_lsb: float = 0.0
    signal: float = 0.0
    noise: float = 0.0
    unit: str = ""

    def add(self, err: torch.Tensor, ref: torch.Tensor, unit: torch.Tensor, unit_name: str) -> None:
        err, ref, unit = err.double().reshape(-1), ref.double().reshape(-1), unit.double().reshape(-1)
        if not err.numel():
            return
        lsb = torch.where(err == 0, torch.zeros_like(err), err / unit.clamp_min(1e-30))
        self.elements += err.numel()
        self.max_abs = max(self.max_abs, float(err.max()))
        self.sum_abs += float(err.sum())
        self.max_lsb = max(self.max_lsb, float(lsb.max()))
        self.sum_lsb += float(lsb.sum())
        self.signal += float((ref**2).sum())
        self.noise += float((err**2).sum())
        self.unit = self.unit or unit_name

    def merge(self, other: "ErrStats") -> None:
        self.elements += other.elements
        self.max_abs, self.max_lsb = max(self.max_abs, other.max_abs), max(self.max_lsb, other.max_lsb)
        self.sum_abs, self.sum_lsb = self.sum_abs + other.sum_abs, self.sum_lsb + other.sum_lsb
        self.signal, self.noise = self.signal + other.signal, self.noise + other.noise
        self.unit = self.unit or other.unit

    @property
    def mae(self) -> float:
        return self.sum_abs / self.elements if self.elements else math.nan

    @property
    def mean_lsb(self) -> float:
        return self.sum_lsb / self.elements if self.elements else math.nan

    @property
    def sqnr(self) -> float:
        if self.signal == 0.0:
            return math.nan
        return math.inf if self.noise == 0.0 else 10.0 * math.log10(self.signal / self.noise)

    def to_json(self) -> dict:
        return {"elements": self.elements, "max_abs": self.max_abs, "mae": self.mae, "sqnr_db": self.sqnr,
                "max_lsb": self.max_lsb, "mean_lsb": self.mean_lsb, "unit": self.unit}


@dataclass
class Outcome:
    """The verdicts and error figures of one draw."""

    desc: object  # vulkan.search.space.CaseDesc
    fusion: str
    expected: tuple
    statuses: dict = field(default_factory=dict)  # check -> status value
    messages: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)  # comparison -> ErrStats
    details: dict = field(default_factory=dict)  # check -> the figures its result reports (worst LSB, SQNR)
    seconds: float = 0.0
    fused: int = 0

    @property
    def failed(self) -> tuple:
        return tuple(c for c in SEARCH_CHECKS + (DEVICE_CHECK,) if self.statuses.get(c) in _BAD)

    @property
    def ir_failed(self) -> tuple:
        """The IR checks of the fused program this draw fails (recorded; not what the search shrinks)."""
        return tuple(c for c in IR_CHECKS if self.statuses.get(c) in _BAD)

    @property
    def applicable(self) -> bool:
        return self.statuses.get("fusion_expected") != "not_applicable"

    def to_json(self) -> dict:
        return {"case": self.desc.to_json(), "config": self.desc.config_id(), "shape": self.desc.shape_id(),
                "expected": list(self.expected), "statuses": self.statuses, "messages": self.messages,
                "stats": {k: v.to_json() for k, v in self.stats.items()}, "seconds": round(self.seconds, 3)}


def evaluate(desc, fuse, use_cache: bool = True, timeout: float = 120.0, device=None) -> Outcome:
    """Judge one description under ``fuse``; never raises (a harness failure is an ``error`` status).

    With a ``device`` executor plugged in, ``device_vs_reference`` is judged
    too; the IR checks of the fused program always are.
    """
    from vulkan.backend import fusion
    from vulkan.backend.executors import ReferenceExecutor
    from vulkan.cases import lowering
    from vulkan.judging import checks
    from vulkan.judging.context import CaseContext
    from vulkan.search import spaces

    started = time.perf_counter()
    vcase = spaces.desc_case(desc)
    out = Outcome(desc, fuse.name, vcase.recipe.expected)
    try:
        qdq = lowering.load(vcase.spec)
    except Exception as exc:  # noqa: BLE001 - a case the harness cannot build is an error, never silent
        msg = f"passgate could not build the case: {type(exc).__name__}: {str(exc).strip()[:300]}"
        out.statuses = dict.fromkeys(SEARCH_CHECKS + IR_CHECKS, "error")
        out.messages = dict.fromkeys(SEARCH_CHECKS + IR_CHECKS, msg)
        out.seconds = time.perf_counter() - started
        return out
    run = fusion.fuse(fuse, vcase, qdq, timeout=timeout, use_cache=use_cache)
    ctx = CaseContext(vcase, qdq, fuse.name, run, ReferenceExecutor(), device, {})
    judged = [("fusion_expected", checks.fusion_expected),
              ("fused_vs_qdq", lambda c: checks.fused_vs_qdq(c, diagnose=False)),
              ("fused_vs_float", checks.fused_vs_float)]
    if device is not None:
        judged.append(("device_vs_reference", checks.device_vs_reference))
    for check, fn in judged:
        try:
            r = fn(ctx)
            out.statuses[check], out.messages[check] = r.status.value, r.message
            out.details[check] = {k: r.details[k] for k in _KEPT if k in r.details}
            if check == "fusion_expected":
                out.fused = int(r.details.get("fused", 0))
        except Exception as exc:  # noqa: BLE001 - a check that crashes is the harness's fault: say so
            out.statuses[check], out.messages[check] = "error", f"passgate's {check} crashed: {exc}"
    for r in ir_checks(ctx):  # never raises: a crashing verifier is an error result
        out.statuses[r.check], out.messages[r.check] = r.status.value, r.message
        if r.details:
            out.details[r.check] = _ir_details(r.details)
    if run.ok and ctx.applicable:
        try:
            out.stats = error_stats(ctx)
        except Exception:  # noqa: BLE001 - figures are a bonus; verdicts stand without them
            out.stats = {}
    out.seconds = time.perf_counter() - started
    return out


def _ir_details(details: dict) -> dict:
    """What an IR verdict's result keeps of its details: the offending nodes, not bulky dumps."""
    return {k: v for k, v in details.items() if isinstance(v, (str, int, float, bool, list, tuple, type(None)))}


def _units(ctx, probe, j: int, y: torch.Tensor) -> tuple[torch.Tensor, str]:
    """The LSB of each output element in float units (an int output's scale), and the unit's name."""
    if not y.dtype.is_floating_point:
        qp = ctx.vcase.output_qparams()
        return torch.full(y.shape, float(qp[0] if qp else 1.0), dtype=torch.float64), "out LSB"
    tol = tolerance.tolerance_for(probe, j)
    return tol.unit, tol.unit_name


def error_stats(ctx) -> dict:
    """Fused vs Q/DQ over every input draw of the case; fused vs float over the typical draws.

    Against the float model the saturating and all-zero draws measure the
    quantization range (clipping), which the Q/DQ program shares, not the
    fusion's accuracy; against the Q/DQ program every draw counts.
    """
    fused = ctx.fused_outputs
    if fused.error is not None:
        return {}
    stats = {c: ErrStats() for c in COMPARISONS}
    floats = ctx.float_outputs
    names = [n for n, _ in ctx.draws]
    for i, probe in enumerate(ctx.probes):
        outs = fused.per_draw[i]
        if outs is None or len(outs) != len(probe.outputs):
            continue
        for j, (a, e) in enumerate(zip(outs, probe.outputs)):
            if a.shape != e.shape:
                return {}
            unit, name = _units(ctx, probe, j, e)
            af, ef = ctx.decode([a, e])
            stats["fused_vs_qdq"].add((af - ef).abs(), ef, unit, name)
            typical = names[i] in TYPICAL_DRAWS
            if typical and i < len(floats) and j < len(floats[i]) and floats[i][j].shape == a.shape:
                ref = floats[i][j].double()
                stats["fused_vs_float"].add((af - ref).abs(), ref, unit, name)
    return {k: v for k, v in stats.items() if v.elements}
