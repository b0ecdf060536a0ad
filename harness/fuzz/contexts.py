"""The context vocabulary of ``passgate fuzz --contexts``: every op a pass rewrites, in every surrounding.

Branch coverage says a pass's lines ran; it does not say the pass met its op
with two users, with an argument given by keyword, on a size only known at
run time. A random program puts an op in a few surroundings at best, so a
pass broken in one of them is missed. This module is the vocabulary, as
data: the ops a pass may rewrite (:data:`FORMS`: how each is called in plain
torch, in each argument form) and the contexts to put them in
(:data:`CONTEXTS`: family, name, how it is built). :func:`combos` is the
hypothesis strategy over (op, one context of each family) that ``--contexts``
searches; its choices are ``sampled_from`` lists whose first element is the
plain context, so hypothesis' shrinking walks a failure back toward the plain
graph and stops at the contexts it needs. :mod:`harness.fuzz.contexts_build`
turns a combination into a program; :mod:`harness.fuzz.contexts_run` runs the
search. ``docs/contexts.md`` is this table in prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from typing import Optional

from hypothesis import strategies as st

__all__ = ["Context", "CONTEXTS", "FAMILIES", "OpForm", "FORMS", "QDQ_FORMS", "Combo", "combos", "plain", "forms_for_atom",
           "op_key", "variants", "vocabulary_markdown"]


@dataclass(frozen=True)
class Context:
    family: str
    name: str
    how: str  # how it is built, in one line (docs/contexts.md, --help)


def _family(family: str, *rows: tuple) -> tuple:
    return tuple(Context(family, name, how) for name, how in rows)


# The first context of each family is the plain one (hypothesis shrinks toward it).
CONTEXTS: tuple = (
    *_family("users",
             ("output", "the op's result r is a graph output and nothing else reads it"),
             ("one", "one user: `r * 2` (`~r` for bool) is returned"),
             ("several", "two users: `r * 2` and `r * 3` (`~r`, `r & r` for bool), both returned"),
             ("inplace", "an in-place consumer: `r.mul_(2)` (`r.logical_not_()` for bool), its result returned"),
             ("getitem", "read through a multi-output op: `torch.sort(r, -1)`, its values (a getitem) returned"),
             ("far", "one user, far from the op: two statements on another input come between r and `r * 2`, "
                     "both results returned (a pass that moves an op next to its user has somewhere to move it)")),
    *_family("producer",
             ("input", "the operand is a graph input"),
             ("parameter", "an `nn.Parameter(..., requires_grad=False)` of the module"),
             ("buffer", "a registered buffer"),
             ("constant", "a plain tensor attribute (torch.export lifts it as a constant)"),
             ("view", "a view of an input: `x.transpose(0, -1)` of the transposed input (`reshape` below rank 2)"),
             ("layout", "a layout change: `contiguous(memory_format=channels_last)` at rank 4, else "
                        "`transpose(0, -1).contiguous().transpose(0, -1)`"),
             ("nonzero", "data-dependent rows: `x.index_select(0, torch.nonzero(m >= 0).squeeze(1))`, an unbacked "
                         "size"),
             ("item", "data-dependent length: `k = n.item()` (checked 0 <= k <= rows), then `x[:k]`, an unbacked "
                      "size"),
             ("mutated", "a buffer the program mutates in place first (`self.b.add_(1)`, `logical_not_` for bool): "
                         "the op reads a value that is written back")),
    *_family("rank", *((str(r), f"the operand has rank {r}") for r in range(6))),
    *_family("shape",
             ("plain", "sizes 2, 3, 4, 5, 6 (the first `rank` of them)"),
             ("size1", "the last dim has size 1"),
             ("zero", "the first dim has size 0"),
             ("symbolic", "the first dim is a dynamic `torch.export.Dim` (backed symbolic size)"),
             ("broadcast", "the second operand broadcasts: shape (1, ..., 1, last)")),
    *_family("dtype", *((d, f"operands of dtype {d} (those the op takes)") for d in
                        ("float32", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool"))),
    *_family("argform",
             ("positional", "every argument positional"),
             ("keyword", "optional arguments by keyword (keyword-only ones such as `alpha` included)"),
             ("defaulted", "optional arguments left out (their defaults), or the operator spelling (`x + y`)"),
             ("negative", "dims given negative (`-1`)")),
    *_family("quant",
             ("float", "a float program"),
             ("flow", "the program put through a registered PT2E flow (harness.graphs.quantizers): one context "
                      "per flow, named after it")),
    *_family("neighbour",
             ("absent", "nothing around the op"),
             ("present", "the op's neighbour, the op a pass inspects beside it (the form's `neighbour`), reads r")),
)
FAMILIES: tuple = tuple(dict.fromkeys(c.family for c in CONTEXTS))
_NAMES = {f: tuple(c.name for c in CONTEXTS if c.family == f) for f in FAMILIES}

FLOATS = ("float32", "float16", "bfloat16")
NUMERIC = FLOATS + ("int64", "int32", "int8", "uint8")
ALL = NUMERIC + ("bool",)


@dataclass(frozen=True)
class OpForm:
    """How one op is called in plain torch, per argument form.

    Templates: ``{x}`` the operand, ``{y}`` a second operand of the same dtype (broadcasting when the shape
    context says), ``{w}`` a (last, 3) parameter, ``{b}`` a (3,) parameter, ``{cw}`` a conv weight
    (2, channels, 1...), ``{rm}``/``{rv}`` running stats of the channels, ``{d}`` the last dim (positive),
    ``{perm}`` the reversed dims, ``{nperm}`` the same negative, ``{neg1}`` ``(-1, ...)`` per dim, ``{to}`` a
    dtype other than the operand's, ``{qs}``/``{qz}`` per-channel scales and zero points along the last dim (buffers)."""

    key: str
    calls: tuple  # ((argform, template), ...), the positional form first
    aten: tuple = ()  # base names of the edge ops it lowers to that a pass may remove (``permute`` for permute_copy)
    dtypes: tuple = FLOATS
    ranks: tuple = (0, 1, 2, 3, 4, 5)
    binary: bool = False  # takes {y}
    results: int = 1  # values it binds (max.dim: 2; r is the first)
    neighbour: str = ""  # a statement on r ({0}) a pass inspects beside the op; "" none
    out_dtype: str = ""  # the dtype of its result when it is not the operand's (a quantize gives int8)

    @property
    def argforms(self) -> tuple:
        return tuple(f for f, _ in self.calls)

    def call(self, argform: str) -> str:
        return dict(self.calls)[argform]


