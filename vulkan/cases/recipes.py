"""Recipes: for each Q/DQ pattern the Vulkan backend fuses (or must decline), how to make it.

A :class:`Recipe` names the module family (built from a shape and a seed),
the quantization flow that turns it into the Q/DQ pattern, the fused op(s)
expected, and what the fusion must absorb. :func:`cases` draws shapes with
hypothesis and turns each into a :class:`VulkanCase` whose ``spec`` is an
ordinary :class:`harness.graphs.cases.CaseSpec`, so quantized programs are cached
on disk like every other graph case (quantizing takes up to ~3 s, lowering
~0.7 s). The catalog of recipes lives in :mod:`vulkan.cases.catalog`.

A recipe with ``expected=()`` is a pattern the backend must *decline*: the
fusion has to leave it unfused and must not crash on it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import torch

from harness.graphs.cases import CaseSpec, ModelInputs, definition_of
from vulkan.cases import models
from vulkan.cases.shapes import draw, shape_id

__all__ = ["PREPROCESS", "FUSE_PATTERNS", "MODES", "LINEAR_ANCHORS", "Recipe", "VulkanCase", "case_spec", "cases",
           "case", "DRAW_KINDS", "input_draws"]

# Fusion modes (see vulkan.backend.fusion): the backend's whole preprocessing, or FusePatternsPass alone.
PREPROCESS = "vulkan-preprocess"
FUSE_PATTERNS = "fuse-patterns"
MODES = (PREPROCESS, FUSE_PATTERNS)

LINEAR_ANCHORS = ("linear", "addmm", "mm", "bmm")


@dataclass(frozen=True)
class Recipe:
    name: str  # unique: "<op>[<flow>]"
    op: str  # the table row: the fused op, or "decline:<pattern>"
    expected: tuple  # fused op names the fusion must emit; () when it must decline
    build: Callable[[dict, int], tuple]  # (shape, seed) -> (float nn.Module, sample inputs)
    flow: Callable  # (model, inputs, shape) -> ExportedProgram of the quantized model
    shapes: Any  # hypothesis strategy of shape dicts
    # Ops that must be gone after fusion: name -> how many fewer (0 = all of them).
    absorbs: dict = field(default_factory=dict)
    # Fusion modes in which the pattern is fused; in others the case is not_applicable.
    modes: tuple = MODES
    float_model: Optional[Callable[[torch.nn.Module], torch.nn.Module]] = None  # None: the built module itself
    inputs: str = "float"  # float | int8 | index: how extra input draws are made
    notes: str = ""
    # Fused ops of *other* patterns the program may legitimately contain when this one is declined (a relu
    # after a declined linear has its own dq -> relu -> q and becomes et_vk.q8ta_relu).
    other_fusions: tuple = ()

    @property
    def negative(self) -> bool:
        return not self.expected

    def definition(self) -> str:
        """What fixes the programs this recipe makes: hashed into the cache key."""
        return definition_of(self.build, self.flow, extra=f"{self.name}|{self.op}|{self.expected}|{self.inputs}")


@dataclass
class VulkanCase:
    recipe: Recipe
    shape: dict
    seed: int
    spec: CaseSpec

    @property
    def name(self) -> str:
        return self.spec.name

    def float_model(self) -> torch.nn.Module:
        """The float eager model, rebuilt from shape and seed (identical weights)."""
        model, _ = self.recipe.build(self.shape, self.seed)
        if self.recipe.float_model is not None:
            model = self.recipe.float_model(model)
        return model.eval()

    def output_qparams(self) -> Optional[tuple]:
        model, _ = self.recipe.build(self.shape, self.seed)
        return models.output_qparams(model)


def case_spec(recipe: Recipe, shape: dict, seed: int) -> CaseSpec:
    def build() -> ModelInputs:
        model, inputs = recipe.build(shape, seed)
        return ModelInputs(model=recipe.flow(model, inputs, shape), inputs=tuple(inputs))

    from vulkan.cases.lowering import LOWERING_DEFINITION

    return CaseSpec(
        name=f"vulkan/{recipe.name}/{shape_id(shape)}/s{seed}",
        source="quantized",
        build=build,
        definition=recipe.definition() + json.dumps(shape, sort_keys=True) + f"|seed={seed}|" + LOWERING_DEFINITION,
        tags=frozenset({"vulkan", recipe.op}),
        description=f"{recipe.name} on {shape_id(shape)}",
        check_ir_validity=False,  # Q/DQ graphs: the edge verifier rejects them until a backend fuses them
    )


def cases(recipe: Recipe, count: int = 3, seed: int = 0) -> list[VulkanCase]:
    """``count`` cases of ``recipe``, shapes drawn by hypothesis from ``seed``."""
    out = []
    for i, shape in enumerate(draw(recipe.shapes, count, seed * 7919 + _stable_hash(recipe.name))):
        case_seed = seed * 1000 + i
        out.append(VulkanCase(recipe, shape, case_seed, case_spec(recipe, shape, case_seed)))
    return out


def case(recipe: Recipe, shape: dict, seed: int = 0) -> VulkanCase:
    """One case with a given shape (tests and reproducers pin shapes instead of drawing them)."""
    return VulkanCase(recipe, dict(shape), seed, case_spec(recipe, dict(shape), seed))


def _stable_hash(text: str) -> int:
    import hashlib

    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


# --- input draws ----------------------------------------------------------------------------

DRAW_KINDS = ("sample", "random", "zeros", "saturate", "random2")


def input_draws(case: VulkanCase, sample: tuple) -> list[tuple[str, tuple]]:
    """Named input tuples: the sample, random draws, zeros, and values that saturate the quantization range.

    "random" draws float inputs from the distribution calibration saw
    (N(0, std of the sample)); "saturate" draws 8x wider with two elements at
    +-32 std (past the calibrated range, so static activation quantization
    clamps); int8 inputs take -128/127 and their neighbours;
    indices take the first and last row.
    """
    out = [("sample", sample)]
    for i, kind in enumerate(DRAW_KINDS[1:], 1):
        gen = torch.Generator().manual_seed(case.seed * 100 + i)
        out.append((kind, tuple(_draw(x, kind, gen, case.recipe.inputs) for x in sample)))
    return out


def _draw(x: Any, kind: str, gen: torch.Generator, inputs: str) -> Any:
    if not isinstance(x, torch.Tensor):
        return x
    if kind == "zeros":
        return torch.zeros_like(x)
    if x.dtype == torch.int8:
        if kind == "saturate":
            pool = torch.tensor([-128, -127, 127, 126, -128, 127], dtype=torch.int8)
            return pool[torch.randint(0, len(pool), x.shape, generator=gen)]
        return torch.randint(-128, 128, x.shape, generator=gen, dtype=torch.int8)
    if not x.dtype.is_floating_point:  # indices
        hi = int(x.max()) if x.numel() else 0  # samples include the last row (see catalog)
        if kind == "saturate":
            return torch.where(torch.rand(x.shape, generator=gen) < 0.5, 0, hi).to(x.dtype)
        return torch.randint(0, hi + 1, x.shape, generator=gen, dtype=x.dtype)
    std = float(x.std()) if x.numel() > 1 else float(x.abs().max()) if x.numel() else 1.0
    std = max(std, 1e-3)
    if kind == "saturate":  # well past the calibrated range (calibration saw N(0, std))
        y = torch.randn(x.shape, generator=gen) * 8 * std
        flat = y.view(-1)
        if flat.numel() >= 2:
            flat[0], flat[1] = 32 * std, -32 * std
        return y.to(x.dtype)
    return (torch.randn(x.shape, generator=gen) * std).to(x.dtype)
