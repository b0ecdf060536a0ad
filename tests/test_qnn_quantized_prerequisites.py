"""QNN's passes that read AnnotateQuantAttrs' records, run after the passes QNN runs before them.

InsertIOQDQ and InsertCastForFpActQuantizedWeight read the QCOM_QUANT_ATTRS that only QNN's AnnotateQuantAttrs
writes, on the graph FoldQDQ has stripped of its Q/DQ. Their catalog entries run them after those passes
(``Build(after=...)``), so on passgate's quantized cases (XNNPACK-quantized, lowered with to_edge) they change the
program, and what is judged is the entry's own change, not its prerequisites'. Real programs, no mocks.
"""

from __future__ import annotations

from harness.core.results import Status

QDQ = "quantized_decomposed.{}_per_tensor.default"


def _entry(name: str):
    from harness.catalog.registry import load_catalogs

    return next(e for e in load_catalogs()["qualcomm"].entries if e.name == name)


def _case(name: str):
    from harness.graphs import sources
    from harness.graphs.cases import load_case

    return load_case(sources.select([name])[0])


def _runs(entry_name: str, case_name: str):
    """The ``runs`` record of the entry on the case (its details say what the entry itself changed)."""
    from harness.check.runner import check_pass_on_case

    results = check_pass_on_case(_entry(entry_name).loaded(), _case(case_name))
    runs = next(r for r in results if r.graph == case_name and r.check == "runs")
    assert runs.status is Status.PASS, runs.message
    return runs.details


def test_the_entries_run_after_the_passes_qnn_runs_first():
    p = "executorch.backends.qualcomm._passes"
    annotate, fold = f"{p}.annotate_quant_attrs:AnnotateQuantAttrs", f"{p}.fold_qdq:FoldQDQ"
    assert _entry("qualcomm.InsertIOQDQ").build.after == (annotate, fold, f"{p}.insert_requantize:InsertRequantize")
    assert _entry("qualcomm.InsertCastForFpActQuantizedWeight").build.after == (
        annotate, fold, f"{p}.layout_transform:LayoutTransform")
    for name in ("qualcomm.InsertIOQDQ", "qualcomm.InsertCastForFpActQuantizedWeight"):
        assert not any(k.check == "exercised" for k in _entry(name).known), name


def test_insert_io_qdq_quantizes_the_inputs_and_dequantizes_the_outputs():
    """resnet_basic_q8's image input gets a quantize and its logits a dequantize, from the quant_attrs
    AnnotateQuantAttrs recorded; FoldQDQ's removals before it are not counted as the entry's change."""
    details = _runs("qualcomm.InsertIOQDQ", "resnet_basic_q8")
    assert details["ops_changed"] == {QDQ.format("quantize"): 1, QDQ.format("dequantize"): 1}
    assert details["changed"]["ops"]
    # text_classifier_q8 takes int64 token ids (never quantized): only its output gets a dequantize
    details = _runs("qualcomm.InsertIOQDQ", "text_classifier_q8")
    assert details["ops_changed"] == {QDQ.format("dequantize"): 1}


def test_insert_cast_for_fp_act_quantized_weight_wraps_the_convolutions_with_an_unquantized_output():
    """The XNNPACK quantizer quantizes a conv + relu after the relu only, so resnet_basic_q8's three such
    convolutions have quantized weights and no QCOM_QUANT_ATTRS of their own: each gets a cast to fp16 before and
    one back to fp32 after. Every convolution of mobilenet_v2_q8 feeds a quantize of its own: nothing to do."""
    details = _runs("qualcomm.InsertCastForFpActQuantizedWeight", "resnet_basic_q8")
    assert details["ops_changed"] == {"aten._to_copy.default": 6}
    untouched = _runs("qualcomm.InsertCastForFpActQuantizedWeight", "mobilenet_v2_q8")
    assert not any(untouched["changed"].values()), untouched


def test_an_entry_is_judged_against_what_its_prerequisites_handed_it():
    """FoldQDQ (a prerequisite) changes what mobilenet_v2_q8 computes, by design; InsertCastForFpActQuantizedWeight
    then changes nothing there. Its numerics compare with the program it was handed, so they hold: the drift is
    FoldQDQ's, reported under FoldQDQ's own entry."""
    from harness.check.runner import check_pass_on_case

    entry = _entry("qualcomm.InsertCastForFpActQuantizedWeight")
    got = {r.check: r for r in check_pass_on_case(entry.loaded(), _case("mobilenet_v2_q8"))}
    assert not any(got["runs"].details["changed"].values())
    assert got["numerics"].status.value == "pass", got["numerics"].message
