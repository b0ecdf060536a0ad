"""``passgate bisect``: find the first pass of a pipeline after which a check fails.

``--pipeline`` is a built-in pipeline (``vulkan``, ``xnnpack``, ``to_executorch``),
a ``module:attr`` / ``file.py:attr`` naming a list of passes, a PassManager or
a :class:`harness.pipelines.pipeline.Pipeline`, or a comma-separated list of pass SPECs.
For every selected graph on which the whole pipeline breaks a check, it
reports the culprit step, the checks it breaks, the probes it took, and
writes a standalone reproducer into the report folder. Exit status 1 when a
culprit was found (the pipeline violates a check), 0 when every check holds.
"""

from __future__ import annotations

import sys

from harness.cli.check import add_common_run_options, configure_cache
from harness.core.kinds import ExitCode

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser(
        "bisect",
        help="find the first pass of a pipeline after which a check fails (like LLVM's opt-bisect)",
        description=__doc__.split("\n\n", 1)[1],
    )
    p.add_argument("--pipeline", required=True, metavar="NAME|SPEC",
                   help="vulkan, xnnpack, to_executorch, module:attr, file.py:attr, or SPEC,SPEC,...")
    p.add_argument("--check", metavar="ID", help="bisect on this check id only (default: any violation)")
    p.add_argument("--stage", choices=("export", "edge"), help="the stage the pipeline runs at (default: its own)")
    add_common_run_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from harness.core.config import configuration
    from harness.core.errors import UsageError
    from harness.core.results import CHECKS
    from harness.graphs import sources
    from harness.pipelines.pipeline import resolve_pipeline
    from harness.reduce.bisect import bisect, write_repro
    from harness.report import results_json as report_json
    from harness.run.session import Session

    if args.check and args.check not in CHECKS:
        raise UsageError(f"unknown check id {args.check!r}; known: {', '.join(CHECKS)}")
    pipeline = resolve_pipeline(args.pipeline, args.stage)
    specs = sources.select(args.graphs, args.count, args.seed)
    report_dir = report_json.ensure_writable(args.report)
    configure_cache(args)
    found: list = []
    session = Session(report_dir=report_dir, strict=args.strict, quiet=args.quiet, configuration=configuration(
        "bisect", pipeline=pipeline.name, pipeline_spec=args.pipeline, steps=[s.name for s in pipeline.steps],
        check=args.check, graphs=[s.name for s in specs], seed=args.seed, timeout=args.timeout, strict=args.strict))

    def body(s: Session) -> None:
        from harness.core.config import RunConfig
        from harness.core.results import RERUN_CHECKS
        from harness.pipelines.pipeline import PIPELINE_CHECKS

        config = RunConfig(stage=pipeline.stage, timeout=args.timeout, seed=args.seed,
                           checks=PIPELINE_CHECKS | (RERUN_CHECKS if args.strict else frozenset()))
        for case in s.load_cases(specs):
            res = bisect(pipeline, case, config, args.check, args.strict,
                         on_probe=lambda p, g=case.name: s.note(
                             f"{g}: first {p.steps} pass(es): {', '.join(p.failing) or 'ok'}"))
            write_repro(res, args.pipeline, report_dir, args.seed, args.count, args.strict)
            found.append(res)
            s.results.extend(res.results)
            s.note(res.summary() + (f"; reproducer: {res.repro}" if res.repro else ""))

    status = session.run(body, extra=lambda: {"bisect": [r.to_json() for r in found]})
    if not args.quiet:
        for r in found:
            print(f"passgate: bisect: {r.summary()}", file=sys.stdout)
            if r.first_bad is not None:
                alone = ", ".join(r.confirmed) or "nothing (the failure needs the earlier passes' output)"
                print(f"passgate:   judged alone on its input, step {r.first_bad + 1} fails: {alone}", file=sys.stdout)
                print(f"passgate:   reproducer: {r.repro}", file=sys.stdout)
    return ExitCode.VIOLATION if any(r.first_bad is not None for r in found) else status
