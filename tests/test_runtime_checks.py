"""The runtime checks catch what only the runtime sees, and name the op.

Three deliberately broken pieces of the ``to_executorch`` flow, each put in
through the flow's own extension points (``ExecutorchBackendConfig``'s
``memory_planning_pass`` and ``passes``), each passing every IR check of the
program it works on and each failing a runtime check with the op named; a
correct pass is flagged by nothing.
"""

from __future__ import annotations

import torch
from executorch.exir import ExecutorchBackendConfig
from executorch.exir.passes import MemoryPlanningPass
from torch.fx.passes.infra.pass_base import PassResult

from harness.check.loading import from_object
from harness.check.runner import check_pass_on_case
from harness.check.runtime import RUNTIME_CHECK_IDS, judge_case, judge_runtime
from harness.core.config import RunConfig
from harness.core.results import Status
from harness.graphs import sources
from harness.graphs.cases import CaseSpec, GraphCase, ModelInputs, edge_compile_config, export_and_lower, load_case
from harness.pipelines.pipeline import PIPELINE_CHECKS, MemoryPlanningRun, derived_case, resolve_pipeline


def _case(name: str) -> GraphCase:
    return load_case(next(s for s in sources.select(["builtin"]) if s.name == name))


def _runtime(case: GraphCase, config: ExecutorchBackendConfig) -> dict:
    rs = judge_runtime(case.program("edge"), case.sample_inputs(), "broken", case.name,
                       edge_compile_config(True, ()), backend_config=config)
    return {r.check: r for r in rs}


def _ir_violations(pass_obj, case: GraphCase) -> list:
    rs = check_pass_on_case(from_object(pass_obj, type(pass_obj).__name__), case,
                            RunConfig(stage="edge", checks=PIPELINE_CHECKS))
    return [(r.check, r.message) for r in rs if r.is_violation()]


def _before_planning(case: GraphCase) -> GraphCase:
    """The program to_executorch hands its memory planner (every step of the to_executorch pipeline)."""
    pipeline = resolve_pipeline("to_executorch")
    program = pipeline.prefix(len(pipeline.steps)).call(case.program("edge")).exported_program
    return derived_case(case, "edge", program, "before memory planning")


class SharedStoragePlanner(MemoryPlanningPass):
    """Plans as upstream does, then puts a tensor at the offset of one still live when it is written."""

    def run(self, graph_module, graph_signature=None):
        out = super().run(graph_module, graph_signature)
        specs = [n.meta["spec"] for n in graph_module.graph.nodes
                 if getattr(n.meta.get("spec"), "mem_id", None) == 1 and n.meta["spec"].lifetime[0] is not None]
        for a in specs:  # a is written before b and read after b is written: b must not share its storage
            for b in specs:
                if (a.lifetime[0] < b.lifetime[0] and b.lifetime[1] < a.lifetime[1]
                        and a.mem_offset != b.mem_offset and 0 < b.nbytes() <= a.nbytes()):
                    b.mem_offset = a.mem_offset
                    return out
        raise AssertionError("no two overlapping tensors to alias")


class WrongDimOrder(MemoryPlanningPass):
    """Claims channels-last for the first 4-D intermediate right before the emitter reads the specs."""

    def run(self, graph_module, graph_signature=None):
        for n in graph_module.graph.nodes:
            spec = n.meta.get("spec")
            if n.op == "call_function" and len(getattr(spec, "shape", ()) or ()) == 4:
                spec.dim_order = [0, 2, 3, 1]
                break
        return super().run(graph_module, graph_signature)


class DropWriteBack:
    """Removes the copy_ nodes to_executorch inserts to write a mutated buffer back."""

    def __call__(self, gm):
        for n in list(gm.graph.nodes):
            if n.target == torch.ops.aten.copy_.default and n.args[0].op == "placeholder":
                n.replace_all_uses_with(n.args[1])
                gm.graph.erase_node(n)
        gm.recompile()
        return PassResult(gm, True)


