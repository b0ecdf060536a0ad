"""Bundles for devices: the index of a bundle folder, its integrity, and the device's outputs read back as verdicts.

``passgate bundle`` writes one BundledProgram (``.bpte``: the program, its
test inputs and the expected outputs of the eager reference) per case and
backend, and an index (:data:`INDEX_FILE`) naming, for each, the case, the
backend, the check its outputs will be judged by, the tolerance and the
SHA-256 of every file. A device run (``passgate device run``) leaves each
bundle's outputs next to it (:func:`outputs_dir`): one raw little-endian
file per output and test set, ``testset_<i>/output_<j>.bin``, and a
``run.json`` saying how it ran. ``passgate device ingest`` reads them back
here: files whose SHA-256 is not the index's are an integrity error (bad
input, exit 2), and each bundle's outputs become one ``device_numerics``
verdict, judged by the very comparison the in-process runtime check uses
(:mod:`harness.check.backend_numerics`), so a bundle run by the bindings here
gets the verdict the runtime check gave.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from harness.core.errors import UsageError
from harness.core.results import CheckResult, Status, result

__all__ = ["BACKENDS", "INDEX_FILE", "INDEX_SCHEMA", "RUN_FILE", "CHECK", "Entry", "Index", "sha256", "outputs_dir",
           "load_index", "write_index", "verify", "expected_outputs", "read_outputs", "judge_entry", "ingest",
           "ingest_document"]

BACKENDS = ("portable", "xnnpack", "vulkan")  # what a bundle can be lowered for (harness.run.bundle.lower_for)
INDEX_FILE = "index.json"
INDEX_SCHEMA = "passgate.bundles/1"
RUN_FILE = "run.json"
CHECK = "device_numerics"


@dataclass
class Entry:
    """One bundle: a case lowered for one backend, with what judges its outputs."""

    case: str
    backend: str  # portable | xnnpack | vulkan
    file: str  # the .bpte, relative to the bundle folder
    sha256: str
    runtime_backend: Optional[str]  # the delegate the runtime must register (XnnpackBackend, VulkanBackend)
    tolerance: dict  # {"kind": "allclose", "per_dtype": {...}} or {"kind": "sqnr_vs_float_twin", "slack_db": ...}
    outputs: list  # per output: {"dtype": "float32", "shape": [..]}
    testsets: int = 1
    check: str = CHECK
    reference: Optional[str] = None  # float twin outputs (torch.save) of a quantized case
    reference_sha256: Optional[str] = None

    @property
    def pass_name(self) -> str:
        return f"device.{self.backend}"


@dataclass
class Index:
    profile: str
    entries: list = field(default_factory=list)
    skipped: list = field(default_factory=list)  # {"case", "backend", "reason"}: nothing written
    environment: dict = field(default_factory=dict)
    schema: str = INDEX_SCHEMA
    complete: bool = True  # False: the writing was interrupted; the entries are the bundles written before


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def outputs_dir(root: Path, entry: Entry) -> Path:
    """Where a run leaves ``entry``'s outputs: beside the bundle, ``<case>.<backend>.out/``."""
    return Path(root) / (Path(entry.file).stem + ".out")


def write_index(root: Path, index: Index) -> Path:
    path = Path(root) / INDEX_FILE
    doc = {"schema": index.schema, "profile": index.profile, "environment": index.environment,
           "bundles": [asdict(e) for e in index.entries], "skipped": index.skipped, "complete": index.complete}
    path.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return path


def load_index(root) -> Index:
    """The index of bundle folder ``root`` (UsageError, one line, when there is none or it is not one)."""
    path = Path(root) / INDEX_FILE
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"{root}: no {INDEX_FILE} (not a folder `passgate bundle` wrote)") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a bundle index: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != INDEX_SCHEMA:
        raise UsageError(f"{path}: not a bundle index (schema {doc.get('schema') if isinstance(doc, dict) else None!r}"
                         f", expected {INDEX_SCHEMA!r})")
    try:
        entries = [Entry(**e) for e in doc["bundles"]]
    except (KeyError, TypeError) as exc:
        raise UsageError(f"{path}: a bundle entry is malformed: {exc}") from None
    return Index(doc.get("profile", ""), entries, doc.get("skipped", []), doc.get("environment", {}),
                 complete=doc.get("complete", True) is not False)


def verify(root, index: Index) -> None:
    """Every file the index names exists and has its SHA-256 (UsageError naming the first that does not)."""
    for e in index.entries:
        for name, digest in ((e.file, e.sha256), (e.reference, e.reference_sha256)):
            if name is None:
                continue
            path = Path(root) / name
            if not path.is_file():
                raise UsageError(f"bundle integrity: {path} is missing")
            if sha256(path) != digest:
                raise UsageError(f"bundle integrity: {path} does not have the SHA-256 the index records "
                                 f"({digest[:12]}...): the bundle was changed after it was written")


def _torch_dtype(scalar_type: int):
    import torch
    from executorch.exir.tensor import scalar_type_enum

    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8,
                  torch.int16, torch.int32, torch.int64, torch.bool):
        if int(scalar_type_enum(dtype)) == int(scalar_type):
            return dtype
    raise UsageError(f"a bundled tensor has scalar type {scalar_type}, which passgate does not read")


