"""``passgate corpus``: distill the generated graphs the gate runs, or print one.

``passgate corpus distill`` fuzzes the catalog (or reads ``--from`` folders
a ``passgate fuzz --corpus DIR`` wrote), and writes the fewest graphs that
keep every entry's branch coverage and change atoms beyond the baseline
graphs (:mod:`harness.fuzz.distill`: greedy set cover) to ``fixtures/corpus``
as plain torch programs, registered as the ``corpus`` graph source.
``passgate corpus show NAME`` prints a corpus graph, or any fuzz draw by its
name (``random_s0_012_m3``: the name is the recipe).
"""

from __future__ import annotations

import sys

from harness.core.errors import UsageError
from harness.core.kinds import ExitCode

__all__ = ["DEFAULT_OUT", "DEFAULT_BUDGET", "add_parser", "run", "render_distilled"]

DEFAULT_OUT = "fixtures/corpus"
DEFAULT_BUDGET = 300.0


def add_parser(sub) -> None:
    from harness.cli.check import positive_float, positive_int
    from harness.cli.fuzz import add_quantize_argument

    p = sub.add_parser("corpus", help="distill the generated-graph corpus the gate runs, or print one of its graphs",
                       description=__doc__.split("\n\n")[1].replace("\n", " "))
    inner = p.add_subparsers(dest="corpus_command", metavar="ACTION", required=True, parser_class=type(p))
    d = inner.add_parser("distill", help="fuzz and/or read --from folders; write the smallest covering corpus")
    d.add_argument("--from", dest="from_dirs", nargs="+", default=[], metavar="DIR",
                   help="folders of kept graphs (`passgate fuzz --corpus DIR`) to distill from")
    d.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"the corpus folder (default {DEFAULT_OUT}); "
                   "its current graphs are candidates too, and graphs the new cover drops are removed")
    d.add_argument("--catalog", nargs="+", metavar="NAME", help="catalogs whose entries steer (default: all)")
    d.add_argument("--only", nargs="+", metavar="PATTERN", help="only entries matching a glob")
    d.add_argument("--budget", type=float, metavar="SECONDS",
                   help=f"seconds to fuzz for new candidates (default {DEFAULT_BUDGET:g}, 0 with --from)")
    d.add_argument("--draws", dest="max_draws", type=positive_int, metavar="N", help="stop fuzzing after N draws")
    d.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    d.add_argument("-j", "--workers", type=positive_int, default=1, metavar="N", help="draws measured N at a time")
    add_quantize_argument(d)
    d.add_argument("--baseline-graphs", nargs="*", metavar="NAME",
                   help="graphs the gate runs anyway: what they cover needs no corpus graph (default builtin, and "
                        "quantized when draws are quantized)")
    d.add_argument("--max-graphs", type=positive_int, metavar="N", help="at most N graphs (the cover may then "
                   "leave elements uncovered; the count is printed)")
    d.add_argument("--save-candidates", metavar="DIR", help="also write every graph the fuzzing kept here (a "
                   "folder a later distill can take --from)")
    d.add_argument("--timeout", type=positive_float, default=20.0, help="seconds one pass call may take")
    d.add_argument("--no-isolation", action="store_true", help="measure in this process (a debugger)")
    d.add_argument("--cache-dir", metavar="DIR", help="lowered-graph cache (default $PASSGATE_CACHE_DIR)")
    d.add_argument("--no-cache", action="store_true", help="write no cache")
    d.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    a = inner.add_parser("adopt", help="copy the candidate graphs that killed mutants into the corpus",
                         description="Copy into the corpus (unchanged) the graphs of --from that a mutation report "
                                     "names as having detected a mutant (`passgate mutate --from OLD --graphs DIR` "
                                     "writes one), with their kills in index.json; no other graph is copied. "
                                     "Exit 0; 2 on an unreadable report or folder.")
    a.add_argument("--from", dest="from_dir", required=True, metavar="DIR", help="the candidate graphs' folder")
    a.add_argument("--mutation", required=True, metavar="MUTATION_JSON",
                   help="a mutation report whose campaign judged those graphs")
    a.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"the corpus folder (default {DEFAULT_OUT})")
    s = inner.add_parser("show", help="print a corpus graph, or a fuzz draw by name, as plain torch code")
    s.add_argument("name", metavar="NAME")
    s.add_argument("--from", dest="from_dirs", nargs="+", default=[DEFAULT_OUT], metavar="DIR",
                   help=f"corpus folders to look in (default {DEFAULT_OUT})")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.corpus_command == "show":
        from harness.fuzz.corpus import show

        print(show(args.name, args.from_dirs))
        return ExitCode.OK
    if args.corpus_command == "adopt":
        return _adopt(args)
    return _distill(args)


