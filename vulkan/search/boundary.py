"""Where a shrunk failure stops failing: one-field probes around it, and the traits that separate them.

Hypothesis' shrinker gives the *smallest* failing case, which still does not
say which of its properties matter (is it the asymmetric weight, or N = 1?).
:func:`probes` varies one field of the shrunk case at a time (a
configuration field, or a shape field moved across the multiple-of-4
boundary the kernels care about); each probe is judged on the same check.
:func:`explain` then picks, among the named :func:`traits` true on every
failing case, the fewest that are false on each passing probe: "fails when
output channels % 4 != 0 and groups > 1; passes otherwise". A later failing
draw that has all those traits is the same defect (:func:`explains`).
"""

from __future__ import annotations

from dataclasses import replace

from vulkan.search.space import CaseDesc, OpSpace

__all__ = ["MAX_PROBES", "FLOWS", "RELU_OPS", "traits", "consistent", "probes", "literals", "explain", "explains"]

MAX_PROBES = 12
_PT2E = ("xnnpack", "vulkan")
_TORCHAO = ("torchao", "torchao-8da")
FLOWS = ("hand",) + _PT2E + _TORCHAO
RELU_OPS = ("et_vk.q8ta_linear", "et_vk.q8ta_conv2d", "et_vk.q8ta_conv2d_pw", "et_vk.q8ta_conv2d_dw", "et_vk.q8ta_add")


def traits(d: CaseDesc) -> dict[str, bool]:
    """Named properties of a case that a kernel or a matcher may depend on."""
    s = d.shape_dict()
    t = {f"flow {f}": d.flow == f for f in FLOWS}
    t.update({"asymmetric weights": d.weight == "asym", "bias": d.bias, "relu": d.relu})
    if d.granularity != "-":
        t.update({"per-tensor weights": d.granularity == "per_tensor",
                  "per-group weights": d.granularity == "per_group"})
    if d.act != "-":
        t.update({"dynamic activations": d.act == "dynamic", "weight-only": d.act == "none"})
    if d.op.endswith("q8ta_add"):
        t.update({"alpha passed (keyword)": d.alpha is not None, "alpha != 1": (d.alpha or 1.0) != 1.0})
    n = s.get("N", s.get("C_out"))
    if n is not None:
        t["output channels % 4 != 0"] = n % 4 != 0
    if "K" in s:
        t.update({"K % 4 != 0": s["K"] % 4 != 0, "K % 8 != 0": s["K"] % 8 != 0})
    if "lead" in s:
        t.update({"M == 1": s["lead"][-1] == 1, "3-D input": len(s["lead"]) > 1})
    if "C_in" in s:
        g = s.get("groups", 1)
        t.update({"in channels per group > 1": s["C_in"] // g > 1, "kernel > 1": s.get("k", 1) > 1,
                  "groups > 1": g > 1, "stride > 1": s.get("stride", 1) > 1, "padding > 0": s.get("padding", 0) > 0,
                  "dilation > 1": s.get("dilation", 1) > 1})
    if "shape" in s:
        t["channels % 4 != 0"] = s["shape"][1] % 4 != 0
        if "zp_out" in s:
            t["output zero point is -128"] = s["zp_out"] == -128
    if "dim" in s:
        t["dim % 32 != 0"] = s["dim"] % 32 != 0
    return t


def consistent(sp: OpSpace, d: CaseDesc) -> bool:
    """Could the space have drawn ``d``? (What probes must respect: quantizers' and builders' limits.)"""
    s = d.shape_dict()
    if d.weight == "asym" and d.flow in _PT2E:
        return False  # get_weight_qspec rejects asymmetric weights
    if d.granularity == "per_group" and (d.flow not in _TORCHAO or not d.group):
        return False
    if d.granularity == "per_tensor" and d.flow not in ("xnnpack",):
        return False
    size = s.get("K", s.get("dim"))
    if d.group and size is not None and size % d.group:
        return False
    if any(isinstance(v, int) and not isinstance(v, bool) and v < 1 for k, v in s.items()
           if k not in ("padding", "zp_in", "zp_out")):
        return False
    return sp.valid(d)


def _int_alternatives(name: str, v: int, d: CaseDesc) -> list[int]:
    if name == "K" and d.group:
        return [v + d.group]
    if name in ("zp_in", "zp_out"):
        return [0 if v else 5] + ([-128] if name == "zp_out" and v != -128 else [])
    if name in ("dilation", "stride", "groups", "padding", "k"):
        return [v + 1] if v <= 1 else [1]
    alt = [v + (4 - v % 4)] if v % 4 else [v + 1]
    return alt + ([1] if v > 1 and name in ("C_in", "C_out", "N") else [])  # down to one channel too


