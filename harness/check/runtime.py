"""The runtime checks: a program taken through ``to_executorch`` and run by the ExecuTorch runtime.

Every IR check judges a program run by torch in this process; what users
ship is a ``.pte`` run by the runtime, and the steps between (write-back of
mutated buffers, memory planning, emission, serialization, the runtime's
kernels) are judged here, on an edge program (a case's, or a pass's or a
pipeline's result):

- ``serialize_roundtrip``: the edge program read back from ExecuTorch's
  program serde (what ETRecord saves) computes what it did, and the ``.pte``
  flatbuffer read back (``deserialize_pte_binary``) is the program emitted;
- ``runtime_runs``: ``EdgeProgramManager.to_executorch`` itself (every step
  upstream runs, in its order: write-back, the edge-to-executorch passes,
  memory planning, emission, serialization), then the runtime loads the
  ``.pte`` and runs ``forward``, in a forked child
  (:mod:`harness.check.runtime_exec`);
- ``runtime_numerics``: the runtime's outputs on the sample inputs and two
  further draws, two calls each (a mutated buffer is carried from call to
  call, in the runtime as in eager), match the same program run by torch
  within the ``numerics`` tolerances (a joint program's outputs with the
  weights ``to_executorch`` appends to them); a quantized (Q/DQ) program is
  judged by SQNR against its float twin, as the XNNPACK leg judges one
  (:mod:`harness.check.backend_numerics`); a failure names the first
  diverging op (:mod:`harness.check.runtime_locate`).

The flow is upstream's default ``ExecutorchBackendConfig`` plus, for a
program that mutates buffers, one pass of upstream's,
``InitializedMutableBufferPass`` over those buffers: by default
the emitter serializes a mutated buffer's shape and dtype only ("a
meaningless initial state"), so a program that reads a buffer before it
overwrites all of it computes from whatever the runtime's memory held, and
no comparison with eager means anything. With the initial values serialized
the ``.pte`` means what the edge program means (:func:`default_backend_config`).

Verdicts are memoized per process by the program's exact fingerprint and the
inputs: a pass that leaves a case's program as it was costs no second run.
"""

from __future__ import annotations

import copy
import hashlib
import traceback
from dataclasses import dataclass, field
from typing import Any, Optional

from harness.check import backend_numerics as bn
from harness.check import fingerprint
from harness.check.execution import input_draws
from harness.check.numerics import compare_outputs
from harness.check.runtime_exec import ChildDied, in_child, missing_kernels, run_pte
from harness.check.runtime_locate import eager_calls, emitted_ops, failing_op, first_divergence
from harness.check.verifiers import PASS, Verdict
from harness.core.results import CheckResult, Status, check_ids, result

__all__ = ["RUNTIME_CHECK_IDS", "CALLS", "DRAWS", "Flow", "default_backend_config", "emit", "to_pte", "judge_runtime", "judge_case", "judge_result",
           "runtime_skipped", "forget"]

RUNTIME_CHECK_IDS: tuple[str, ...] = check_ids("runtime")
CALLS = 2  # calls per draw on one loaded module: the second reads what the first wrote back
DRAWS = 3  # the sample and two generated draws (harness.check.execution.input_draws)
JUDGE_LIMIT_S = 600.0
_SQNR_REFERENCE = "eager (Q/DQ program, SQNR vs its float twin)"  # as harness.pipelines.lowered_runtime records it

_MEMO: dict[str, dict] = {}
_MEMO_LIMIT = 512


@dataclass
class Flow:
    """What ``to_executorch`` made of a program: the manager and its ``.pte`` bytes, or where it failed."""

    manager: Any = None  # ExecutorchProgramManager
    buffer: bytes = b""
    error: str = ""
    traceback: str = ""


