"""The recipe catalog for executorch 1.5.1's Vulkan backend.

What fuses, read from ``backends/vulkan/patterns/*.py`` and
``_passes/fuse_quantized_ops.py`` (1.5.1):

=========================  =====================================================  ===========================
fused op                   pattern (anchor: linear/addmm/mm/conv/add/relu/...)    produced here by
=========================  =====================================================  ===========================
et_vk.linear_q4gsw         weight-only, int4 per-group weight, K % 4 == 0          torchao IntxWeightOnly int4
et_vk.linear_dq8ca_q4gsw   per-token dynamic int8 act + int4 per-group weight      torchao 8da4w
et_vk.linear_qcs4w         weight-only per-channel sym, values in [-8, 7]          VulkanQuantizer 4-bit (*)
aten._weight_int8pack_mm   weight-only per-channel sym int8                        VulkanQuantizer 8-bit (*)
et_vk.linear_q8ta_q8csw    static per-tensor act, per-channel weight, float out    VulkanQuantizer static-in
et_vk.q8ta_linear(_gemv)   as above + quantized output (+relu); gemv when M == 1  XNNPACK static, VK static-io
et_vk.q8ta_conv2d(_pw/_dw) static act, per-channel weight, quantized output        XNNPACK static per-channel
et_vk.q8ta_conv2d_transp.  transposed, per-channel on axis 1, dilation 1           XNNPACK static per-channel
et_vk.q8ta_add             dq(a) + dq(b) -> q (+relu)                              XNNPACK static
et_vk.q8ta_relu            dq -> relu -> q                                         hand-built
et_vk.q8ta_pixel_shuffle   dq -> pixel_shuffle -> q (pixel_shuffle preserved)      hand-built
et_vk.embedding_q4gsw      torchao int4 per-group sym embedding, dim % 32 == 0     torchao IntxWeightOnly int4
=========================  =====================================================  ===========================

(*) fused by ``FuseQuantizedOpsTransform``, which only the preprocess
pipeline runs, so those recipes are not applicable to ``fuse-patterns``.
Patterns that must be declined (left unfused, no crash) are recipes with
``expected=()``; several encode a constraint the matcher checks (K % 4,
channels per group % 4, dilated transposed conv, dim % 32) and some one the
fused op cannot express (zero points, a relu the op has no argument for).
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from vulkan.cases import flows, models, shapes
from vulkan.cases.recipes import LINEAR_ANCHORS, PREPROCESS, Recipe

__all__ = ["RECIPES", "BY_NAME", "select"]

ALL = 0  # absorbs: every node of that op must be gone

_lin = {a: ALL for a in LINEAR_ANCHORS}


def _randn(shape, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def build_linear(shape: dict, seed: int):
    m = models.init_weights(models.Linear(shape["K"], shape["N"], shape["bias"], shape.get("relu", False)), seed)
    return m, (_randn([*shape["lead"], shape["K"]], seed + 1),)


def build_conv(shape: dict, seed: int):
    s = shape
    m = models.Conv(s["C_in"], s["C_out"], s["k"], s["stride"], s["padding"], s["dilation"], s["groups"], s["bias"],
                    s.get("relu", False), s.get("transposed", False))
    return models.init_weights(m, seed), (_randn([1, s["C_in"], s["H"], s["W"]], seed + 1),)


def build_add(shape: dict, seed: int):
    return models.Add(shape.get("relu", False)), (_randn(shape["shape"], seed), _randn(shape["shape"], seed + 1))


def _int8(shape, seed: int) -> torch.Tensor:
    return torch.randint(-128, 128, shape, generator=torch.Generator().manual_seed(seed), dtype=torch.int8)


def build_qdq_relu(shape: dict, seed: int):
    qp = {k: shape[k] for k in ("s_in", "zp_in", "s_out", "zp_out")}
    return models.QdqUnary(**qp), (_int8(shape["shape"], seed),)


def build_qdq_add(shape: dict, seed: int):
    m = models.QdqAdd(shape["s_in"], shape["zp_in"], shape["s_in"] * 1.5, -shape["zp_in"], shape["s_out"],
                      shape["zp_out"], relu=shape.get("relu", False))
    return m, (_int8(shape["shape"], seed), _int8(shape["shape"], seed + 1))


def build_pixel_shuffle(shape: dict, seed: int):
    qp = {k: shape[k] for k in ("s_in", "zp_in", "s_out", "zp_out")}
    return models.QdqPixelShuffle(shape["r"], **qp), (_int8(shape["shape"], seed),)


def build_qdq_linear(shape: dict, seed: int):
    m = models.QdqLinear(shape["K"], shape["N"], shape["bias"], quant_out=False, s_in=0.02, zp_in=3, seed=seed)
    return m, (_randn([*shape["lead"], shape["K"]], seed + 1),)


def build_embedding(shape: dict, seed: int):
    m = models.init_weights(models.Embedding(shape["vocab"], shape["dim"]), seed)
    gen = torch.Generator().manual_seed(seed + 1)
    idx = torch.randint(0, shape["vocab"], (shape["n_idx"],), generator=gen)
    idx[0], idx[-1] = shape["vocab"] - 1, 0  # the last row is in every sample (draws reuse the max)
    return m, (idx,)


def _float_twin(m):
    return models.FloatOfQdq(m)


def _q8(flow, **kw):
    return dict(flow=flow, **kw)


# --- shape strategies -------------------------------------------------------------------------

K4 = st.integers(1, 10).map(lambda k: 4 * k)
K_unaligned = st.integers(5, 40).filter(lambda k: k % 4)
G4 = st.sampled_from([4, 12, 16, 32])  # 12: K = 12, 36 are multiples of 4 but not of 8
lin_q4 = shapes.linear(group=G4)
lin_gemv = shapes.linear(K=K4, relu=st.booleans(), lead_=st.one_of(st.just([1]), st.just([2, 1])))
lin_gemm = shapes.linear(K=K4, relu=st.booleans(), lead_=st.one_of(st.integers(2, 9).map(lambda m: [m]),
                                                                     st.integers(2, 6).map(lambda m: [2, m])))
lin_any = shapes.linear(K=st.integers(2, 40))
ew = st.fixed_dictionaries({"shape": shapes.nchw}).flatmap(
    lambda d: shapes.qparams.map(lambda q: {**d, **q}))
add_shape = st.fixed_dictionaries({"shape": shapes.nchw, "relu": st.booleans()})

# --- the catalog -------------------------------------------------------------------------------

_q8ta_lin_absorbs = {**_lin, "dequantize_per_channel": ALL, "dequantize_per_tensor": 1, "quantize_per_tensor": 1}
_conv_absorbs = {"convolution": ALL, "dequantize_per_channel": ALL, "dequantize_per_tensor": 1,
                 "quantize_per_tensor": 1}

RECIPES: tuple[Recipe, ...] = (
    Recipe("linear_q4gsw[torchao-int4-sym]", "et_vk.linear_q4gsw", ("et_vk.linear_q4gsw",), build_linear,
           flows.torchao_intx_weight_only(4, symmetric=True), lin_q4,
           absorbs={**_lin, "dequantize_affine": ALL}),
    Recipe("linear_dq8ca_q4gsw[torchao-8da4w]", "et_vk.linear_dq8ca_q4gsw", ("et_vk.linear_dq8ca_q4gsw",),
           build_linear, flows.torchao_8da_intx(4), lin_q4,
           absorbs={**_lin, "dequantize_affine": ALL, "quantize_affine": ALL}),
    Recipe("linear_qcs4w[vulkan-w4]", "et_vk.linear_qcs4w", ("et_vk.linear_qcs4w",), build_linear,
           flows.vulkan_weight_only(4), lin_any, absorbs={**_lin, "dequantize_per_channel": ALL}, modes=(PREPROCESS,)),
    Recipe("weight_int8pack_mm[vulkan-w8]", "aten._weight_int8pack_mm", ("_weight_int8pack_mm",), build_linear,
           flows.vulkan_weight_only(8), lin_any, absorbs={**_lin, "dequantize_per_channel": ALL}, modes=(PREPROCESS,)),
    Recipe("linear_q8ta_q8csw[vulkan-static-in]", "et_vk.linear_q8ta_q8csw", ("et_vk.linear_q8ta_q8csw",),
           build_linear, flows.vulkan_static(output=False), shapes.linear(K=K4),
           absorbs={**_lin, "dequantize_per_channel": ALL, "dequantize_per_tensor": 1}),
    Recipe("linear_q8ta_q8csw[hand]", "et_vk.linear_q8ta_q8csw", ("et_vk.linear_q8ta_q8csw",), build_qdq_linear,
           flows.hand, shapes.linear(K=K4), absorbs={**_lin, "dequantize_per_channel": ALL},
           float_model=_float_twin),
    Recipe("q8ta_linear[xnnpack]", "et_vk.q8ta_linear", ("et_vk.q8ta_linear",), build_linear,
           flows.xnnpack_static_per_channel, lin_gemm, absorbs=_q8ta_lin_absorbs),
    Recipe("q8ta_linear[vulkan-static-io]", "et_vk.q8ta_linear", ("et_vk.q8ta_linear",), build_linear,
           flows.vulkan_static(output=True), lin_gemm, absorbs=_q8ta_lin_absorbs),
    Recipe("q8ta_linear_gemv[xnnpack]", "et_vk.q8ta_linear_gemv", ("et_vk.q8ta_linear_gemv",), build_linear,
           flows.xnnpack_static_per_channel, lin_gemv, absorbs=_q8ta_lin_absorbs),
    Recipe("q8ta_conv2d[xnnpack]", "et_vk.q8ta_conv2d", ("et_vk.q8ta_conv2d",), build_conv,
           flows.xnnpack_static_per_channel, shapes.conv("general"), absorbs=_conv_absorbs),
    Recipe("q8ta_conv2d_pw[xnnpack]", "et_vk.q8ta_conv2d_pw", ("et_vk.q8ta_conv2d_pw",), build_conv,
           flows.xnnpack_static_per_channel, shapes.conv("pw"), absorbs=_conv_absorbs),
    Recipe("q8ta_conv2d_dw[xnnpack]", "et_vk.q8ta_conv2d_dw", ("et_vk.q8ta_conv2d_dw",), build_conv,
           flows.xnnpack_static_per_channel, shapes.conv("dw"), absorbs=_conv_absorbs),
    Recipe("q8ta_conv2d_transposed[xnnpack]", "et_vk.q8ta_conv2d_transposed", ("et_vk.q8ta_conv2d_transposed",),
           build_conv, flows.xnnpack_static_per_channel, shapes.conv("transposed"), absorbs=_conv_absorbs),
    Recipe("q8ta_add[xnnpack]", "et_vk.q8ta_add", ("et_vk.q8ta_add",), build_add, flows.xnnpack_static_per_channel,
           add_shape, absorbs={"add": ALL, "dequantize_per_tensor": 2, "quantize_per_tensor": 1}),
    Recipe("q8ta_relu[hand]", "et_vk.q8ta_relu", ("et_vk.q8ta_relu",), build_qdq_relu, flows.hand, ew,
           absorbs={"relu": ALL, "dequantize_per_tensor": ALL, "quantize_per_tensor": ALL},
           float_model=_float_twin, inputs="int8"),
    Recipe("q8ta_pixel_shuffle[hand]", "et_vk.q8ta_pixel_shuffle", ("et_vk.q8ta_pixel_shuffle",),
           build_pixel_shuffle, flows.hand, shapes.pixel_shuffle(),
           absorbs={"pixel_shuffle": ALL, "dequantize_per_tensor": ALL, "quantize_per_tensor": ALL},
           float_model=_float_twin, inputs="int8"),
    Recipe("embedding_q4gsw[torchao-int4-sym]", "et_vk.embedding_q4gsw", ("et_vk.embedding_q4gsw",), build_embedding,
           flows.torchao_intx_weight_only(4, symmetric=True, only=torch.nn.Embedding),
           shapes.embedding(aligned=True), absorbs={"embedding": ALL, "dequantize_affine": ALL},
           inputs="index"),
    # --- patterns the backend must decline: unfused, no crash ---------------------------------
    Recipe("decline:linear_q4gsw-asymmetric[torchao-int4-asym]", "decline:int4 asymmetric linear", (), build_linear,
           flows.torchao_intx_weight_only(4, symmetric=False), lin_q4,
           notes="linear_q4gsw has no zero-point input: an asymmetric weight cannot be fused into it"),
    Recipe("decline:linear-K%4[torchao-int4-sym]", "decline:linear K % 4 != 0", (), build_linear,
           flows.torchao_intx_weight_only(4, group=0, symmetric=True),
           shapes.linear(K=K_unaligned), notes="the matcher requires in-channels % 4 == 0"),
    Recipe("decline:linear-int8-per-axis[torchao-int8]", "decline:torchao int8 per-axis linear", (), build_linear,
           flows.torchao_intx_weight_only(8, group=0), shapes.linear(K=K4),
           notes="no 1.5.1 pattern takes an int8 dequantize_affine weight"),
    Recipe("decline:linear-dynamic-per-tensor[vulkan-dyn8]", "decline:VulkanQuantizer dynamic linear", (),
           build_linear, flows.vulkan_dynamic(8), shapes.linear(K=K4),
           notes="per-tensor dynamic activations match neither q8ta (static) nor dq8ca (per-token)"),
    Recipe("decline:conv2d_dw-C%4[xnnpack]", "decline:depthwise conv C % 4 != 0", (), build_conv,
           flows.xnnpack_static_per_channel, shapes.conv("dw_unaligned"),
           notes="q8ta_conv2d_dw needs C % 4 == 0; the replacement asserts it instead of the matcher declining"),
    Recipe("decline:conv2d-groups-unaligned[xnnpack]", "decline:grouped conv C_out/groups % 4 != 0", (), build_conv,
           flows.xnnpack_static_per_channel, shapes.conv("grouped_unaligned").filter(
               lambda s: (s["C_out"] // s["groups"]) % 4 and s["groups"] < s["C_out"])),
    Recipe("decline:conv2d_transposed-dilated[xnnpack]", "decline:dilated transposed conv", (), build_conv,
           flows.xnnpack_static_per_channel, shapes.conv("transposed_dilated")),
    Recipe("decline:q8ta_add-relu-unclamped[hand]", "decline:q8ta_add + relu (zp not at 0)", (), build_qdq_add,
           flows.hand, ew.map(lambda d: {**d, "relu": True, "zp_out": 0}), float_model=_float_twin, inputs="int8",
           notes="q8ta_add has no activation argument; the relu is only implied when the output zp clamps at 0"),
    Recipe("decline:embedding-dim%32[torchao-int4-sym]", "decline:embedding dim % 32 != 0", (), build_embedding,
           flows.torchao_intx_weight_only(4, symmetric=True, only=torch.nn.Embedding),
           shapes.embedding(aligned=False), inputs="index"),
    Recipe("decline:embedding-asymmetric[torchao-int4-asym]", "decline:int4 asymmetric embedding", (),
           build_embedding, flows.torchao_intx_weight_only(4, symmetric=False, only=torch.nn.Embedding),
           shapes.embedding(aligned=True), inputs="index",
           notes="embedding_q4gsw hard-codes a -8 offset: zero points must be 0"),
)

BY_NAME = {r.name: r for r in RECIPES}


def select(ops=None) -> list[Recipe]:
    """Recipes whose name or op contains any of ``ops`` (all when None)."""
    if not ops:
        return list(RECIPES)
    return [r for r in RECIPES if any(o in r.name or o in r.op for o in ops)]
