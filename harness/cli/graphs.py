"""``passgate graphs``: list graph cases, or print one case's program.

With no source, every source and its cases are listed (names and
descriptions, nothing lowered: a quick look at what ``--graphs`` can name).
``--source``/``--graphs NAME...`` takes sources or case names, as ``--graphs``
does everywhere else, and lists those cases lowered: ops and inputs.
``--show NAME`` prints one case as a runnable plain torch program (built-in,
zoo, quantized, corpus, random and fuzz names alike): saved to a file and run
with python it builds the model, exports it and runs it on its inputs.

For random graphs the listing is also the generator's scorecard: every
graph is drawn, exported and lowered afresh (never from the cache, so the
rate is honest), and the command prints the share that export and lower
(the issue asks for 95% or more), the distinct ops they contain and graphs
per second. Exit status 1 when a listed case fails to export or lower.
"""

from __future__ import annotations

import re
import sys
import time

from harness.core.errors import UsageError
from harness.core.kinds import ExitCode

__all__ = ["SOURCES", "RANDOM_NAME", "add_parser", "run", "show", "known_sources", "list_overview", "list_static",
           "list_random", "list_cases"]

SOURCES = ("random", "zoo", "builtin", "quantized", "all")  # passgate's own; known_sources() adds registered ones
RANDOM_NAME = re.compile(r"^random_s(-?\d+)_(\d+)$")


def add_parser(sub) -> None:
    from harness.cli.check import positive_int

    p = sub.add_parser(
        "graphs",
        help="list graph cases (name, source, ops, inputs) or print one case's program",
        description=(
            "With no source, list every graph source and its cases. With --source/--graphs, list the "
            "cases of those sources (or the named cases) lowered, with their op count and inputs; for "
            "random every graph is drawn, exported and lowered afresh, and the share that lower, the "
            "distinct ops and graphs per second are printed. --show NAME prints one case as a runnable "
            "plain torch program (builds the model, exports it, runs it on its example inputs)."
        ),
    )
    p.add_argument("--source", "--graphs", dest="source", nargs="+", metavar="NAME",
                   help="graph sources (builtin, zoo, quantized, corpus, random, all) or case names; "
                        "default: an overview of every source")
    p.add_argument("--count", type=positive_int, help="how many random graphs (default 25)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random graphs (default 0)")
    p.add_argument("--show", metavar="NAME", help="print the program of case NAME instead of listing")
    p.add_argument("--cache-dir", metavar="DIR", help="lowered-graph cache for the static sources")
    p.add_argument("--no-cache", action="store_true", help="lower static sources afresh; write no cache")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=run)


def known_sources() -> tuple[str, ...]:
    """Every name ``--source`` takes as a source: the registered static sources, random, all."""
    from harness.graphs import sources

    return (*sources.static_sources(), "random", "all")


def run(args) -> int:
    if args.show:
        print(show(args.show), end="")
        return ExitCode.OK
    from harness.graphs import cache, sources

    count = args.count or sources.DEFAULT_RANDOM_COUNT
    if not args.source:
        return list_overview(count, args.seed)
    static, known = sources.static_sources(), known_sources()
    named = [n for n in args.source if n not in known]
    if named:
        cases = sources.known_static()
        unknown = [n for n in named if n not in cases and not RANDOM_NAME.match(n)]
        if unknown:
            raise UsageError(f"unknown graph source {unknown[0]!r}: expected one of {', '.join(known)} "
                             f"or a case name (see `passgate graphs`)")
    cache.configure(args.cache_dir, disabled=args.no_cache)
    status = ExitCode.OK
    for source in args.source:
        if source == "random":
            status |= list_random(count, args.seed, args.quiet)
        elif source == "all":
            for each in static:
                if sources.static_specs(each):
                    status |= list_static(each, args.quiet)
            status |= list_random(count, args.seed, args.quiet)
        elif source in static:
            status |= list_static(source, args.quiet)
    if named:
        status |= list_cases(named, args.quiet)
    return status


def show(name: str) -> str:
    """Case ``name`` as a runnable plain torch program: a static case, a random graph or a fuzz draw."""
    from harness.graphs import sources

    if not RANDOM_NAME.match(name) and sources.source_of(name) is None:
        from harness.fuzz.draws import by_name, is_fuzz_name

        if is_fuzz_name(name):  # random_s<seed>_<index>_m<k>...: a mutant of a random draw
            draw = by_name(name)
            if draw is None:
                raise UsageError(f"{name} cannot be drawn: a step of its recipe overran or has no choices to mutate")
            return sources.runnable(name, draw.code)
    return sources.program_of(name)