def _shape_probes(d: CaseDesc) -> list[CaseDesc]:
    out = []
    s = d.shape_dict()
    for name, v in s.items():
        if isinstance(v, bool) or name in ("H", "W", "vocab", "n_idx", "r") or isinstance(v, float):
            continue
        if isinstance(v, list):
            if name == "lead":
                out.append(d.with_shape(lead=[1] if v[-1] != 1 else [3]))
            elif name == "shape":
                out.append(d.with_shape(shape=[*v[:1], v[1] + (4 - v[1] % 4 if v[1] % 4 else 1), *v[2:]]))
            continue
        for alt in _int_alternatives(name, v, d):
            probe = d.with_shape(**{name: alt})
            if name == "groups":  # keep the channels divisible by the groups
                probe = probe.with_shape(C_in=s["C_in"] // v * alt, C_out=s["C_out"] // v * alt)
            if name in ("C_in", "C_out") and s.get("groups", 1) == s.get("C_in") == s.get("C_out"):
                probe = probe.with_shape(C_in=alt, C_out=alt, groups=alt)  # depthwise stays depthwise
            out.append(probe)
    return out


def _config_probes(d: CaseDesc, flows: tuple) -> list[CaseDesc]:
    out = [replace(d, weight="asym" if d.weight == "sym" else "sym")] if d.weight != "-" else []
    if d.weight != "-":  # only ops with a weight have a bias
        out.append(replace(d, bias=not d.bias))
    if d.relu or d.op in RELU_OPS and d.out_q:
        out.append(replace(d, relu=not d.relu))
    if d.granularity == "per_group":
        out += [replace(d, granularity="per_channel", group=0)] + [replace(d, group=g) for g in (16, 32)
                                                                   if g != d.group]
    elif d.granularity in ("per_channel", "per_tensor"):
        other = {"per_channel": "per_tensor", "per_tensor": "per_channel"}[d.granularity]
        out.append(replace(d, granularity=other))
        if d.flow in _TORCHAO:
            out.append(replace(d, granularity="per_group", group=16))
    if d.op.endswith("q8ta_add"):
        out += [replace(d, alpha=a) for a in (None, 1.0, 2.0) if a != d.alpha]
    if "s_in" not in d.shape_dict():  # hand-built elementwise graphs carry their qparams in the shape
        out += [replace(d, flow=f) for f in flows if f != d.flow]
    return out


def probes(sp: OpSpace, d: CaseDesc) -> list[CaseDesc]:
    """One-field variations of ``d`` the space could have drawn, configuration first, at most MAX_PROBES."""
    seen, out = {d}, []
    for p in _config_probes(d, sp.flows) + _shape_probes(d):
        if p not in seen and consistent(sp, p):
            seen.add(p)
            out.append(p)
    return out[:MAX_PROBES]


def _negate(name: str) -> str:
    for a, b in ((" != ", " == "), (" == ", " != "), (" > ", " <= "), (" is ", " is not ")):
        if a in name:
            return name.replace(a, b, 1)
    return f"no {name}" if name in ("bias", "relu") else f"not {name}"


def literals(d: CaseDesc) -> dict[str, bool]:
    """:func:`traits` and their negations ("output zero point is not -128"), so either side can bound."""
    out = {}
    for k, v in traits(d).items():
        out[k], out[_negate(k)] = v, not v
    return out


def explain(failing: list[CaseDesc], passing: list[CaseDesc]) -> tuple[list[str], str]:
    """(traits, text): the fewest traits true on every failing case that rule out every passing probe."""
    common = None
    for d in failing:
        on = {k for k, v in literals(d).items() if v}
        common = on if common is None else common & on
    common = common or set()
    lits = {p: literals(p) for p in passing}
    uncovered, chosen = list(passing), []
    while uncovered:
        best = max(sorted(common - set(chosen)), default=None,
                   key=lambda t: (sum(1 for p in uncovered if not lits[p].get(t, False)), not t.startswith("no")))
        if best is None or not any(not lits[p].get(best, False) for p in uncovered):
            break
        chosen.append(best)
        uncovered = [p for p in uncovered if lits[p].get(best, False)]
    n = f"{len(failing) - 1} failing / {len(passing)} passing one-field probes"
    if not passing:
        return [], f"fails on every one-field change around it ({n})"
    text = f"fails when {' and '.join(chosen)}; passes otherwise" if chosen else "no trait separates it"
    if uncovered:
        text += "; also passes when " + ", ".join(_change(failing[0], p) for p in uncovered[:3])
    return chosen, f"{text} ({n})"


def _change(base: CaseDesc, p: CaseDesc) -> str:
    a, b = {**base.config(), **base.shape_dict()}, {**p.config(), **p.shape_dict()}
    diff = [f"{k}={b.get(k)}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return " ".join(diff) or "unchanged"


def explains(defect_traits: list[str], d: CaseDesc) -> bool:
    t = literals(d)
    return all(t.get(name, False) for name in defect_traits)