def default_backend_config(programs=()):
    """Upstream's default ``ExecutorchBackendConfig``; for ``programs`` (ExportedPrograms) that mutate buffers, with
    upstream's ``InitializedMutableBufferPass`` over those buffers, so their initial values are serialized.
    A program without one is emitted exactly as upstream's default emits it (the pass retraces the program)."""
    from executorch.exir import ExecutorchBackendConfig
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass

    mutated: set = set()
    for ep in programs:
        written = set(ep.graph_signature.buffers_to_mutate.values())
        mutated |= {name for name, buffer in ep.graph_signature.inputs_to_buffers.items() if buffer in written}
    return ExecutorchBackendConfig(passes=[InitializedMutableBufferPass(sorted(mutated))] if mutated else [])


def emit(manager, backend_config=None):
    """``manager.to_executorch`` (an EdgeProgramManager) with ``backend_config``, by default
    :func:`default_backend_config` of its programs: the one way passgate emits a ``.pte`` it judges or bundles."""
    return manager.to_executorch(backend_config or default_backend_config(
        manager.exported_program(m) for m in manager.methods))


def to_pte(program, compile_config=None, backend_config=None) -> Flow:
    """``EdgeProgramManager.to_executorch`` on a copy of ``program``, as upstream runs it, and its buffer
    (``backend_config`` None: :func:`default_backend_config`)."""
    from executorch.exir import EdgeProgramManager

    try:
        import executorch.kernels.quantized  # noqa: F401 - the quantized ops' out variants and kernels, as a
        # quantized program's to_executorch needs them (registers into torch and the runtime bindings)

        manager = EdgeProgramManager({"forward": copy.deepcopy(program)}, compile_config=compile_config)
        et = emit(manager, backend_config)
        return Flow(et, et.buffer)
    except Exception as exc:  # noqa: BLE001 - a flow that raises is a verdict
        return Flow(error=f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}",
                    traceback=traceback.format_exc(limit=12))


def _in_execution_dialect(program) -> bool:
    return any(n.op == "call_function" and getattr(n.target, "__name__", "") == "alloc"
               and "memory" in getattr(n.target, "__module__", "") for n in program.graph.nodes)


def _inputs_digest(draws: list) -> str:
    return hashlib.sha256(repr([fingerprint._arg(list(inputs), {}) for _name, inputs in draws]).encode()).hexdigest()


def judge_runtime(program, inputs: tuple, pass_name: str, graph: str, compile_config=None, backend_config=None,
                  seed: int = 0, missing: str = "fail") -> list[CheckResult]:
    """The three runtime verdicts of ``program`` (an edge program) on ``inputs`` and its draws.

    ``backend_config``: an ``ExecutorchBackendConfig`` (default:
    :func:`default_backend_config`); memoized only with the default. ``missing``: the verdict of
    ``runtime_runs`` when the runtime has no kernel for an op the program
    calls (``skip`` for a backend pipeline's result, whose ops only its
    backend runs).
    """
    draws = [(name, _strided_like(tuple(inputs), drawn)) for name, drawn in input_draws(tuple(inputs), DRAWS, seed)]
    key = None
    if backend_config is None:
        key = f"{fingerprint.exact(program.graph_module, program)}:{_inputs_digest(draws)}:{missing}"
        if key in _MEMO:
            return _results(_MEMO[key], pass_name, graph)
    verdicts = _isolated(lambda: _judge(program, draws, compile_config, backend_config, missing))
    if key is not None:
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        _MEMO[key] = verdicts
    return _results(verdicts, pass_name, graph)


def _strided_like(sample: tuple, drawn: tuple) -> tuple:
    """``drawn`` with each tensor in its sample's memory layout. A ``.pte``'s inputs have the dim order they
    were exported with, and the runtime reads an input's buffer in that order whatever the tensor's strides say:
    a contiguous draw for a channels-last input is read as another tensor."""
    return tuple(_in_layout_of(s, d) for s, d in zip(sample, drawn))


def _in_layout_of(sample, drawn):
    import torch

    if not (isinstance(sample, torch.Tensor) and isinstance(drawn, torch.Tensor)) or sample.shape != drawn.shape:
        return drawn
    if drawn.stride() == sample.stride():
        return drawn
    return torch.empty_like(sample).copy_(drawn)


