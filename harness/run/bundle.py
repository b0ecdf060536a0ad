"""Writing BundledPrograms for devices, and running them through an executor.

A vendor certifies on hardware passgate does not have. What passgate can
hand over is the ecosystem's unit for "run this on the device and check the
outputs": a BundledProgram (``executorch.devtools.bundled_program``), one
``.bpte`` per case and backend holding the program, the case's sample inputs
as a ``forward`` test set and the expected outputs of the reference the
verdict uses (eager: for a quantized case the Q/DQ program, with its float
twin's outputs beside it for the SQNR bound). Backends:

- ``portable``: plain ``to_executorch``, no delegate;
- ``xnnpack``: lowered with the XNNPACK partitioner (the runtime here runs it);
- ``vulkan``: lowered with the VulkanPartitioner; written and indexed, run by
  the vendor (no Vulkan runtime here).

:func:`run_bundles` runs a folder's bundles: by default with the runtime's
Python bindings here (the bundled program loaded, its test inputs run and
checked by the runtime itself, ``verify_result_with_bundled_expected_output``,
in a forked child), or through a vendor's command template with placeholders
(:data:`PLACEHOLDERS`) that must leave the outputs where
:func:`harness.report.bundles.outputs_dir` says. Verdicts are made by
``passgate device ingest`` (:mod:`harness.report.bundles`), not here.
"""

from __future__ import annotations

import functools
import json
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from harness.check import backend_numerics as bn
from harness.check.numerics import TOLERANCES
from harness.check.runtime import emit
from harness.check.runtime_exec import ChildDied, in_child
from harness.core.errors import UsageError
from harness.pipelines.lowered_runtime import reference_outputs
from harness.pipelines.partitioners import PARTITIONERS
from harness.report import bundles as bx

__all__ = ["BACKENDS", "RUNTIME_BACKENDS", "PLACEHOLDERS", "RunSummary", "file_stem", "lower_for", "bundle_case",
           "write_bundles", "check_out", "check_template", "run_bundles", "run_with_bindings", "run_with_command"]

BACKENDS = bx.BACKENDS
RUNTIME_BACKENDS = {"portable": None, "xnnpack": "XnnpackBackend", "vulkan": "VulkanBackend"}
PLACEHOLDERS = ("bpte", "outdir", "testset", "case", "backend")
RUN_TIMEOUT_S = 300.0


def file_stem(case_name: str) -> str:
    """A file name for ``case_name``: itself when it is one, else made safe (``/``, spaces, brackets) and made unique
    by a short hash of the name (a Vulkan search case is ``vulkan/search:et_vk.q8ta_add[hand act static]/...``)."""
    import hashlib
    import re

    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", case_name).strip("._") or "case"
    if safe == case_name:
        return safe
    return f"{safe[:120]}-{hashlib.sha256(case_name.encode()).hexdigest()[:8]}"


def check_out(path, option: str = "--out") -> Path:
    """The bundle folder ``path``, which must be new or empty (else a one-line UsageError)."""
    out = Path(path)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{option} {out}: must be a new or empty folder")
    return out


def lower_for(backend: str, case):
    """The ExecutorchProgramManager of ``case`` lowered for ``backend`` (raises what lowering raises)."""
    import executorch.kernels.quantized  # noqa: F401 - out variants of the Q/DQ ops a quantized program keeps
    from executorch.exir import to_edge_transform_and_lower

    from harness.graphs.cases import edge_compile_config

    partitioner = [] if backend == "portable" else [PARTITIONERS[backend].make()]
    manager = to_edge_transform_and_lower(
        case.program("export"), partitioner=partitioner,
        compile_config=edge_compile_config(case.spec.check_ir_validity, case.spec.preserve_ops))
    return emit(manager)  # mutated buffers' initial values kept, as eager's


def _tolerance(expected: list, quantized: bool) -> dict:
    if quantized:
        return {"kind": "sqnr_vs_float_twin", "slack_db": bn.SQNR_SLACK_DB}
    dtypes = sorted({str(e.dtype).removeprefix("torch.") for e in expected if hasattr(e, "dtype")})
    import torch

    return {"kind": "allclose", "per_dtype": {d: list(TOLERANCES.get(getattr(torch, d), (0.0, 0.0))) for d in dtypes}}