class Accumulate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(4))

    def forward(self, x):
        self.total.add_(x)
        return self.total * 2.0


def _accumulate_case() -> GraphCase:
    spec = CaseSpec("accumulate", "fixture", lambda: ModelInputs(Accumulate(), (torch.ones(4),)), "Accumulate")
    inputs, exported, edge = export_and_lower(spec)
    return GraphCase(spec, inputs, exported, edge)


def test_a_correct_pass_is_flagged_by_nothing():
    from executorch.exir.passes.remove_graph_asserts_pass import RemoveGraphAssertsPass

    rs = check_pass_on_case(from_object(RemoveGraphAssertsPass(), "RemoveGraphAssertsPass"), _case("mlp"),
                            RunConfig(runtime=True))
    assert {r.check for r in rs} >= set(RUNTIME_CHECK_IDS)
    assert [r for r in rs if r.is_violation(strict=True)] == []
    assert {r.check: r.status for r in judge_case(_case("residual_block"))} == dict.fromkeys(RUNTIME_CHECK_IDS,
                                                                                              Status.PASS)


def test_a_planner_that_aliases_live_tensors_fails_runtime_numerics_naming_the_op():
    case = _case("residual_block")
    verdicts = _runtime(case, ExecutorchBackendConfig(memory_planning_pass=SharedStoragePlanner()))
    assert verdicts["runtime_runs"].status is Status.PASS
    numerics = verdicts["runtime_numerics"]
    assert numerics.status is Status.FAIL
    assert "first diverging op" in numerics.message
    assert numerics.details["first_diverging_op"]["op"]


def test_a_dropped_write_back_fails_the_second_call_naming_the_op():
    case = _accumulate_case()
    assert _ir_violations(DropWriteBack(), case) == []
    assert _runtime(case, ExecutorchBackendConfig())["runtime_numerics"].status is Status.PASS
    numerics = _runtime(case, ExecutorchBackendConfig(passes=[DropWriteBack()]))["runtime_numerics"]
    assert numerics.status is Status.FAIL
    assert numerics.details["call"] == 2
    assert numerics.details["first_diverging_op"]["op"].startswith("add")


def test_a_wrong_dim_order_fails_runtime_runs_naming_the_op():
    case = _case("conv_bn_relu")
    runs = _runtime(case, ExecutorchBackendConfig(memory_planning_pass=WrongDimOrder()))["runtime_runs"]
    assert runs.status is Status.FAIL
    # the convolution whose output claims channels-last refuses it (tensors_have_same_dim_order(in, out))
    assert runs.details["failing_op"] == {"op": "convolution.out", "instruction": 0}


def test_memory_planning_edits_pass_every_ir_check():
    planned_input = _before_planning(_case("residual_block"))
    upstream = _ir_violations(MemoryPlanningRun(MemoryPlanningPass()), planned_input)  # the input's own state
    for planner in (SharedStoragePlanner(), WrongDimOrder()):
        assert _ir_violations(MemoryPlanningRun(planner), planned_input) == upstream


def test_draws_keep_the_sample_layout_so_a_channels_last_input_is_read_as_itself(monkeypatch):
    """A .pte reads each input in the dim order it was exported with: the generated draws of a channels-last
    input are given in that layout (fed contiguous, the runtime read them as another tensor: corpus_77799166,
    corpus_9ad618be failed runtime_numerics on draw random1 only)."""
    import torch.nn.functional as F
    from executorch.exir import to_edge

    from harness.check import runtime

    class Pool(torch.nn.Module):
        def forward(self, x):
            return F.avg_pool2d(x, 1, stride=2)

    x = torch.randn(2, 4, 4, 6, generator=torch.Generator().manual_seed(0)).contiguous(
        memory_format=torch.channels_last)
    ep = to_edge(torch.export.export(Pool(), (x,), strict=False)).exported_program()
    verdicts = {r.check: r for r in judge_runtime(ep, (x,), "pool", "channels_last", edge_compile_config(True, ()))}
    assert all(verdicts[c].status is Status.PASS for c in RUNTIME_CHECK_IDS), verdicts
    runtime.forget()
    monkeypatch.setattr(runtime, "_strided_like", lambda sample, drawn: drawn)  # the draws as generated
    fed_contiguous = {r.check: r for r in judge_runtime(ep, (x,), "pool", "channels_last",
                                                        edge_compile_config(True, ()))}
    assert fed_contiguous["runtime_numerics"].status is Status.FAIL
    assert "draw sample" not in fed_contiguous["runtime_numerics"].message


