"""``passgate run``: run pass catalogs (and backend pipelines) over graph sources; optionally gate.

``passgate check`` answers "is this pass right?"; ``run`` answers "are all
the passes we ship right, and did anything get worse?": every runnable
catalog entry on every graph it applies to, at its stage, built the way its
backend builds it, plus the backend pipelines verified after each pass.
With ``--baseline`` the exit status is the gate's: 1 only for a violation
the baseline does not record (a regression); fixed ones are reported.
"""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import replace

from harness.cmd_check import add_common_run_options, configure_cache
from harness.errors import UsageError


def add_parser(sub) -> None:
    p = sub.add_parser(
        "run",
        help="run pass catalogs over graph sources under IR-spec verification; gate against a baseline",
        description=(
            "Run every runnable entry of the selected catalogs on the graphs it applies to (and, in the standard "
            "and full profiles, the Vulkan / XNNPACK / to_executorch pipelines verified after each pass). "
            "Profiles: quick (core catalogs, built-in graphs, no slow passes: pre-merge, a few minutes on 2 cores), "
            "standard (every catalog, built-in + quantized graphs, pipelines: tox -e conformance), full (every "
            "graph source: certification). With --baseline FILE, exit 1 only on a regression."
        ),
    )
    add_run_arguments(p)
    p.add_argument("--baseline", metavar="FILE", help="gate against this baseline (e.g. reports/baseline.json)")
    p.set_defaults(run=run)


def add_run_arguments(p) -> None:
    """The workload options ``run`` and ``baseline update`` share."""
    p.add_argument("--catalog", nargs="+", metavar="NAME|SPEC",
                   help="catalog names (see `passgate passes`) or module:attr / file.py:attr giving a Catalog; "
                        "default: the profile's")
    p.add_argument("--profile", choices=("quick", "standard", "full"), default="standard",
                   help="workload (default standard)")
    p.add_argument("--only", nargs="+", metavar="PATTERN", help="only entries whose name matches a glob")
    p.add_argument("--pipeline", dest="pipelines", action="append", metavar="NAME|SPEC",
                   help="also run this pipeline verify-each (repeatable; default: the profile's, none with --catalog)")
    p.add_argument("--no-pipelines", action="store_true", help="run no pipeline")
    p.add_argument("--partitioner", dest="partitioners", action="append", choices=("vulkan", "xnnpack"),
                   help="also check this backend partitioner (repeatable; default: the profile's, none with --catalog)")
    p.add_argument("--no-partitioners", action="store_true", help="check no partitioner")
    add_common_run_options(p)


def resolve_catalogs(names):
    from passes import catalog

    if not names:
        return catalog.select(None)
    out = []
    registered = [n for n in names if ":" not in n]
    if registered:
        out.extend(catalog.select(registered))
    for spec in (n for n in names if ":" in n):
        from harness.loading import _import_file, _import_module

        location, _, attr = spec.rpartition(":")
        module = _import_file(location) if location.endswith(".py") or "/" in location else _import_module(location)
        if not hasattr(module, attr):
            raise UsageError(f"{location} has no attribute {attr!r}")
        out.extend(catalog.with_discovered(c)[0] if c.packages else c
                   for c in catalog._as_catalogs(getattr(module, attr), spec))
    return out


def select_entries(catalogs, only=None, include_slow: bool = True):
    from passes import catalog

    entries = catalog.all_entries(catalogs)
    if only:
        entries = [e for e in entries if any(fnmatch.fnmatchcase(e.name, pat) for pat in only)]
        if not entries:
            raise UsageError(f"--only {' '.join(only)} matches no catalog entry")
    skipped_slow = [e for e in entries if e.slow and not include_slow and e.runnable]
    runnable = [e for e in entries if e.runnable and (include_slow or not e.slow)]
    return entries, runnable, skipped_slow


def catalog_section(entries, runnable, applied: dict, skipped_slow) -> dict:
    from harness.cmd_passes import entry_json

    ran = {name for name, graphs in applied.items() if graphs}
    return {
        "entries": len(entries),
        "runnable": len(runnable),
        "ran": len(ran),
        "unavailable": [{"name": e.name, "spec": e.spec, "reason": e.unavailable} for e in entries if e.unavailable],
        "not_run": [{"name": e.name, "reason": "no selected graph applies (stage/graphs: "
                     f"{e.stage} {', '.join(e.applies_to) or 'float graphs'})"}
                    for e in runnable if not applied.get(e.name)]
                   + [{"name": e.name, "reason": "slow: left out of this profile"} for e in skipped_slow],
        "ran_on": {name: graphs for name, graphs in applied.items() if graphs},
        "definitions": [entry_json(e) for e in entries if not e.unavailable],
    }


def run_entry(e, cases, config, progress) -> None:
    """One catalog entry on its cases; checks that do not apply to its construction become skips."""
    from dataclasses import replace

    from harness.results import IR_CHECK_IDS, Status, result
    from harness.runner import check_all

    skipped = e.skipped_checks
    if not skipped:
        check_all([e.loaded()], cases, config, progress=progress)
        return
    wanted = frozenset(config.checks if config.checks is not None else IR_CHECK_IDS) - set(skipped)

    def with_skips(done, total, pass_name, graph, rs):
        rs = list(rs) + [result(pass_name, graph, check, Status.SKIP, why) for check, why in skipped.items()]
        progress(done, total, pass_name, graph, rs)

    check_all([e.loaded()], cases, replace(config, checks=wanted), progress=with_skips)