def _isolated(judge) -> dict:
    """``judge()`` in a forked child: ``to_executorch`` of a quantized program loads the quantized kernels'
    library (op registrations every later lowering in the process would see), and a crash there is a verdict."""
    try:
        return in_child(judge, JUDGE_LIMIT_S)
    except ChildDied as exc:
        return _Timed().rest(Verdict(Status.FAIL, f"the to_executorch flow or the runtime {exc}", {"stage": "child"}))


def _compile_config(case):
    from harness.graphs.cases import edge_compile_config

    return edge_compile_config(case.spec.check_ir_validity, case.spec.preserve_ops)


def judge_case(case, pass_name: str = "runtime", seed: int = 0) -> list[CheckResult]:
    """The runtime verdicts of a case's own edge program (the standard profile's runtime unit)."""
    return judge_runtime(case.shared("edge"), case.sample_inputs(), pass_name, case.name, _compile_config(case),
                         seed=seed)


def judge_result(program, case, pass_name: str, stage: str = "edge", seed: int = 0,
                 missing: str = "fail") -> list[CheckResult]:
    """The runtime verdicts of a pass's or a pipeline's result on ``case`` (``passgate check --runtime``)."""
    if stage != "edge":
        v = Verdict(Status.NOT_APPLICABLE, f"the runtime checks judge edge programs; this pass ran at {stage}")
        return _results(_Timed().rest(v), pass_name, case.name)
    config = _compile_config(case)
    if missing == "skip":  # a backend pipeline's result: ops only its backend takes, as its own verifier allows
        from executorch.exir import EdgeCompileConfig

        config = EdgeCompileConfig(_check_ir_validity=False, preserve_ops=config.preserve_ops)
    return judge_runtime(program, case.sample_inputs(), pass_name, case.name, config, seed=seed, missing=missing)


def runtime_skipped(pass_name: str, graph: str, reason: str, status: Status = Status.SKIP) -> list:
    """The runtime records of a pair whose pass (or pipeline) made no program."""
    return _results(_Timed().rest(Verdict(status, reason)), pass_name, graph)


def forget() -> None:
    """Drop the memoized verdicts (tests that change what a program's flow does without changing it)."""
    _MEMO.clear()


def _results(verdicts: dict, pass_name: str, graph: str) -> list[CheckResult]:
    out = []
    for check in RUNTIME_CHECK_IDS:
        v, seconds = verdicts[check]
        out.append(result(pass_name, graph, check, v.status, v.message, copy.deepcopy(v.details), seconds))
    return out


@dataclass
class _Timed:
    verdicts: dict = field(default_factory=dict)

    def set(self, check: str, v: Verdict, seconds: float = 0.0) -> None:
        self.verdicts[check] = (v, seconds)

    def rest(self, v: Verdict) -> dict:
        for check in RUNTIME_CHECK_IDS:
            self.verdicts.setdefault(check, (v, 0.0))
        return self.verdicts


