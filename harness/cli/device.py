"""``passgate bundle`` and ``passgate device run | ingest``: certification on a vendor's own hardware.

``bundle`` writes one BundledProgram per case and backend with an index
(:mod:`harness.run.bundle`); ``device run`` runs a bundle folder through an
executor (the runtime's Python bindings here, or a vendor's command
template); ``device ingest`` reads the outputs back as ``device_numerics``
verdicts into results.json and the other reports
(:mod:`harness.report.bundles`). The three steps are separate commands
because the middle one happens where the device is.
"""

from __future__ import annotations

import sys
import time

__all__ = ["add_parser", "run_bundle", "run_device_run", "run_device_ingest"]

RUNNER_HELP = ("a command template run once per bundle and test set instead of the bindings, e.g. "
               "'./vendor_run.sh {bpte} {testset} {outdir}'; placeholders {bpte} (the .bpte's path), {outdir} (the "
               "folder its outputs go to, as output_<j>.bin raw little-endian), {testset}, {case}, {backend}; "
               "run by the shell, each value quoted")


def add_parser(sub) -> None:
    if "bundle" in sub.choices:  # COMMANDS maps both names to this module
        return
    from harness.report.bundles import BACKENDS
    from harness.run.profiles import PROFILES

    b = sub.add_parser("bundle", help="write a BundledProgram per case and backend, with an index, for devices",
                       description="Lower every case of a profile for each backend (portable: to_executorch; xnnpack "
                       "and vulkan: their partitioners) and write it as a BundledProgram (.bpte) holding the case's "
                       "inputs and the eager reference's expected outputs, plus index.json (case, backend, check, "
                       "tolerance, SHA-256 of every file). Run them with `passgate device run`.")
    b.add_argument("--profile", choices=tuple(PROFILES), default="quick", help="whose graphs (default quick)")
    b.add_argument("--out", required=True, metavar="DIR", help="bundle folder (must be new or empty)")
    b.add_argument("--graphs", nargs="+", metavar="NAME", help="graph sources or case names instead of the profile's")
    b.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS), metavar="NAME",
                   help=f"backends to bundle for ({', '.join(BACKENDS)}; default all)")
    b.add_argument("--cache-dir", metavar="DIR", help="lowered-graph cache (default $PASSGATE_CACHE_DIR)")
    b.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    b.set_defaults(run=run_bundle)

    d = sub.add_parser("device", help="run bundles on a device (run) and read their outputs back as verdicts (ingest)",
                       description="Run the bundles `passgate bundle` wrote, then ingest their outputs as "
                       "device_numerics verdicts.")
    inner = d.add_subparsers(dest="device_command", metavar="ACTION", parser_class=type(d))
    r = inner.add_parser("run", help="run every bundle of a folder; outputs are written beside each bundle",
                         description="Run each bundle's test sets through an executor: the runtime's Python "
                         "bindings here (default), or --runner, a vendor's command template. A bundle whose "
                         "delegate the bindings do not register is skipped (run it with --runner on its device). "
                         "Exit 2 when a file does not match the index.")
    r.add_argument("--bundles", required=True, metavar="DIR")
    r.add_argument("--runner", metavar="CMD", help=RUNNER_HELP)
    r.add_argument("--quiet", "-q", action="store_true")
    r.set_defaults(run=run_device_run)
    g = inner.add_parser("ingest", help="read a device run's outputs back as device_numerics verdicts",
                         description="Check every bundle file against the index's SHA-256 (exit 2 when one "
                         "differs), judge each bundle's outputs against its expected outputs with the index's "
                         "tolerance, and write results.json and the reports, naming the device and runtime. "
                         "Exit 1 when a bundle's outputs do not match.")
    g.add_argument("--bundles", required=True, metavar="DIR")
    g.add_argument("--report", required=True, metavar="DIR", help="folder for results.json and the other reports")
    g.add_argument("--device", metavar="NAME", help="the device the bundles ran on (recorded in the reports)")
    g.add_argument("--runtime", metavar="NAME", help="the runtime that ran them (recorded in the reports)")
    g.add_argument("--quiet", "-q", action="store_true")
    g.set_defaults(run=run_device_ingest)
    d.set_defaults(run=lambda args: (d.print_help(), 2)[1])


def _progress(quiet: bool):
    return (lambda _m: None) if quiet else (lambda m: print(f"passgate: {m}", file=sys.stderr))


def run_bundle(args) -> int:
    from harness.graphs import sources
    from harness.graphs.cache import CaseCache
    from harness.graphs.cases import load_cases
    from harness.report.results_json import environment
    from harness.run.bundle import check_out, write_bundles
    from harness.run.profiles import profile

    out = check_out(args.out)
    specs = sources.select(args.graphs or list(profile(args.profile).graphs))
    cache = CaseCache(args.cache_dir) if args.cache_dir else None
    cases = load_cases(specs, cache)
    backends = tuple(dict.fromkeys(args.backends))
    index = write_bundles(out, cases, backends, args.profile, environment(), _progress(args.quiet))
    print(f"passgate: {len(index.entries)} bundle(s) for {len(cases)} case(s) x {', '.join(backends)} in {out}"
          + (f"; {len(index.skipped)} not lowered (see index.json skipped)" if index.skipped else ""))
    return 0


def run_device_run(args) -> int:
    from harness.run.bundle import run_bundles

    summary = run_bundles(args.bundles, args.runner, _progress(args.quiet))
    print(f"passgate: {summary.ran} ran, {summary.skipped} skipped, {summary.failed} failed; outputs beside each "
          f"bundle in {args.bundles}; read them with `passgate device ingest`")
    return 0


def run_device_ingest(args) -> int:
    from harness.report import bundles, results_json, terminal, writers

    started = time.time()
    report_dir = results_json.ensure_writable(args.report)
    index, results = bundles.ingest(args.bundles, args.device, args.runtime)
    doc = bundles.ingest_document(index, results, args.bundles, args.device, args.runtime, started)
    writers.write_all(report_dir, doc)
    writers.write_results(report_dir, doc)
    if not args.quiet:
        for r in results:
            print(f"passgate: {r.pass_name} x {r.graph}: {r.status.value}" + (f": {r.message}" if r.message else ""))
        print("\n".join(terminal.closing(doc, report_dir)))
    return doc["exit_status"]
