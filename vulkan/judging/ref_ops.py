"""Independent readings of the fused ``et_vk`` ops, for diagnosis only.

Each function computes what a fused node *should* compute, reading its
arguments the way the fusion pass wrote them (``patterns/quantized_*.py``,
``_passes/fuse_quantized_ops.py``, 1.5.1): packed int4 nibbles, weights
flattened as (OC, KH, KW, IC/g), scales and bias padded to a multiple of 4,
the output scale passed inverted. None of it calls ``custom_ops_lib``.

Keyword ``variant`` flags re-read the arguments in *other* ways (a different
weight layout, no int4 offset, zero points dropped, ...). The diagnosis runs
the fused program with each reading substituted for the op and reports which
readings match the Q/DQ program and which one reproduces the CPU reference's
output, e.g. "the pass's own layout matches Q/DQ; the CPU reference reads
the weight as (OC, IC/g, KH, KW)". These readings are never the verdict:
the verdict is always fused output against the Q/DQ program.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch
import torch.nn.functional as F

__all__ = ["VARIANTS", "linear_q4gsw", "linear_dq8ca_q4gsw", "linear_qcs4w", "linear_q8ta_q8csw", "q8ta_linear",
           "q8ta_conv2d", "q8ta_conv2d_dw", "q8ta_conv2d_transposed", "q8ta_add", "q8ta_relu", "q8ta_pixel_shuffle",
           "embedding_q4gsw", "READERS", "reader", "positional", "run_with_reading"]

# op -> {variant name: human description}. "spec" is the op's contract: how the pass lays the
# arguments out and what the op registry / device kernel take; other entries are other readings.
VARIANTS: dict[str, dict[str, str]] = {
    "linear_q4gsw": {"spec": "the pass's packing (low nibble = even k, -8 offset, scales [groups, N] padded)",
                     "swap_nibbles": "nibbles read high = even k"},
    "linear_dq8ca_q4gsw": {"spec": "per-row int8 activation quantization, int4 per-group weight",
                           "float_act": "the activation is not quantized"},
    "linear_qcs4w": {"spec": "the pass's packing (high nibble = even k, -8 offset)",
                     "no_offset": "nibbles read without the -8 offset", "swap_nibbles": "nibbles read low = even k"},
    "linear_q8ta_q8csw": {"spec": "a float activation, quantized inside the op with the input scale/zero point "
                                  "(the op's contract: FP_T input in op_registry, fp_input in the device kernel)",
                          "int8_dequantized": "an int8 activation, dequantized with the input scale/zero point"},
    "q8ta_linear": {"spec": "int8 activation dequantized, padded scales/bias sliced, output requantized"},
    "q8ta_conv2d": {"spec": "weight as (OC, KH, KW, IC/g) flattened (the pass's im2col layout)",
                    "oihw": "weight read as (OC, IC/g, KH, KW)", "no_relu": "the fused relu ignored"},
    "q8ta_conv2d_dw": {"spec": "weight as (KH, KW, OC)"},
    "q8ta_conv2d_transposed": {"spec": "weight as (groups, OC/g, KH, KW, IC/g) flattened",
                               "oihw": "weight read as (OC, IC/g, KH, KW)",
                               "oihw_group0_scales": "weight read as (OC, IC/g, KH, KW) and group 0's scales used "
                                                     "for every group"},
    "q8ta_add": {"spec": "dq(a) + alpha * dq(b), requantized"},
    "q8ta_relu": {"spec": "relu(dq(x)), requantized"},
    "q8ta_pixel_shuffle": {"spec": "pixel_shuffle(dq(x)), requantized with 1 / output_inv_scale",
                           "inv_as_scale": "output_inv_scale used as the scale"},
    "embedding_q4gsw": {"spec": "linear-weight packing (low nibble = even), -8 offset, per-group scales",
                        "swap_nibbles": "nibbles read high = even"},
}
VARIANTS["q8ta_linear_gemv"] = VARIANTS["q8ta_linear"]
VARIANTS["q8ta_conv2d_pw"] = VARIANTS["q8ta_conv2d"]


def _dq(q: torch.Tensor, s, zp) -> torch.Tensor:
    return (q.to(torch.float32) - zp) * s


def _q(y: torch.Tensor, s: float, zp: int) -> torch.Tensor:
    return torch.clamp(torch.round(y / s) + zp, -128, 127).to(torch.int8)


def _unpack4(packed: torch.Tensor, k: int, even_low: bool, offset: int = 8) -> torch.Tensor:
    lo, hi = (packed & 0x0F).to(torch.int16), (packed >> 4).to(torch.int16)
    even, odd = (lo, hi) if even_low else (hi, lo)
    out = torch.stack([even, odd], dim=-1).reshape(packed.shape[0], -1)[:, :k]
    return (out - offset).to(torch.float32)


def _groups_expand(scales_nk: torch.Tensor, k: int, group: int) -> torch.Tensor:
    return scales_nk.repeat_interleave(group, dim=1)[:, :k]


def linear_q4gsw(x, w, scales, group, bias=None, variant="spec"):
    n, k = w.shape[0], x.shape[-1]
    wq = _unpack4(w, k, even_low=variant != "swap_nibbles")
    s = scales[:, :n].t().float()  # [groups, Npad] -> [N, groups]
    y = F.linear(x, wq * _groups_expand(s, k, group))
    return y + bias[:n] if bias is not None else y


def linear_dq8ca_q4gsw(x, in_s, in_zp, w, sums, scales, group, bias=None, variant="spec"):
    if variant != "float_act":
        xq = torch.clamp(torch.round(x / in_s) + in_zp, -128, 127)
        x = (xq - in_zp) * in_s
    return linear_q4gsw(x, w, scales, group, bias)


def linear_qcs4w(x, w, scales, variant="spec"):
    k = x.shape[-1]
    wq = _unpack4(w, k, even_low=variant == "swap_nibbles", offset=0 if variant == "no_offset" else 8)
    return F.linear(x, wq * scales[: w.shape[0], None].float())


def linear_q8ta_q8csw(x, in_s, in_zp, w, sums, scales, bias=None, variant="spec"):
    n = w.shape[0]
    if variant == "int8_dequantized" or not x.dtype.is_floating_point and variant == "_int8":
        xf = _dq(x, in_s, in_zp)
    else:
        xf = _dq(_q(x.to(torch.float32), in_s, in_zp), in_s, in_zp)
    y = F.linear(xf, w.float() * scales[:n, None].float())
    return y + bias[:n] if bias is not None else y


def q8ta_linear(x, in_s, in_zp, w, sums, scales, out_s, out_zp, bias=None, act="none", variant="spec"):
    y = linear_q8ta_q8csw(x, in_s, in_zp, w, sums, scales, bias, variant="_int8")
    return _q(torch.relu(y) if act == "relu" else y, out_s, out_zp)


def _conv_weight(w, scales, oc, icg, kh, kw, variant):
    wk = w[:, : kh * kw * icg].float()
    if variant in ("oihw",):
        wf = wk.reshape(oc, icg, kh, kw)
    else:
        wf = wk.reshape(oc, kh, kw, icg).permute(0, 3, 1, 2)
    return wf * scales[:oc, None, None, None].float()


def q8ta_conv2d(x, in_s, in_zp, w, sums, scales, out_s, out_zp, bias, ksize, stride, padding, dilation, groups,
                act, variant="spec"):
    oc, icg = w.shape[0], x.shape[1] // groups
    wf = _conv_weight(w, scales, oc, icg, ksize[0], ksize[1], variant)
    y = F.conv2d(_dq(x, in_s, in_zp), wf, bias[:oc] if bias is not None else None, stride, padding, dilation, groups)
    return _q(torch.relu(y) if act == "relu" and variant != "no_relu" else y, out_s, out_zp)


def q8ta_conv2d_dw(x, in_s, in_zp, w, sums, scales, out_s, out_zp, bias, ksize, stride, padding, dilation, groups,
                   act, variant="spec"):
    kh, kw, oc = w.shape
    wf = w.permute(2, 0, 1).reshape(oc, 1, kh, kw).float() * scales[:oc, None, None, None].float()
    y = F.conv2d(_dq(x, in_s, in_zp), wf, bias[:oc] if bias is not None else None, stride, padding, dilation, groups)
    return _q(torch.relu(y) if act == "relu" else y, out_s, out_zp)


def q8ta_conv2d_transposed(x, in_s, in_zp, w, sums, scales, out_s, out_zp, bias, ksize, stride, padding,
                           output_padding, dilation, groups, act, variant="spec"):
    oc, icg, (kh, kw) = w.shape[0], x.shape[1] // groups, ksize
    ocg = oc // groups
    wk = w[:, : kh * kw * icg].float()
    s = scales[:oc].float()
    if variant.startswith("oihw"):
        wf = wk.reshape(groups, ocg, icg, kh, kw).permute(0, 2, 1, 3, 4)  # (g, IC/g, OC/g, KH, KW)
        if variant == "oihw_group0_scales":
            s = s[:ocg].repeat(groups)
    else:
        wf = wk.reshape(groups, ocg, kh, kw, icg).permute(0, 4, 1, 2, 3)
    wf = wf * s.reshape(groups, 1, ocg, 1, 1)
    wf = wf.reshape(groups * icg, ocg, kh, kw)
    y = F.conv_transpose2d(_dq(x, in_s, in_zp), wf, bias[:oc] if bias is not None else None, stride, padding,
                           output_padding, groups, dilation)
    return _q(torch.relu(y) if act == "relu" else y, out_s, out_zp)


def q8ta_add(a, b, sa, za, sb, zb, so, zo, alpha, variant="spec"):
    return _q(_dq(a, sa, za) + alpha * _dq(b, sb, zb), so, zo)


def q8ta_relu(x, si, zi, so, zo, variant="spec"):
    return _q(torch.relu(_dq(x, si, zi)), so, zo)


def q8ta_pixel_shuffle(x, si, zi, inv_so, zo, r, variant="spec"):
    so = inv_so if variant == "inv_as_scale" else 1.0 / inv_so
    return _q(F.pixel_shuffle(_dq(x, si, zi), r), so, zo)


def embedding_q4gsw(w, scales, group, idx, is_linear_weight=False, variant="spec"):
    dim = w.shape[1] * 2
    even_low = is_linear_weight if variant == "spec" else not is_linear_weight
    wq = _unpack4(w, dim, even_low=even_low)
    s = scales.float() if scales.dim() > 1 else scales.float().reshape(-1, 1)
    return F.embedding(idx, wq * _groups_expand(s, dim, group))


READERS: dict[str, Callable] = {
    "linear_q4gsw": linear_q4gsw, "linear_dq8ca_q4gsw": linear_dq8ca_q4gsw, "linear_qcs4w": linear_qcs4w,
    "linear_q8ta_q8csw": linear_q8ta_q8csw, "q8ta_linear": q8ta_linear, "q8ta_linear_gemv": q8ta_linear,
    "q8ta_conv2d": q8ta_conv2d, "q8ta_conv2d_pw": q8ta_conv2d, "q8ta_conv2d_dw": q8ta_conv2d_dw,
    "q8ta_conv2d_transposed": q8ta_conv2d_transposed, "q8ta_add": q8ta_add, "q8ta_relu": q8ta_relu,
    "q8ta_pixel_shuffle": q8ta_pixel_shuffle, "embedding_q4gsw": embedding_q4gsw,
}


def reader(op: str) -> Optional[Callable]:
    """The independent reading of ``et_vk.<op>`` (``op`` with or without the namespace)."""
    return READERS.get(op.split(".")[-1])


def positional(target, args, kwargs) -> list:
    """All schema arguments in order (a serde round trip moves defaulted ones to kwargs)."""
    schema = getattr(target, "_schema", None)
    if schema is None or not kwargs:
        return list(args)
    out = list(args)
    for a in schema.arguments[len(args):]:
        if a.name in kwargs:
            out.append(kwargs[a.name])
        elif a.has_default_value():
            out.append(a.default_value)
        else:
            break
    return out


def run_with_reading(ep, inputs: tuple, op: str, variant: str) -> list:
    """Run the fused program with every ``et_vk.<op>`` node computed by our reading ``variant``."""
    from harness.check.execution import flat_args
    from vulkan.judging.tolerance import op_short

    fn = reader(op)
    short = op.split(".")[-1]

    class _Interp(torch.fx.Interpreter):
        def call_function(self, target, args, kwargs):
            if op_short(target) == f"et_vk.{short}":
                return fn(*positional(target, args, kwargs), variant=variant)
            return super().call_function(target, args, kwargs)

    with torch.no_grad():
        out = _Interp(ep.graph_module).run(*flat_args(ep, inputs))
    return [x.detach().clone() for x in torch.utils._pytree.tree_leaves(out)]
