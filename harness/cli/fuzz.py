"""``passgate fuzz``: draw random graphs that make a pass (or every catalog entry) do its work, and check them.

The engine is :mod:`harness.fuzz` (its package docstring says what of
hypothesis and HypoFuzz it uses, and why); this module is the command line.
"""

from __future__ import annotations

import sys

from harness.core.errors import UsageError
from harness.core.kinds import Semantics

__all__ = ["DEFAULT_BUDGET", "DEFAULT_TIMEOUT", "CONTEXT_BUDGET", "CONTEXT_DRAWS", "add_parser", "run"]

DEFAULT_BUDGET = 45.0
DEFAULT_TIMEOUT = 20.0
CONTEXT_BUDGET = 180.0  # --contexts: seconds per pass
CONTEXT_DRAWS = 120  # --contexts: draws per pass


def add_parser(sub) -> None:
    from harness.cli.check import DEFAULT_REPORT_DIR, positive_float, positive_int

    p = sub.add_parser(
        "fuzz",
        help="coverage-guided random graphs for a pass (or catalog entries); every kept graph checked",
        description=(
            "Draw random graphs (the same generator as --graphs random), run the pass on each under coverage.py "
            "and keep the graphs that reach a branch of the pass's own source no earlier draw reached, or make "
            "it change the program in a new way; about half of the later draws mutate kept graphs. Every check "
            "runs on every kept graph, failures are shrunk to repro_*.py scripts as `passgate check` does, and "
            "a closing table gives per pass the branch coverage before (the baseline graphs) and after. Same "
            "seed, same draws and the same kept graphs (the budget only decides when to stop). Exit 1 on a "
            "violation."
        ),
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--pass", dest="pass_spec", metavar="SPEC",
                      help="package.module:Name or path/to/file.py:Name (class, instance or function)")
    what.add_argument("--catalog", nargs="+", metavar="NAME",
                      help="fuzz every runnable entry of these catalogs (`all`: every catalog) that runs on "
                           "random graphs")
    p.add_argument("--only", nargs="+", metavar="PATTERN", help="with --catalog: only entries matching a glob")
    p.add_argument("--contexts", action="store_true",
                   help="instead of random programs: put every op the pass rewrites (measured on the baseline "
                        "graphs) in every context of a systematic vocabulary (users, producers, shapes, dtypes, "
                        "argument forms, quantization, neighbours: docs/contexts.md); keep graphs that reach a new "
                        "arc or verdict pattern, shrink failures the plain graph does not show")
    p.add_argument("--mutants", metavar="MUTATION_JSON",
                   help="with --contexts: also keep a drawn graph that kills a mutant the campaign of this "
                        "mutation report (passgate mutate) let survive, judged as the campaign judges")
    p.add_argument("--budget", type=positive_float, default=None, metavar="SECONDS",
                   help=f"seconds to fuzz, checks of kept graphs included (default {DEFAULT_BUDGET:g}); the "
                        "warm-up and the baseline graphs come before, shrinking after. With --contexts: seconds "
                        f"per pass (default {CONTEXT_BUDGET:g})")
    p.add_argument("--draws", dest="max_draws", type=positive_int, metavar="N",
                   help="stop after N draws even if budget is left (an exact, machine-independent run); with "
                        f"--contexts: draws per pass (default {CONTEXT_DRAWS})")
    p.add_argument("--seed", type=int, default=0, help="seed of the draws and of numeric input draws (default 0)")
    p.add_argument("--corpus", metavar="DIR", help="write the kept graphs here as plain torch programs "
                   "(default: REPORT/corpus)")
    p.add_argument("-j", "--workers", type=positive_int, default=1, metavar="N",
                   help="draws measured (and pairs checked) N at a time; the draws kept do not depend on N")
    p.add_argument("--report", default=DEFAULT_REPORT_DIR, metavar="DIR",
                   help=f"folder for results.json and the reproducers (default {DEFAULT_REPORT_DIR})")
    p.add_argument("--stage", choices=("export", "edge"), help="with --pass: the stage it runs at")
    p.add_argument("--semantics", choices=[s.value for s in Semantics],
                   help="with --pass: 'changing' skips numerics ('observing': see passgate check --help)")
    add_quantize_argument(p)
    p.add_argument("--baseline-graphs", nargs="*", metavar="NAME",
                   help="graphs whose coverage is the 'before' column (default builtin, and quantized when draws "
                        "are quantized; none: no names)")
    p.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT,
                   help=f"seconds one pass call may take (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--strict", action="store_true", help="should-level checks count as violations too")
    p.add_argument("--no-mutate", action="store_true", help="fresh draws only (pure selection, no steering)")
    p.add_argument("--no-shrink", action="store_true", help="do not shrink failures or write reproducers")
    p.add_argument("--shrink-time", type=positive_float, default=30.0, metavar="SECONDS",
                   help="time one shrink may take (default 30; all shrinks: twice that)")
    p.add_argument("--no-isolation", action="store_true", help="measure and check in this process (a debugger)")
    p.add_argument("--cache-dir", metavar="DIR", help="lowered-graph cache (default $PASSGATE_CACHE_DIR)")
    p.add_argument("--no-cache", action="store_true", help="write no cache")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines or tables")
    p.set_defaults(run=run)


