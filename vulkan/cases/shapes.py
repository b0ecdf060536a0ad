"""Shape draws: hypothesis strategies, drawn deterministically from a seed.

Hypothesis is used for what it is good at, describing the space of shapes
that matter to the kernels (M = 1 against M > 1, K and N off multiples of 4 /
8 / the group size, channel counts that need padding, odd spatial sizes,
stride / padding / dilation / groups, 3-D inputs, bias, fused activations)
and starting from the simplest examples, which are the boundary cases.

Draws run hypothesis' *generate* phase only, with a fixed seed and no example
database, so the same seed gives the same shapes on every machine (same
seed, same report). Duplicates are dropped and the first ``count`` kept.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hseed
from hypothesis import strategies as st

__all__ = ["draw", "shape_id", "M", "lead", "linear", "conv", "nchw", "qparams", "pixel_shuffle", "embedding"]

def draw(strategy: st.SearchStrategy, count: int, seed: int) -> list[dict]:
    """``count`` distinct examples of ``strategy`` (dicts), deterministic in ``seed``."""
    seen: dict[str, dict] = {}

    @hseed(seed)
    @settings(max_examples=max(8, count * 6), database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck), derandomize=False)
    @given(strategy)
    def collect(example: Any) -> None:
        key = json.dumps(example, sort_keys=True)
        if key not in seen and len(seen) < count:
            seen[key] = example

    collect()
    return list(seen.values())


def shape_id(shape: dict) -> str:
    """A short stable name for a shape: ``K20-N7-M1-bias``."""
    parts = []
    for k, v in shape.items():
        if isinstance(v, bool):
            if v:
                parts.append(k)
        elif isinstance(v, (list, tuple)):
            parts.append(f"{k}{'x'.join(map(str, v))}")
        else:
            parts.append(f"{k}{v}")
    return "-".join(parts)


# --- linear ---------------------------------------------------------------------------------

M = st.one_of(st.just(1), st.integers(2, 9))
lead = st.one_of(M.map(lambda m: [m]), st.tuples(st.integers(1, 2), M).map(list))  # 2-D or 3-D input


@st.composite
def linear(draw_, K=None, N=None, bias=st.booleans(), relu=st.just(False), group=None, lead_=lead):
    """A linear shape. ``group``: draw K as a multiple of a group size drawn from it."""
    shape: dict = {}
    if group is not None:
        g = draw_(group)
        shape["G"] = g
        shape["K"] = g * draw_(st.integers(1, 3))
    else:
        shape["K"] = draw_(K if K is not None else st.integers(4, 40).map(lambda k: 4 * (k // 4)))
    shape["N"] = draw_(N if N is not None else st.integers(1, 24))
    shape["lead"] = draw_(lead_)
    shape["bias"] = draw_(bias)
    if draw_(relu):
        shape["relu"] = True
    return shape


# --- conv2d ---------------------------------------------------------------------------------

spatial = st.integers(3, 11)


@st.composite
def conv(draw_, kind: str = "general", relu=st.booleans()):
    """kind: general | pw | dw | dw_unaligned | grouped_unaligned | transposed | transposed_dilated."""
    s: dict = {}
    if kind == "pw":
        s.update(C_in=draw_(st.integers(1, 12)), C_out=draw_(st.integers(1, 14)), k=1, stride=1, padding=0,
                 dilation=1, groups=1)
    elif kind in ("dw", "dw_unaligned"):
        c = draw_(st.integers(1, 4)) * 4 if kind == "dw" else draw_(st.integers(1, 11).filter(lambda c: c % 4))
        s.update(C_in=c, C_out=c, k=draw_(st.sampled_from([3, 5])), stride=draw_(st.integers(1, 2)),
                 padding=draw_(st.integers(0, 2)), dilation=draw_(st.integers(1, 2)), groups=c)
    elif kind == "grouped_unaligned":
        g = draw_(st.integers(2, 3))
        s.update(C_in=g * draw_(st.integers(1, 3)), C_out=g * draw_(st.sampled_from([1, 2, 3, 5, 6])), k=3,
                 stride=1, padding=1, dilation=1, groups=g)
    elif kind in ("transposed", "transposed_dilated"):
        g = 1  # the XNNPACK quantizer leaves grouped transposed convs in float
        s.update(C_in=draw_(st.integers(1, 6)), C_out=draw_(st.integers(1, 10)),
                 k=draw_(st.sampled_from([2, 3])), stride=draw_(st.integers(1, 2)), padding=draw_(st.integers(0, 1)),
                 dilation=2 if kind == "transposed_dilated" else 1, groups=g)
        s["transposed"] = True
    else:
        g = draw_(st.sampled_from([1, 1, 1, 2]))
        s.update(C_in=g * draw_(st.integers(1, 5)), C_out=g * (4 * draw_(st.integers(1, 2)) if g > 1 else
                                                                 draw_(st.integers(1, 14))),
                 k=draw_(st.sampled_from([2, 3])), stride=draw_(st.integers(1, 2)), padding=draw_(st.integers(0, 2)),
                 dilation=draw_(st.integers(1, 2)), groups=g)
    s["H"], s["W"] = draw_(spatial), draw_(spatial)
    eff = s["dilation"] * (s["k"] - 1) + 1
    if not s.get("transposed"):
        s["H"], s["W"] = max(s["H"], eff), max(s["W"], eff)
    if kind in ("general", "pw") and s["C_in"] // s["groups"] == 1 and s["groups"] == s["C_out"]:
        s["C_out"] += s["groups"]  # the pass classifies this as depthwise: that case is the dw recipes' job
    s["bias"] = draw_(st.booleans())
    if draw_(relu):
        s["relu"] = True
    return s


# --- elementwise / layout -------------------------------------------------------------------

nchw = st.tuples(st.integers(1, 2), st.integers(1, 12), st.integers(1, 9), st.integers(1, 9)).map(list)

qparams = st.fixed_dictionaries({
    "s_in": st.sampled_from([0.02, 0.05, 0.1]), "zp_in": st.integers(-20, 20),
    "s_out": st.sampled_from([0.03, 0.05, 0.11]), "zp_out": st.integers(-20, 20),
})


@st.composite
def pixel_shuffle(draw_):
    r = draw_(st.integers(2, 3))
    c = draw_(st.integers(1, 4)) * r * r
    return {"shape": [1, c, draw_(st.integers(1, 7)), draw_(st.integers(1, 7))], "r": r, **draw_(qparams)}


@st.composite
def embedding(draw_, aligned: bool = True):
    dim = 32 * draw_(st.integers(1, 3)) if aligned else draw_(st.sampled_from([16, 48, 80]))
    group = draw_(st.sampled_from([g for g in (16, 32) if dim % g == 0]))
    return {"vocab": draw_(st.integers(2, 40)), "dim": dim, "G": group, "n_idx": draw_(st.integers(1, 7))}
