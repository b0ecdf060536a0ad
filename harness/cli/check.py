"""``passgate check``: run the given passes over graphs under IR-spec verification."""

from __future__ import annotations

import argparse
from dataclasses import replace

from harness.core.errors import UsageError
from harness.core.kinds import Semantics
from harness.core.shards import argument as shard_argument

__all__ = ["DEFAULT_REPORT_DIR", "positive_float", "positive_int", "check_selection", "add_common_run_options",
           "add_hash_seed_option",
           "add_parser", "configure_cache", "judge_exercised", "run"]

DEFAULT_REPORT_DIR = "reports/generated"


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def check_selection(text: str) -> frozenset:
    """``--checks``: check ids and the levels ``must`` / ``should``, comma-separated; ``runs`` is always in.

    The pass-level ``exercised`` (should) is selectable like the IR checks; it
    needs no run of its own (it reads what ``runs`` measured).
    """
    from harness.core.results import CHECKS, IR_CHECK_IDS, Level, check_ids, ir_checks_at

    selectable = IR_CHECK_IDS + check_ids("pass")
    chosen = {"runs"}
    for word in filter(None, (w.strip() for w in text.split(","))):
        if word in (Level.MUST.value, Level.SHOULD.value):
            chosen |= ir_checks_at(Level(word)) | {c for c in check_ids("pass") if CHECKS[c].level is Level(word)}
        elif word in selectable:
            chosen.add(word)
        else:
            raise argparse.ArgumentTypeError(f"unknown check {word!r}; expected must, should or one of "
                                             f"{', '.join(selectable)}")
    return frozenset(chosen)


def add_common_run_options(p: argparse.ArgumentParser) -> None:
    """Options every checking command shares (check, run, certify)."""
    p.add_argument("--graphs", nargs="+", metavar="NAME",
                   help="graph sources (builtin, zoo, quantized, random, all) or case names; default: builtin")
    p.add_argument("--count", type=positive_int, help="how many random graphs (with --graphs random|all)")
    p.add_argument("--seed", type=int, default=0, help="seed for random graphs and numeric input draws (default 0)")
    p.add_argument("--timeout", type=positive_float, default=60.0, help="seconds one pass run may take (default 60)")
    p.add_argument("--report", default=DEFAULT_REPORT_DIR, metavar="DIR",
                   help=f"folder for results.json and the other reports (default {DEFAULT_REPORT_DIR})")
    p.add_argument("--strict", action="store_true", help="should-level checks (idempotent, deterministic, "
                   "meta_debug_handle) fail the run too")
    p.add_argument("--cache-dir", metavar="DIR", help="lowered-graph cache (default $PASSGATE_CACHE_DIR or ~/.cache/passgate)")
    p.add_argument("--no-cache", action="store_true", help="lower every graph afresh; write no cache")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines or table")
    p.add_argument("--no-isolation", action="store_true", help="run passes in this process (for a debugger); "
                   "by default each pass x graph runs in a worker process, so a pass that crashes or hangs "
                   "is a runs failure instead of the end of the run")
    p.add_argument("--resume", action="store_true", help="continue the incomplete results.json in --report "
                   "(same configuration required): pass x graph pairs already there are not run again")
    p.add_argument("--shard", type=shard_argument, metavar="I/N", help="run only part I of N of the pass x graph "
                   "pairs (deterministic split); join the parts with `passgate report merge`")


