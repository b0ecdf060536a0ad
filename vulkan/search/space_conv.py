"""Configuration spaces of the conv, elementwise and embedding fused ops (see :mod:`vulkan.search.space_ops`)."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from vulkan.cases import catalog, flows, models
from vulkan.search.space import CaseDesc, OpSpace, merged, register
from vulkan.search.space_ops import ALL, _qdq_absorbs, nchw, qparams

# --- conv: static int8 activation, per-channel or per-tensor symmetric weight (XNNPACK PT2E) --------


__all__ = ["AddAlpha"]

def _conv_configs(transposed: bool = False) -> st.SearchStrategy:
    return st.fixed_dictionaries({
        "flow": st.just("xnnpack"), "weight": st.just("sym"),
        "granularity": st.sampled_from(["per_channel", "per_tensor"]), "act": st.just("static"),
        "bias": st.booleans(), "relu": st.booleans() if not transposed else st.just(False)})


def _fit_spatial(s: dict) -> dict:
    eff = s["dilation"] * (s["k"] - 1) + 1
    if not s.get("transposed"):
        s["H"], s["W"] = max(s["H"], eff), max(s["W"], eff)
    return s


@st.composite
def _conv_shape(draw_, kind: str):
    hw = {"H": draw_(st.integers(3, 8)), "W": draw_(st.integers(3, 8))}
    if kind == "pw":
        c_in, c_out = draw_(st.integers(1, 12)), draw_(st.integers(1, 16))
        if c_in == 1 and c_out == 1:  # classified depthwise by the pass: the dw space's job
            c_out = 2
        return {"C_in": c_in, "C_out": c_out, "k": 1, "stride": 1, "padding": 0, "dilation": 1, "groups": 1, **hw}
    geo = {"k": draw_(st.sampled_from([3, 2, 5] if kind == "dw" else [2, 3])), "stride": draw_(st.integers(1, 2)),
           "padding": draw_(st.integers(0, 2 if kind != "transposed" else 1)), "dilation": draw_(st.integers(1, 2))}
    if kind == "dw":
        c = draw_(st.integers(1, 16))
        return _fit_spatial({"C_in": c, "C_out": c, "groups": c, **geo, **hw})
    if kind == "transposed":
        return {"C_in": draw_(st.integers(1, 6)), "C_out": draw_(st.integers(1, 10)), "groups": 1, **geo, **hw,
                "transposed": True}
    g = draw_(st.sampled_from([1, 2, 3]))
    c_in, c_out = g * draw_(st.integers(1, 4)), g * draw_(st.integers(1, 8))
    if c_in // g == 1 and c_out == g:  # depthwise by the pass's reading: the dw space's job
        c_out += g
    return _fit_spatial({"C_in": c_in, "C_out": c_out, "groups": g, **geo, **hw})


def _conv_build(d: CaseDesc):
    s = merged(d)

    def build(shape, seed):
        return catalog.build_conv(s, seed)

    return build, flows.xnnpack_static(per_channel=d.granularity == "per_channel"), {}


def _grouped_unaligned(s: dict) -> bool:
    g = s["groups"]
    return 1 < g < s["C_out"] and (s["C_out"] // g) % 4 != 0


def _conv_expected(op: str):
    def expected(d: CaseDesc) -> tuple:
        s = d.shape_dict()
        if op == "et_vk.q8ta_conv2d_dw":
            return (op,) if s["C_out"] % 4 == 0 else ()
        if op == "et_vk.q8ta_conv2d_transposed":
            return (op,) if s["dilation"] == 1 else ()
        return () if _grouped_unaligned(s) else (op,)

    return expected


def _conv_valid(d: CaseDesc) -> bool:
    s = d.shape_dict()
    ok = s["C_in"] % s["groups"] == 0 and s["C_out"] % s["groups"] == 0 and s["C_in"] > 0 and s["C_out"] > 0
    dw_like = s["C_in"] // s["groups"] == 1 and s["groups"] == s["C_out"] and not s.get("transposed")
    eff = s["dilation"] * (s["k"] - 1) + 1
    fits = s.get("transposed") or (s["H"] + 2 * s["padding"] >= eff and s["W"] + 2 * s["padding"] >= eff)
    if d.op == "et_vk.q8ta_conv2d_dw":
        return ok and dw_like and fits
    if d.op == "et_vk.q8ta_conv2d_pw":
        return ok and not dw_like and s["k"] == 1 and s["stride"] == 1 and s["padding"] == 0 and s["dilation"] == 1
    if d.op == "et_vk.q8ta_conv2d_transposed":  # the XNNPACK quantizer leaves grouped transposed convs in float
        return ok and s["groups"] == 1
    return ok and not dw_like and bool(fits) and s["k"] > 1


_conv_absorbs = {"convolution": ALL, "dequantize_per_channel": ALL, "dequantize_per_tensor": 1, "quantize_per_tensor": 1}

for _op, _kind, _notes in (
        ("et_vk.q8ta_conv2d", "general", "grouped convs need (C_out / groups) % 4 == 0"),
        ("et_vk.q8ta_conv2d_pw", "pw", ""),
        ("et_vk.q8ta_conv2d_dw", "dw", "q8ta_conv2d_dw needs C % 4 == 0"),
        ("et_vk.q8ta_conv2d_transposed", "transposed", "transposed convs need dilation 1")):
    register(OpSpace(_op, (lambda t=_kind == "transposed": _conv_configs(t)), (lambda c, k=_kind: _conv_shape(k)),
                     expected=_conv_expected(_op), build=_conv_build,
                     absorbs=lambda d: _conv_absorbs if d.granularity == "per_channel" else
                     {"convolution": ALL, "dequantize_per_tensor": 2, "quantize_per_tensor": 1},
                     valid=_conv_valid, notes=_notes))

# --- add: dq(a) + alpha * dq(b) [-> relu] -> q ------------------------------------------------------


class AddAlpha(torch.nn.Module):
    """``torch.add(x, y, alpha=alpha)`` (+ relu), what the XNNPACK quantizer annotates as a quantized add."""

    def __init__(self, relu: bool, alpha):
        super().__init__()
        self.relu, self.alpha = relu, alpha

    def forward(self, x, y):
        z = x + y if self.alpha is None else torch.add(x, y, alpha=self.alpha)
        return torch.relu(z) if self.relu else z


@st.composite
def _add_configs(draw_):
    flow = draw_(st.sampled_from(["hand", "xnnpack"]))
    alpha = draw_(st.one_of(st.none(), st.sampled_from([1.0, 2.0, 0.5, -1.0])))
    return {"flow": flow, "act": "static", "relu": draw_(st.booleans()), "alpha": alpha}


def _add_shape(config: dict) -> st.SearchStrategy:
    base = st.fixed_dictionaries({"shape": nchw})
    if config["flow"] != "hand":
        return base
    zp_out = st.integers(-20, 20) if not config["relu"] else st.one_of(st.just(-128), st.integers(-20, 20))
    return st.tuples(base, qparams, zp_out).map(lambda t: {**t[0], **t[1], "zp_out": t[2]})


def _add_build(d: CaseDesc):
    s = merged(d)
    if d.flow == "hand":
        def build(shape, seed):
            m = models.QdqAdd(s["s_in"], s["zp_in"], s["s_in"] * 1.5, -s["zp_in"], s["s_out"], s["zp_out"],
                              relu=d.relu, alpha=d.alpha)
            return m, (catalog._int8(s["shape"], seed), catalog._int8(s["shape"], seed + 1))

        return build, flows.hand, {"float_model": models.FloatOfQdq, "inputs": "int8"}

    def build_f(shape, seed):
        return AddAlpha(d.relu, d.alpha), (catalog._randn(s["shape"], seed), catalog._randn(s["shape"], seed + 1))

    return build_f, flows.xnnpack_static(per_channel=True), {}


def _add_expected(d: CaseDesc) -> tuple:
    s = d.shape_dict()
    if d.relu and d.flow == "hand" and s["zp_out"] > -128:
        return ()  # q8ta_add has no activation argument: the relu is exact only when zp_out clamps at -128
    return ("et_vk.q8ta_add",)


register(OpSpace("et_vk.q8ta_add", _add_configs, _add_shape, expected=_add_expected, build=_add_build,
                 absorbs=lambda d: {"add": ALL, "dequantize_per_tensor": 2, "quantize_per_tensor": 1},
                 notes="q8ta_add has no activation argument; the relu is only implied when the output zp is -128"))

# --- relu, pixel_shuffle: dq -> op -> q ------------------------------------------------------------


def _hand_unary_build(d: CaseDesc):
    s = merged(d)
    qp = {k: s[k] for k in ("s_in", "zp_in", "s_out", "zp_out")}

    def build(shape, seed):
        m = models.QdqPixelShuffle(s["r"], **qp) if "r" in s else models.QdqUnary(**qp)
        return m, (catalog._int8(s["shape"], seed),)

    return build, flows.hand, {"float_model": models.FloatOfQdq, "inputs": "int8"}


_hand = lambda: st.fixed_dictionaries({"flow": st.just("hand"), "act": st.just("static")})  # noqa: E731


@st.composite
def _pixel_shape(draw_, config=None):
    r = draw_(st.integers(2, 3))
    c = draw_(st.integers(1, 4)) * r * r
    return {"shape": [1, c, draw_(st.integers(1, 6)), draw_(st.integers(1, 6))], "r": r, **draw_(qparams)}


register(OpSpace("et_vk.q8ta_relu", _hand, lambda c: st.tuples(nchw, qparams).map(lambda t: {"shape": t[0], **t[1]}),
                 expected=lambda d: ("et_vk.q8ta_relu",), build=_hand_unary_build,
                 absorbs=lambda d: {"relu": ALL, **_qdq_absorbs}))
register(OpSpace("et_vk.q8ta_pixel_shuffle", _hand, lambda c: _pixel_shape(),
                 expected=lambda d: ("et_vk.q8ta_pixel_shuffle",), build=_hand_unary_build,
                 absorbs=lambda d: {"pixel_shuffle": ALL, **_qdq_absorbs}))

# --- embedding: torchao int4 per-group -------------------------------------------------------------


@st.composite
def _emb_configs(draw_):
    gran = draw_(st.sampled_from(["per_group", "per_channel"]))
    return {"flow": "torchao", "weight": draw_(st.sampled_from(["sym", "asym"])), "granularity": gran,
            "group": draw_(st.sampled_from([32, 16])) if gran == "per_group" else 0, "act": "none", "bits": 4}


@st.composite
def _emb_shape(draw_, config):
    g = config.get("group") or 16
    dim = g * draw_(st.integers(1, 6))
    return {"vocab": draw_(st.integers(2, 40)), "dim": dim, "n_idx": draw_(st.integers(1, 7))}


def _emb_build(d: CaseDesc):
    s = merged(d, G=d.group or d.shape_dict()["dim"])

    def build(shape, seed):
        return catalog.build_embedding(s, seed)

    flow = flows.torchao_intx_weight_only(4, group=d.group, symmetric=d.weight == "sym", only=torch.nn.Embedding)
    return build, flow, {"inputs": "index"}


register(OpSpace("et_vk.embedding_q4gsw", _emb_configs, _emb_shape,
                 expected=lambda d: ("et_vk.embedding_q4gsw",) if d.weight == "sym" and d.shape_dict()["dim"] % 32 == 0
                 else (),
                 build=_emb_build, absorbs=lambda d: {"embedding": ALL, "dequantize_affine": ALL},
                 valid=lambda d: not d.group or d.shape_dict()["dim"] % d.group == 0,
                 notes="embedding_q4gsw hard-codes a -8 offset (zero points must be 0) and needs dim % 32 == 0"))