def add_quantize_argument(p) -> None:
    """``--quantize FLOW...`` (fuzz, corpus distill)."""
    p.add_argument("--quantize", nargs="+", metavar="FLOW",
                   help="PT2E flows fresh draws take turns going through, after a float draw (registered under "
                        "passgate.quantizers: xnnpack, vulkan; `none`: float draws only). Default: every flow when a "
                        "selected catalog entry runs on quantized graphs, none for --pass")


def targets_of(args) -> tuple[list, tuple[str, ...]]:
    """The targets ``--pass`` / ``--catalog [--only]`` select that random graphs reach (UsageError if none), and
    the quantization flows draws go through."""
    from harness.fuzz.targets import flows_for, for_catalogs, for_pass, on_random_graphs

    if args.only and not args.catalog:
        raise UsageError("--only needs --catalog")
    if args.catalog and (args.stage or args.semantics):
        raise UsageError("--stage and --semantics go with --pass (catalog entries carry their own)")
    if args.pass_spec:
        targets = [for_pass(args.pass_spec, args.stage, args.semantics)]
        return targets, flows_for(args.quantize, targets, default_all=False)
    names = None if "all" in args.catalog else args.catalog
    targets, _unavailable = for_catalogs(names, args.only)
    flows = flows_for(args.quantize, targets, default_all=True)
    runs, never = on_random_graphs(targets, quantized=bool(flows))
    if not runs:
        raise UsageError("no selected catalog entry runs on random graphs (they are for named graphs, or for "
                         "quantized graphs and --quantize none was given)")
    if never and not args.quiet:
        print(f"passgate: {len(never)} entr{'y' if len(never) == 1 else 'ies'} left out: they run on "
              f"{'named' if flows else 'quantized or named'} graphs only, which random graphs are not",
              file=sys.stderr)
    return runs, flows


