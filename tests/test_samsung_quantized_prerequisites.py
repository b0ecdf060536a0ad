"""Samsung's annotation readers run after the passes that write the annotations, as EnnBackend.preprocess runs them.

``InsertQDQPass``, ``AnnotateScalarParametersPass`` and ``TransformQuantizedMaskPass`` read
``node.meta['quantize_attrs']``, which only Samsung's ``AnnotateQparamsPass`` writes; upstream runs them after it
and ``FoldQDQPass``. Their catalog entries do the same (``Build(after=...)``): on a real PT2E int8 program,
``InsertQDQPass`` then re-inserts Q/DQ at the graph's input and output, and handed the same program without the
prerequisites it finds nothing to do. Real quantized cases and real passes, no mocks.
"""

from __future__ import annotations

from harness.core.results import Status

SAMSUNG = "executorch.backends.samsung._passes"
PREREQUISITES = (f"{SAMSUNG}.annotate_qparams:AnnotateQparamsPass", f"{SAMSUNG}.fold_qdq:FoldQDQPass")
READERS = ("samsung.InsertQDQPass", "samsung.AnnotateScalarParametersPass", "samsung.TransformQuantizedMaskPass")


def _entry(name: str):
    from harness.catalog.registry import load_catalogs

    return next(e for e in load_catalogs()["samsung"].entries if e.name == name)


def _case(name: str):
    from harness.graphs import sources
    from harness.graphs.cases import load_case

    return load_case(sources.select([name])[0])


def _by_check(results, graph: str) -> dict:
    return {r.check: r for r in results if r.graph == graph}


def test_the_annotation_readers_run_after_annotate_qparams_and_fold_qdq_on_quantized_graphs():
    """Every entry that reads quantize_attrs is built after the two passes that make them, on the quantized cases;
    each is exercised by a quantized case (targeted_quant_samsung for the two with a narrow precondition), so none
    keeps a known 'exercised' failure."""
    for name in READERS:
        e = _entry(name)
        assert e.build.after == PREREQUISITES, (name, e.build.after)
        assert e.build.how == "program" and e.stage == "quantized-edge", (name, e.build, e.stage)
        assert e.known_for("exercised", "resnet_basic_q8") is None, name


def test_insert_qdq_changes_a_quantized_program_after_its_prerequisites():
    """resnet_basic_q8 (XNNPACK int8 PT2E): after AnnotateQparamsPass and FoldQDQPass the graph input and output
    carry their qparams, and InsertQDQPass puts a quantize after the input and a dequantize before the output. What
    is judged is the entry's own change: the prerequisites' Q/DQ removal is not counted."""
    from harness.check import exercised
    from harness.check.runner import check_pass_on_case

    case = _case("resnet_basic_q8")
    results = check_pass_on_case(_entry("samsung.InsertQDQPass").loaded(), case)
    runs = _by_check(results, case.name)["runs"]
    assert runs.status is Status.PASS, runs.message
    assert runs.details["ops_changed"] == {"quantized_decomposed.quantize_per_tensor.default": 1,
                                           "quantized_decomposed.dequantize_per_tensor.tensor": 1}
    assert runs.details["changed"]["ops"]
    (judged,) = exercised.judge(results, ["samsung.InsertQDQPass"])
    assert judged.status is Status.PASS, judged.message
    assert judged.details["exercised_by"] == [case.name]


def test_insert_qdq_without_the_prerequisites_changes_nothing():
    """The same pass, built the plain way on the same program: the XNNPACK quantizer's Q/DQ carry no
    quantize_attrs, so it has nothing to insert (why the catalog entry runs after AnnotateQparamsPass)."""
    from harness.catalog import Build, entry
    from harness.check.runner import check_pass_on_case

    case = _case("resnet_basic_q8")
    plain = entry("samsung", f"{SAMSUNG}.insert_qdq:InsertQDQPass", build=Build("program"), stage="quantized-edge")
    runs = _by_check(check_pass_on_case(plain.loaded(), case), case.name)["runs"]
    assert runs.status is Status.PASS, runs.message
    assert not any(runs.details["changed"].values()), runs.details
