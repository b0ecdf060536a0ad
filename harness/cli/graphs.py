"""``passgate graphs``: list graph cases, or print one case's program.

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

__all__ = ["SOURCES", "RANDOM_NAME", "add_parser", "run", "show", "list_static", "list_random"]

SOURCES = ("random", "zoo", "builtin", "quantized", "all")
RANDOM_NAME = re.compile(r"^random_s(-?\d+)_(\d+)$")


def add_parser(sub) -> None:
    from harness.cli.check import positive_int

    p = sub.add_parser(
        "graphs",
        help="list graph cases (name, source, ops, inputs) or print one case's program",
        description=(
            "List the graph cases of a source with their op count and inputs, or print one case's "
            "program with --show. For --source random every graph is drawn, exported and lowered "
            "afresh, and the share that lower, the distinct ops and graphs per second are printed."
        ),
    )
    p.add_argument("--source", default="builtin", metavar="SOURCE",
                   help=f"one of {', '.join(SOURCES)} (default builtin)")
    p.add_argument("--count", type=positive_int, help="how many random graphs (default 25)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random graphs (default 0)")
    p.add_argument("--show", metavar="NAME", help="print the program of case NAME instead of listing")
    p.add_argument("--cache-dir", metavar="DIR", help="lowered-graph cache for the static sources")
    p.add_argument("--no-cache", action="store_true", help="lower static sources afresh; write no cache")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=run)


def run(args) -> int:
    if args.source not in SOURCES:
        raise UsageError(f"unknown graph source {args.source!r}; expected one of {', '.join(SOURCES)}")
    if args.show:
        print(show(args.show, args.source, args.seed, args.count))
        return ExitCode.OK
    from harness.graphs import cache, sources

    cache.configure(args.cache_dir, disabled=args.no_cache)
    count = args.count or sources.DEFAULT_RANDOM_COUNT
    status = ExitCode.OK
    for source in (("builtin", "zoo", "quantized", "random") if args.source == "all" else (args.source,)):
        if source == "random":
            status |= list_random(count, args.seed, args.quiet)
        else:
            status |= list_static(source, args.quiet)
    return status


def show(name: str, source: str, seed: int, count) -> str:
    match = RANDOM_NAME.match(name)
    if match:
        from harness.graphs.random.generate import draw_program

        return draw_program(int(match.group(1)), int(match.group(2))).code()
    from harness.graphs import sources

    known = sources.known_static()
    if name not in known:
        raise UsageError(f"unknown case {name!r}: not a random_s<seed>_<index> name or a case of "
                         f"{', '.join(sources.static_sources())} (see `passgate graphs --source all`)")
    spec = known[name]
    return f"# {spec.name} ({spec.source}): {spec.description}\n{spec.definition}"


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
    from harness.graphs.cases import load_case
    from harness.graphs.op_coverage import program_ops

    specs = sources.static_specs(source)
    if not specs:
        raise UsageError(f"graph source {source!r} is empty in this build")
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
    print(f"{source}: {len(specs)} cases, {len(specs) - failed} lower")
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