def _judge(program, draws: list, compile_config, backend_config, missing: str) -> dict:
    import time

    t = _Timed()
    if _in_execution_dialect(program):
        return t.rest(Verdict(Status.NOT_APPLICABLE, "the program is already in the execution dialect (memory.alloc "
                              "nodes): to_executorch runs on edge programs"))
    try:
        reference = [eager_calls(program, inputs, CALLS) for _name, inputs in draws]
    except Exception as exc:  # noqa: BLE001 - runnable judges a program torch cannot run
        return t.rest(Verdict(Status.SKIP, f"the program does not run in torch ({type(exc).__name__}): "
                              "runnable judges that"))
    started = time.perf_counter()
    flow = to_pte(program, compile_config, backend_config)
    flow_s = time.perf_counter() - started
    if flow.error and missing == "skip" and "Missing out variants" in flow.error:
        t.set("runtime_runs", Verdict(Status.SKIP, f"to_executorch raised {flow.error} (ops only their backend runs)",
                                      {"stage": "to_executorch"}), flow_s)
        return t.rest(Verdict(Status.SKIP, "to_executorch did not make a program"))
    if flow.error:
        t.set("runtime_runs", Verdict(Status.FAIL, f"to_executorch raised {flow.error}",
                                      {"stage": "to_executorch", "traceback": flow.traceback}), flow_s)
        t.set("serialize_roundtrip", _program_roundtrip(program, draws[0][1], reference[0][0].outputs))
        return t.rest(Verdict(Status.SKIP, "to_executorch did not make a program"))
    started = time.perf_counter()
    t.set("serialize_roundtrip", _roundtrips(program, flow, draws[0][1], reference[0][0].outputs),
          time.perf_counter() - started)
    operators = [f"{op.name}.{op.overload}" if op.overload else op.name
                 for op in flow.manager.executorch_program.execution_plan[0].operators]
    absent = missing_kernels(operators)
    if absent:
        status = Status.SKIP if missing == "skip" else Status.FAIL
        t.set("runtime_runs", Verdict(status, f"this runtime registers no kernel for {', '.join(absent)}",
                                      {"stage": "kernels", "missing_kernels": absent}), flow_s)
        return t.rest(Verdict(Status.SKIP, "the runtime cannot run the program"))
    started = time.perf_counter()
    runs = [run_pte(flow.buffer, inputs, CALLS) for _name, inputs in draws]
    run_s = time.perf_counter() - started
    failed = next(((name, r) for (name, _), r in zip(draws, runs) if not r.ok), None)
    if failed:
        name, r = failed
        details: dict = {"stage": r.stage, "draw": name}
        message = f"the runtime failed ({r.stage}) on draw {name}: {r.error}"
        stopped = _stopped_at(flow, dict(draws)[name], len(r.outputs), r) if r.stage == "execute" else None
        if stopped is not None:
            details["failing_op"] = {"op": stopped[0], "instruction": stopped[1]}
            message += f"; it stopped at op {stopped[0]} (instruction {stopped[1]})"
        t.set("runtime_runs", Verdict(Status.FAIL, message, details), flow_s + run_s)
        return t.rest(Verdict(Status.SKIP, "the runtime did not run the program"))
    t.set("runtime_runs", PASS, flow_s + run_s)
    started = time.perf_counter()
    t.set("runtime_numerics", _numerics(program, flow, draws, reference, runs), time.perf_counter() - started)
    return t.verdicts


def _program_roundtrip(program, sample: tuple, expected: list) -> Verdict:
    """The edge program through ExecuTorch's program serde (what ETRecord saves), run again by torch."""
    from executorch.exir.serde.serialize import deserialize, serialize

    try:
        back = deserialize(serialize(copy.deepcopy(program)))
        outputs = eager_calls(back, sample, 1)[0].outputs
    except Exception as exc:  # noqa: BLE001
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return Verdict(Status.FAIL, f"the edge program does not survive executorch.exir.serde: "
                                    f"{type(exc).__name__}: {first}", {"stage": "program"})
    cmp = compare_outputs(expected, outputs)
    if not cmp.ok:
        return Verdict(Status.FAIL, "the edge program read back from executorch.exir.serde computes otherwise: "
                       + cmp.message.replace("before the pass", "before the round trip"), {"stage": "program"})
    return PASS


def _roundtrips(program, flow: Flow, sample: tuple, expected: list) -> Verdict:
    v = _program_roundtrip(program, sample, expected)
    if v.status is not Status.PASS:
        return v
    from executorch.exir._serialize._program import deserialize_pte_binary

    try:
        back = deserialize_pte_binary(flow.buffer)
        emitted = flow.manager.executorch_program
        plan_back, plan = back.program.execution_plan, emitted.execution_plan
    except Exception as exc:  # noqa: BLE001
        return Verdict(Status.FAIL, f"the .pte does not deserialize: {type(exc).__name__}: {exc}", {"stage": "pte"})
    if plan_back != plan:
        return Verdict(Status.FAIL, "the .pte read back holds another execution plan than the one emitted",
                       {"stage": "pte"})
    return PASS