def _f(key, calls, **kw) -> OpForm:
    return OpForm(key, tuple(calls.items()), **{"aten": (key,), **kw})


_UNARY_NB = "{0}.abs()"
_QDQ = "torch.ops.quantized_decomposed"
_QARGS = "0.05, 0, -128, 127, torch.int8"
_QKW = "scale=0.05, zero_point=0, quant_min=-128, quant_max=127, dtype=torch.int8"
# along the last dim: the first may be data-dependent (producer nonzero / item), and per-channel scales need a size
_PCARGS = "{qs}, {qz}, {d}, -128, 127, torch.int8"
_PCKW = "scales={qs}, zero_points={qz}, axis={d}, quant_min=-128, quant_max=127, dtype=torch.int8"
QDQ_FORMS = ("quantize", "dequantize", "quantize_pc", "dequantize_pc")
FORMS: dict[str, OpForm] = {f.key: f for f in (
    _f("add", {"positional": "torch.add({x}, {y})", "keyword": "torch.add({x}, {y}, alpha=2)",
               "defaulted": "{x} + {y}"}, dtypes=NUMERIC, binary=True, neighbour="torch.relu({0})"),
    _f("sub", {"positional": "torch.sub({x}, {y})", "keyword": "torch.sub({x}, {y}, alpha=2)",
               "defaulted": "{x} - {y}"}, dtypes=NUMERIC, binary=True, neighbour="torch.relu({0})"),
    _f("mul", {"positional": "torch.mul({x}, {y})", "keyword": "torch.mul(input={x}, other={y})",
               "defaulted": "{x} * {y}"}, dtypes=NUMERIC, binary=True, neighbour="{0} * {0}"),
    _f("div", {"positional": "torch.div({x}, {y})", "keyword": "torch.div({x}, {y}, rounding_mode=None)",
               "defaulted": "{x} / {y}"}, binary=True, neighbour="{0} * 2"),
    _f("relu", {"positional": "torch.relu({x})", "keyword": "F.relu({x}, inplace=False)",
                "defaulted": "F.relu({x})"}, dtypes=NUMERIC[:5], neighbour="torch.relu({0})"),
    _f("gelu", {"positional": "F.gelu({x})", "keyword": "F.gelu({x}, approximate='tanh')"}),
    _f("sigmoid", {"positional": "torch.sigmoid({x})", "defaulted": "{x}.sigmoid()"}, neighbour="{0} * 2"),
    _f("tanh", {"positional": "torch.tanh({x})", "defaulted": "{x}.tanh()"}),
    _f("abs", {"positional": "torch.abs({x})", "defaulted": "{x}.abs()"}, dtypes=NUMERIC[:-1], neighbour=_UNARY_NB),
    _f("neg", {"positional": "torch.neg({x})", "defaulted": "-{x}"}, dtypes=NUMERIC[:-1], neighbour="-{0}"),
    _f("exp", {"positional": "torch.exp({x})", "defaulted": "{x}.exp()"}),
    _f("clamp", {"positional": "torch.clamp({x}, -0.5, 0.5)", "keyword": "torch.clamp({x}, min=-0.5, max=0.5)",
                 "defaulted": "torch.clamp({x}, min=-0.5)"}, neighbour="torch.clamp({0}, -0.25, 0.25)"),
    _f("hardtanh", {"positional": "F.hardtanh({x}, -1.0, 1.0)", "keyword": "F.hardtanh({x}, min_val=-1.0, "
                    "max_val=1.0)", "defaulted": "F.hardtanh({x})"}, aten=("hardtanh", "clamp")),
    _f("pow", {"positional": "torch.pow({x}, 2)", "keyword": "torch.pow({x}, exponent=2)",
               "defaulted": "{x} ** 2"}, neighbour="torch.sqrt({0})"),
    _f("permute", {"positional": "torch.permute({x}, {perm})", "keyword": "torch.permute({x}, dims={perm})",
                   "negative": "torch.permute({x}, {nperm})"}, dtypes=ALL, neighbour="torch.permute({0}, {perm})"),
    _f("transpose", {"positional": "torch.transpose({x}, 0, {d})", "keyword": "torch.transpose({x}, dim0=0, "
                     "dim1={d})", "negative": "torch.transpose({x}, 0, -1)"}, aten=("transpose", "permute", "t"),
       dtypes=ALL, ranks=(1, 2, 3, 4, 5), neighbour="torch.transpose({0}, 0, -1)"),
    _f("reshape", {"positional": "torch.reshape({x}, (-1,))", "keyword": "torch.reshape({x}, shape=(-1,))",
                   "defaulted": "torch.flatten({x})"}, aten=("view", "reshape", "flatten"), dtypes=ALL,
       neighbour="{0}.unsqueeze(0)"),
    _f("unsqueeze", {"positional": "torch.unsqueeze({x}, 0)", "keyword": "torch.unsqueeze({x}, dim=0)",
                     "negative": "torch.unsqueeze({x}, -1)"}, dtypes=ALL, ranks=(0, 1, 2, 3, 4),
       neighbour="torch.squeeze({0}, 0)"),
    _f("squeeze", {"positional": "torch.squeeze({x}, 0)", "keyword": "torch.squeeze({x}, dim=0)",
                   "defaulted": "torch.squeeze({x})", "negative": "torch.squeeze({x}, -1)"}, dtypes=ALL,
       ranks=(1, 2, 3, 4, 5)),
    _f("expand", {"positional": "{x}.expand({x}.shape)", "negative": "{x}.expand({neg1})"}, dtypes=ALL,
       neighbour="{0}.expand({neg1})"),
    _f("slice", {"positional": "{x}[0:2]", "keyword": "torch.narrow({x}, dim=0, start=0, length=1)",
                 "defaulted": "{x}[:]", "negative": "{x}[-2:]"}, aten=("slice", "narrow"), dtypes=ALL,
       ranks=(1, 2, 3, 4, 5)),
    _f("select", {"positional": "torch.select({x}, 0, 0)", "keyword": "torch.select({x}, dim=0, index=0)",
                  "defaulted": "{x}[0]", "negative": "torch.select({x}, -1, 0)"}, dtypes=ALL, ranks=(1, 2, 3, 4, 5)),
    _f("cat", {"positional": "torch.cat([{x}, {y}], 0)", "keyword": "torch.cat([{x}, {y}], dim=0)",
               "defaulted": "torch.cat([{x}, {y}])", "negative": "torch.cat([{x}, {y}], -1)"}, dtypes=ALL,
       ranks=(1, 2, 3, 4, 5), binary=True),
    _f("clone", {"positional": "torch.clone({x})", "keyword": "torch.clone({x}, memory_format=torch.preserve_format)",
                 "defaulted": "{x}.clone()"}, aten=("clone", "_clone_dim_order", "alias"), dtypes=ALL,
       neighbour="{0}.clone()"),
    _f("to", {"positional": "{x}.to({to})", "keyword": "{x}.to(dtype={to})", "defaulted": "{x}.to({to}, copy=True)"},
       aten=("to", "_to_copy", "_to_dim_order"), dtypes=ALL, neighbour="{0}.to(torch.float32)"),
    _f("sum", {"positional": "torch.sum({x}, {d}, True)", "keyword": "torch.sum({x}, dim={d}, keepdim=True)",
               "defaulted": "torch.sum({x}, {d})", "negative": "torch.sum({x}, -1)"}, dtypes=NUMERIC),
    _f("mean", {"positional": "torch.mean({x}, {d}, True)", "keyword": "torch.mean({x}, dim={d}, keepdim=True)",
                "defaulted": "torch.mean({x}, {d})", "negative": "torch.mean({x}, -1)"}),
    _f("amax", {"positional": "torch.amax({x}, {d}, True)", "keyword": "torch.amax({x}, dim={d}, keepdim=True)",
                "defaulted": "torch.amax({x}, {d})", "negative": "torch.amax({x}, -1)"}, dtypes=NUMERIC),
    _f("max", {"positional": "torch.max({x}, {d})", "keyword": "torch.max({x}, dim={d}, keepdim=True)",
               "negative": "torch.max({x}, -1)"}, dtypes=NUMERIC, results=2),
    _f("softmax", {"positional": "torch.softmax({x}, {d})", "keyword": "F.softmax({x}, dim={d})",
                   "negative": "torch.softmax({x}, -1)"}, aten=("softmax", "_softmax"), neighbour="torch.log({0})"),
    _f("linear", {"positional": "F.linear({x}, {w}, {b})", "keyword": "F.linear({x}, weight={w}, bias={b})",
                  "defaulted": "F.linear({x}, {w})"}, aten=("linear", "addmm", "mm", "t", "permute", "view"),
       dtypes=FLOATS[:2], ranks=(1, 2, 3), neighbour="torch.relu({0})"),
    _f("matmul", {"positional": "torch.matmul({x}, {wt})", "defaulted": "{x} @ {wt}"},
       aten=("matmul", "mm", "bmm", "view", "expand"), ranks=(1, 2, 3), neighbour="torch.relu({0})"),
    _f("conv", {"positional": "{conv}({x}, {cw}, None, 1, 0)", "keyword": "{conv}({x}, {cw}, bias=None, "
                "stride=1, padding=0)", "defaulted": "{conv}({x}, {cw})"}, aten=("convolution", "conv1d", "conv2d"),
       dtypes=("float32",), ranks=(3, 4), neighbour="torch.relu({0})"),
    _f("batch_norm", {"positional": "F.batch_norm({x}, {rm}, {rv}, None, None, False)",
                      "keyword": "F.batch_norm({x}, {rm}, {rv}, training=False, eps=1e-5)"},
       aten=("batch_norm", "_native_batch_norm_legit_no_training"), dtypes=("float32",), ranks=(2, 3, 4, 5),
       neighbour="torch.relu({0})"),
    _f("layer_norm", {"positional": "F.layer_norm({x}, ({x}.shape[-1],))",
                      "keyword": "F.layer_norm({x}, normalized_shape=({x}.shape[-1],), eps=1e-5)"},
       aten=("layer_norm", "native_layer_norm"), ranks=(1, 2, 3, 4, 5)),
    _f("where", {"positional": "torch.where({x} > 0, {x}, {y})", "keyword": "torch.where(condition={x} > 0, "
                 "input={x}, other={y})"}, dtypes=NUMERIC, binary=True),
    _f("pad", {"positional": "F.pad({x}, (1, 1))", "keyword": "F.pad({x}, pad=(1, 1), mode='constant', value=0.0)"},
       aten=("constant_pad_nd", "pad"), ranks=(1, 2, 3, 4, 5)),
    # Q/DQ as plain ops of a float program: the reorder, fusion and folding passes match them by name, and a PT2E
    # flow only places them where its quantizer annotates
    _f("quantize", {"positional": f"{_QDQ}.quantize_per_tensor({{x}}, {_QARGS})",
                    "keyword": f"{_QDQ}.quantize_per_tensor({{x}}, {_QKW})"},
       aten=("quantize_per_tensor",), dtypes=("float32",), neighbour=f"{_QDQ}.dequantize_per_tensor({{0}}, {_QARGS})",
       out_dtype="int8"),
    _f("dequantize", {"positional": f"{_QDQ}.dequantize_per_tensor({{x}}, {_QARGS})",
                      "keyword": f"{_QDQ}.dequantize_per_tensor({{x}}, {_QKW})"},
       aten=("dequantize_per_tensor",), dtypes=("int8",), neighbour=f"{_QDQ}.quantize_per_tensor({{0}}, {_QARGS})",
       out_dtype="float32"),
    # per-channel Q/DQ (last axis): their scales and zero points are tensors, nodes of their own a pass must move along
    _f("quantize_pc", {"positional": f"{_QDQ}.quantize_per_channel({{x}}, {_PCARGS})",
                       "keyword": f"{_QDQ}.quantize_per_channel({{x}}, {_PCKW})"},
       aten=("quantize_per_channel",), dtypes=("float32",), ranks=(1, 2, 3, 4, 5),
       neighbour=f"{_QDQ}.dequantize_per_channel({{0}}, {_PCARGS})", out_dtype="int8"),
    _f("dequantize_pc", {"positional": f"{_QDQ}.dequantize_per_channel({{x}}, {_PCARGS})",
                         "keyword": f"{_QDQ}.dequantize_per_channel({{x}}, {_PCKW})"},
       aten=("dequantize_per_channel",), dtypes=("int8",), ranks=(1, 2, 3, 4, 5),
       neighbour=f"{_QDQ}.quantize_per_channel({{0}}, {_PCARGS})", out_dtype="float32"),
    _f("interpolate", {"positional": "F.interpolate({x}, scale_factor=2.0, mode='bilinear', align_corners=False)",
                       "keyword": "F.interpolate({x}, size={hw2}, mode='nearest')",
                       "defaulted": "F.interpolate({x}, scale_factor=2.0)"},
       aten=("upsample_bilinear2d", "upsample_nearest2d", "_upsample_bilinear2d_aa"), ranks=(4,),
       neighbour="torch.relu({0})"),
    # bilinear upsampling as the rewrites that match it must also take it: corners aligned, sizes given, unequal
    # scales (the output size is read from the matched node, not assumed from a scale of 2)
    _f("upsample_bilinear", {"positional": "F.interpolate({x}, size={hw2}, mode='bilinear', align_corners=True)",
                             "keyword": "F.interpolate({x}, scale_factor=(2.0, 3.0), mode='bilinear', "
                                        "align_corners=False)",
                             "defaulted": "F.upsample_bilinear({x}, scale_factor=2)"},
       aten=("upsample_bilinear2d",), ranks=(4,), neighbour="torch.relu({0})"),
    _f("embedding", {"positional": "F.embedding({x}, {emb})", "keyword": "F.embedding(input={x}, weight={emb})",
                     "defaulted": "torch.embedding({emb}, {x})"}, dtypes=("int64",), ranks=(0, 1, 2, 3),
       neighbour="torch.relu({0})"),
)}


