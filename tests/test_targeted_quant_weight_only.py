"""targeted_quant_weight_only gives vulkan.FuseQuantizedOpsTransform the weight-only quantized linears it matches.

VulkanQuantizer's weight-only config (8-bit and 4-bit, per-channel symmetric) leaves each weight an int8 buffer
behind a dequantize_per_channel with a float activation; to_edge decomposes the linears into permute_copy +
addmm / mm, and the entry (run after AddmmToLinearTransform, as VulkanBackend.preprocess runs it) fuses them into
aten._weight_int8pack_mm / et_vk.linear_qcs4w (+ add of the bias). Real programs, no mocks.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from harness.core.results import Status
from passes.prerequisites import ADDMM_TO_LINEAR

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
NAME = "targeted_quant_weight_only"
ENTRY = "vulkan.FuseQuantizedOpsTransform"


def _target(n) -> str:
    """``dequantize_per_channel`` for quantized_decomposed.dequantize_per_channel.default, ``addmm`` for
    aten.addmm.default, and so on (edge or ATen)."""
    name = getattr(n.target, "__name__", "") if n.op == "call_function" else ""
    return name.split(".")[-2] if "." in name else name


@pytest.fixture(scope="module")
def case():
    from harness.fuzz.corpus import load_dir
    from harness.graphs.cases import load_case

    spec = next(s for s in load_dir(CORPUS) if s.name == NAME)
    assert {"quantized", "int8"} <= spec.tags and not spec.preserve_ops
    return load_case(spec)


@pytest.fixture(scope="module")
def entry():
    from harness.catalog.registry import load_catalogs

    return next(e for e in load_catalogs()["vulkan"].entries if e.name == ENTRY)


def _weight_only_matmuls(ep):
    """(matmul node, bits) of every addmm / mm / linear whose weight is a dequantize_per_channel of an int8
    buffer (through the permute_copy to_edge puts in front of addmm / mm) and whose activation is float."""
    out = []
    for n in ep.graph.nodes:
        kind = _target(n)
        if kind not in ("addmm", "mm", "linear"):
            continue
        act, weight = (n.args[1], n.args[2]) if kind == "addmm" else n.args[:2]
        if kind != "linear" and _target(weight) == "permute_copy":
            weight = weight.args[0]
        if _target(weight) != "dequantize_per_channel" or _target(act).startswith("dequantize"):
            continue
        quant_min, quant_max = weight.args[4:6]
        out.append((n, {(-128, 127): 8, (-8, 7): 4}[(quant_min, quant_max)]))
    return out


def test_the_case_lowers_to_weight_only_quantized_matmuls(case):
    """Four linears survive to_edge as dequantize_per_channel -> permute_copy -> addmm / mm: 8-bit and 4-bit,
    with and without bias, on 2-D and 3-D (view_copy'd) activations."""
    found = _weight_only_matmuls(case.edge)
    assert sorted((_target(n), bits) for n, bits in found) == [("addmm", 4), ("addmm", 8), ("mm", 4), ("mm", 8)]
    assert not any(_target(n) == "linear" for n in case.edge.graph.nodes)  # what AddmmToLinearTransform rebuilds
    activations = [n.args[1] if _target(n) == "addmm" else n.args[0] for n, _ in found]
    assert sum(_target(a) == "view_copy" for a in activations) == 2  # the 3-D activations
    for n, _ in found:
        weight = (n.args[2] if _target(n) == "addmm" else n.args[1]).args[0]
        assert weight.args[0].op == "placeholder" and weight.args[0].meta["val"].dtype.is_floating_point is False
        assert weight.args[-1] is not None and str(weight.args[-1]) == "torch.int8"


def test_addmm_to_linear_then_the_pass_fuses_every_linear(case):
    """AddmmToLinearTransform gives the pass aten.linear; every one of them is fused (no linear or
    dequantize_per_channel is left)."""
    from executorch.backends.transforms.addmm_mm_to_linear import AddmmToLinearTransform
    from executorch.backends.vulkan._passes.fuse_quantized_ops import FuseQuantizedOpsTransform

    ep = copy.deepcopy(case.edge)
    ep._graph_module = AddmmToLinearTransform()(ep.graph_module).graph_module
    assert sorted(bits for n, bits in _weight_only_matmuls(ep)) == [4, 4, 8, 8]
    fuse = FuseQuantizedOpsTransform()
    fuse._exported_program = ep
    gm = fuse(ep.graph_module).graph_module
    targets = [_target(n) for n in gm.graph.nodes if n.op == "call_function"]
    assert targets.count("_weight_int8pack_mm") == 2 and targets.count("linear_qcs4w") == 2
    assert targets.count("add") == 2  # the two biases
    assert "linear" not in targets and "dequantize_per_channel" not in targets


def test_the_entry_changes_the_case(case, entry):
    """Built after AddmmToLinearTransform, the entry changes the case; the 8-bit outputs compute what it was
    handed, the 4-bit one does not (the CPU reference of et_vk.linear_qcs4w does not undo the +8 offset
    pack_4bit_weight_tensor stores the nibbles with), so numerics fail on the first 4-bit output."""
    from harness.check.runner import check_pass_on_case

    assert entry.build.after == (ADDMM_TO_LINEAR,)
    assert not any(k.check == "exercised" for k in entry.known)
    got = {r.check: r for r in check_pass_on_case(entry.loaded(), case) if r.graph == NAME}
    assert got["runs"].status is Status.PASS, got["runs"].message
    assert got["runs"].details["changed"]
    assert got["runs"].details["ops_changed"] == {
        "aten.linear.default": -4, "quantized_decomposed.dequantize_per_channel.default": -4,
        "aten._weight_int8pack_mm.default": 2, "aten.add.Tensor": 2, "et_vk.linear_qcs4w.default": 2}
    assert got["runnable"].status is Status.PASS, got["runnable"].message
    numerics = got["numerics"]
    if numerics.status is not Status.PASS:
        assert "output 1 " in numerics.message, numerics.message  # fc4_plain: the first 4-bit output


def test_the_4bit_cpu_reference_is_off_by_the_packing_offset():
    """Why numerics fail on the 4-bit outputs: et_vk.linear_qcs4w's CPU implementation computes
    x @ ((w + 8) * s).T for the weight the pass packs, i.e. the right answer plus 8 * s * sum(x)."""
    import executorch.backends.vulkan.custom_ops_lib  # noqa: F401 - registers et_vk ops
    import torch
    from executorch.backends.vulkan._passes.fuse_quantized_ops import pack_4bit_weight_tensor

    g = torch.Generator().manual_seed(0)
    w = torch.randint(-8, 8, (4, 8), dtype=torch.int8, generator=g)
    s = torch.rand(4, generator=g) + 0.1
    x = torch.randn(2, 8, generator=g)
    expected = x @ (w.float() * s[:, None]).T
    got = torch.ops.et_vk.linear_qcs4w(x, pack_4bit_weight_tensor(w), s)
    torch.testing.assert_close(got, expected + 8 * x.sum(1, keepdim=True) * s)


def test_a_verifier_violation_of_the_prerequisite_is_not_the_entrys(entry):
    """On mobilenet_v2_q8 the entry matches nothing, and the aten.linear its prerequisite AddmmToLinearTransform
    makes is not core ATen: the program it was handed already fails the edge verifier with the same message, so
    the entry's verifier check is skipped and says why, instead of failing it for its prerequisite."""
    from harness.check.runner import check_pass_on_case
    from harness.graphs import sources
    from harness.graphs.cases import load_case

    case = load_case(next(s for s in sources.select(["quantized"]) if s.name == "mobilenet_v2_q8"))
    got = {r.check: r for r in check_pass_on_case(entry.loaded(), case)}
    assert not any(got["runs"].details["changed"].values())
    assert got["verifier"].status is Status.SKIP, got["verifier"].message
    assert "already fails" in got["verifier"].message and "aten.linear" in got["verifier"].message
