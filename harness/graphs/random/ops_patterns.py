"""Op rules that emit the small multi-op patterns backend passes rewrite, in one statement each.

A rewrite pass matches a *shape* of graph: a conv whose only user is a batch
norm, a conv whose only user is a relu or hardtanh, a permute followed by
elementwise ops and the inverse permute, the same permute (or view) on both
operands of an elementwise op or a cat, a permute whose only user is a view
that adds or drops a size-1 dim. Drawn op by op, such a chain is rare (the
second op must pick the first one's result, and nothing else may read it),
so the passes of ``executorch.backends.transforms`` that look for them
(``FuseBatchNormWithConvPass``, ``FuseClampPass``,
``RemovePermutesAroundElementwiseOps``, ``FuseIdenticalInputTransformsPass``,
``PostponePermuteOpBelowSqueezeOrUnsqueezeLikeView``) ran on graphs without
them and were never exercised. Each rule here writes the whole chain as one
nested expression, so the inner results have exactly the one user the
pattern requires; the ops themselves are plain torch calls models write.

``pairwise_distance`` is there for its decomposition: it adds ``eps`` with
``aten.add.Scalar``, a scalar overload the scalar-to-tensor passes
(``ReplaceScalarWithTensorArgPass``) rewrite and no other rule lowers to.
The last rule reads a channels-last *graph input* back into contiguous
memory (``x.contiguous()``), the input-boundary clone
``ReplaceChannelsLastInputClones`` rewrites; it only applies to an input the
generator made channels-last (:meth:`harness.graphs.random.gen.Gen.new_input`).

Sizes fixed by a view are chosen among static dims only, as in
:mod:`harness.graphs.random.ops_shape`. The vocabulary registers them as
one op rule, ``pattern`` (:func:`pattern` picks one that accepts the
operand): every slot added to the generator's draw table moves the later
draws of existing graphs, so one rule of small weight keeps the graphs of
a seed close to what they were, and the patterns occur in some graphs
without crowding out the rest of the vocabulary. Part of the vocabulary of
:mod:`harness.graphs.random.ops`.
"""

from __future__ import annotations

from typing import Optional

from harness.graphs.random.ops_nn import _static_rank
from harness.graphs.random.types import Emit, Val, is_float, is_input, is_numeric

__all__ = ["conv_bn", "conv_activation", "permute_elementwise_inverse", "identical_transforms", "permute_view",
           "input_to_contiguous", "accepts_channels_last_input", "pairwise_distance", "PATTERNS", "accepts_pattern",
           "pattern"]

# pointwise ops RemovePermutesAroundElementwiseOps lets a permute pass through (ATen ``pointwise`` tag, or its list)
_POINTWISE = ("torch.tanh({})", "torch.sigmoid({})", "torch.relu({})", "torch.neg({})", "torch.abs({})",
              "F.hardtanh({}, -1.0, 1.0)", "torch.clamp({}, -0.5, 0.5)", "({} * 2.0 + 1.0)", "torch.exp({})")


def _order(g, rank: int) -> list:
    """A permutation of ``range(rank)`` that is not the identity (rank >= 2)."""
    order = list(g.permutation(list(range(rank))))
    if order == sorted(order):
        order = order[1:] + order[:1]
    return order


def _dims(order: list) -> str:
    return ", ".join(map(str, order))


def _conv_module(g, v: Val) -> tuple[str, int]:
    """An ``nn.Conv1d``/``nn.Conv2d`` that fits ``v`` (kernel within the padded input, as in ``ops_nn._conv``) and
    its output channels."""
    c = v.shape[1]
    spatial = min(v.shape[2:])
    pad = g.int(0, 1)
    k = g.int(1, min(3, spatial + 2 * pad))
    depthwise = c > 1 and g.int(0, 3) == 0
    groups, out = (c, c) if depthwise else (1, g.size())
    cls = "nn.Conv2d" if v.rank == 4 else "nn.Conv1d"
    return g.module(f"{cls}({c}, {out}, {k}, stride={g.choice([1, 1, 2])}, padding={pad}, groups={groups}, "
                    f"bias={g.flip()})"), out


def conv_bn(g, v: Val) -> Emit:
    """``bn(conv(x))`` with the batch norm the conv's only user: what conv/batch-norm folding matches."""
    conv, out = _conv_module(g, v)
    cls = "nn.BatchNorm2d" if v.rank == 4 else "nn.BatchNorm1d"
    bn = g.module(f"{cls}({out})", init=[f"{{m}}.running_mean.copy_(torch.randn({out}, generator=g) * 0.1)",
                                         f"{{m}}.running_var.copy_(torch.rand({out}, generator=g) + 0.5)"])
    return Emit(f"{bn}({conv}({{0}}))", (v.name,))


def conv_activation(g, v: Val) -> Emit:
    """``act(conv(x))``, the activation the conv's only user: relu, hardtanh (its default bounds or others), relu6."""
    conv, _ = _conv_module(g, v)
    act = g.choice(["torch.relu({})", "F.hardtanh({})", "F.hardtanh({}, -2.0, 2.0)", "F.hardtanh({}, min_val=0.0, "
                    "max_val=6.0)", "F.relu6({})"])
    return Emit(act.format(f"{conv}({{0}})"), (v.name,))