def op_key(atom_op: str) -> str:
    """The base name of an op as change atoms and op counts spell it: ``aten.permute_copy.default`` ->
    ``permute``, ``dim_order_ops._to_dim_order_copy.default`` -> ``_to_dim_order``."""
    name = atom_op.lstrip("+-")
    parts = name.split(".")
    base = parts[-2] if len(parts) >= 2 else parts[0]
    return re.sub(r"_copy$", "", base)


def forms_for_atom(atom_op: str) -> tuple[str, ...]:
    """The forms whose lowering holds the op of a change atom (several forms may: permute, transpose)."""
    key = op_key(atom_op)
    return tuple(f.key for f in FORMS.values() if key in f.aten)


@dataclass(frozen=True)
class Combo:
    """One op (or a short chain of ops) and one context of each family."""

    op: tuple  # form keys, applied in turn
    users: str = "output"
    producer: str = "input"
    rank: int = 2
    shape: str = "plain"
    dtype: str = "float32"
    argform: str = "positional"
    quant: str = "float"  # "float" or a flow's name
    neighbour: str = "absent"

    def non_plain(self) -> list:
        """``family=value`` of each context that is not its family's plain one, in family order."""
        base = plain(self.op)
        return [f"{f.name}={getattr(self, f.name)}" for f in fields(self)[1:]
                if getattr(self, f.name) != getattr(base, f.name)]

    @property
    def label(self) -> str:
        """``relu[users=several,argform=keyword]``: the op and its non-plain contexts."""
        return f"{'>'.join(self.op)}[{','.join(self.non_plain())}]"

    def contexts(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)[1:]}