def bundle_case(out: Path, case, backend: str) -> bx.Entry:
    """Write ``case`` lowered for ``backend`` as ``<case>.<backend>.bpte`` in ``out``; its index entry."""
    import torch
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.core import BundledProgram
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer

    inputs = case.sample_inputs()
    expected, twin = reference_outputs(case.shared("export"), inputs)
    program = lower_for(backend, case)
    suite = MethodTestSuite("forward", [MethodTestCase(inputs=list(inputs), expected_outputs=list(expected))])
    name = f"{file_stem(case.name)}.{backend}"
    (out / f"{name}.bpte").write_bytes(serialize_from_bundled_program_to_flatbuffer(BundledProgram(program, [suite])))
    entry = bx.Entry(case.name, backend, f"{name}.bpte", bx.sha256(out / f"{name}.bpte"), RUNTIME_BACKENDS[backend],
                     _tolerance(expected, twin is not None),
                     [{"dtype": str(e.dtype).removeprefix("torch."), "shape": list(e.shape)} for e in expected])
    if twin is not None:
        torch.save([twin], out / f"{name}.twin.pt")
        entry.reference, entry.reference_sha256 = f"{name}.twin.pt", bx.sha256(out / f"{name}.twin.pt")
    return entry


def write_bundles(out: Path, cases: list, backends: tuple, profile: str, environment: dict,
                  progress: Callable[[str], None] = lambda _m: None) -> bx.Index:
    """Every case x backend bundled into ``out`` with its index; a case a backend cannot lower is listed as skipped.

    ``cases`` may be any iterable of graph cases (built as it is consumed).
    Interrupted, the index of the bundles written so far is written all the
    same, marked ``"complete": false``: what was lowered is not lost.
    """
    out.mkdir(parents=True, exist_ok=True)
    index = bx.Index(profile, environment=environment, complete=False)
    try:
        for case in cases:
            for backend in backends:
                progress(f"bundle {case.name} for {backend}")
                _bundle_into(index, out, case, backend)
        index.complete = True
    finally:
        bx.write_index(out, index)
    return index


def _bundle_into(index: bx.Index, out: Path, case, backend: str) -> None:
    try:  # in a forked child: the quantized kernels lowering loads stay out of this process
        index.entries.append(in_child(functools.partial(bundle_case, out, case, backend), RUN_TIMEOUT_S))
    except Exception as exc:  # noqa: BLE001 - a case a backend cannot lower is said, not fatal
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        index.skipped.append({"case": case.name, "backend": backend, "reason": f"{type(exc).__name__}: {first}"[:300]})


def _write_outputs(folder: Path, outputs: list) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for j, value in enumerate(outputs):
        (folder / f"output_{j}.bin").write_bytes(value.contiguous().numpy().tobytes() if hasattr(value, "numpy")
                                                else json.dumps(value).encode())


def _bindings_child(bpte: bytes, testsets: int, tol: Optional[tuple]) -> tuple[list, Optional[bool]]:
    """Per test set the outputs, and whether the runtime's own check of them against the bundle held (None: not
    asked: a quantized bundle is judged by SQNR, which the runtime's rtol/atol check does not do)."""
    import executorch.kernels.quantized  # noqa: F401 - the Q/DQ ops' kernels, as a device's runtime links them
    from executorch.extension.pybindings import portable_lib

    bundle = portable_lib._load_bundled_program_from_buffer(bpte)
    out, verified = [], (None if tol is None else True)
    for i in range(testsets):
        if tol is not None:
            try:  # the runtime runs the bundled inputs and compares with the bundled outputs itself
                bundle.verify_result_with_bundled_expected_output("forward", i, *tol)
            except RuntimeError:
                verified = False
        # the outputs themselves (a tolerance nothing exceeds): what ingest judges, as for any other device
        outputs = bundle.verify_result_with_bundled_expected_output("forward", i, 1e30, 1e30)
        out.append([x.clone() if hasattr(x, "clone") else x for x in outputs])
    return out, verified