def run(args) -> int:
    from pathlib import Path

    targets, flows = targets_of(args)  # a mistyped SPEC or flow is answered before anything else
    if args.mutants and not args.contexts:
        raise UsageError("--mutants goes with --contexts")
    if args.contexts:
        return run_contexts(args, targets, flows, _hunt(args, targets))
    if args.budget is None:
        args.budget = DEFAULT_BUDGET
    baseline = args.baseline_graphs if args.baseline_graphs is not None else (
        ["builtin", "quantized"] if flows else ["builtin"])
    from harness.cli.check import configure_cache
    from harness.core.config import RunConfig, configuration, pass_record
    from harness.fuzz.campaign import Campaign, render_table
    from harness.fuzz.loop import Fuzzer
    from harness.report import results_json as report_json
    from harness.run import forking
    from harness.run.session import Session

    report_dir = report_json.ensure_writable(args.report)
    configure_cache(args)
    isolate = not args.no_isolation and forking.available()
    config = RunConfig(stage=args.stage, semantics=args.semantics, timeout=args.timeout, seed=args.seed,
                       isolate=isolate, workers=args.workers)
    fuzzer = Fuzzer(targets, args.seed, config, args.workers, isolate, mutate=not args.no_mutate, flows=flows)
    campaign = Campaign(fuzzer, args.budget, config, tuple(baseline), args.max_draws, strict=args.strict,
                        corpus_dir=Path(args.corpus) if args.corpus else Path(report_dir) / "corpus",
                        shrink=not args.no_shrink, shrink_seconds=args.shrink_time)
    record = {"passes": [pass_record(targets[0].loaded, args.stage, args.semantics)]} if args.pass_spec else {
        "catalogs": sorted({t.catalog for t in targets}), "entries": [t.name for t in targets]}
    session = Session(report_dir=report_dir, strict=args.strict, quiet=args.quiet, configuration=configuration(
        "fuzz", **record, graphs=[], seed=args.seed, timeout=args.timeout, strict=args.strict, budget=args.budget,
        max_draws=args.max_draws, baseline_graphs=list(baseline), mutate=not args.no_mutate, quantize=list(flows)))
    box: dict = {}

    def extra() -> dict:
        box["fuzz"] = campaign.section(session.results)
        return {"fuzz": box["fuzz"]}

    status = session.run(campaign.body, extra=extra)
    if not args.quiet and "fuzz" in box:
        print(render_table(box["fuzz"]))
    return status


def _hunt(args, targets: list):
    """``keep_reason(target, graph)`` of ``--mutants``: the graph kills a survivor of that campaign (None without it)."""
    if not args.mutants:
        return None
    from harness.core.config import RunConfig
    from harness.mutate.hunt import Hunt, load_survivors
    from harness.run import forking

    hunt = Hunt(load_survivors(args.mutants, targets), RunConfig(seed=args.seed),
                isolate=not args.no_isolation and forking.available())
    return lambda target, graph: hunt.reason(target, graph.program)


def run_contexts(args, targets: list, flows: tuple, keep_reason=None) -> int:
    """``passgate fuzz --contexts``: :mod:`harness.fuzz.contexts_campaign`; ``keep_reason(target, graph) -> str |
    None`` keeps a graph for a reason of the caller's (the mutation engine: it kills a surviving mutant)."""
    from pathlib import Path

    from harness.cli.check import configure_cache
    from harness.core.config import RunConfig, configuration, pass_record
    from harness.fuzz.contexts_campaign import ContextCampaign, render_contexts_table
    from harness.report import results_json as report_json
    from harness.run import forking
    from harness.run.session import Session

    report_dir = report_json.ensure_writable(args.report)
    configure_cache(args)
    isolate = not args.no_isolation and forking.available()
    seconds = args.budget if args.budget is not None else CONTEXT_BUDGET
    draws = args.max_draws or CONTEXT_DRAWS
    baseline = tuple(args.baseline_graphs if args.baseline_graphs is not None else ["builtin"])
    config = RunConfig(stage=args.stage, semantics=args.semantics, timeout=args.timeout, seed=args.seed,
                       isolate=isolate, workers=args.workers)
    campaign = ContextCampaign(targets, config, args.seed, seconds, draws, flows, baseline, args.strict, isolate,
                               shrink=not args.no_shrink, shrink_seconds=args.shrink_time,
                               corpus_dir=Path(args.corpus) if args.corpus else Path(report_dir) / "contexts",
                               keep_reason=keep_reason)
    record = {"passes": [pass_record(targets[0].loaded, args.stage, args.semantics)]} if args.pass_spec else {
        "catalogs": sorted({t.catalog for t in targets}), "entries": [t.name for t in targets]}
    session = Session(report_dir=report_dir, strict=args.strict, quiet=args.quiet, configuration=configuration(
        "fuzz", **record, graphs=[], seed=args.seed, timeout=args.timeout, strict=args.strict, contexts=True,
        budget=seconds, max_draws=draws, baseline_graphs=list(baseline), quantize=list(flows)))
    box: dict = {}

    def extra() -> dict:
        box["contexts"] = campaign.section(session.results)
        return {"contexts": box["contexts"]}

    status = session.run(campaign.body, extra=extra)
    if not args.quiet and "contexts" in box:
        print(render_contexts_table(box["contexts"]))
    return status