def expected_outputs(bpte: Path) -> list[list]:
    """Per test set of ``forward``, the expected outputs a BundledProgram holds, as torch values."""
    import torch
    from executorch.devtools.bundled_program.schema import bundled_program_schema as schema
    from executorch.devtools.bundled_program.serialize import deserialize_from_flatbuffer_to_bundled_program

    program = deserialize_from_flatbuffer_to_bundled_program(Path(bpte).read_bytes())
    suite = next((s for s in program.method_test_suites if s.method_name == "forward"), None)
    if suite is None:
        raise UsageError(f"{bpte}: no test suite for forward")
    out = []
    for case in suite.test_cases:
        values = []
        for v in case.expected_outputs:
            val = v.val
            if isinstance(val, schema.Tensor):
                data = torch.frombuffer(bytearray(val.data), dtype=_torch_dtype(val.scalar_type)) if val.data \
                    else torch.empty(0, dtype=_torch_dtype(val.scalar_type))
                values.append(data.reshape(list(val.sizes)).clone())
            else:
                values.append(next(iter(asdict(val).values())))
        out.append(values)
    return out


def read_outputs(folder: Path, spec: list) -> list:
    """The raw output files of one test set, shaped as ``spec`` ({"dtype", "shape"} per output) says."""
    import torch

    values = []
    for j, s in enumerate(spec):
        path = folder / f"output_{j}.bin"
        if not path.is_file():
            raise FileNotFoundError(f"{path.name} is missing")
        dtype = getattr(torch, s["dtype"])
        raw = bytearray(path.read_bytes())
        count = 1
        for d in s["shape"]:
            count *= d
        if len(raw) != count * torch.empty(0, dtype=dtype).element_size():
            raise ValueError(f"{path.name} holds {len(raw)} bytes, not {count} {s['dtype']} values")
        values.append((torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype))
                      .reshape(s["shape"]).clone())
    return values


def judge_entry(root, entry: Entry, device: dict) -> CheckResult:
    """``device_numerics`` of one bundle from what its run left beside it."""
    import torch

    from harness.check import backend_numerics as bn

    root = Path(root)
    out_dir = outputs_dir(root, entry)
    base = {"backend": entry.backend, "bundle": entry.file, **device}
    run_path = out_dir / RUN_FILE
    if not run_path.is_file():
        return result(entry.pass_name, entry.case, CHECK, Status.SKIP, "not run: no outputs beside the bundle", base)
    run = json.loads(run_path.read_text())
    base["run"] = {k: run.get(k) for k in ("executor", "command", "returncode", "seconds", "runtime_verified")}
    if run.get("status") == "skipped":
        return result(entry.pass_name, entry.case, CHECK, Status.SKIP, run.get("error", "skipped"), base)
    if run.get("status") != "ran":
        return result(entry.pass_name, entry.case, CHECK, Status.FAIL,
                      f"the device did not run it: {run.get('error') or 'no reason given'}", base)
    expected = expected_outputs(root / entry.file)
    twins = torch.load(root / entry.reference) if entry.reference else None
    for i, exp in enumerate(expected):
        try:
            actual = read_outputs(out_dir / f"testset_{i}", entry.outputs)
        except (OSError, ValueError) as exc:
            return result(entry.pass_name, entry.case, CHECK, Status.FAIL, f"test set {i}: {exc}", base)
        verdict = bn.judge_quantized(actual, exp, twins[i], entry.tolerance.get("slack_db", bn.SQNR_SLACK_DB)) \
            if twins is not None else bn.judge_float(actual, exp)
        if not verdict.ok:
            return result(entry.pass_name, entry.case, CHECK, Status.FAIL, f"test set {i}: {verdict.message}",
                          {**base, **verdict.details})
    return result(entry.pass_name, entry.case, CHECK, Status.PASS,
                  f"{len(expected)} test set(s): {verdict.message}", {**base, **verdict.details})


def ingest(root, device: Optional[str] = None, runtime: Optional[str] = None) -> tuple[Index, list[CheckResult]]:
    """Every bundle's ``device_numerics`` verdict, the folder's integrity checked first."""
    index = load_index(root)
    verify(root, index)
    named = {"device": device or "unnamed", "runtime": runtime or "unnamed"}
    return index, [judge_entry(root, e, named) for e in index.entries]


def ingest_document(index: Index, results: list, bundles_dir, device: Optional[str], runtime: Optional[str],
                    started_at: float) -> dict:
    """The results document of an ingest: the verdicts, and the device and runtime they were judged on."""
    from harness.core.results import summarize
    from harness.report import results_json

    named = {"name": device or "unnamed", "runtime": runtime or "unnamed"}
    status = 1 if summarize(results)["violations"] else 0
    cases = [{"name": n, "source": "bundle", "backends": sorted(e.backend for e in index.entries if e.case == n)}
             for n in dict.fromkeys(e.case for e in index.entries)]
    configuration = {"command": "device ingest", "bundles": str(bundles_dir), "profile": index.profile,
                     "device": named, "checks": [CHECK], "strict": False}
    return results_json.document(results, configuration, cases, started_at=started_at, complete=True,
                                 exit_status=status, strict=False,
                                 extra={"device": named, "bundles": {"index_environment": index.environment,
                                                                     "skipped": index.skipped,
                                                                     "complete": index.complete}})
