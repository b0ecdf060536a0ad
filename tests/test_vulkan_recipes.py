"""Vulkan recipes, shapes, tolerances and executors: the parts that need no fusion run (fast)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

BRIEF_OPS = ("linear_q4gsw", "linear_dq8ca_q4gsw", "linear_qcs4w", "_weight_int8pack_mm", "linear_q8ta_q8csw",
             "q8ta_linear", "q8ta_linear_gemv", "q8ta_conv2d", "q8ta_conv2d_pw", "q8ta_conv2d_dw",
             "q8ta_conv2d_transposed", "q8ta_add", "q8ta_relu", "q8ta_pixel_shuffle", "embedding_q4gsw")


def test_every_fused_op_has_a_recipe_and_declines_exist():
    from vulkan.cases.catalog import RECIPES

    expected = {op.split(".")[-1] for r in RECIPES for op in r.expected}
    assert set(BRIEF_OPS) <= expected
    assert len({r.name for r in RECIPES}) == len(RECIPES)
    assert sum(r.negative for r in RECIPES) >= 6


def test_every_expected_op_is_a_registered_et_vk_op_with_a_reading():
    import executorch.backends.vulkan.custom_ops_lib  # noqa: F401
    from executorch.backends.vulkan.op_registry import vulkan_supported_ops

    from vulkan.cases.catalog import RECIPES
    from vulkan.judging import ref_ops

    names = {getattr(k, "__name__", str(k)) for k in vulkan_supported_ops}
    for r in RECIPES:
        for op in r.expected:
            assert any(n.endswith(f"{op.split('.')[-1]}.default") for n in names), op
            assert op == "_weight_int8pack_mm" or ref_ops.reader(op) is not None, op


def test_shape_draws_are_deterministic_and_seed_dependent():
    from vulkan.cases.catalog import BY_NAME
    from vulkan.cases.recipes import cases

    r = BY_NAME["q8ta_conv2d[xnnpack]"]
    a = [c.shape for c in cases(r, 4, seed=3)]
    assert a == [c.shape for c in cases(r, 4, seed=3)]
    assert a != [c.shape for c in cases(r, 4, seed=4)]
    assert len({str(s) for s in a}) == 4
    assert len({c.spec.key for c in cases(r, 4, seed=3)}) == 4


def test_conv_shapes_cover_what_the_kernels_care_about():
    from vulkan.cases.catalog import BY_NAME
    from vulkan.cases.recipes import cases
    from vulkan.judging.diagnose import traits

    seen: dict = {}
    for c in cases(BY_NAME["q8ta_conv2d[xnnpack]"], 16, seed=0):
        for k, v in traits(c.shape).items():
            seen.setdefault(k, set()).add(v)
    for trait in ("output channels % 4 != 0 (padded)", "stride > 1", "dilation > 1", "groups > 1", "padding > 0"):
        assert seen[trait] == {True, False}, trait


def test_preprocess_pass_order_matches_the_installed_vulkan_preprocess():
    """vulkan.backend.fusion copies the pass list out of VulkanBackend.preprocess: catch drift on upgrade."""
    import executorch.backends.vulkan.vulkan_preprocess as vp

    from vulkan.backend.fusion import PREPROCESS_ORDER

    src = Path(vp.__file__).read_text()
    body = src[src.index("def preprocess("):]
    found = [m.group(1) for m in re.finditer(r"\b([A-Z]\w+Pass|[A-Z]\w+Transform|insert_prepack_nodes|"
                                              r"SqueezeUnsqueezeInputs)\(?", body)
             if m.group(1) in PREPROCESS_ORDER]
    dedup = [n for i, n in enumerate(found) if n not in found[:i] or n == "AddmmToLinearTransform"]
    assert dedup[: len(PREPROCESS_ORDER)] == list(PREPROCESS_ORDER)


def _qdq_program():
    from vulkan.cases import models

    m = models.QdqUnary(0.05, 3, 0.1, -2)
    x = torch.randint(-128, 128, (2, 3), dtype=torch.int8)
    ep = torch.export.export(m, (x,), strict=False)
    from executorch.exir import EdgeCompileConfig, to_edge

    return to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False)).exported_program(), x


class _DqOut(torch.nn.Module):
    def forward(self, q):
        qd = torch.ops.quantized_decomposed
        y = torch.relu(qd.dequantize_per_tensor(q, 0.05, 3, -128, 127, torch.int8))
        return qd.dequantize_per_tensor(qd.quantize_per_tensor(y, 0.1, -2, -128, 127, torch.int8), 0.1, -2,
                                        -128, 127, torch.int8)


def test_lsb_of_a_dequantized_output_is_its_scale_and_int_outputs_count_in_units():
    from executorch.exir import EdgeCompileConfig, to_edge

    from vulkan.judging import tolerance

    ep, x = _qdq_program()
    p = tolerance.probe(ep, (x,))
    tol = tolerance.tolerance_for(p, 0)
    assert tol.unit_name == "out LSB" and float(tol.allowed.max()) == 1.0
    edge = to_edge(torch.export.export(_DqOut(), (x,), strict=False),
                   compile_config=EdgeCompileConfig(_check_ir_validity=False)).exported_program()
    p2 = tolerance.probe(edge, (x,))
    t2 = tolerance.tolerance_for(p2, 0)
    assert t2.unit_name == "out LSB" and torch.allclose(t2.unit, torch.full_like(t2.unit, 0.1))
    off_by_one = p2.outputs[0] + 0.1
    assert tolerance.compare(off_by_one, p2.outputs[0], t2).ok
    assert not tolerance.compare(p2.outputs[0] + 0.25, p2.outputs[0], t2).ok


def test_sqnr():
    from vulkan.judging.tolerance import sqnr

    ref = torch.ones(100)
    assert sqnr(ref, ref) == float("inf")
    assert sqnr(ref * 1.1, ref) == pytest.approx(20.0)
    assert sqnr(ref, torch.zeros(100)) != sqnr(ref, torch.zeros(100))  # nan: no signal


def test_executorch_vulkan_executor_says_why_it_is_unavailable():
    from vulkan.backend.executors import ExecutorchVulkanExecutor, load_executor, registered_backends

    ok, why = ExecutorchVulkanExecutor().available()
    if "VulkanBackend" in registered_backends():
        assert ok
    else:
        assert not ok and "VulkanBackend" in why and "registered" in why
    assert load_executor(None).name == "reference"
    assert load_executor("executorch-vulkan").name == "executorch-vulkan"


def test_vendor_executor_spec_is_loaded_from_a_file(tmp_path):
    from harness.core.errors import UsageError
    from vulkan.backend.executors import load_executor

    f = tmp_path / "vendor_exec.py"
    f.write_text("class Dev:\n    name = 'dev'\n    def run(self, subject, inputs):\n        return []\n")
    assert load_executor(f"{f}:Dev").name == "dev"
    with pytest.raises(UsageError):
        load_executor(f"{f}:Nope")
