"""The model zoo: every case builds the same way twice, exports, lowers, runs and is right.

Float cases must compute on the lowered edge program what the eager model
computes; quantized cases must lower with their Q/DQ ops and stay close to
the float model. And an identity ``ExportPass`` must pass every check on
every case: a zoo model that trips a check under a pass that changes
nothing would make every report on it a false positive.

Cases are lowered once per run into the session cache (tests/conftest.py),
so the identity-pass tests reuse what the lowering tests built.
"""

from __future__ import annotations

import re

import pytest
import torch
from torch.utils import _pytree as pytree

from fixtures.builtin import BUILTIN_SPECS
from fixtures.zoo import EXCLUDED, QUANTIZED_SPECS, ZOO_SPECS
from harness.check.numerics import tolerance
from harness.graphs.cases import load_case

ALL = ZOO_SPECS + QUANTIZED_SPECS


def _ids(specs):
    return [s.name for s in specs]


def _leaves(out) -> list:
    return [x for x in pytree.tree_leaves(out) if isinstance(x, torch.Tensor)]


def _eager_outputs(spec, inputs) -> list:
    """The eager model of a fresh build on ``inputs`` (fresh: KV caches start empty)."""
    built = spec.build()
    model = built.model.module() if isinstance(built.model, torch.export.ExportedProgram) else built.model
    with torch.no_grad():
        return _leaves(model(*inputs))


def _edge_outputs(case) -> list:
    with torch.no_grad():
        return _leaves(case.program("edge").module()(*case.sample_inputs()))


def _state(model) -> dict:
    if isinstance(model, torch.export.ExportedProgram):
        return {**model.state_dict, **{k: v for k, v in model.constants.items() if isinstance(v, torch.Tensor)}}
    return {**dict(model.named_parameters()), **dict(model.named_buffers())}


def test_zoo_has_unique_snake_case_names_and_the_promised_architectures():
    names = _ids(BUILTIN_SPECS + ALL)
    assert len(names) == len(set(names)), "case names must be unique across sources"
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", n) for n in names)
    assert {s.source for s in ZOO_SPECS} == {"zoo"} and {s.source for s in QUANTIZED_SPECS} == {"quantized"}
    hand_written = [s for s in ZOO_SPECS if "executorch_example" not in s.tags]
    assert len(hand_written) >= 12
    for spec in ALL:
        assert spec.tags and spec.description, spec.name
    for arch in ("mobilenet_v2", "mobilenet_v3", "resnet_basic", "vit_tiny", "llama_decoder", "gru_classifier",
                 "wav2letter", "unet", "text_classifier", "mobilebert", "et_ds_cnn_kws", "et_llama"):
        assert arch in names
    assert all("quantized" in s.tags and s.name.endswith("_q8") for s in QUANTIZED_SPECS)
    assert EXCLUDED  # the examples left out are named, with the reason


@pytest.mark.parametrize("spec", ZOO_SPECS, ids=_ids(ZOO_SPECS))
def test_zoo_builds_deterministically(spec):
    a, b = spec.build(), spec.build()
    for x, y in zip(pytree.tree_leaves(a.inputs), pytree.tree_leaves(b.inputs)):
        assert torch.equal(x, y)
    sa, sb = _state(a.model), _state(b.model)
    assert sa.keys() == sb.keys()
    assert all(torch.equal(sa[k], sb[k]) for k in sa), "weights must come from the seed alone"


@pytest.mark.parametrize("spec", ZOO_SPECS, ids=_ids(ZOO_SPECS))
def test_zoo_case_lowers_and_matches_eager(spec):
    case = load_case(spec)
    expected = _eager_outputs(spec, case.sample_inputs())
    actual = _edge_outputs(case)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        rtol, atol = tolerance(e.dtype)
        torch.testing.assert_close(a, e, rtol=max(rtol, 1e-4), atol=max(atol, 1e-4))


