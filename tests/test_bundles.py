"""XNNPACK end to end, and bundled programs for devices: bundle -> device run -> device ingest.

Real lowering, a real runtime (the installed Python bindings, which register
XnnpackBackend) and real BundledPrograms; one builtin case (mlp) keeps it
short.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.core.results import Status
from harness.pipelines.partitioners import PARTITIONERS, check_backend_partitioner
from harness.report import bundles as bx

CASE = "mlp"


@pytest.fixture(scope="module")
def ran_bundles(tmp_path_factory, passgate_cache) -> Path:
    """``passgate bundle`` of one builtin case for portable and XNNPACK, run by the bindings."""
    out = tmp_path_factory.mktemp("bundles") / "b"
    assert main(["bundle", "--profile", "quick", "--graphs", CASE, "--backends", "portable", "xnnpack",
                 "--out", str(out), "-q"]) == 0
    assert main(["device", "run", "--bundles", str(out), "-q"]) == 0
    return out


def _ingest(bundles: Path, report: Path) -> tuple[int, dict]:
    status = main(["device", "ingest", "--bundles", str(bundles), "--report", str(report), "--device", "here-cpu",
                   "--runtime", "pybindings", "-q"])
    doc = json.loads((report / "results.json").read_text()) if (report / "results.json").exists() else {}
    return status, doc


def _verdicts(doc: dict) -> dict:
    return {(r["pass_name"], r["graph"]): r["status"] for r in doc["results"] if r["check"] == "device_numerics"}


def test_device_verdicts_equal_the_in_process_runtime_verdicts(ran_bundles, tmp_path, builtin_cases):
    from harness.check.runtime import judge_runtime

    index = bx.load_index(ran_bundles)
    assert {(e.case, e.backend) for e in index.entries} == {(CASE, "portable"), (CASE, "xnnpack")}
    assert all(len(e.sha256) == 64 and e.check == "device_numerics" and e.tolerance["kind"] == "allclose"
               for e in index.entries)
    status, doc = _ingest(ran_bundles, tmp_path / "r")
    assert status == 0 and doc["device"] == {"name": "here-cpu", "runtime": "pybindings"}
    case = builtin_cases[CASE]
    xnn = {r.check: r.status.value for r in check_backend_partitioner(PARTITIONERS["xnnpack"], case).results}
    portable = {r.check: r.status.value for r in judge_runtime(case.program("edge"), case.sample_inputs(), "p", CASE)}
    assert _verdicts(doc) == {("device.xnnpack", CASE): xnn["runtime_numerics"],
                              ("device.portable", CASE): portable["runtime_numerics"]} \
        == {("device.xnnpack", CASE): "pass", ("device.portable", CASE): "pass"}
    run = json.loads((bx.outputs_dir(ran_bundles, index.entries[0]) / bx.RUN_FILE).read_text())
    assert run["executor"] == "bindings" and run["runtime_verified"] is True


def _tamper_expected(folder: Path, entry: bx.Entry) -> None:
    """Shift the expected output tensor's bytes inside the .bpte by one."""
    path = folder / entry.file
    expected = bx.expected_outputs(path)[0][0]
    data = path.read_bytes()
    old = expected.contiguous().numpy().tobytes()
    assert data.count(old) == 1
    path.write_bytes(data.replace(old, (expected + 1.0).numpy().tobytes()))


def test_a_tampered_expected_output_is_caught(ran_bundles, tmp_path, capsys):
    folder = tmp_path / "b"
    shutil.copytree(ran_bundles, folder)
    index = bx.load_index(folder)
    entry = next(e for e in index.entries if e.backend == "xnnpack")
    _tamper_expected(folder, entry)
    capsys.readouterr()
    status, _doc = _ingest(folder, tmp_path / "r1")  # the file no longer has the index's SHA-256
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "bundle integrity" in err[0] and entry.file in err[0]
    entry.sha256 = bx.sha256(folder / entry.file)  # a tamperer who also rewrites the index
    bx.write_index(folder, index)
    status, doc = _ingest(folder, tmp_path / "r2")
    assert status == 1
    assert _verdicts(doc) == {("device.xnnpack", CASE): "fail", ("device.portable", CASE): "pass"}
    bad = next(r for r in doc["results"] if r["pass_name"] == "device.xnnpack")
    assert "output 0" in bad["message"] and "max abs err 1" in bad["message"]