def list_overview(count: int, seed: int) -> int:
    """Every source and its cases, by name and description; nothing is built."""
    from harness.graphs import sources

    rows = []
    for source in sources.static_sources():
        specs = sources.static_specs(source)
        if not specs:
            rows.append((f"({source} is empty in this checkout)", source, ""))
        rows += [(spec.name, source, spec.description) for spec in specs]
    last = f"random_s{seed}_{count - 1:03d}"
    rows.append((f"random_s{seed}_000 .. {last}", "random",
                 f"{count} programs drawn from seed {seed} (--count N, --seed S); any random_s<seed>_<index>"))
    widths = [max(len(r[i]) for r in [("name", "source"), *rows]) for i in range(2)]
    print(f"{'name':<{widths[0]}}  {'source':<{widths[1]}}  description")
    for name, source, description in rows:
        print(f"{name:<{widths[0]}}  {source:<{widths[1]}}  {description}")
    counts = ", ".join(f"{s} {len(sources.static_specs(s))}" for s in sources.static_sources())
    print(f"sources: {counts}, random {count} (seed {seed}); `--source NAME...` lowers them and lists ops and "
          f"inputs, `--show NAME` prints one as a runnable torch program")
    return ExitCode.OK


def _inputs_text(inputs) -> str:
    parts = []
    for x in inputs:
        if hasattr(x, "shape"):
            parts.append(f"{str(x.dtype).replace('torch.', '')}{list(x.shape)}")
        else:
            parts.append(type(x).__name__)
    return " ".join(parts)


def _table(rows: list[tuple]) -> str:
    head = ("name", "source", "ops", "inputs")
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(3)]
    lines = [f"{head[0]:<{widths[0]}}  {head[1]:<{widths[1]}}  {head[2]:>{widths[2]}}  {head[3]}"]
    lines += [f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}" for r in rows]
    return "\n".join(lines)


def list_static(source: str, quiet: bool) -> int:
    from harness.graphs import sources

    specs = sources.static_specs(source)
    if not specs:
        raise UsageError(f"graph source {source!r} is empty in this build")
    return _list_specs(specs, source, quiet)


def list_cases(names: list[str], quiet: bool) -> int:
    """The named cases (static or random_s<seed>_<index>), lowered, in one table."""
    from harness.graphs import sources
    from harness.graphs.random.generate import draw_program, spec_of

    static = sources.known_static()
    specs = []
    for name in names:
        match = RANDOM_NAME.match(name)
        specs.append(spec_of(draw_program(int(match.group(1)), int(match.group(2)))) if match else static[name])
    return _list_specs(specs, "named", quiet)


def _list_specs(specs, label: str, quiet: bool) -> int:
    from harness.graphs.cases import load_case
    from harness.graphs.op_coverage import program_ops

    rows, failed = [], 0
    for i, spec in enumerate(specs, 1):
        try:
            case = load_case(spec)
            ops = sum(program_ops(case.edge).values())
            rows.append((spec.name, spec.source, ops, _inputs_text(case.inputs)))
        except Exception as exc:  # noqa: BLE001 - a case that does not lower is listed as such
            failed += 1
            rows.append((spec.name, spec.source, "-", f"does not lower: {type(exc).__name__}: {exc}"[:160]))
        if not quiet:
            print(f"passgate: graph {i}/{len(specs)} {spec.name}", file=sys.stderr, flush=True)
    print(_table(rows))
    print(f"{label}: {len(specs)} cases, {len(specs) - failed} lower")
    return ExitCode.VIOLATION if failed else ExitCode.OK


def list_random(count: int, seed: int, quiet: bool) -> int:
    from harness.graphs.random.generate import STATS, draw_program, lower_stat, spec_of

    redrawn, statements = STATS["redrawn"], STATS["statements"]
    started = time.perf_counter()
    rows, ops, failures = [], set(), []
    for i in range(count):
        program = draw_program(seed, i)
        stat = lower_stat(spec_of(program))
        ops.update(stat.edge_ops)
        inputs = " ".join(f"{v.dtype}{list(v.shape)}{'*' if any(v.dyn) else ''}" for v in program.inputs)
        rows.append((program.name, "random", sum(stat.edge_ops.values()) if stat.ok else "-",
                     inputs if stat.ok else f"{inputs}  does not lower: {stat.error}"))
        if not stat.ok:
            failures.append(program.name)
        if not quiet and ((i + 1) % 25 == 0 or i + 1 == count):
            print(f"passgate: {i + 1}/{count} random graphs drawn and lowered", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    print(_table(rows))
    ok = count - len(failures)
    print(f"random (seed {seed}): {count} graphs, {ok} export and lower ({100.0 * ok / count:.1f}%), "
          f"{len(ops)} distinct ops (export + edge), {count / seconds:.2f} graphs/s "
          f"(draw + export + to_edge + serialize, {seconds:.1f} s); "
          f"{STATS['redrawn'] - redrawn} of {STATS['statements'] - statements + STATS['redrawn'] - redrawn} "
          f"constructed calls failed eagerly and were redrawn; * = dynamic batch dim")
    return ExitCode.VIOLATION if failures else ExitCode.OK