def _adopt(args) -> int:
    from pathlib import Path

    from harness.mutate.adopt import adopt
    from harness.mutate.hunt import read_report

    if not Path(args.from_dir).is_dir():
        raise UsageError(f"--from folder not found: {args.from_dir}")
    kills = adopt(Path(args.from_dir), read_report(args.mutation), Path(args.out))
    for name, per_entry in sorted(kills.items()):
        print(f"  {name}: kills {sum(per_entry.values())} ({', '.join(f'{e} {n}' for e, n in sorted(per_entry.items()))})")
    print(f"adopted {len(kills)} graph(s) into {args.out}")
    return ExitCode.OK


def _distill(args) -> int:
    from pathlib import Path

    from harness.cli.check import configure_cache
    from harness.core.config import RunConfig
    from harness.fuzz.distill import distill
    from harness.fuzz.loop import Fuzzer
    from harness.fuzz.targets import flows_for, for_catalogs, on_random_graphs
    from harness.run import forking

    budget = args.budget if args.budget is not None else (0.0 if args.from_dirs else DEFAULT_BUDGET)
    if budget < 0:
        raise UsageError(f"--budget must be 0 or more, got {budget:g}")
    for folder in args.from_dirs:
        if not Path(folder).is_dir():
            raise UsageError(f"--from folder not found: {folder}")
    names = None if not args.catalog or "all" in args.catalog else args.catalog
    selected = for_catalogs(names, args.only)[0]
    flows = flows_for(args.quantize, selected, default_all=True)
    targets, never = on_random_graphs(selected, quantized=bool(flows))
    if not targets:
        raise UsageError("no selected catalog entry runs on random graphs")
    baseline = args.baseline_graphs if args.baseline_graphs is not None else (
        ["builtin", "quantized"] if flows else ["builtin"])
    configure_cache(args)
    isolate = not args.no_isolation and forking.available()
    fz = Fuzzer(targets, args.seed, RunConfig(timeout=args.timeout, seed=args.seed), args.workers, isolate,
                flows=flows)

    def note(message: str) -> None:
        if not args.quiet:
            print(f"passgate: {message}", file=sys.stderr, flush=True)

    note(f"distilling over {len(targets)} entries ({len(never)} run on "
         f"{'named' if flows else 'quantized or named'} graphs only)"
         f"{', draws quantized by ' + ' and '.join(flows) + ' in turn' if flows else ''}"
         f"{f', fuzzing {budget:g} s' if budget else ''}")
    got = distill(fz, Path(args.out), budget, tuple(args.from_dirs), tuple(baseline), args.max_draws,
                  args.max_graphs, note, Path(args.save_candidates) if args.save_candidates else None)
    print(render_distilled(got))
    return ExitCode.OK


def render_distilled(got) -> str:
    """Per catalog: branches, taken by the baseline, by every candidate, by the corpus; then the graphs."""
    from harness.fuzz.distill import by_catalog

    catalogs = by_catalog(got.rows)
    width = max([len("catalog")] + [len(c) for c in catalogs])

    def cell(part: int, total: int) -> str:
        return f"{part} ({100.0 * part / total:.1f}%)" if total else "-"

    lines = [f"{'catalog':<{width}}  {'branches':>8}  {'baseline':>14}  {'candidates':>14}  {'corpus':>14}"]
    for c, n in catalogs.items():
        lines.append(f"{c:<{width}}  {n['branches']:>8}  {cell(n['baseline'], n['branches']):>14}  "
                     f"{cell(n['candidates'], n['branches']):>14}  {cell(n['corpus'], n['branches']):>14}")
    for e in got.entries:
        lines.append(f"  {e.name}  {e.info.get('statements', '?')} statements"
                     f"{', dynamic' if e.info.get('dynamic') else ''}  (drawn as {e.origin})")
    lines.append(f"corpus: {len(got.entries)} graphs from {got.candidates} candidates ({got.draws} draws in all), "
                 f"written to {got.folder}; {got.uncovered} element(s) left uncovered; {got.seconds:.0f} s")
    return "\n".join(lines)
