"""Module families the Vulkan recipes quantize, and hand-built Q/DQ graphs.

Every family is parametrized by its shape (a plain dict of ints/bools) so that
a recipe can draw shapes with hypothesis and rebuild the *same* module from
the shape and a seed: the float eager model that ``fused_vs_float`` compares
against is rebuilt that way instead of being stored.

Hand-built modules (``QdqUnary``, ``QdqAdd``, ``QdqPixelShuffle``,
``QdqLinear``) exist because no quantizer in executorch 1.5.1 emits those
dequantize -> op -> quantize patterns: they call ``quantized_decomposed`` ops
directly, exactly the nodes a PT2E flow would leave in the graph. Their
``float_model`` twin computes the same op in float on the dequantized input,
without the output quantization, which is what the Q/DQ program approximates.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import nn

__all__ = ["Linear", "Conv", "Add", "Embedding", "QParams", "QdqUnary", "QdqAdd", "QdqPixelShuffle", "QdqLinear",
           "FloatOfQdq", "output_qparams"]

qd = torch.ops.quantized_decomposed


def _init(module: nn.Module, seed: int) -> nn.Module:
    """Re-initialize parameters from ``seed`` so rebuilding gives identical weights."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            bound = 1.0 / max(1, p.shape[-1] if p.dim() > 1 else p.shape[0]) ** 0.5
            p.copy_((torch.rand(p.shape, generator=gen) * 2 - 1) * bound * 2)
    return module.eval()


class Linear(nn.Module):
    """linear (+ optional relu). ``lead`` is the input's leading shape: (M,) or (B, M) for 3-D inputs."""

    def __init__(self, K: int, N: int, bias: bool = True, relu: bool = False):
        super().__init__()
        self.linear = nn.Linear(K, N, bias=bias)
        self.relu = relu

    def forward(self, x):
        y = self.linear(x)
        return torch.relu(y) if self.relu else y


class Conv(nn.Module):
    """conv2d / conv_transpose2d (+ optional relu) over an NCHW input."""

    def __init__(self, C_in: int, C_out: int, k: int, stride: int = 1, padding: int = 0, dilation: int = 1,
                 groups: int = 1, bias: bool = True, relu: bool = False, transposed: bool = False,
                 output_padding: int = 0):
        super().__init__()
        if transposed:
            self.conv = nn.ConvTranspose2d(C_in, C_out, k, stride, padding, output_padding, groups, bias, dilation)
        else:
            self.conv = nn.Conv2d(C_in, C_out, k, stride, padding, dilation, groups, bias)
        self.relu = relu

    def forward(self, x):
        y = self.conv(x)
        return torch.relu(y) if self.relu else y


class Add(nn.Module):
    """x + y (+ optional relu): what the XNNPACK quantizer annotates as a quantized add."""

    def __init__(self, relu: bool = False):
        super().__init__()
        self.relu = relu

    def forward(self, x, y):
        z = x + y
        return torch.relu(z) if self.relu else z


class Embedding(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)

    def forward(self, idx):
        return self.emb(idx)


# --- hand-built Q/DQ graphs -------------------------------------------------------------


class QParams(nn.Module):
    """Per-tensor int8 activation qparams shared by the hand-built modules."""

    def __init__(self, s_in: float, zp_in: int, s_out: float, zp_out: int, qmin: int = -128, qmax: int = 127):
        super().__init__()
        self.s_in, self.zp_in, self.s_out, self.zp_out = float(s_in), int(zp_in), float(s_out), int(zp_out)
        self.qmin, self.qmax = qmin, qmax

    def dq_in(self, q):
        return qd.dequantize_per_tensor(q, self.s_in, self.zp_in, self.qmin, self.qmax, torch.int8)

    def q_out(self, y):
        return qd.quantize_per_tensor(y, self.s_out, self.zp_out, self.qmin, self.qmax, torch.int8)

    def dq_in_float(self, q):
        return (q.to(torch.float32) - self.zp_in) * self.s_in


class QdqUnary(QParams):
    """int8 -> dequantize -> relu -> quantize -> int8."""

    def forward(self, q):
        return self.q_out(torch.relu(self.dq_in(q)))


class QdqAdd(nn.Module):
    """Two int8 inputs -> dequantize each -> add (+relu) -> quantize -> int8.

    ``relu`` with an output zero point that does *not* clamp at 0 (symmetric
    output) is what tells whether a fusion honours the relu or drops it.
    """

    def __init__(self, s_a: float, zp_a: int, s_b: float, zp_b: int, s_out: float, zp_out: int, relu: bool = False,
                 alpha: Optional[float] = None):
        super().__init__()
        self.a = QParams(s_a, zp_a, s_out, zp_out)
        self.b = QParams(s_b, zp_b, s_out, zp_out)
        self.relu = relu
        self.alpha = alpha  # passed as torch.add's ``alpha`` keyword (the graph keeps it as a kwarg)

    def forward(self, qa, qb):
        if self.alpha is None:
            z = self.a.dq_in(qa) + self.b.dq_in(qb)
        else:
            z = torch.add(self.a.dq_in(qa), self.b.dq_in(qb), alpha=self.alpha)
        if self.relu:
            z = torch.relu(z)
        return self.a.q_out(z)