def permute_elementwise_inverse(g, v: Val) -> Emit:
    """``permute(p)``, one or two pointwise ops (with a scalar or a parameter of the permuted shape), then the
    inverse permute: a layout round trip around elementwise work, which a layout pass may drop."""
    order = _order(g, v.rank)
    inverse = [order.index(i) for i in range(v.rank)]
    inner = f"{{0}}.permute({_dims(order)})"
    for _ in range(g.int(1, 2)):
        inner = g.choice(_POINTWISE).format(inner)
    args = (v.name,)
    if not any(v.dyn) and g.flip():
        shape = tuple(v.shape[d] for d in order)
        args = (v.name, g.param(shape, v.dtype))
        inner = f"({inner} {g.choice(['+', '*', '-'])} {{1}})"
    return Emit(f"{inner}.permute({_dims(inverse)})", args)


def identical_transforms(g, v: Val) -> Optional[Emit]:
    """The same permute (or view) on both operands of an elementwise op or a cat, each read only there."""
    other = g.partner_same(v)
    if any(v.dyn) or g.flip():
        dims = _dims(_order(g, v.rank))
        a, b = f"{{0}}.permute({dims})", f"{{1}}.permute({dims})"
    else:
        size = 1
        for s in v.shape:
            size *= s
        shape = g.choice([(size,), (-1,)] + ([(v.shape[0], -1)] if v.rank >= 3 else [])
                         + ([tuple(v.shape[:-2]) + (v.shape[-2] * v.shape[-1],)] if v.rank >= 2 else []))
        sizes = ", ".join(map(str, shape))
        a, b = f"{{0}}.reshape({sizes})", f"{{1}}.reshape({sizes})"
    op = g.choice(["torch.add({}, {})", "torch.mul({}, {})", "torch.sub({}, {})", "cat"])
    if op == "cat":
        return Emit(f"torch.cat([{a}, {b}], dim={g.int(0, v.rank - 1) if 'permute' in a else 0})", (v.name, other))
    return Emit(op.format(a, b), (v.name, other))


def permute_view(g, v: Val) -> Optional[Emit]:
    """``x.permute(p)`` read only by a view that inserts (or drops) one size-1 dim, as ``unsqueeze``/``squeeze``
    spelled with ``view``/``reshape`` do (transformer code writes them so)."""
    if any(v.dyn):
        return None
    order = _order(g, v.rank)
    shape = [v.shape[d] for d in order]
    ones = [i for i, s in enumerate(shape) if s == 1]
    if ones and v.rank >= 2 and g.flip():
        del shape[g.choice(ones)]
    elif v.rank <= 3:
        shape.insert(g.int(0, len(shape)), 1)
    else:
        return None
    method = g.choice(["view", "reshape"])
    return Emit(f"{{0}}.permute({_dims(order)}).{method}({', '.join(map(str, shape))})", (v.name,), view=True)


def accepts_channels_last_input(v: Val) -> bool:
    return v.channels_last and is_input(v)


def input_to_contiguous(g, v: Val) -> Optional[Emit]:
    """A channels-last graph input read back in contiguous memory: the input-boundary clone of the edge program
    (``_clone_dim_order`` / ``_to_dim_order_copy`` of a placeholder). A fresh input that came out contiguous (the
    generator picks the layout) is undone."""
    if not accepts_channels_last_input(v):
        return None
    return Emit(g.choice(["{0}.contiguous()", "{0}.clone(memory_format=torch.contiguous_format)",
                          "{0}.to(memory_format=torch.contiguous_format)"]), (v.name,))


def pairwise_distance(g, v: Val) -> Emit:
    """``F.pairwise_distance(a, b)`` (siamese and triplet losses): its decomposition adds ``eps`` with
    ``aten.add.Scalar``, one of the few ops of an edge program with a scalar overload, which scalar-to-tensor
    passes (Cadence's, Arm's, Cortex-M's ``ReplaceScalarWithTensorArgPass``) rewrite."""
    other = g.partner_same(v)
    optional = [("p", g.choice(["2.0", "1.0", "3.0"])), ("eps", g.choice(["1e-06", "0.001"])),
                ("keepdim", g.flip())][:g.int(0, 3)]
    parts = ["{0}", "{1}"] + [f"{k}={val}" for k, val in optional]
    return Emit(f"F.pairwise_distance({', '.join(parts)})", (v.name, other))


# (rule, what it accepts): the patterns the one ``pattern`` op rule draws among
PATTERNS = (
    (conv_bn, _static_rank(3, 4)),
    (conv_activation, _static_rank(3, 4)),
    (permute_elementwise_inverse, lambda v: is_float(v) and v.rank >= 2),
    (identical_transforms, lambda v: is_numeric(v) and v.rank >= 2),
    (permute_view, lambda v: 2 <= v.rank <= 4 and not any(v.dyn)),
    (input_to_contiguous, accepts_channels_last_input),
    (pairwise_distance, lambda v: is_float(v) and 1 <= v.rank <= 2),
)


def accepts_pattern(v: Val) -> bool:
    return any(accepts(v) for _, accepts in PATTERNS)


def pattern(g, v: Val) -> Optional[Emit]:
    """One of :data:`PATTERNS` that accepts ``v``. They are one op rule, not seven: every slot added to the
    vocabulary's draw table moves later draws of existing graphs, and one slot moves the fewest."""
    fits = [rule for rule, accepts in PATTERNS if accepts(v)]
    if not fits:
        return None
    return g.choice(fits)(g, v)