def run_with_bindings(root: Path, entry: bx.Entry) -> dict:
    """Run one bundle with the Python bindings here; its outputs written beside it. Returns its run record."""
    record = {"executor": "bindings", "command": None, "returncode": None}
    if entry.runtime_backend and entry.runtime_backend not in bn.registered_backends():
        return {**record, "status": "skipped", "error": f"the runtime here does not register {entry.runtime_backend}: "
                                                        "run it on its device with --runner"}
    per_dtype = entry.tolerance.get("per_dtype") if entry.tolerance.get("kind") == "allclose" else None
    tol = tuple(max(t[k] for t in per_dtype.values()) for k in (0, 1)) if per_dtype else None
    try:
        per_set, verified = in_child(lambda: _bindings_child((root / entry.file).read_bytes(), entry.testsets, tol),
                                     RUN_TIMEOUT_S)
    except ChildDied as exc:
        return {**record, "status": "failed", "error": f"the runtime's process {exc}"}
    except Exception as exc:  # noqa: BLE001 - a bundle the runtime refuses is the device's answer
        return {**record, "status": "failed", "error": f"{type(exc).__name__}: {str(exc).strip()[:300]}"}
    for i, outputs in enumerate(per_set):
        _write_outputs(bx.outputs_dir(root, entry) / f"testset_{i}", outputs)
    return {**record, "status": "ran", "runtime_verified": verified}


def run_with_command(root: Path, entry: bx.Entry, template: str) -> dict:
    """Run one bundle through a vendor's command ``template`` (placeholders :data:`PLACEHOLDERS`), once per test set."""
    record = {"executor": "command", "command": template, "returncode": 0}
    for i in range(entry.testsets):
        folder = bx.outputs_dir(root, entry) / f"testset_{i}"
        folder.mkdir(parents=True, exist_ok=True)
        values = {"bpte": str((root / entry.file).resolve()), "outdir": str(folder.resolve()), "testset": str(i),
                  "case": entry.case, "backend": entry.backend}
        command = template.format(**{k: shlex.quote(v) for k, v in values.items()})
        try:
            done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return {**record, "status": "failed", "error": f"test set {i}: the runner took over {RUN_TIMEOUT_S:g} s"}
        record["returncode"] = done.returncode
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            return {**record, "status": "failed", "error": f"test set {i}: the runner exited {done.returncode}: "
                                                           f"{tail[0][:300]}"}
    return {**record, "status": "ran"}


def check_template(template: Optional[str]) -> None:
    """A runner template names only known placeholders and at least ``{bpte}`` and ``{outdir}`` (else UsageError)."""
    if template is None:
        return
    import string

    try:
        names = {f for _t, f, _s, _c in string.Formatter().parse(template) if f is not None}
    except ValueError as exc:
        raise UsageError(f"--runner: not a template: {exc}") from None
    unknown = sorted(names - set(PLACEHOLDERS))
    if unknown or not {"bpte", "outdir"} <= names:
        raise UsageError(f"--runner: placeholders are {{{'}, {'.join(PLACEHOLDERS)}}} and {{bpte}}, {{outdir}} are "
                         f"required; got {', '.join(sorted(names)) or 'none'}")


@dataclass
class RunSummary:
    ran: int = 0
    skipped: int = 0
    failed: int = 0


def run_bundles(root, runner: Optional[str] = None, progress: Callable[[str], None] = lambda _m: None) -> RunSummary:
    """Run every bundle of folder ``root`` (its integrity checked first); each leaves its outputs and run.json."""
    root = Path(root)
    check_template(runner)
    index = bx.load_index(root)
    bx.verify(root, index)
    summary = RunSummary()
    for entry in index.entries:
        progress(f"run {entry.file}")
        started = time.perf_counter()
        record = run_with_command(root, entry, runner) if runner else run_with_bindings(root, entry)
        record["seconds"] = round(time.perf_counter() - started, 3)
        folder = bx.outputs_dir(root, entry)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / bx.RUN_FILE).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        setattr(summary, record["status"], getattr(summary, record["status"]) + 1)
    return summary