class QdqPixelShuffle(QParams):
    def __init__(self, r: int, **qparams):
        super().__init__(**qparams)
        self.r = r

    def forward(self, q):
        return self.q_out(torch.nn.functional.pixel_shuffle(self.dq_in(q), self.r))


class QdqLinear(nn.Module):
    """q -> dq -> linear(dq per-channel int8 weight) [-> q]: static int8 activations by hand.

    ``quant_out=False`` gives the float-output pattern (``linear_q8ta_q8csw``)
    that the PT2E quantizers never emit on their own (they quantize outputs).
    Weights are quantized per output channel, symmetric, in [-127, 127]; with
    ``asym`` affine in [-128, 127] with per-channel zero points (what no PT2E
    quantizer emits, but the patterns match).
    """

    def __init__(self, K: int, N: int, bias: bool, quant_out: bool, s_in: float, zp_in: int,
                 s_out: float = 0.05, zp_out: int = 0, seed: int = 0, relu: bool = False, asym: bool = False):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        w = torch.randn(N, K, generator=gen) / K**0.5
        if asym:
            w = w + 0.5 * w.abs().amax(dim=1, keepdim=True)  # skewed rows: the zero points are far from 0
            lo, hi = w.amin(dim=1).clamp_max(0), w.amax(dim=1).clamp_min(0)
            scales = ((hi - lo) / 255.0).clamp_min(1e-6)
            zps = torch.clamp(-128 - torch.round(lo / scales), -128, 127).to(torch.int64)
            q = torch.clamp(torch.round(w / scales[:, None]) + zps[:, None], -128, 127)
        else:
            scales = w.abs().amax(dim=1).clamp_min(1e-6) / 127.0
            zps = torch.zeros(N, dtype=torch.int64)
            q = torch.clamp(torch.round(w / scales[:, None]), -127, 127)
        self.qmin = -128 if asym else -127
        self.register_buffer("w_q", q.to(torch.int8))
        self.register_buffer("w_scales", scales)
        self.register_buffer("w_zps", zps)
        self.bias = nn.Parameter(torch.randn(N, generator=gen) * 0.1) if bias else None
        self.qp = QParams(s_in, zp_in, s_out, zp_out)
        self.quant_out, self.relu = quant_out, relu

    def weight(self):
        return qd.dequantize_per_channel(self.w_q, self.w_scales, self.w_zps, 0, self.qmin, 127, torch.int8)

    def forward(self, x):
        xq = qd.quantize_per_tensor(x, self.qp.s_in, self.qp.zp_in, -128, 127, torch.int8)
        y = torch.nn.functional.linear(self.qp.dq_in(xq), self.weight(), self.bias)
        if self.relu:
            y = torch.relu(y)
        return self.qp.q_out(y) if self.quant_out else y


# --- float twins of the hand-built graphs (the fused_vs_float truth) ----------------------


class FloatOfQdq(nn.Module):
    """The float computation a hand-built Q/DQ module approximates, on the same inputs.

    Integer inputs are dequantized exactly (that is the input's meaning); the op
    runs in float; no output quantization. For ``QdqLinear`` the float weight is
    the dequantized one, so the comparison isolates activation quantization.
    """

    def __init__(self, qdq: nn.Module):
        super().__init__()
        self.qdq = qdq

    def forward(self, *xs):
        m = self.qdq
        if isinstance(m, QdqUnary) and not isinstance(m, QdqPixelShuffle):
            return torch.relu(m.dq_in_float(xs[0]))
        if isinstance(m, QdqPixelShuffle):
            return torch.nn.functional.pixel_shuffle(m.dq_in_float(xs[0]), m.r)
        if isinstance(m, QdqAdd):
            z = m.a.dq_in_float(xs[0]) + (1.0 if m.alpha is None else m.alpha) * m.b.dq_in_float(xs[1])
            return torch.relu(z) if m.relu else z
        if isinstance(m, QdqLinear):
            w = (m.w_q.to(torch.float32) - m.w_zps[:, None]) * m.w_scales[:, None]
            y = torch.nn.functional.linear(xs[0], w, m.bias)
            return torch.relu(y) if m.relu else y
        raise TypeError(f"no float twin for {type(m).__name__}")


def output_qparams(model: nn.Module) -> Optional[tuple[float, int]]:
    """(scale, zero point) of an int8 output, to read it as float; None for float outputs."""
    if isinstance(model, QdqAdd):
        return model.a.s_out, model.a.zp_out
    if isinstance(model, QParams):
        return model.s_out, model.zp_out
    if isinstance(model, QdqLinear) and model.quant_out:
        return model.qp.s_out, model.qp.zp_out
    return None


init_weights = _init