def annotate_known(results, entries, specs_by_name) -> None:
    """Mark violations the catalog expects with its reason (the baseline decides what fails)."""
    by_name = {e.name: e for e in entries}
    for r in results:
        e = by_name.get(r.pass_name)
        spec = specs_by_name.get(r.graph)
        if e is None or spec is None or not r.is_violation(strict=True):
            continue
        k = e.known_for(r.check, r.graph, spec.tags | {spec.source})
        if k is not None:
            r.details = {**r.details, "known": {"reason": k.reason, "upstream": k.upstream, "kind": k.kind}}


def run(args) -> int:
    from harness import baseline as bl
    from harness import report_json, sources
    from harness.catalog_profiles import available_graphs, profile
    from harness.pipeline import PIPELINE_CHECKS, resolve_pipeline, verify_each
    from harness.runner import RunConfig
    from harness.session import Session

    prof = profile(args.profile)
    base = bl.load(args.baseline) if getattr(args, "baseline", None) else None  # bad baseline: exit 2 before any work
    catalogs = resolve_catalogs(args.catalog or list(prof.catalogs) or None)
    entries, runnable, skipped_slow = select_entries(catalogs, args.only, prof.include_slow)
    if args.graphs:
        specs, notes = sources.select(args.graphs, args.count, args.seed), []
    else:
        specs, notes = available_graphs(prof.graphs, args.count or prof.random_count, args.seed)
    pipeline_names = [] if args.no_pipelines else (args.pipelines or ([] if args.catalog or args.only
                                                                       else list(prof.pipelines)))
    pipelines = [resolve_pipeline(n) for n in pipeline_names]
    partitioner_names = [] if args.no_partitioners else (args.partitioners or (
        [] if args.catalog or args.only else list(prof.partitioners)))
    report_dir = report_json.ensure_writable(args.report)
    configure_cache(args)
    from harness import isolation

    config = RunConfig(timeout=args.timeout, seed=args.seed,
                       isolate=not getattr(args, "no_isolation", False) and isolation.available())
    applied = {e.name: [s.name for s in specs if e.applies(s)] for e in runnable}
    if getattr(args, "shard", None):  # contiguous block I of N of the sorted (entry, graph) pairs
        pairs = sorted((name, g) for name, graphs in applied.items() for g in graphs)
        lo, hi = args.shard.bounds(len(pairs)) if hasattr(args.shard, "bounds") else (0, len(pairs))
        mine = set(pairs[lo:hi])
        applied = {name: [g for g in graphs if (name, g) in mine] for name, graphs in applied.items()}
        pipeline_names = pipeline_names if args.shard.index == 1 else []
        pipelines = pipelines if args.shard.index == 1 else []
        partitioner_names = partitioner_names if args.shard.index == 1 else []
    by_name = {s.name: s for s in specs}
    session = Session(report_dir=report_dir, strict=args.strict, quiet=args.quiet,
                      resume=getattr(args, "resume", False), configuration={
        "command": "run", "profile": prof.name, "catalogs": [c.name for c in catalogs],
        "entries": [e.name for e in runnable], "pipelines": [p.name for p in pipelines],
        "partitioners": partitioner_names,
        "graphs": [s.name for s in specs], "graph_selection": args.graphs or list(prof.graphs),
        "seed": args.seed, "count": args.count, "timeout": args.timeout, "strict": args.strict,
        "baseline": getattr(args, "baseline", None), "shard": str(args.shard) if getattr(args, "shard", None) else None,
    })
    for note in notes:
        session.note(note)
    gate_box: dict = {}

    def body(s: Session) -> None:
        needed = [sp for sp in specs if pipelines or partitioner_names or any(sp.name in g for g in applied.values())]
        cases = {c.name: c for c in s.load_cases(needed)}
        total = (sum(len(g) for g in applied.values()) + sum(len(p.steps) for p in pipelines) * len(cases)
                 + len(partitioner_names) * len(cases))
        done = [0]

        def progress(_d, _t, pass_name, graph, rs):
            done[0] += 1
            s.results.extend(rs)
            s.progress(done[0], total, pass_name, graph, rs)

        for e in runnable:
            chosen = [cases[g] for g in applied[e.name] if g in cases]
            if chosen:
                run_entry(e, chosen, replace(config, skip=s.done_pairs), progress)
        for p in pipelines:
            pconfig = RunConfig(stage=p.stage, timeout=args.timeout, seed=args.seed, checks=PIPELINE_CHECKS)
            for case in cases.values():
                verify_each(p, case, pconfig,
                            on_step=lambda rep, case=case, p=p: progress(0, 0, rep.results[0].pass_name
                                                                         if rep.results else f"{p.name}/{rep.step}",
                                                                         case.name, rep.results))

        if partitioner_names:
            from harness.partitioners import PARTITIONERS, check_backend_partitioner

            for name in partitioner_names:
                for case in cases.values():
                    rs = check_backend_partitioner(PARTITIONERS[name], case).results
                    progress(0, 0, f"partitioner.{name}", case.name, rs)

    def extra() -> dict:
        annotate_known(session.results, entries, by_name)
        doc = {"catalog": catalog_section(entries, runnable, applied, skipped_slow)}
        if base is not None:
            g = bl.gate(session.results, base, args.strict, args.baseline)
            session.waived = g.waived()
            gate_box["gate"] = g
            doc["gate"] = g.to_json()
        return doc

    status = session.run(body, extra=extra)
    section = catalog_section(entries, runnable, applied, skipped_slow)
    if not args.quiet:
        print(f"passgate: catalog: {section['entries']} entries, {section['runnable']} runnable, "
              f"{section['ran']} ran, {len(section['unavailable'])} unavailable (see `passgate passes`)",
              file=sys.stdout)
    if "gate" in gate_box:
        print(bl.render(gate_box["gate"]), file=sys.stdout if not args.quiet else sys.stderr)
    return status
