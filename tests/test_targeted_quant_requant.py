"""targeted_quant_requant gives qualcomm.InsertRequantize the q -> dq -> q -> dq chain it needs.

Its convolution + relu and its linear are quantized with different activation ranges, so the edge between them
is quantized twice: QNN's AnnotateQuantAttrs records a QCOM_REQUANTIZE for it, FoldQDQ strips the Q/DQ, and the
InsertRequantize entry (run after both, as QNN runs them) inserts the convert. Real programs, no mocks.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from harness.core.results import Status

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
NAME = "targeted_quant_requant"
P = "executorch.backends.qualcomm._passes"
QUANTIZE, DEQUANTIZE = "quantize_per_tensor", "dequantize_per_tensor"


def _target(n) -> str:
    """``quantize_per_tensor`` for quantized_decomposed.quantize_per_tensor.default (edge or ATen), and so on."""
    name = getattr(n.target, "__name__", "") if n.op == "call_function" else ""
    return name.split(".")[-2] if "." in name else name


@pytest.fixture(scope="module")
def case():
    from harness.fuzz.corpus import load_dir
    from harness.graphs.cases import load_case

    spec = next(s for s in load_dir(CORPUS) if s.name == NAME)
    assert {"quantized", "int8"} <= spec.tags
    return load_case(spec)


@pytest.fixture(scope="module")
def entry():
    from harness.catalog.registry import load_catalogs

    return next(e for e in load_catalogs()["qualcomm"].entries if e.name == "qualcomm.InsertRequantize")


def _requant_chains(ep):
    """(first quantize, second quantize) of every q -> dq -> q whose two quantizations differ."""
    chains = []
    for dq in ep.graph.nodes:
        if _target(dq) != DEQUANTIZE or _target(dq.args[0]) != QUANTIZE:
            continue
        for q in dq.users:
            if _target(q) == QUANTIZE and tuple(q.args[1:]) != tuple(dq.args[0].args[1:]):
                chains.append((dq.args[0], q))
    return chains


def test_the_case_has_a_requantizing_chain(case):
    """relu -> q([-128, 127]) -> dq -> q([-127, 127]) -> dq -> the linear: one edge, two encodings."""
    chains = _requant_chains(case.edge)
    assert len(chains) == 1, chains
    first, second = chains[0]
    assert first.args[0].name.startswith("aten_relu")
    assert (tuple(first.args[3:5]), tuple(second.args[3:5])) == ((-128, 127), (-127, 127))  # quant_min, quant_max
    assert first.args[1] != second.args[1]  # the scales differ too


def test_annotate_quant_attrs_then_fold_qdq_leave_a_requantize_record(case):
    from executorch.backends.qualcomm._passes import AnnotateQuantAttrs, FoldQDQ
    from executorch.backends.qualcomm.utils.constants import QCOM_QUANT_MIN, QCOM_REQUANTIZE

    ep = copy.deepcopy(case.edge)
    AnnotateQuantAttrs(ep)(ep.graph_module)
    FoldQDQ(ep)(ep.graph_module)
    nodes = {n.name: n for n in ep.graph_module.graph.nodes}
    recorded = [n for n in nodes.values() if QCOM_REQUANTIZE in n.meta]
    assert [n.name for n in recorded] == [n.name for n in nodes.values() if n.name.startswith("aten_relu")]
    (consumer, attrs), = recorded[0].meta[QCOM_REQUANTIZE].items()
    assert attrs[QCOM_QUANT_MIN] == -127  # the consumer's encoding
    # FoldQDQ made the consumer (the linear's view_copy) a user of the relu
    assert recorded[0] in nodes[consumer].all_input_nodes
    assert not any(_target(n) in (QUANTIZE, DEQUANTIZE) for n in nodes.values())


def test_the_insert_requantize_entry_inserts_the_convert(case, entry):
    """Built after AnnotateQuantAttrs -> FoldQDQ, the entry changes the case: one aten._to_copy (QNN's convert)
    between the relu and the linear's view_copy; the program still runs and computes what it was handed."""
    from harness.check.runner import check_pass_on_case

    assert entry.build.after == (f"{P}.annotate_quant_attrs:AnnotateQuantAttrs", f"{P}.fold_qdq:FoldQDQ")
    assert not any(k.check == "exercised" for k in entry.known)
    got = {r.check: r for r in check_pass_on_case(entry.loaded(), case) if r.graph == NAME}
    assert got["runs"].status is Status.PASS, got["runs"].message
    assert got["runs"].details["ops_changed"] == {"aten._to_copy.default": 1}
    for check in ("runnable", "numerics"):
        assert got[check].status is Status.PASS, (check, got[check].message)
