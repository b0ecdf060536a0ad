"""``passgate certify`` and ``passgate verify``: make a certification bundle, check one.

``certify`` runs the versioned suite (:mod:`harness.run.profiles`: its passes, graphs,
seeds and known violations for the profile; the workload is not
configurable, or it would not be the suite) plus the backend under test, and
writes the bundle described in :mod:`harness.report.certify`. Its exit status is the
run's: the bundle is written either way, so a failing run is documented too.

``verify`` exits 0 when the bundle is intact (and the signature valid), 1
naming every file added, removed or edited, 2 on bad usage.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["KEY_HELP", "add_parser", "run_certify", "run_verify"]

KEY_HELP = ("make a key pair with: openssl genpkey -algorithm ed25519 -out key.pem && "
            "openssl pkey -in key.pem -pubout -out key.pub.pem")


def add_parser(sub) -> None:
    if "certify" in sub.choices:  # COMMANDS maps both names to this module
        return
    from harness.cli.check import positive_float
    from harness.report.bundles import BACKENDS
    from harness.run.profiles import PROFILES

    c = sub.add_parser("certify", help="run the versioned suite and write a verifiable certification bundle",
                       description="Run the versioned conformance suite for a profile and write a bundle: every "
                       "report, certificate.json (suite version, profile, environment fingerprint, backend, seeds), "
                       "and MANIFEST.json with the SHA-256 of every file, signed with --private-key if given. "
                       "A profile other than full is marked in the bundle as NOT A FULL CERTIFICATION. "
                       "Every pass must be exercised (some graph makes it change the program): here a must check. "
                       "Exit status: the run's (0 conformant, 1 violations).")
    c.add_argument("--out", required=True, metavar="DIR", help="bundle folder (must be new or empty)")
    c.add_argument("--profile", choices=tuple(PROFILES), default="full", help="suite profile (default full)")
    c.add_argument("--backend", metavar="SPEC", help="the backend's pass or pipeline under test "
                   "(package.module:Name or file.py:Name): checked on the suite's graphs and fingerprinted")
    c.add_argument("--private-key", metavar="PEM", help=f"ed25519 private key to sign the manifest ({KEY_HELP})")
    c.add_argument("--timeout", type=positive_float, default=60.0, help="seconds one pass run may take (default 60)")
    c.add_argument("--cache-dir", metavar="DIR", help="lowered-graph cache (default $PASSGATE_CACHE_DIR)")
    c.add_argument("--no-cache", action="store_true", help="lower every graph afresh")
    c.add_argument("--bundles", metavar="DIR", help="also write the certified cases as BundledPrograms for devices "
                   "into DIR (new or empty, outside --out): one .bpte per case and backend with index.json, as "
                   "`passgate bundle` writes them; the certificate's results.json records the index's SHA-256")
    c.add_argument("--bundle-backends", nargs="+", choices=BACKENDS, default=list(BACKENDS), metavar="NAME",
                   help=f"with --bundles: backends to lower for ({', '.join(BACKENDS)}; default all)")
    c.add_argument("--quiet", "-q", action="store_true", help="no progress lines or table")
    c.set_defaults(run=run_certify)

    v = sub.add_parser("verify", help="check a certification bundle: exit 1 naming any added, removed or edited file",
                       description="Recompute the SHA-256 of every file of a bundle against its MANIFEST.json; "
                       "check the ed25519 signature when there is one (and require it with --public-key).")
    v.add_argument("bundle", metavar="DIR")
    v.add_argument("--public-key", metavar="PEM", help="ed25519 public key the bundle must be signed with")
    v.set_defaults(run=run_verify)


def _read_key(path: str, what: str) -> bytes:
    from harness.core.errors import UsageError

    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def _empty_out(path: str) -> Path:
    from harness.core.errors import UsageError
    from harness.report import results_json as report_json

    out = Path(path)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"bundle folder {out} is not empty: a bundle is written into a new or empty folder")
    return report_json.ensure_writable(out)


def run_certify(args) -> int:
    from harness.check.loading import load_pass
    from harness.core.config import RunConfig, configuration, pass_record
    from harness.core.results import Level
    from harness.graphs import cache, sources
    from harness.report import certify
    from harness.run import forking, profiles
    from harness.run.scheduler import Tally, check_all
    from harness.run.session import Session

    key_pem = _read_key(args.private_key, "--private-key") if args.private_key else None
    if key_pem is not None:
        certify.sign(b"probe", key_pem)  # a bad key is a usage error before the run, not after
    wl = profiles.workload(args.profile)
    specs = list(wl.passes) + ([args.backend] if args.backend else [])
    passes = [load_pass(s) for s in specs]
    backend = certify.backend_fingerprint(args.backend)
    graphs = sources.select(list(wl.graphs), wl.random_count or None, wl.seed)
    out = _empty_out(args.out)
    bundles_dir = _bundles_out(args.bundles, out) if args.bundles else None
    cache.configure(args.cache_dir, disabled=args.no_cache)

    # a vendor backend that crashes the interpreter is a result of the certification, not its end
    config = RunConfig(timeout=args.timeout, seed=wl.seed, isolate=forking.available())
    seeds = {"suite_seed": wl.seed, "random_count": wl.random_count, "numeric_draws": config.draws,
             "numeric_seed": config.seed}
    known = [{"pass": p, "graph": g, "check": c, "reason": r} for (p, g, c), r in sorted(wl.known.items())]
    certification = {"suite_version": profiles.SUITE_VERSION, "profile": wl.profile, "full": wl.profile == "full",
                     "backend": args.backend}
    session = Session(report_dir=out, quiet=args.quiet, configuration=configuration(
        "certify", profile=wl.profile, suite_version=profiles.SUITE_VERSION, passes=[pass_record(p) for p in passes],
        graphs=[s.name for s in graphs], graph_selection=wl.graphs, seed=wl.seed, timeout=args.timeout,
        strict=False, backend=args.backend))
    session.waived = set(wl.known)

    def body(s: Session) -> None:
        cases = s.load_cases(graphs)
        check_all(passes, cases, config, Tally(s.record))
        # a pass the suite's graphs never made change the program is not certified by them: must
        s.judge_exercised([p.name for p in passes], level=Level.MUST)
        if bundles_dir is not None:
            _write_device_bundles(bundles_dir, cases, args, wl.profile, certification)

    status = session.run(body, extra=lambda: {"known_violations": known, "certification": certification})
    from harness.report import view as reports

    doc = reports.load(out)
    verdict = "INCOMPLETE" if not doc["complete"] else ("PASS" if status == 0 else "FAIL")
    cert = certify.Certificate(
        suite_version=profiles.SUITE_VERSION, profile=wl.profile, backend=backend,
        environment=certify.environment_fingerprint(backend), seeds=seeds,
        passes=doc["configuration"]["passes"],
        graphs=[{"name": c["name"], "source": c.get("source"), "key": c.get("key")} for c in doc["cases"]],
        known_violations=known, verdict=verdict, exit_status=status, summary=doc["summary"])
    _write_bundle(out, cert, key_pem, args.quiet)
    return status


def _bundles_out(path: str, out: Path) -> Path:
    """``--bundles`` DIR: new or empty, and not inside the certification bundle (a device run writes beside each
    bundle, which would make the certification fail ``passgate verify``)."""
    from harness.core.errors import UsageError
    from harness.run.bundle import check_out

    folder = check_out(path, "--bundles")
    if folder.resolve().is_relative_to(out.resolve()):
        raise UsageError(f"--bundles {folder}: must be outside --out {out} (a device run writes beside each bundle)")
    return folder


def _write_device_bundles(folder: Path, cases: list, args, profile: str, certification: dict) -> None:
    """The certified cases as BundledPrograms in ``folder``; ``certification["bundles"]`` says what was written.

    The record is in place before the first bundle, so an interrupted run's
    results.json still names the folder and the index of what was written.
    """
    from harness.report import bundles as bx
    from harness.report.results_json import environment
    from harness.run.bundle import write_bundles

    say = (lambda _m: None) if args.quiet else (lambda m: print(f"passgate: {m}", file=sys.stderr, flush=True))
    record = certification["bundles"] = {"dir": str(folder), "complete": False}
    try:
        index = write_bundles(folder, cases, tuple(dict.fromkeys(args.bundle_backends)), profile, environment(), say)
        record.update(complete=index.complete, bundles=len(index.entries), skipped=len(index.skipped),
                      backends=sorted({e.backend for e in index.entries}))
    finally:
        if (folder / bx.INDEX_FILE).is_file():
            record["index_sha256"] = bx.sha256(folder / bx.INDEX_FILE)


def _write_bundle(out: Path, cert, key_pem, quiet: bool) -> None:
    """certificate.json (and the NOT A FULL CERTIFICATION notice), then the manifest over every file."""
    from harness.core.io import atomic_write_bytes
    from harness.report import certify

    atomic_write_bytes(out / certify.CERTIFICATE, certify.canonical_json(cert.to_json()))
    if not cert.full:
        atomic_write_bytes(out / certify.NOT_FULL, certify.not_full_notice(cert.profile).encode())
    certify.write_manifest(out, key_pem)
    if not quiet:
        partial = "" if cert.full else f" -- NOT A FULL CERTIFICATION (profile {cert.profile})"
        signed = ", signed" if key_pem else ", unsigned"
        print(f"passgate: certification bundle {out}: suite {cert.suite_version}, verdict {cert.verdict}{signed}{partial}")


def run_verify(args) -> int:
    from harness.report import certify

    pem = _read_key(args.public_key, "--public-key") if args.public_key else None
    v = certify.verify(Path(args.bundle), pem)
    cert = v.certificate
    if not v.ok:
        print(f"passgate: verify FAILED for {args.bundle}: " + "; ".join(v.problems), file=sys.stderr)
        return 1
    full = "full" if cert.get("full_certification") else f"NOT A FULL CERTIFICATION (profile {cert.get('profile')})"
    print(f"passgate: bundle {args.bundle} intact: suite {cert.get('suite_version')}, {full}, "
          f"verdict {cert.get('verdict')}, signature {v.signature}")
    return 0
