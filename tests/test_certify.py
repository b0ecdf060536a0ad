"""Certification bundles: `passgate certify` writes one, `passgate verify` names any file
added, removed or edited (one byte is enough), ed25519 signatures are checked."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness.cli.main import main
from harness.report import certify
from harness.run import profiles as suite


def _keypair(folder: Path, name: str) -> tuple[Path, Path]:
    key = Ed25519PrivateKey.generate()
    priv, pub = folder / f"{name}.pem", folder / f"{name}.pub.pem"
    priv.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    pub.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo))
    return priv, pub


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("keys")
    (priv, pub), (_, other_pub) = _keypair(folder, "vendor"), _keypair(folder, "other")
    return {"private": priv, "public": pub, "other_public": other_pub}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory, keys) -> Path:
    out = tmp_path_factory.mktemp("cert") / "bundle"
    status = main(["certify", "--profile", "quick", "--out", str(out), "--private-key", str(keys["private"]),
                   "--backend", "passes.reference:RemoveDetachPass", "-q"])
    assert status == 0  # the suite's known violations are waived, nothing else fails
    return out


def _copy(bundle: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "copy"
    shutil.copytree(bundle, dst)
    return dst


def test_bundle_holds_reports_certificate_manifest_and_signature(bundle):
    names = sorted(p.name for p in bundle.iterdir())
    assert names == sorted(["results.json", "junit.xml", "summary.md", "report.html", "blind.json", certify.CERTIFICATE,
                            certify.NOT_FULL, certify.MANIFEST, certify.SIGNATURE])
    cert = json.loads((bundle / certify.CERTIFICATE).read_text())
    assert cert["suite_version"] == suite.SUITE_VERSION and cert["profile"] == "quick"
    assert cert["full_certification"] is False and cert["verdict"] == "PASS"
    env = cert["environment"]
    assert env["torch"].startswith("2.13.0") and env["executorch"] == "1.5.1" and env["python"] and env["passgate"]
    assert env["platform"] and env["backend"]["spec"] == "passes.reference:RemoveDetachPass"
    assert len(env["backend"]["module_sha256"]) == 64
    assert cert["seeds"]["suite_seed"] == 0 and cert["seeds"]["numeric_draws"] >= 1
    assert {g["name"] for g in cert["graphs"]} >= {"mlp", "inplace_views"} and all(g["key"] for g in cert["graphs"])
    assert cert["known_violations"]
    manifest = json.loads((bundle / certify.MANIFEST).read_text())
    assert sorted(manifest["files"]) == sorted(set(names) - {certify.MANIFEST, certify.SIGNATURE})


def test_a_smaller_profile_is_marked_prominently(bundle):
    assert "NOT A FULL CERTIFICATION" in (bundle / certify.NOT_FULL).read_text()
    assert "NOT A FULL CERTIFICATION" in (bundle / "summary.md").read_text()
    assert "NOT A FULL CERTIFICATION" in (bundle / "report.html").read_text()
    doc = json.loads((bundle / "results.json").read_text())
    assert doc["certification"] == {"suite_version": suite.SUITE_VERSION, "profile": "quick", "full": False,
                                    "backend": "passes.reference:RemoveDetachPass"}
    assert "RemoveDetachPass" in {p["name"] for p in doc["configuration"]["passes"]}


def test_intact_bundle_verifies(bundle, keys, capsys):
    assert main(["verify", str(bundle)]) == 0
    assert main(["verify", str(bundle), "--public-key", str(keys["public"])]) == 0
    out = capsys.readouterr().out
    assert "intact" in out and "NOT A FULL CERTIFICATION (profile quick)" in out and "the given --public-key" in out


def test_editing_one_byte_of_any_file_fails_verify_naming_it(bundle, keys, tmp_path, capsys):
    files = sorted(p.name for p in bundle.iterdir())
    assert len(files) == 9
    for name in files:
        copy = _copy(bundle, tmp_path / name)
        data = bytearray((copy / name).read_bytes())
        data[len(data) // 2] ^= 0x01
        (copy / name).write_bytes(bytes(data))
        for extra in ([], ["--public-key", str(keys["public"])]):
            assert main(["verify", str(copy), *extra]) == 1, name
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and name in err[0], (name, err)


def test_added_and_removed_files_are_named(bundle, tmp_path, capsys):
    copy = _copy(bundle, tmp_path)
    (copy / "extra.txt").write_text("smuggled")
    (copy / "junit.xml").unlink()
    assert main(["verify", str(copy)]) == 1
    err = capsys.readouterr().err
    assert "added: extra.txt" in err and "removed: junit.xml" in err


def test_signature_must_be_made_with_the_given_key(bundle, keys, tmp_path, capsys):
    assert main(["verify", str(bundle), "--public-key", str(keys["other_public"])]) == 1
    assert "not the --public-key given" in capsys.readouterr().err
    unsigned = _copy(bundle, tmp_path)
    (unsigned / certify.SIGNATURE).unlink()
    assert main(["verify", str(unsigned)]) == 0  # integrity only
    assert main(["verify", str(unsigned), "--public-key", str(keys["public"])]) == 1
    assert "not signed" in capsys.readouterr().err
    # re-signing an edited manifest with another key is caught when the key is pinned
    resigned = _copy(bundle, tmp_path / "resigned")
    (resigned / "summary.md").write_text("all good, trust me\n")
    other_priv, _ = _keypair(tmp_path, "forger")
    certify.write_manifest(resigned, other_priv.read_bytes())
    assert main(["verify", str(resigned)]) == 0
    assert main(["verify", str(resigned), "--public-key", str(keys["public"])]) == 1


def test_bad_certify_and_verify_usage_exits_2_with_one_line(bundle, keys, tmp_path, capsys):
    (tmp_path / "garbage.pem").write_text("not a key")
    argvs = [
        ["certify", "--out", str(tmp_path / "b"), "--private-key", str(tmp_path / "garbage.pem")],
        ["certify", "--out", str(tmp_path / "b"), "--private-key", str(keys["public"])],
        ["certify", "--out", str(tmp_path / "b"), "--private-key", str(tmp_path / "missing.pem")],
        ["certify", "--out", str(bundle), "--profile", "quick"],  # not empty
        ["certify", "--out", str(tmp_path / "b"), "--profile", "huge"],
        ["verify", str(tmp_path / "no_such_bundle")],
        ["verify", str(bundle), "--public-key", str(tmp_path / "garbage.pem")],
    ]
    for argv in argvs:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("passgate: error:"), (argv, err)
    assert not (tmp_path / "b").exists() or not any((tmp_path / "b").iterdir())


@pytest.mark.parametrize("name", [certify.MANIFEST, certify.SIGNATURE])
def test_every_single_byte_of_manifest_and_signature_is_covered(bundle, tmp_path, name):
    """The manifest and signature are not hashed by anything else: each byte must matter on its own."""
    copy = _copy(bundle, tmp_path)
    original = (copy / name).read_bytes()
    for i in range(len(original)):
        data = bytearray(original)
        data[i] ^= 0x01
        (copy / name).write_bytes(bytes(data))
        v = certify.verify(copy)
        assert not v.ok and any(name in p for p in v.problems), (i, v.problems)
    (copy / name).write_bytes(original)
    assert certify.verify(copy).ok
