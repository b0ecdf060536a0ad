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
# entry -> (its catalog, the hand-written case written for it)
CASES = {
    "exir.MemoryPlanningPass[no_mutable_alloc]": ("exir", "targeted_exir_mutable"),
    "exir.MemoryPlanningPass[share_mutable]": ("exir", "targeted_exir_mutable"),
    "qualcomm.InsertIOQDQ": ("qualcomm", "targeted_quant_float_io"),
    "samsung.InsertQDQPass": ("samsung", "targeted_quant_float_io"),
}
_LOADED: dict = {}


def _case(name: str):
    if name not in _LOADED:
        _LOADED[name] = load_case(corpus_spec(name))
    return _LOADED[name]


@pytest.mark.parametrize("name", list(CASES))
def test_the_entry_judges_numerics_on_its_hand_written_case(name):
    catalog_name, graph = CASES[name]
    entry = next(e for e in catalog.all_entries(catalog.select([catalog_name])) if e.name == name)
    assert entry.applies(corpus_spec(graph)), f"{name} does not apply to {graph}"
    config = entry_config(entry, RunConfig(checks=CHECKS))
    by_check = {r.check: r for r in check_pass_on_case(entry.loaded(), _case(graph), config)}
    assert by_check["runs"].status is Status.PASS, by_check["runs"].message
    assert by_check["runnable"].status is Status.PASS, by_check["runnable"].message
    assert by_check["numerics"].status is Status.PASS, by_check["numerics"].message


def test_the_buffer_mutating_case_has_no_control_flow_or_empty():
    """What keeps targeted_exir_memory's planned program from running must stay out of this one."""
    case = _case("targeted_exir_mutable")
    assert "buffer_mutation" in case.spec.tags
    assert sorted(case.edge.graph_signature.buffers_to_mutate.values()) == ["cache", "peak", "steps"]
    targets = {str(n.target) for n in case.edge.graph_module.graph.nodes if n.op == "call_function"}
    assert not any(word in t for t in targets for word in ("cond", "map_impl", "scan", "empty"))


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
