"""A backend partitioner's lowered program, run end to end in the ExecuTorch runtime.

The partitioner checks (:mod:`harness.pipelines.partitioners`) judge what a
partitioner proposes and the shape of the lowered graph; none of them runs
what ships. Here the program ``to_edge_transform_and_lower`` made goes on
through ``to_executorch`` (memory planning, emission, serialization), is
loaded by the installed runtime's Python bindings, which register
``XnnpackBackend`` and run it on this CPU, and its outputs are compared with
eager (:mod:`harness.check.backend_numerics`: a float case within tolerance,
a quantized one by SQNR against its Q/DQ program):

- ``runtime_runs``: ``to_executorch`` finishes and the runtime loads and runs
  the ``.pte``;
- ``runtime_numerics``: its outputs match eager.

This judges the partitioner and every step of the flow after it (the
backend's preprocess and kernels included) as one; a failure names the
stage that raised, or the worst output.
"""

from __future__ import annotations

import time
import traceback

from harness.check import backend_numerics as bn
from harness.check.runtime import emit
from harness.check.runtime_exec import run_pte
from harness.core.results import CheckResult, Status, result

__all__ = ["RUNTIME_CHECKS", "reference_outputs", "runtime_verdicts"]

RUNTIME_CHECKS = ("runtime_runs", "runtime_numerics")


def reference_outputs(ep, inputs: tuple) -> tuple[list, object]:
    """(eager outputs of ``ep``, eager outputs of its float twin or None for a float program)."""
    expected = bn.eager_outputs(ep, inputs)
    return expected, (bn.eager_outputs(bn.float_twin(ep), inputs) if bn.is_quantized(ep) else None)


def _skipped(pass_name: str, graph: str, why: str) -> list[CheckResult]:
    return [result(pass_name, graph, c, Status.SKIP, why) for c in RUNTIME_CHECKS]


def _not_run(pass_name: str, graph: str, stage: str, error: str, trace: str, seconds: float) -> list[CheckResult]:
    first = error.strip().splitlines()[0] if error.strip() else "no message"
    runs = result(pass_name, graph, "runtime_runs", Status.FAIL, f"{stage}: {first}",
                  {"stage": stage, "error": error, "traceback": trace}, seconds)
    return [runs, result(pass_name, graph, "runtime_numerics", Status.SKIP, "the runtime did not run it "
                         "(see runtime_runs)")]


def runtime_verdicts(manager, case, pass_name: str, backend: str = "XnnpackBackend") -> list[CheckResult]:
    """``runtime_runs`` and ``runtime_numerics`` of the lowered ``manager`` (an EdgeProgramManager) on ``case``."""
    graph = case.name
    if backend not in bn.registered_backends():
        return _skipped(pass_name, graph, f"the installed runtime does not register {backend}")
    inputs = case.sample_inputs()
    started = time.perf_counter()
    try:
        import executorch.kernels.quantized  # noqa: F401 - the quantized ops' out variants, which to_executorch
        # needs for the Q/DQ ops a partitioner leaves outside its delegates (as harness.check.runtime.to_pte)

        buffer = emit(manager).buffer  # mutated buffers' initial values kept
    except Exception as exc:  # noqa: BLE001 - a program that does not emit is the verdict
        return _not_run(pass_name, graph, "to_executorch", f"{type(exc).__name__}: {exc}",
                        traceback.format_exc(limit=8), time.perf_counter() - started)
    ran = run_pte(buffer, inputs, calls=1)
    if not ran.ok:
        return _not_run(pass_name, graph, ran.stage, ran.error, "", time.perf_counter() - started)
    actual = ran.outputs[0]
    seconds = time.perf_counter() - started
    runs = result(pass_name, graph, "runtime_runs", Status.PASS, f".pte of {len(buffer)} bytes",
                  {"pte_bytes": len(buffer)}, seconds)
    try:
        expected, twin = reference_outputs(case.shared("export"), inputs)
    except Exception as exc:  # noqa: BLE001 - no reference is no verdict on the numerics, not a lost unit
        return [runs, result(pass_name, graph, "runtime_numerics", Status.SKIP, "the export program does not run "
                             f"in torch as a reference ({type(exc).__name__}: {str(exc).strip()[:160]})")]
    verdict = bn.judge(actual, expected, twin)
    details = {**verdict.details, "reference": "eager (Q/DQ program, SQNR vs its float twin)" if twin is not None
               else "eager"}
    return [runs, result(pass_name, graph, "runtime_numerics", Status.PASS if verdict.ok else Status.FAIL,
                         verdict.message, details)]
