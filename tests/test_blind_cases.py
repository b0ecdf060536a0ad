"""The cases written so that entries the blind report named get their numerics judged (docs/blind.md).

Each entry below had its result run on no case, or on two only, because the program it was handed (or the one
it returned) does not run on the CPU for a known reason: memory planning's only buffer-mutating case is blocked
by its control flow and its ``torch.empty``; the IO Q/DQ passes of QNN and Samsung hand every float op an int8
tensor when a graph input or output is quantized. The hand-written graphs avoid exactly that, and the real
entry, run as the gate runs it (prerequisites first), must have its numerics judged there.
"""

from __future__ import annotations

import pytest
from corpus_helpers import corpus_spec

from harness import catalog
from harness.check.runner import check_pass_on_case
from harness.core.config import RunConfig
from harness.core.results import Status
from harness.graphs.cases import load_case
from harness.run.plan import entry_config

CHECKS = frozenset({"runs", "runnable", "numerics"})
MUTABLE = ("targeted_exir_mutable", "targeted_exir_running_stats", "targeted_exir_ema")  # the buffer-mutating cases written by hand
# (entry, its catalog, a hand-written case written for it)
CASES = [
    *(("exir.MemoryPlanningPass[no_mutable_alloc]", "exir", g) for g in MUTABLE),
    *(("exir.MemoryPlanningPass[share_mutable]", "exir", g) for g in MUTABLE),
    ("qualcomm.InsertIOQDQ", "qualcomm", "targeted_quant_float_io"),
    ("samsung.InsertQDQPass", "samsung", "targeted_quant_float_io"),
]
_LOADED: dict = {}


def _case(name: str):
    if name not in _LOADED:
        _LOADED[name] = load_case(corpus_spec(name))
    return _LOADED[name]


@pytest.mark.parametrize(("name", "catalog_name", "graph"), CASES)
def test_the_entry_judges_numerics_on_its_hand_written_case(name, catalog_name, graph):
    entry = next(e for e in catalog.all_entries(catalog.select([catalog_name])) if e.name == name)
    assert entry.applies(corpus_spec(graph)), f"{name} does not apply to {graph}"
    config = entry_config(entry, RunConfig(checks=CHECKS))
    by_check = {r.check: r for r in check_pass_on_case(entry.loaded(), _case(graph), config)}
    assert by_check["runs"].status is Status.PASS, by_check["runs"].message
    assert by_check["runnable"].status is Status.PASS, by_check["runnable"].message
    assert by_check["numerics"].status is Status.PASS, by_check["numerics"].message


@pytest.mark.parametrize(("graph", "buffers", "writes"), [
    ("targeted_exir_mutable", ["cache", "peak", "steps"], ()),
    # running statistics from a reduction, a history shifted through slices, an accumulating histogram
    ("targeted_exir_running_stats", ["counts", "history", "mean", "var"], ("slice_scatter", "index_put")),
    # lerp_ then clamp_ on one buffer, index_copy_ at an input position, masked_fill_
    ("targeted_exir_ema", ["ema", "hits", "slots"], ("clamp", "index_put", "where")),
])
def test_the_buffer_mutating_cases_have_no_control_flow_or_empty(graph, buffers, writes):
    """What keeps targeted_exir_memory's planned program from running must stay out of these."""
    case = _case(graph)
    assert "buffer_mutation" in case.spec.tags
    assert sorted(case.edge.graph_signature.buffers_to_mutate.values()) == buffers
    targets = {getattr(n.target, "__name__", str(n.target)) for n in case.edge.graph_module.graph.nodes
               if n.op == "call_function"}  # op names: a schema's text holds words such as "condition"
    assert not any(word in t for t in targets for word in ("cond", "map_impl", "scan", "empty"))
    assert all(any(w in t for t in targets) for w in writes)


def test_the_float_io_case_quantizes_only_its_middle():
    """No graph input feeds a quantize and no output comes from a dequantize: the IO passes have nothing to
    put back there, and the program they return still runs."""
    case = _case("targeted_quant_float_io")
    graph = case.edge.graph_module.graph
    inputs = [n for n in graph.nodes if n.op == "placeholder"
              and n.name in case.edge.graph_signature.user_inputs]
    assert len(inputs) == 3 and not any("quantize" in str(u.target) for n in inputs for u in n.users)
    output = next(n for n in graph.nodes if n.op == "output")
    assert not any("quantize" in str(a.target) for a in output.args[0])
    assert sum("quantize_per_tensor" in str(n.target) for n in graph.nodes) >= 4
