"""Certification bundles: a report a vendor can hand to a customer, and the customer can check.

A bundle is a folder:

==============================  ====================================================
``results.json`` and siblings   the run's reports (junit.xml, summary.md, report.html)
``certificate.json``            suite version, profile, backend under test, environment
                                fingerprint, seeds, verdict
``NOT-A-FULL-CERTIFICATION.txt`` only when the profile is not ``full``: nobody should
                                mistake a quick run for a certification
``MANIFEST.json``               SHA-256 and size of every other file
``MANIFEST.sig``                optional ed25519 signature of MANIFEST.json's bytes
==============================  ====================================================

``verify`` recomputes every digest and names each file added, removed or
edited. MANIFEST.json and MANIFEST.sig are written in one canonical byte
form and checked byte for byte, so editing any byte of any file in the
bundle, the manifest included, is caught; the manifest also carries a digest
of its own content, and every field of the signature is checked.

Without a key this proves integrity against accidents. With a key it proves
who produced the bundle: the signature embeds its public key, and
``verify --public-key`` requires that key (the signature is checked whenever
one is present).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from harness.check.loading import load_pass
from harness.core.errors import UsageError
from harness.core.io import atomic_write_bytes
from harness.report import results_json as report_json

__all__ = [
    "BUNDLE_FORMAT", "CERTIFICATE", "MANIFEST", "NOT_FULL", "SIGNATURE", "SIGNATURE_FIELDS", "Certificate",
    "Verification", "backend_fingerprint", "bundle_files", "canonical_json", "environment_fingerprint",
    "load_public", "not_full_notice", "sha256_file", "sign", "verify", "write_manifest",
]

MANIFEST = "MANIFEST.json"
SIGNATURE = "MANIFEST.sig"
CERTIFICATE = "certificate.json"
NOT_FULL = "NOT-A-FULL-CERTIFICATION.txt"
BUNDLE_FORMAT = 1
_SELF = (MANIFEST, SIGNATURE)
SIGNATURE_FIELDS = {"algorithm", "signed_file", "public_key", "public_key_sha256", "signature"}


def canonical_json(obj) -> bytes:
    """The one byte form passgate writes signed JSON in: verify compares bytes, not parsed values."""
    return (json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=True) + "\n").encode()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def bundle_files(root: Path) -> list[str]:
    """Every regular file under ``root`` (POSIX relative paths), the manifest and signature excepted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            rel = (Path(dirpath) / name).relative_to(root).as_posix()
            if rel not in _SELF:
                out.append(rel)
    return sorted(out)


def _self_digest(manifest: dict) -> str:
    """Digest of everything in the manifest but itself: an edit to any field of it shows."""
    return hashlib.sha256(canonical_json({k: v for k, v in manifest.items() if k != "self_digest"})).hexdigest()


# ----------------------------------------------------------------------------- fingerprint


def backend_fingerprint(spec: Optional[str]) -> Optional[dict]:
    """What exactly was tested: the SPEC, its module file's SHA-256 and its distribution's version."""
    if not spec:
        return None
    from importlib.metadata import PackageNotFoundError, packages_distributions, version


    loaded = load_pass(spec)
    module = getattr(loaded.obj, "__module__", None) or spec.rpartition(":")[0]
    import sys

    mod = sys.modules.get(module)
    source = getattr(mod, "__file__", None)
    dist = packages_distributions().get(module.split(".")[0], [None])[0]
    try:
        dist_version = version(dist) if dist else None
    except PackageNotFoundError:
        dist_version = None
    return {"spec": spec, "name": loaded.name, "module": module, "stage": loaded.stage,
            "module_sha256": sha256_file(Path(source)) if source and Path(source).is_file() else None,
            "distribution": dist, "version": dist_version}


def environment_fingerprint(backend: Optional[dict]) -> dict:
    from importlib.metadata import PackageNotFoundError, version


    env = dict(report_json.environment())
    for pkg in ("numpy", "jsonschema", "matplotlib", "cryptography"):
        try:
            env[pkg] = version(pkg)
        except PackageNotFoundError:
            env[pkg] = None
    env.update({"system": platform.system(), "release": platform.release(), "processor": platform.processor(),
                "implementation": platform.python_implementation(), "backend": backend})
    return env


@dataclass
class Certificate:
    suite_version: str
    profile: str
    backend: Optional[dict]
    environment: dict
    seeds: dict
    passes: list
    graphs: list  # {name, source, key}: the case key fingerprints the graph's definition
    known_violations: list
    verdict: str  # PASS | FAIL | INCOMPLETE
    exit_status: int
    summary: dict
    created_at: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    bundle_format: int = BUNDLE_FORMAT

    @property
    def full(self) -> bool:
        return self.profile == "full"

    def to_json(self) -> dict:
        from dataclasses import asdict

        return asdict(self) | {"full_certification": self.full}


def not_full_notice(profile: str) -> str:
    return (f"NOT A FULL CERTIFICATION\n\nThis bundle was made with the '{profile}' profile of the passgate suite, "
            "which runs a subset of the full suite.\nIt does not certify conformance; run `passgate certify "
            "--profile full` for that.\n")


# ----------------------------------------------------------------------------- manifest and signature


def write_manifest(root: Path, private_key_pem: Optional[bytes] = None) -> dict:
    files = {rel: {"sha256": sha256_file(root / rel), "size": (root / rel).stat().st_size}
             for rel in bundle_files(root)}
    manifest = {"format": BUNDLE_FORMAT, "algorithm": "sha256", "files": files}
    manifest["self_digest"] = _self_digest(manifest)
    data = canonical_json(manifest)

    atomic_write_bytes(root / MANIFEST, data)
    if private_key_pem is not None:
        atomic_write_bytes(root / SIGNATURE, canonical_json(sign(data, private_key_pem)))
    return manifest