def add_hash_seed_option(p: argparse.ArgumentParser) -> None:
    """``--hash-seed-check``: ``check`` and ``run`` (harness/run/hashseed.py)."""
    p.add_argument("--hash-seed-check", action=argparse.BooleanOptionalAction, default=False,
                   help="make the deterministic check's second run in a worker process started with another "
                        "PYTHONHASHSEED, so a pass whose output follows the iteration order of a set of strings "
                        "fails it (default off)")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "check",
        help="run passes over graphs under IR-spec verification",
        description=(
            "Run each --pass on a private copy of every selected graph, at its stage, and judge "
            "every IR check of DESIGN.md (runs, no_call_module, meta_*, val_matches_execution, "
            "graph_lint, signature, verifier, runnable, numerics, ensures, input_unchanged, "
            "idempotent, deterministic), then per pass exercised (did any graph make it change the program). "
            "Writes DIR/results.json; exits 1 on a violation."
        ),
    )
    p.add_argument("--pass", dest="passes", action="append", required=True, metavar="SPEC",
                   help="package.module:Name or path/to/file.py:Name (class, instance or function); repeatable")
    p.add_argument("--stage", choices=("export", "edge"),
                   help="run at the torch.export program or the edge program (default: the pass's own "
                   "passgate_stage, else edge)")
    p.add_argument("--semantics", choices=[s.value for s in Semantics],
                   help="'changing' skips numerics; 'observing' (it only records or prints: it changes no program "
                        "by contract) is not judged exercised (default: the pass's passgate_semantics, else "
                        "preserving)")
    add_common_run_options(p)
    add_hash_seed_option(p)
    p.add_argument("--checks", type=check_selection, metavar="LIST",
                   help="judge only these checks: ids and the levels must / should, comma-separated (e.g. "
                   "--checks must while iterating on a pass: each pair then runs the pass once, where the "
                   "should-level idempotent and deterministic checks run it again); default: every IR check and "
                   "the pass-level exercised")
    p.add_argument("--runtime", action="store_true", help="also take each pass's result through to_executorch and "
                   "run it in the ExecuTorch runtime: serialize_roundtrip, runtime_runs, runtime_numerics (a failure "
                   "names the first op whose output diverges from eager's); see docs/runtime.md")
    p.add_argument("-j", "--workers", type=positive_int, default=1, metavar="N",
                   help="worker processes checking pass x graph pairs at once (default 1; results and reports "
                   "come in the same order whatever N)")
    p.add_argument("--no-server", action="store_true", help="run in this process even when a `passgate serve` "
                   "server runs (also PASSGATE_NO_SERVER=1)")
    p.add_argument("--no-shrink", action="store_true", help="do not shrink failing random graphs (by default "
                   "each failing pass x check is shrunk to a minimal graph and a repro_<id>.py is written)")
    p.add_argument("--shrink-time", type=positive_float, default=60.0, metavar="SECONDS",
                   help="time one shrink may take (default 60; all shrinks of a run: 5x that)")
    p.set_defaults(run=run)


def configure_cache(args) -> None:
    from harness.graphs import cache

    cache.configure(args.cache_dir, disabled=args.no_cache)


def judge_exercised(session, passes, shard) -> None:
    """The pass-level ``exercised`` verdicts, after every pair; a shard saw part of each pass's cases, so
    ``passgate report merge`` judges them over the joined shards instead."""
    if shard:
        session.note("exercised (did any case change each pass's program) is judged when the shards are merged")
        return
    session.judge_exercised(passes)


def run(args) -> int:
    from harness.check.loading import load_pass
    from harness.graphs import sources
    from harness.report import results_json as report_json
    from harness.run import sharding

    # Pass SPECs first and torch later: a mistyped SPEC is answered before the ~10 s of imports.
    passes = [load_pass(spec, semantics=args.semantics, stage=args.stage) for spec in args.passes]
    from harness.core.config import RunConfig, configuration, pass_record
    from harness.run import forking
    from harness.run.scheduler import Tally
    from harness.run.session import Session

    names = [p.name for p in passes]
    if len(set(names)) != len(names):
        raise UsageError(f"two --pass SPECs have the same name: {sorted(n for n in names if names.count(n) > 1)[0]}")
    specs = sources.select(args.graphs, args.count, args.seed)
    report_dir = report_json.ensure_writable(args.report)
    configure_cache(args)
    config = RunConfig(stage=args.stage, semantics=args.semantics, timeout=args.timeout, seed=args.seed,
                       isolate=not args.no_isolation and forking.available(), workers=args.workers,
                       checks=args.checks, hash_seed_check=args.hash_seed_check, runtime=args.runtime)
    session = Session(
        report_dir=report_dir,
        strict=args.strict,
        quiet=args.quiet,
        resume=args.resume,
        configuration=configuration(
            "check", passes=[pass_record(p, args.stage, args.semantics) for p in passes],
            **({"hash_seed_check": True} if args.hash_seed_check else {}),
            **({"runtime": True} if args.runtime else {}),
            graphs=[s.name for s in specs], graph_selection=args.graphs or ["builtin"], seed=args.seed,
            count=args.count, timeout=args.timeout, strict=args.strict, checks=args.checks, shard=args.shard),
    )

    def body(s: Session) -> None:
        shard = sharding.plan(args.shard, names, specs)
        cases = s.load_cases(shard.specs)
        shard.check(passes, cases, replace(config, skip=s.done_pairs), Tally(s.record))
        if not args.no_shrink:  # failing random graphs -> minimal graph + repro_<id>.py (harness/reduce/shrink.py)
            from harness.reduce.shrink import shrink_failures

            shrink_failures(s.results, passes, shard.specs, config, report_dir, args.strict, args.shrink_time,
                            5 * args.shrink_time, note=s.note)
        if args.checks is None or "exercised" in args.checks:
            judge_exercised(s, names, args.shard)

    from harness.run import hashseed

    with hashseed.active(config.hash_seed_check):
        return session.run(body)
