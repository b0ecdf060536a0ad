"""`passgate certify --bundles DIR`: a certification run's cases as BundledPrograms for devices.

One quick certification (real passes, real lowering, the runtime here) with
portable bundles: the certificate's results.json names the bundle folder and
its index's SHA-256, a device run beside the bundles leaves the
certification intact, and the bundles' verdicts come back through `device
ingest`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.report import bundles as bx


@pytest.fixture(scope="module")
def certified(tmp_path_factory) -> tuple[Path, Path, int]:
    root = tmp_path_factory.mktemp("cert-bundles")
    out, bundles = root / "cert", root / "bundles"
    status = main(["certify", "--profile", "quick", "--out", str(out), "--bundles", str(bundles),
                   "--bundle-backends", "portable", "-q"])
    return out, bundles, status


def test_certify_writes_one_bundle_per_certified_case_and_records_its_index(certified, tmp_path):
    out, bundles, status = certified
    assert status == 0
    doc = json.loads((out / "results.json").read_text())
    index = bx.load_index(bundles)
    assert index.complete and index.profile == "quick"
    certified_cases = {c["name"] for c in doc["cases"]}
    assert {e.case for e in index.entries} | {s["case"] for s in index.skipped} == certified_cases
    assert {e.backend for e in index.entries} == {"portable"} and index.entries
    record = doc["certification"]["bundles"]
    assert record["dir"] == str(bundles) and record["complete"] and record["bundles"] == len(index.entries)
    assert record["index_sha256"] == bx.sha256(bundles / bx.INDEX_FILE)
    # the device's run writes beside the bundles, not into the certification, which stays intact
    assert main(["device", "run", "--bundles", str(bundles), "-q"]) == 0
    assert main(["verify", str(out)]) == 0
    assert main(["device", "ingest", "--bundles", str(bundles), "--report", str(tmp_path / "r"), "-q"]) == 0
    verdicts = json.loads((tmp_path / "r" / "results.json").read_text())["results"]
    assert {r["graph"] for r in verdicts} == {e.case for e in index.entries}
    assert all(r["status"] == "pass" for r in verdicts), [(r["graph"], r["message"]) for r in verdicts]


def test_bundles_folder_must_be_new_and_outside_the_certification(tmp_path, capsys):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    argvs = [["certify", "--profile", "quick", "--out", str(tmp_path / "c1"), "--bundles", str(tmp_path / "full")],
             ["certify", "--profile", "quick", "--out", str(tmp_path / "c2"), "--bundles", str(tmp_path / "c2" / "b")],
             ["vulkan", "--report", str(tmp_path / "v"), "--bundles", str(tmp_path / "full")],
             ["vulkan", "--report", str(tmp_path / "v"), "--count", "1", "--bundles", str(tmp_path / "new")]]
    for argv in argvs:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("passgate: error:") and "--bundles" in err[0], (argv, err)