def _load_private(pem: bytes):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--private-key is not an unencrypted PEM private key: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise UsageError(f"--private-key must be an ed25519 key, not {type(key).__name__}")
    return key


def load_public(pem: bytes):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--public-key is not a PEM public key: {exc}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise UsageError(f"--public-key must be an ed25519 key, not {type(key).__name__}")
    return key


def _raw(public_key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def sign(data: bytes, private_key_pem: bytes) -> dict:
    key = _load_private(private_key_pem)
    raw = _raw(key.public_key())
    return {"algorithm": "ed25519", "signed_file": MANIFEST, "public_key": base64.b64encode(raw).decode(),
            "public_key_sha256": hashlib.sha256(raw).hexdigest(),
            "signature": base64.b64encode(key.sign(data)).decode()}


@dataclass
class Verification:
    ok: bool = True
    problems: list = field(default_factory=list)  # one-line strings, each naming a file
    added: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    edited: list = field(default_factory=list)
    signature: str = "unsigned"  # unsigned | valid (key ...)
    certificate: dict = field(default_factory=dict)

    def fail(self, message: str) -> None:
        self.ok = False
        self.problems.append(message)


def _read_canonical(path: Path, v: Verification) -> Optional[dict]:
    """Parse a JSON file that must be in canonical form; any other bytes mean it was edited."""
    try:
        data = path.read_bytes()
        obj = json.loads(data)
    except (OSError, ValueError) as exc:
        v.edited.append(path.name)
        v.fail(f"edited: {path.name} (unreadable: {type(exc).__name__})")
        return None
    if not isinstance(obj, dict) or canonical_json(obj) != data:
        v.edited.append(path.name)
        v.fail(f"edited: {path.name} (not the bytes passgate wrote)")
        return None
    return obj


def verify(root: Path, public_key_pem: Optional[bytes] = None) -> Verification:
    root = Path(root)
    if not root.is_dir():
        raise UsageError(f"bundle folder not found: {root}")
    v = Verification()
    pinned = load_public(public_key_pem) if public_key_pem is not None else None
    if not (root / MANIFEST).is_file():
        v.removed.append(MANIFEST)
        v.fail(f"removed: {MANIFEST} (not a passgate bundle, or its manifest was deleted)")
        return v
    manifest = _read_canonical(root / MANIFEST, v)
    files = (manifest or {}).get("files")
    if manifest is not None and (not isinstance(files, dict) or manifest.get("self_digest") != _self_digest(manifest)
                                 or manifest.get("format") != BUNDLE_FORMAT or manifest.get("algorithm") != "sha256"):
        v.edited.append(MANIFEST)
        v.fail(f"edited: {MANIFEST} (its content does not match its own digest)")
    if isinstance(files, dict):
        present = set(bundle_files(root))
        for rel in sorted(present - set(files)):
            v.added.append(rel)
            v.fail(f"added: {rel}")
        for rel in sorted(set(files) - present):
            v.removed.append(rel)
            v.fail(f"removed: {rel}")
        for rel in sorted(present & set(files)):
            entry = files[rel] if isinstance(files[rel], dict) else {}
            if sha256_file(root / rel) != entry.get("sha256"):
                v.edited.append(rel)
                v.fail(f"edited: {rel} (SHA-256 differs from the manifest)")
    _check_signature(root, v, pinned)
    if (root / CERTIFICATE).is_file():
        try:
            v.certificate = json.loads((root / CERTIFICATE).read_text())
        except (OSError, ValueError):
            v.certificate = {}
    return v


def _check_signature(root: Path, v: Verification, pinned) -> None:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    sig_path = root / SIGNATURE
    if not sig_path.is_file():
        if pinned is not None:
            v.fail(f"removed: {SIGNATURE} (the bundle is not signed, and --public-key asks for a signature)")
            v.removed.append(SIGNATURE)
        return
    sig = _read_canonical(sig_path, v)
    if sig is None:
        return
    try:
        raw = base64.b64decode(sig["public_key"], validate=True)
        embedded = Ed25519PublicKey.from_public_bytes(raw)
        signature = base64.b64decode(sig["signature"], validate=True)
        # every field is checked: a field nobody reads is a byte nobody would notice changing
        consistent = (set(sig) == SIGNATURE_FIELDS and sig["algorithm"] == "ed25519" and sig["signed_file"] == MANIFEST
                      and sig["public_key_sha256"] == hashlib.sha256(raw).hexdigest()
                      # base64 has spare bits in its last character: only the canonical encoding is accepted
                      and base64.b64encode(raw).decode() == sig["public_key"]
                      and base64.b64encode(signature).decode() == sig["signature"])
    except (KeyError, ValueError, TypeError):
        consistent = False
    if not consistent:
        v.edited.append(SIGNATURE)
        v.fail(f"edited: {SIGNATURE} (malformed or inconsistent)")
        return
    if pinned is not None and _raw(pinned) != raw:
        v.fail(f"signature: {SIGNATURE} was made with key {hashlib.sha256(raw).hexdigest()[:16]}…, "
               f"not the --public-key given ({hashlib.sha256(_raw(pinned)).hexdigest()[:16]}…)")
        return
    try:
        embedded.verify(signature, (root / MANIFEST).read_bytes())
    except (InvalidSignature, OSError):
        v.fail(f"signature: {SIGNATURE} does not match {MANIFEST} (one of them was edited)")
        return
    who = "the given --public-key" if pinned is not None else "its embedded key only: pass --public-key to pin it"
    v.signature = f"valid, ed25519 key {hashlib.sha256(raw).hexdigest()[:16]}… ({who})"
