"""The configuration space of every fused op of executorch 1.5.1's Vulkan backend.

What each pattern matches and what it must decline, read from
``backends/vulkan/patterns/quantized_*.py`` and
``_passes/fuse_quantized_ops.py`` (1.5.1), and which configurations the
quantizers can produce (``torchao/quantization/pt2e/quantizer/utils.py``:
``get_weight_qspec`` rejects asymmetric weights, so PT2E flows (XNNPACK,
Vulkan) give symmetric weights only; torchao's ``IntxWeightOnlyConfig`` /
``Int8DynamicActivationIntxWeightConfig`` give symmetric or asymmetric,
per-group or per-axis; hand-built graphs give what no quantizer emits):

- linear (``QuantizedLinearMatch``): anchor linear/addmm/mm/bmm, in-channels
  % 4 == 0; routes on granularity and activation: per-group + weight-only ->
  ``linear_q4gsw``; per-group + per-token dynamic -> ``linear_dq8ca_q4gsw``;
  per-channel + static -> ``q8ta_linear`` (``_gemv`` when M == 1) with a
  quantized output, ``linear_q8ta_q8csw`` without. The matcher never reads
  the weight zero points and no fused linear op takes them: an asymmetric
  weight must be declined. Per-axis int4 is per-group with one group.
- conv (``QuantizedConvolutionMatch``): static activation, quantized
  output, ``(C_out / groups) % 4 == 0`` for grouped convs, dilation 1 for
  transposed; depthwise when ``C_in / groups == 1 and groups == C_out``
  (needs ``C_out % 4 == 0``: the replacement asserts it), pointwise when the
  kernel is 1x1 with unit stride / dilation and no padding. The weight's
  scale may be per tensor or per channel (the op takes a scale per channel).
- add (``QuantizedBinaryMatch``): dq(a) + dq(b) [-> relu] -> q; the op has an
  ``alpha`` argument, so ``torch.add(..., alpha=k)`` must be honoured, and no
  activation argument, so a relu is only exact when the output zero point
  clamps at -128.
- relu, pixel_shuffle: dq -> op -> q, any per-tensor qparams.
- embedding (``QuantizedEmbeddingMatch``): int4 per-group symmetric, dim % 32.
- weight-only per-channel (``FuseQuantizedOpsTransform``, preprocess only):
  symmetric 8-bit -> ``aten._weight_int8pack_mm``, 4-bit -> ``linear_qcs4w``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from vulkan.cases import catalog, flows, models
from vulkan.cases.recipes import LINEAR_ANCHORS, PREPROCESS
from vulkan.search.space import CaseDesc, OpSpace, merged, register

__all__ = ["ALL", "lead", "nchw", "qparams"]

ALL = 0
_lin = {a: ALL for a in LINEAR_ANCHORS}
_qdq_absorbs = {"dequantize_per_tensor": ALL, "quantize_per_tensor": ALL}

# --- shared strategy pieces ---------------------------------------------------------------------

lead = st.one_of(st.integers(1, 6).map(lambda m: [m]), st.tuples(st.just(2), st.integers(1, 4)).map(list))
qparams = st.fixed_dictionaries({
    "s_in": st.sampled_from([0.02, 0.05, 0.1]), "zp_in": st.integers(-20, 20),
    "s_out": st.sampled_from([0.03, 0.05, 0.11]), "zp_out": st.integers(-20, 20),
})
nchw = st.tuples(st.just(1), st.integers(1, 12), st.integers(1, 6), st.integers(1, 6)).map(list)


def _lin_shape(config: dict, k_multiple: int = 1) -> st.SearchStrategy:
    """K (a multiple of the group size, or of ``k_multiple`` most of the time), N, lead."""
    g = config.get("group") or 0
    if g:
        K = st.integers(1, 3).map(lambda m: g * m)
    else:
        K = st.one_of(st.integers(1, 10).map(lambda m: k_multiple * m), st.integers(2, 40))
    return st.fixed_dictionaries({"K": K, "N": st.integers(1, 16), "lead": lead})


def _build_linear(d: CaseDesc):
    s = merged(d)

    def build(shape, seed):
        return catalog.build_linear(s, seed)

    return build


def _is_gemv(d: CaseDesc) -> bool:
    return d.shape_dict()["lead"][-1] == 1


def _k_ok(d: CaseDesc) -> bool:
    return d.shape_dict()["K"] % 4 == 0


# --- linear: torchao int4 weight-only (linear_q4gsw) ---------------------------------------------


def _torchao_configs(act: str) -> st.SearchStrategy:
    @st.composite
    def draw(draw_):
        gran = draw_(st.sampled_from(["per_group", "per_channel"]))
        return {"flow": "torchao" if act == "none" else "torchao-8da", "weight": draw_(st.sampled_from(["sym", "asym"])),
                "granularity": gran, "group": draw_(st.sampled_from([16, 32, 8, 64])) if gran == "per_group" else 0,
                "act": act, "bits": 4, "bias": draw_(st.booleans())}

    return draw()


def _torchao_build(d: CaseDesc):
    if d.flow == "torchao":
        flow = flows.torchao_intx_weight_only(d.bits, group=d.group, symmetric=d.weight == "sym")
    else:
        flow = flows.torchao_8da_intx(d.bits, group=d.group, symmetric=d.weight == "sym")
    return _build_linear(d), flow, {}


register(OpSpace(
    "et_vk.linear_q4gsw", lambda: _torchao_configs("none"), lambda c: _lin_shape(c, 4),
    expected=lambda d: ("et_vk.linear_q4gsw",) if d.weight == "sym" and _k_ok(d) else (),
    build=_torchao_build, absorbs=lambda d: {**_lin, "dequantize_affine": ALL},
    notes="linear_q4gsw takes no weight zero point (asymmetric) and needs K % 4 == 0"))

register(OpSpace(
    "et_vk.linear_dq8ca_q4gsw", lambda: _torchao_configs("dynamic"), lambda c: _lin_shape(c, 4),
    expected=lambda d: ("et_vk.linear_dq8ca_q4gsw",) if d.weight == "sym" and _k_ok(d) else (),
    build=_torchao_build, absorbs=lambda d: {**_lin, "dequantize_affine": ALL, "quantize_affine": ALL},
    notes="linear_dq8ca_q4gsw takes no weight zero point (asymmetric) and needs K % 4 == 0"))

# --- linear: static int8 activations (q8ta_linear / _gemv, linear_q8ta_q8csw) --------------------


def _static_linear_configs(out_q: bool) -> st.SearchStrategy:
    @st.composite
    def draw(draw_):
        flow = draw_(st.sampled_from(["hand", "xnnpack", "vulkan"] if out_q else ["hand", "vulkan"]))
        weight = draw_(st.sampled_from(["sym", "asym"])) if flow == "hand" else "sym"
        gran = draw_(st.sampled_from(["per_channel", "per_tensor"])) if flow == "xnnpack" else "per_channel"
        relu = draw_(st.booleans()) if out_q else False
        return {"flow": flow, "weight": weight, "granularity": gran, "act": "static", "bias": draw_(st.booleans()),
                "relu": relu, "out_q": out_q}

    return draw()


def _static_linear_build(d: CaseDesc):
    s = merged(d)
    if d.flow == "hand":
        def build(shape, seed):
            m = models.QdqLinear(s["K"], s["N"], s["bias"], quant_out=d.out_q, s_in=0.02, zp_in=3, seed=seed,
                                 relu=d.relu, asym=d.weight == "asym")
            return m, (catalog._randn([*s["lead"], s["K"]], seed + 1),)

        return build, flows.hand, {"float_model": models.FloatOfQdq}
    if d.flow == "xnnpack":
        return _build_linear(d), flows.xnnpack_static(per_channel=d.granularity == "per_channel"), {}
    return _build_linear(d), flows.vulkan_static(output=d.out_q), {}


def _q8ta_expected(d: CaseDesc) -> tuple:
    if d.weight != "sym" or d.granularity != "per_channel" or not _k_ok(d):
        return ()
    return ("et_vk.q8ta_linear_gemv",) if _is_gemv(d) else ("et_vk.q8ta_linear",)


register(OpSpace(
    "et_vk.q8ta_linear", lambda: _static_linear_configs(True), lambda c: _lin_shape(c, 4),
    expected=_q8ta_expected, build=_static_linear_build, flows=("hand", "xnnpack", "vulkan"),
    absorbs=lambda d: catalog._q8ta_lin_absorbs,
    notes="q8ta_linear takes no weight zero point and needs per-channel weights and K % 4 == 0"))

register(OpSpace(
    "et_vk.linear_q8ta_q8csw", lambda: _static_linear_configs(False), lambda c: _lin_shape(c, 4),
    expected=lambda d: ("et_vk.linear_q8ta_q8csw",) if d.weight == "sym" and _k_ok(d) else (),
    build=_static_linear_build, flows=("hand", "vulkan"),
    absorbs=lambda d: {**_lin, "dequantize_per_channel": ALL},
    notes="linear_q8ta_q8csw takes no weight zero point and needs K % 4 == 0"))

# --- weight-only per-channel (preprocess only): _weight_int8pack_mm, linear_qcs4w -------------------


def _qcnw_space(bits: int, op: str, emitted: str) -> OpSpace:
    def configs():
        return st.fixed_dictionaries({"flow": st.just("vulkan"), "weight": st.just("sym"),
                                      "granularity": st.just("per_channel"), "act": st.just("none"),
                                      "bits": st.just(bits), "bias": st.booleans()})

    return OpSpace(op, configs, lambda c: _lin_shape(c, 1), expected=lambda d: (emitted,),
                   build=lambda d: (_build_linear(d), flows.vulkan_weight_only(d.bits), {}),
                   absorbs=lambda d: {**_lin, "dequantize_per_channel": ALL}, modes=(PREPROCESS,))


register(_qcnw_space(8, "aten._weight_int8pack_mm", "_weight_int8pack_mm"))
register(_qcnw_space(4, "et_vk.linear_qcs4w", "et_vk.linear_qcs4w"))
