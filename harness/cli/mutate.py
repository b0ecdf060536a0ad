"""``passgate mutate``: the mutation score of the suite's graphs against the passes it certifies.

The engine is :mod:`harness.mutate` (its modules say why mutants are made on
the AST and swapped in as code objects in forked children, never written to
the installed package); this module is the command line.
"""

from __future__ import annotations

import sys

from harness.core.errors import UsageError
from harness.core.kinds import ExitCode

__all__ = ["DEFAULT_REPORT", "add_parser", "run"]

DEFAULT_REPORT = "reports/generated/mutation"


def add_parser(sub) -> None:
    from harness.cli.check import positive_float, positive_int
    from harness.mutate.campaign import Settings
    from harness.mutate.operators import OPERATORS

    d = Settings()
    p = sub.add_parser(
        "mutate",
        help="mutation score: break catalog passes in small ways, count what the graphs catch",
        description=(
            "Draw catalog entries (round-robin over catalogs) and mutants of their own source files (operators: "
            f"{', '.join(OPERATORS)}), run each entry unmutated on its cases under coverage.py, then each mutant in a "
            "forked child on the cases that reach its line, until the gate (the unmutated run as its baseline, "
            "must-level checks) fails. Writes mutation.json and mutation.md (score per catalog, entry and "
            "operator; survivors with their change and the cases that reached them). Same seed, same sample. "
            "Nothing is written to the installed packages. Exit 0 (1 with --fail-under when the score is lower, "
            "2 on bad input)."
        ),
    )
    p.add_argument("--catalog", nargs="+", metavar="NAME", default=["all"],
                   help="catalogs to draw entries from (default all)")
    p.add_argument("--only", nargs="+", metavar="PATTERN", help="only entries matching a glob")
    p.add_argument("--graphs", nargs="+", metavar="SOURCE",
                   help="graph sources, case names or corpus folders (default: the profile's graphs)")
    p.add_argument("--profile", default="standard", help="profile whose graphs are used (default standard)")
    p.add_argument("--sample", type=positive_int, default=d.sample, metavar="N",
                   help=f"mutants drawn (default {d.sample})")
    p.add_argument("--entries", type=positive_int, default=d.entries, metavar="K",
                   help=f"entries drawn (default {d.entries})")
    p.add_argument("--seed", type=int, default=d.seed, help=f"seed of both draws (default {d.seed})")
    p.add_argument("--operators", nargs="+", choices=sorted(OPERATORS), metavar="OP",
                   help="mutation operators to use (default all)")
    p.add_argument("--timeout", type=positive_float, default=d.timeout, metavar="SECONDS",
                   help=f"floor of one pass call's deadline (default {d.timeout:g}; each entry gets at least 5x its "
                        "slowest unmutated call)")
    p.add_argument("-j", "--workers", type=positive_int, default=1, metavar="N", help="children at once (default 1)")
    p.add_argument("--report", default=DEFAULT_REPORT, metavar="DIR", help=f"output folder (default {DEFAULT_REPORT})")
    p.add_argument("--fail-under", type=float, metavar="PCT", help="exit 1 when the score is below PCT")
    p.add_argument("--from", dest="earlier", metavar="MUTATION_JSON",
                   help="extend an earlier campaign with the graphs of --graphs (required with it): its sample is "
                        "drawn again and only its undetected mutants are judged, on the added graphs alone")
    p.add_argument("--list", action="store_true", help="list the drawn entries and mutants, run nothing")
    p.add_argument("--no-isolation", action="store_true", help="judge in this process, one after the other (a debugger)")
    p.add_argument("--cache-dir", metavar="DIR", help="lowered-graph cache (default $PASSGATE_CACHE_DIR)")
    p.add_argument("--no-cache", action="store_true", help="write no cache")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    p.set_defaults(run=run)


def _targets(args) -> list:
    from harness.fuzz.targets import for_catalogs

    names = None if "all" in args.catalog else args.catalog
    targets, _unavailable = for_catalogs(names, args.only)
    if not targets:
        raise UsageError("no runnable catalog entry matches --catalog / --only")
    return targets


def _specs(args) -> list:
    """The cases: ``--graphs`` sources, case names and corpus folders (a ``passgate fuzz --corpus`` output), or the
    profile's graphs."""
    from pathlib import Path

    from harness.fuzz.corpus import load_dir
    from harness.graphs import sources
    from harness.run.profiles import available_graphs, profile

    if args.graphs:
        folders = [g for g in args.graphs if Path(g).is_dir()]
        named = [g for g in args.graphs if g not in folders]
        specs = [s for f in folders for s in load_dir(Path(f), source="corpus")]
        if folders and not specs:
            raise UsageError(f"no graph files in {', '.join(folders)}")
        return (sources.select(named) if named else []) + specs
    specs, _notes = available_graphs(profile(args.profile).graphs, 0, args.seed)
    return specs


def run(args) -> int:
    import logging
    from dataclasses import replace

    from harness.cli.check import configure_cache
    from harness.core.config import RunConfig
    from harness.mutate.campaign import Settings
    from harness.mutate.driver import run_campaign
    from harness.mutate.report import write
    from harness.mutate.sampling import sample_entries, sample_mutants
    from harness.run import forking

    settings = replace(Settings(), sample=args.sample, entries=args.entries, seed=args.seed,
                       operators=tuple(args.operators or ()), timeout=args.timeout)
    targets = _targets(args)
    if args.list:
        chosen = sample_entries(targets, settings.entries, settings.seed)
        for t, m in sample_mutants(chosen, settings.sample, settings.seed, settings.operators):
            print(f"{t.name}\t{m.id}\t{m.site.operator}\t{m.diff()}")
        return ExitCode.OK
    if args.earlier and not args.graphs:
        raise UsageError("--from needs --graphs: the graphs added to the earlier campaign")
    specs = _specs(args)
    configure_cache(args)
    # a mutant often makes fake-tensor propagation raise, which torch logs with its whole traceback before raising;
    # the raised error is already the verdict (a ``runs`` failure), the log only buries the progress lines
    logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)
    note = (lambda s: None) if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    config = RunConfig(seed=args.seed)
    isolate = not args.no_isolation and forking.available()
    box: dict = {}
    if args.earlier:
        from harness.mutate.driver import extend_campaign
        from harness.mutate.hunt import read_report

        camp = extend_campaign(read_report(args.earlier), targets, specs, config, workers=args.workers,
                               isolate=isolate, note=note)
        return _finish(camp, args)
    try:
        camp = run_campaign(targets, specs, settings, config, workers=args.workers, isolate=isolate, note=note,
                            saved=lambda c: (box.__setitem__("camp", c), write(c, args.report)))
    except KeyboardInterrupt:
        if "camp" in box:
            write(box["camp"], args.report)
            print(f"passgate mutate: interrupted; the mutants judged so far are in {args.report}", file=sys.stderr)
        return ExitCode.INTERRUPTED
    return _finish(camp, args)


def _finish(camp, args) -> int:
    from harness.mutate.report import document, render, write

    path = write(camp, args.report)
    doc = document(camp)
    if not args.quiet:
        print(render(doc, survivors_shown=0).split("## By entry")[0].rstrip())
        print(f"\nreport: {path}")
    s = doc["score"]["score"]
    if args.fail_under is not None and (s is None or s < args.fail_under):
        return ExitCode.VIOLATION
    return ExitCode.OK
