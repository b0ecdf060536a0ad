"""Comparing outputs: before the pass against after it.

Tolerances are per dtype and lean on ``torch.testing.assert_close`` for the
comparison itself (NaN equal to NaN, dtype and shape mismatches named). They
are looser than assert_close's float32 default because legal rewrites
reassociate arithmetic (conv/batch-norm folding, decompositions) and move
results by a few ULP times the reduction length.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import torch

__all__ = ["TOLERANCES", "tolerance", "Comparison", "compare_outputs"]

# dtype -> (rtol, atol)
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1e-4, 1e-4),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (2e-2, 2e-2),
}


def tolerance(dtype: torch.dtype) -> tuple[float, float]:
    return TOLERANCES.get(dtype, (0.0, 0.0))  # integers, bools: exact


@dataclass
class Comparison:
    ok: bool
    message: str = ""
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    worst_output: Optional[int] = None
    details: dict = field(default_factory=dict)


def _errors(expected: torch.Tensor, actual: torch.Tensor) -> tuple[float, float]:
    if expected.numel() == 0 or expected.shape != actual.shape:
        return 0.0, 0.0
    e = expected.double()
    a = actual.double()
    both_nan = torch.isnan(e) & torch.isnan(a)
    same_inf = torch.isinf(e) & (e == a)
    diff = (e - a).abs().masked_fill(both_nan | same_inf, 0.0)
    diff = torch.nan_to_num(diff, nan=float("inf"))
    rel = diff / e.abs().clamp_min(1e-12)
    return float(diff.max()), float(rel.masked_fill(diff == 0, 0.0).max())


def compare_outputs(expected: list, actual: list) -> Comparison:
    """Compare flat output lists; the message names the first failing output."""
    if len(expected) != len(actual):
        return Comparison(False, f"the program returns {len(actual)} outputs, {len(expected)} before the pass")
    worst_abs, worst_rel, worst_i = 0.0, 0.0, None
    for i, (e, a) in enumerate(zip(expected, actual)):
        if not isinstance(e, torch.Tensor) or not isinstance(a, torch.Tensor):
            if e != a:
                return Comparison(False, f"output {i}: {a!r} != {e!r}")
            continue
        abs_err, rel_err = _errors(e, a)
        if abs_err > worst_abs:
            worst_abs, worst_rel, worst_i = abs_err, rel_err, i
        rtol, atol = tolerance(e.dtype)
        try:
            torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as exc:
            first = str(exc).strip().splitlines()[0]
            return Comparison(
                False,
                f"output {i} ({e.dtype}, shape {tuple(e.shape)}): {first}; max abs err {abs_err:.3g}, "
                f"max rel err {rel_err:.3g} (rtol {rtol:g}, atol {atol:g})",
                abs_err,
                rel_err,
                i,
            )
    return Comparison(True, "", worst_abs, worst_rel, worst_i)