RUNNER = '''
import sys
from pathlib import Path
from executorch.extension.pybindings import portable_lib
bpte, testset, outdir = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
bundle = portable_lib._load_bundled_program_from_buffer(Path(bpte).read_bytes())
for j, t in enumerate(bundle.verify_result_with_bundled_expected_output("forward", testset, 1e30, 1e30)):
    (outdir / f"output_{j}.bin").write_bytes(t.contiguous().numpy().tobytes())
'''


def test_a_vendor_runner_template_runs_the_bundles(ran_bundles, tmp_path):
    folder = tmp_path / "b"
    shutil.copytree(ran_bundles, folder, ignore=shutil.ignore_patterns("*.out"))
    script = tmp_path / "vendor_runner.py"
    script.write_text(RUNNER)
    assert main(["device", "run", "--bundles", str(folder), "-q",
                 "--runner", f"{sys.executable} {script} {{bpte}} {{testset}} {{outdir}}"]) == 0
    status, doc = _ingest(folder, tmp_path / "r")
    assert status == 0 and set(_verdicts(doc).values()) == {"pass"}
    assert {r["details"]["run"]["executor"] for r in doc["results"]} == {"command"}


@pytest.mark.parametrize("argv, words", [
    (["device", "ingest", "--bundles", "{tmp}/nowhere", "--report", "{tmp}/r"], "no index.json"),
    (["device", "run", "--bundles", "{tmp}", "--runner", "run {model}"], "placeholders"),
    (["bundle", "--out", "{tmp}/o", "--graphs", "no_such_graph"], "unknown graph"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, argv, words):
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("passgate: error: ") and words in err[0]


def _perturb_a_lowered_weight(manager, weight) -> None:
    """A pass after lowering that scales one weight the XNNPACK delegate carries (its named data, as the lowered
    module holds it and as the manager collected it for emission) by 1.05."""
    from executorch.exir.lowered_backend_module import LoweredBackendModule

    raw, scaled = (w.detach().contiguous().numpy().tobytes() for w in (weight, weight * 1.05))
    stores = [m.named_data_store_output for m in manager.exported_program().graph_module.children()
              if isinstance(m, LoweredBackendModule)] + [manager._named_data_store]
    hits = 0
    for store in stores:
        for i, b in enumerate(store.buffers):
            if bytes(b) == raw:
                store.buffers[i], hits = scaled, hits + 1
    assert hits == 2, "the weight is not where the XNNPACK delegate's named data keeps it"


def test_xnnpack_end_to_end_passes_and_names_runtime_numerics_when_the_lowered_program_is_wrong(builtin_cases):
    from executorch.exir import to_edge_transform_and_lower

    from harness.pipelines.lowered_runtime import runtime_verdicts
    from harness.pipelines.partitioners import delegate_call_only

    case = builtin_cases[CASE]
    good = {r.check: r for r in check_backend_partitioner(PARTITIONERS["xnnpack"], case).results}
    assert {c: r.status for c, r in good.items()} == {c: Status.PASS for c in PARTITIONERS["xnnpack"].checks}
    manager = to_edge_transform_and_lower(case.program("export"), partitioner=[PARTITIONERS["xnnpack"].make()])
    _perturb_a_lowered_weight(manager, case.exported.state_dict["fc1.weight"])
    assert delegate_call_only(manager.exported_program(), "p", CASE).status is Status.PASS  # structure is fine
    bad = {r.check: r for r in runtime_verdicts(manager, case, "partitioner.xnnpack")}
    assert bad["runtime_runs"].status is Status.PASS
    assert bad["runtime_numerics"].status is Status.FAIL and "max abs err" in bad["runtime_numerics"].message
