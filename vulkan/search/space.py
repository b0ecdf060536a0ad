"""The configuration space of each fused op: what its pattern can match, as a hypothesis strategy.

A fixed recipe list (:mod:`vulkan.cases.catalog`) draws shapes for *one*
quantization flow per pattern, so a defect that needs another configuration
the pattern accepts (asymmetric weights, a per-axis instead of a per-group
weight, a dynamic activation, an ``alpha`` keyword, a bias) is never drawn,
and a failure names one drawn shape instead of the boundary. Here a case is
a :class:`CaseDesc` (configuration x shape x arguments, a frozen dataclass
hypothesis draws and shrinks), and each fused op has an :class:`OpSpace`:

- ``strategy()``: ``@st.composite`` over :class:`CaseDesc`, configuration
  first (ordered simplest first, so hypothesis shrinks towards the plainest
  flow), then a shape that fits it;
- ``expected(desc)``: the fused op(s) the pattern must emit, or ``()`` when
  it must decline the configuration (read from ``backends/vulkan/patterns/``
  and ``_passes/fuse_quantized_ops.py`` in executorch 1.5.1; see
  :mod:`vulkan.search.space_ops`);
- ``recipe(desc)``: an ordinary :class:`vulkan.cases.recipes.Recipe` whose case
  runs through the same checks and caches as the catalog's.

The ops themselves are declared in :mod:`vulkan.search.space_ops` and :mod:`vulkan.search.space_conv`;
:mod:`vulkan.search.spaces` is the registry callers look them up in.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Callable, Optional

from hypothesis import strategies as st

from vulkan.cases.recipes import MODES, Recipe

__all__ = ["CaseDesc", "OpSpace", "SPACES", "register", "from_json"]


@dataclass(frozen=True)
class CaseDesc:
    """One point of an op's space: quantization configuration, shape and arguments.

    Frozen and made of plain values so that it hashes (evaluations are
    memoized on it), shrinks (hypothesis draws each field), serializes (the
    committed pinned cases and the reproducers store it as JSON) and names a
    case stably.
    """

    op: str  # the OpSpace name
    flow: str  # hand | xnnpack | vulkan | torchao | torchao-8da
    weight: str = "-"  # sym | asym | - (no weight)
    granularity: str = "-"  # per_tensor | per_channel | per_group | -
    group: int = 0  # per_group: the group size
    act: str = "-"  # static | dynamic | none (weight-only) | - (no activation choice)
    bits: int = 8  # weight bits
    bias: bool = False
    relu: bool = False
    out_q: bool = True  # the output is quantized (static flows)
    alpha: Optional[float] = None  # add's alpha keyword; None: not passed
    shape: tuple = ()  # sorted (name, value) pairs; lists as tuples
    seed: int = 0

    def shape_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.shape}

    def config(self) -> dict:
        """The configuration fields (no shape, no seed), defaults left out."""
        out = {}
        for f in fields(self):
            if f.name in ("op", "shape", "seed"):
                continue
            v = getattr(self, f.name)
            if v != f.default or f.name == "flow":
                out[f.name] = v
        return out

    def config_id(self) -> str:
        """A short stable name of the configuration: ``torchao w4 asym per_group32 bias``."""
        c = self.config()
        parts = [c.pop("flow")]
        if "weight" in c:
            parts.append(f"w{self.bits} {c.pop('weight')}")
            c.pop("bits", None)
        if "granularity" in c:
            gran = c.pop("granularity")
            parts.append(f"{gran}{c.pop('group', '') or ''}" if gran == "per_group" else gran)
        if "act" in c:
            parts.append(f"act {c.pop('act')}")
        if c.pop("out_q", True) is False:
            parts.append("float out")
        if "alpha" in c:
            parts.append(f"alpha={c.pop('alpha'):g}")
        parts += [k for k, v in c.items() if v is True]
        parts += [f"{k}={v}" for k, v in c.items() if not isinstance(v, bool)]
        return " ".join(parts)

    def shape_id(self) -> str:
        from vulkan.cases.shapes import shape_id

        return shape_id(self.shape_dict())

    def name(self) -> str:
        return f"{self.op}[{self.config_id()}]"

    def with_shape(self, **kw) -> "CaseDesc":
        d = self.shape_dict()
        d.update(kw)
        return replace(self, shape=freeze(d))

    def to_json(self) -> dict:
        d = asdict(self)
        d["shape"] = self.shape_dict()
        return d


def freeze(shape: dict) -> tuple:
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in shape.items()))


def from_json(d: dict) -> CaseDesc:
    d = dict(d)
    d["shape"] = freeze(d.get("shape") or {})
    return CaseDesc(**d)


@dataclass
class OpSpace:
    """What one fused op's pattern can match, and what it must do with each configuration."""

    name: str  # table row, e.g. "et_vk.q8ta_linear"
    configs: Callable[[], st.SearchStrategy]  # strategy of config dicts (CaseDesc fields but op/shape/seed)
    shapes: Callable[[dict], st.SearchStrategy]  # config -> strategy of shape dicts
    expected: Callable[[CaseDesc], tuple]  # () when the pattern must decline
    build: Callable[[CaseDesc], tuple]  # desc -> (build(shape, seed), flow, extras for Recipe)
    absorbs: Callable[[CaseDesc], dict] = lambda d: {}
    modes: tuple = MODES
    valid: Callable[[CaseDesc], bool] = lambda d: True
    notes: str = ""
    flows: tuple = ()  # the flows its configurations draw from (probes switch between them)
    other_fusions: tuple = ("et_vk.q8ta_relu",)  # fused ops of other patterns a declined case may contain

    def strategy(self, seed: int = 0) -> st.SearchStrategy:
        @st.composite
        def draw(draw_):
            config = draw_(self.configs())
            shape = draw_(self.shapes(config))
            return CaseDesc(op=self.name, shape=freeze(shape), seed=seed, **config)

        return draw().filter(self.valid)

    def recipe(self, desc: CaseDesc) -> Recipe:
        build, flow, extra = self.build(desc)
        expected = tuple(self.expected(desc))
        return Recipe(name=f"search:{desc.name()}", op=self.name, expected=expected, build=build, flow=flow,
                      shapes=None, absorbs=self.absorbs(desc) if expected else {}, modes=self.modes,
                      float_model=extra.get("float_model"), inputs=extra.get("inputs", "float"),
                      notes=extra.get("notes", "") if expected else (self.notes or "must decline"),
                      other_fusions=self.other_fusions)


SPACES: dict[str, OpSpace] = {}


def register(sp: OpSpace) -> OpSpace:
    SPACES[sp.name] = sp
    return sp


def describe(desc: CaseDesc) -> str:
    return f"{desc.name()} {desc.shape_id()}"


def dumps(desc: CaseDesc) -> str:
    return json.dumps(desc.to_json(), sort_keys=True)


def merged(desc: CaseDesc, **extra: Any) -> dict:
    """The shape dict with the configuration's bias / relu / group folded in (what builders read)."""
    s = desc.shape_dict()
    s.update(bias=desc.bias, relu=desc.relu)
    if desc.group:
        s["G"] = desc.group
    s.update(extra)
    return s