def _named_case(name: str) -> GraphCase:
    return load_case(sources.select([name])[0])


def test_a_joint_program_is_compared_with_the_weights_to_executorch_returns_beside_its_gradients():
    """to_executorch appends each weight whose gradient a joint program returns to the program's outputs
    (weights_to_outputs_pass): the reference holds them too, after the loss and the gradients, so the
    runtime's outputs are compared one for one (against the loss and gradients only, they were 9 against 5)."""
    from harness.check.runtime_locate import eager_calls

    case = _named_case("targeted_exir_joint")
    ep = case.shared("edge")
    outputs = eager_calls(ep, case.sample_inputs(), 1)[0].outputs
    weights = ["fc.weight", "fc.bias", "out.weight", "out.bias"]  # every parameter has a gradient, in input order
    assert len(outputs) == 5 + len(weights)
    for got, name in zip(outputs[5:], weights):
        assert torch.equal(got, ep.state_dict[name]), name
    verdicts = {r.check: r for r in judge_case(case)}
    assert verdicts["runtime_runs"].status is Status.PASS, verdicts["runtime_runs"].message
    assert verdicts["runtime_numerics"].status is Status.PASS, verdicts["runtime_numerics"].message


def test_a_quantized_program_is_judged_by_sqnr_against_its_float_twin_as_the_xnnpack_leg_does():
    """The runtime's Q/DQ program rounds a few values one quantization step away from torch's (resnet_basic_q8's
    second draw: beyond the float tolerance): it is judged by SQNR against the program with its activation Q/DQ
    pairs bypassed, bounded by the Q/DQ program's own SQNR, as the XNNPACK leg judges one; the first diverging op
    named is the quantize that rounded otherwise, not a dequantize compared with a quantize's int8 output; a
    planner that aliases live tensors still fails it."""
    from harness.check import backend_numerics as bn
    from harness.check import runtime
    from harness.check.execution import input_draws
    from harness.check.runtime_exec import run_pte
    from harness.check.runtime_locate import eager_calls

    case = _named_case("resnet_basic_q8")
    ep, sample = case.shared("edge"), case.sample_inputs()
    config = edge_compile_config(case.spec.check_ir_validity, case.spec.preserve_ops)
    _name, inputs = list(input_draws(tuple(sample), runtime.DRAWS, 0))[1]
    got = run_pte(runtime.to_pte(ep, config).buffer, inputs, 1).outputs[0]
    eager, twin = (eager_calls(p, inputs, 1)[0].outputs for p in (ep, bn.float_twin(ep)))
    # whether the portable kernels re-round a tie here depends on the CPU (seen on one machine, not on another):
    # where they do, the float tolerance fails it and the SQNR rule accepts it; where they do not, both hold
    assert runtime._compare(eager, got, twin)[0]
    numerics = {r.check: r for r in judge_case(case)}["runtime_numerics"]
    assert "SQNR" in numerics.message and numerics.details["reference"].startswith("eager (Q/DQ program")
    if numerics.status is Status.FAIL:
        assert numerics.details["first_diverging_op"]["op"] == "quantize_per_tensor.out"
    broken = judge_runtime(ep, sample, "broken", case.name, config,
                           backend_config=ExecutorchBackendConfig(memory_planning_pass=SharedStoragePlanner()))
    broken_numerics = {r.check: r for r in broken}["runtime_numerics"]
    assert broken_numerics.status is Status.FAIL
    assert "dB beyond" in broken_numerics.message


