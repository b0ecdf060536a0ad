"""targeted_quant_samsung puts in front of Samsung's two quantize_attrs readers no quantized case exercises what
each looks for: run as their catalog entries run them (after AnnotateQparamsPass and FoldQDQPass, which
check_pass_on_case runs as the entry's prerequisites), each changes the program. Real program, real passes."""

from __future__ import annotations

import pytest

from harness.core.results import Status

GRAPH = "targeted_quant_samsung"


def _case():
    from harness.graphs import sources
    from harness.graphs.cases import load_case

    return load_case(sources.select([GRAPH])[0])


def _entry(name: str):
    from harness.catalog.registry import load_catalogs

    return next(e for e in load_catalogs()["samsung"].entries if e.name == name)


def test_the_mask_input_keeps_the_name_the_mask_pass_looks_for():
    """TransformQuantizedMaskPass finds the mask as the graph input whose target is 'attention_mask'."""
    placeholders = [n.target for n in _case().edge.graph.nodes if n.op == "placeholder"]
    assert "attention_mask" in placeholders, placeholders


@pytest.mark.parametrize("name, changed", [
    # conv * 0.5 + 0.25: the two 0-d scalar buffers get qparams of their own (a metadata change)
    ("samsung.AnnotateScalarParametersPass", "metadata"),
    # (1 - mask) * -10000 added to scores / sqrt(d): the add is rewired to two new muls
    ("samsung.TransformQuantizedMaskPass", "ops"),
])
def test_targeted_quant_samsung_exercises_the_entries_it_names(name, changed):
    from harness.check import exercised
    from harness.check.runner import check_pass_on_case

    entry = _entry(name)
    assert entry.build.after, name  # the prerequisites are part of the entry: check_pass_on_case runs them
    results = check_pass_on_case(entry.loaded(), _case())
    runs = {r.check: r for r in results if r.graph == GRAPH}["runs"]
    assert runs.status is Status.PASS, runs.message
    assert runs.details["changed"][changed], runs.details
    (judged,) = exercised.judge(results, [name])
    assert judged.status is Status.PASS, judged.message
    assert judged.details["exercised_by"] == [GRAPH]