def _ranks(op: tuple) -> tuple:
    ok = [r for r in range(6) if all(r in FORMS[k].ranks for k in op)]
    first = FORMS[op[0]].ranks
    default = 4 if first == (3, 4) or op[0] == "batch_norm" else (2 if 2 in ok else ok[0])
    return tuple([default] + [r for r in ok if r != default])


def _dtypes(op: tuple) -> tuple:
    """The operand dtypes every op of the chain takes, each given what the one before returns."""
    def fits(dtype: str) -> bool:
        for key in op:
            if dtype not in FORMS[key].dtypes:
                return False
            dtype = FORMS[key].out_dtype or dtype
        return True

    return tuple(sorted(filter(fits, ALL), key=lambda d: d != "float32"))


def plain(op: tuple) -> Combo:
    """The plain graph of ``op``: the first context of every family."""
    return Combo(tuple(op), rank=_ranks(tuple(op))[0], dtype=_dtypes(tuple(op))[0],
                 argform=FORMS[op[0]].argforms[0])


def _compatible(family: str, name: str, op: tuple, rank: int, dtype: str, producer: str = "input") -> bool:
    form = FORMS[op[0]]
    if family == "producer" and name in ("nonzero", "item", "view", "layout"):
        return rank >= 1
    if family == "producer" and name == "mutated":
        # a 0-dim integer buffer's `add_(1)`: eager keeps its dtype, the edge program's lifted int64 scalar promotes it
        return rank >= 1 or dtype in FLOATS
    if family == "shape":
        return {"size1": rank >= 1, "zero": rank >= 1, "symbolic": rank >= 1 and producer not in ("parameter", "buffer", "constant"),
                "broadcast": form.binary and rank >= 1 and op[0] != "cat"}.get(name, True)
    if family == "users" and name == "inplace":
        return dtype in ALL
    if family == "neighbour" and name == "present":
        return bool(form.neighbour)
    if family == "argform" and name == "negative":
        return rank >= 1 or op[0] not in ("permute",)
    return True