def _compare(expected: list, got: list, twin: Optional[list]) -> tuple[bool, str, dict]:
    """(ok, message, details): within the ``numerics`` tolerances, or for a Q/DQ program (``twin``: its float
    twin's outputs) by SQNR as the XNNPACK leg judges one (:func:`harness.check.backend_numerics.judge_quantized`):
    a float kernel's last bit at a rounding tie puts a few quantized values one step away from torch's."""
    if twin is not None:
        v = bn.judge_quantized(got, expected, twin)
        return v.ok, v.message, {**v.details, "reference": _SQNR_REFERENCE}
    cmp = compare_outputs(expected, got)
    return cmp.ok, cmp.message.replace("before the pass", "in eager"), {"max_abs_err": cmp.max_abs_err,
                                                                         "worst_output": cmp.worst_output}


def _numerics(program, flow: Flow, draws: list, reference: list, runs: list) -> Verdict:
    twins = _twin_calls(program, draws)
    judged = None
    for i, ((name, inputs), ref, run) in enumerate(zip(draws, reference, runs)):
        for call, (eager, got) in enumerate(zip(ref, run.outputs)):
            ok, message, figures = _compare(eager.outputs, got, twins[i][call].outputs if twins else None)
            if ok:
                judged = judged or (message, figures)
                continue
            where = f"draw {name}, call {call + 1}"
            details: dict = {"draw": name, "call": call + 1, **figures}
            div = _locate(program, flow, inputs, call)
            if div is not None:
                details["first_diverging_op"] = div.to_details()
                message = (f"{where}: {message}; first diverging op: {div.op} (node {div.node}, instruction "
                           f"{div.instruction}): {div.message}")
            else:
                message = f"{where}: {message}; no single op's ETDump output differs from eager's"
            return Verdict(Status.FAIL, message, details)
    if twins and judged:  # how a quantized program was judged: the sample's first call, for the record
        return Verdict(Status.PASS, f"draw {draws[0][0]}, call 1: {judged[0]}", judged[1])
    return PASS


def _twin_calls(program, draws: list) -> Optional[list]:
    """Per draw, the calls of a Q/DQ program's float twin (None for a float program, or when the twin does not
    run: then the program is held to the float tolerances)."""
    if not bn.is_quantized(program):
        return None
    try:
        twin = bn.float_twin(program)
        return [eager_calls(twin, inputs, CALLS) for _name, inputs in draws]
    except Exception:  # noqa: BLE001 - a twin torch cannot run leaves the float comparison, the stricter one
        return None


def _stopped_at(flow: Flow, inputs: tuple, call: int, run) -> Optional[tuple]:
    """(op, instruction) the runtime stopped at: the kernel whose failure it logged (the ETDump logs that
    kernel's call too, so the instruction after the last one logged is the next op), else that guess from an
    ETDump run (a failure the runtime logs no kernel for)."""
    if run.failed_at is not None:
        chain, instruction, operator = run.failed_at
        emitted = emitted_ops(flow.manager.exported_program()) if chain == 0 else {}
        return emitted.get(instruction, operator.rpartition("::")[2]), instruction
    try:
        run = run_pte(flow.buffer, inputs, call + 1, etdump=True)
        return failing_op(flow.manager.exported_program(), run.intermediates, call)
    except Exception:  # noqa: BLE001 - best effort, as _locate
        return None


def _locate(program, flow: Flow, inputs: tuple, call: int) -> Optional[Any]:
    try:
        run = run_pte(flow.buffer, inputs, call + 1, etdump=True)
        if not run.ok:
            return None
        handle_map = flow.manager.debug_handle_map.get("forward", {})
        return first_divergence(program, flow.manager.exported_program(), handle_map, run.intermediates, call,
                                inputs)
    except Exception:  # noqa: BLE001 - locating is best effort; the verdict stands without it
        return None