def _sqnr_db(reference: torch.Tensor, approx: torch.Tensor) -> float:
    noise = (reference.double() - approx.double()).pow(2).mean()
    return float(10 * torch.log10(reference.double().pow(2).mean() / noise.clamp(min=1e-20)))


@pytest.mark.parametrize("spec", QUANTIZED_SPECS, ids=_ids(QUANTIZED_SPECS))
def test_quantized_case_lowers_runs_and_stays_near_float(spec):
    case = load_case(spec)
    targets = {str(getattr(n.target, "__name__", n.target)) for n in case.edge.graph.nodes if n.op == "call_function"}
    assert any("quantize_per" in t for t in targets) and any("dequantize_per" in t for t in targets), targets
    assert spec.check_ir_validity, "quantized cases lower with the edge IR validity check on"
    base = next(s for s in ZOO_SPECS if s.name == spec.name.removesuffix("_q8"))
    float_out = _eager_outputs(base, case.sample_inputs())
    quant_out = _edge_outputs(case)
    assert [o.shape for o in quant_out] == [o.shape for o in float_out]
    for q, f in zip(quant_out, float_out):
        assert torch.isfinite(q).all()
        assert _sqnr_db(f, q) > 10.0, f"int8 output far from float: SQNR {_sqnr_db(f, q):.1f} dB"


def test_ptq_quantizer_gives_the_stock_xnnpack_graph():
    """Dropping the QAT-only conv+bn patterns changes nothing in post-training quantization."""
    from fixtures.quantized import ptq_quantizer, quantize, stock_quantizer

    built = next(s for s in BUILTIN_SPECS if s.name == "conv_bn_relu").build()
    fast = quantize(built.model, built.inputs, quantizer=ptq_quantizer())
    stock = quantize(built.model, built.inputs, quantizer=stock_quantizer())
    assert fast.graph_module.code == stock.graph_module.code
    assert fast.state_dict.keys() == stock.state_dict.keys()
    assert all(torch.equal(fast.state_dict[k], stock.state_dict[k]) for k in fast.state_dict)


def test_kv_cache_cases_mutate_their_cache_buffers():
    by_name = {s.name: s for s in ZOO_SPECS}
    for name in ("llama_decoder", "et_llama"):
        mutated = load_case(by_name[name]).edge.graph_signature.buffers_to_mutate
        assert any("cache" in target for target in mutated.values()), (name, mutated)


def test_dynamic_sequence_length_case_runs_at_other_lengths():
    spec = next(s for s in ZOO_SPECS if s.name == "text_classifier")
    edge = load_case(spec).program("edge").module()
    for length in (3, 17):
        tokens = torch.arange(1, 2 * length + 1).reshape(2, length) % 100
        torch.testing.assert_close(edge(tokens), _eager_outputs(spec, (tokens,))[0], rtol=1e-4, atol=1e-4)


# Harness bugs that flag a correct pass on a zoo case (strict xfail: flips to a failure once fixed).
# None left: verifiers._dim_ok called int() on a symbolic size and specialized the ShapeEnv the
# copies share with the shared case (text_classifier); it now reads the size's hint.
_KNOWN_FALSE_POSITIVES: dict[str, str] = {}


def _identity_params():
    for spec in ALL:
        marks = ()
        if spec.name in _KNOWN_FALSE_POSITIVES:
            marks = pytest.mark.xfail(reason=_KNOWN_FALSE_POSITIVES[spec.name], strict=True)
        yield pytest.param(spec, id=spec.name, marks=marks)


@pytest.mark.parametrize("spec", list(_identity_params()))
def test_identity_export_pass_passes_every_check(spec):
    from executorch.exir.pass_base import ExportPass

    from harness.check.loading import from_object
    from harness.check.runner import check_pass_on_case

    results = check_pass_on_case(from_object(ExportPass, name="identity"), load_case(spec))
    violations = [f"{r.check}: {r.message}" for r in results if r.is_violation(strict=True)]
    assert not violations, violations