@st.composite
def combos(draw, items: tuple, flows: tuple = ()) -> Combo:
    """A hypothesis strategy: an op item of ``items`` (tuples of form keys), then a context of each family
    that fits it; every choice a ``sampled_from`` whose first element is the plain context."""
    op = draw(st.sampled_from(list(items)))
    rank = draw(st.sampled_from(_ranks(op)))
    dtype = draw(st.sampled_from(_dtypes(op)))

    def pick(family: str, names, producer: str = "input") -> str:
        return draw(st.sampled_from([n for n in names if _compatible(family, n, op, rank, dtype, producer)]))

    users, producer = pick("users", _NAMES["users"]), pick("producer", _NAMES["producer"])
    shape = pick("shape", _NAMES["shape"], producer)
    argform = pick("argform", FORMS[op[0]].argforms)
    quant = draw(st.sampled_from(("float",) + tuple(flows))) if flows and dtype == "float32" else "float"
    return Combo(op, users=users, producer=producer, rank=rank, shape=shape, dtype=dtype, argform=argform,
                 quant=quant, neighbour=pick("neighbour", _NAMES["neighbour"]))


def variants(op: tuple, flows: tuple = ()) -> list:
    """The plain graph of ``op`` and every context that fits it, one family at a time (the others plain)."""
    base = plain(op)
    form = FORMS[op[0]]
    out = [base]
    for c in CONTEXTS:
        if c.family == "quant":
            names = flows if base.dtype == "float32" else ()
            out += [replace(base, quant=f) for f in names if c.name == "flow"]
            continue
        value = int(c.name) if c.family == "rank" else c.name
        if value == getattr(base, c.family) or (c.family == "rank" and value not in _ranks(op)) or \
                (c.family == "dtype" and value not in _dtypes(op)) or (c.family == "argform" and
                                                                        value not in form.argforms):
            continue
        v = replace(base, **{c.family: value})
        if _compatible(c.family, c.name, op, v.rank, v.dtype, v.producer):
            out.append(v)
    return out


def vocabulary_markdown(flows: Optional[tuple] = None) -> str:
    """The context table and the op forms as markdown (what ``docs/contexts.md`` lists)."""
    lines = ["| family | context | how it is built |", "|---|---|---|"]
    lines += [f"| {c.family} | {c.name} | {c.how} |" for c in CONTEXTS]
    lines += ["", "| op | argument forms | edge ops it matches | dtypes | ranks | neighbour |", "|---|---|---|---|---|---|"]
    for f in FORMS.values():
        calls = "<br>".join(f"{a}: `{t}`" for a, t in f.calls)
        lines.append(f"| {f.key} | {calls} | {', '.join(f.aten)} | {', '.join(f.dtypes)} | "
                     f"{', '.join(map(str, f.ranks))} | {('`' + f.neighbour + '`') if f.neighbour else '-'} |")
    return "\n".join(lines) + "\n"