def test_an_output_quantization_does_not_reach_is_held_to_the_float_tolerance_not_the_sqnr_cap():
    """A Q/DQ program's output that its float twin computes bit for bit (targeted_cadence_ops returns such
    outputs beside its quantized ones) has no quantization noise for SQNR to measure against: a last-bit
    difference of a float kernel passes, a wrong value fails, and the quantized output is still judged by SQNR."""
    from harness.check import backend_numerics as bn

    twin_q = torch.linspace(-1.0, 1.0, 64)
    qdq_q = torch.round(twin_q * 8) / 8  # a quantized output: its noise is the yardstick
    exact = torch.linspace(0.5, 3.0, 6)  # quantization does not reach it
    last_bit = torch.nextafter(exact, exact + 1)
    assert bn.judge_quantized([qdq_q, last_bit], [qdq_q, exact], [twin_q, exact]).ok
    wrong = bn.judge_quantized([qdq_q, exact + 0.01], [qdq_q, exact], [twin_q, exact])
    assert not wrong.ok and wrong.message.startswith("output 1 (") and "float tolerance" in wrong.message
    noisy = bn.judge_quantized([qdq_q + 0.06, exact], [qdq_q, exact], [twin_q, exact])
    assert not noisy.ok and "dB beyond" in noisy.message


def test_runtime_runs_names_the_kernel_that_failed_not_the_next_one():
    """The runtime logs the kernel that fails a call (0x12: mul.out refuses a channels-last and a contiguous
    input, reports/upstream/repro_runtime_mixed_dim_order_invalid_argument.py); the ETDump logs that call too, so
    the op after the last instruction it logged is the next one (relu.out here), which is not the one named."""
    from executorch.exir import to_edge

    class ProdTimesRelu(torch.nn.Module):
        def forward(self, x):
            return torch.relu(torch.prod(x, 1, keepdim=True) * x)

    x = torch.randn(6, 5, 4, 4, generator=torch.Generator().manual_seed(0)).contiguous(
        memory_format=torch.channels_last)
    ep = to_edge(torch.export.export(ProdTimesRelu(), (x,), strict=False)).exported_program()
    runs = {r.check: r for r in judge_runtime(ep, (x,), "prod", "mixed_dim_order", edge_compile_config(True, ()))}
    assert runs["runtime_runs"].status is Status.FAIL and "0x12" in runs["runtime_runs"].message
    assert runs["runtime_runs"].details["failing_op"] == {"op": "mul.out", "instruction": 1}


class KvWrite(torch.nn.Module):
    """A cache with non-zero initial values, updated in rows 1 and 3 and read whole: eager reads the other rows'
    initial values, so the .pte must carry them."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.arange(20, dtype=torch.float32).reshape(5, 4) + 1.0)
        self.register_buffer("rows", torch.tensor([1, 3]))

    def forward(self, x):
        return self.cache.index_put_((self.rows,), x) * 2.0


def test_a_mutated_buffer_read_before_it_is_overwritten_is_judged_on_its_initial_values():
    """Upstream's default emitter serializes a mutated buffer's shape only ("a meaningless initial state"), so the
    runtime reads rows 0, 2 and 4 from whatever its memory held; the flow passgate judges serializes the initial
    values (InitializedMutableBufferPass over every buffer), and the program then means what eager means."""
    spec = CaseSpec("kv_write", "fixture", lambda: ModelInputs(KvWrite(), (torch.full((2, 4), -1.0),)), "KvWrite")
    case = GraphCase(spec, *export_and_lower(spec))
    assert all(r.status is Status.PASS for r in judge_case(case)), judge_case(case)
    upstream_default = _runtime(case, ExecutorchBackendConfig())
    assert upstream_default["runtime_numerics"].status is Status.FAIL  # rows 0, 2, 4: not the initial values
