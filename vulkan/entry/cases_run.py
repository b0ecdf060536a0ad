"""``passgate vulkan --count N``: the fixed recipe list, each (fusion, case) judged in a forked worker.

The items (:func:`vulkan.entry.work.case_items`) run ``-j`` at a time
(:mod:`harness.run.fork_each`), each with a deadline of ``--timeout`` plus the
harness's own allowance; results are reported in item order whatever
finished first. Writes ``DIR/results.json`` (the per-op table under the
``"vulkan"`` key), ``DIR/vulkan_table.md`` and ``DIR/vulkan_table.json``;
on Ctrl-C or SIGTERM the same files for the cases judged so far, marked
``"complete": false``.
"""

from __future__ import annotations

import sys
import time

from harness.core.results import Status, result
from harness.run.forking import HARNESS_LIMIT_S

__all__ = ["run_cases"]


def _failed(item, failure) -> tuple:
    """A case whose worker died or overran: every check an error that says how, never a silent gap."""
    from vulkan.judging import suite

    f, vcase = item.fusion, item.subject
    msg = f"passgate could not judge this case: {failure.message}"
    res = [result(f.name, vcase.name, c, Status.ERROR, msg, dict(failure.details)) for c in suite.ALL_CHECKS]
    rec = suite.CaseRecord(f.name, f.mode, vcase.recipe.name, vcase.recipe.op, vcase.recipe.negative, vcase.name,
                           vcase.shape, statuses=dict.fromkeys(suite.ALL_CHECKS, "error"), fault="worker",
                           diagnosis=failure.message)
    return res, rec


def _progress(args):
    def progress(i: int, total: int, rec, res) -> None:
        if args.quiet:
            return
        bad = sorted({r.check for r in res if r.status.value in ("fail", "error")})
        verdict = "FAIL " + ",".join(bad) if bad else "ok"
        print(f"passgate: [{i}/{total}] {rec.fusion} x {rec.case}: {verdict} "
              f"({rec.timings.get('fusion_s', 0.0):.1f}s fusion)", file=sys.stderr, flush=True)

    return progress


def run_cases(args, report_dir, fusions: list, device, recipes_: list) -> int:
    """Judge the fixed list's items over ``-j`` workers; write the report (a partial one when interrupted)."""
    from harness.run import fork_each
    from vulkan.backend import fusion
    from vulkan.entry import work
    from vulkan.judging import suite

    started = time.time()
    everything = work.case_items(fusions, recipes_, args.count, args.seed)
    items = work.shard_items(everything, args.shard)
    graphs = list(dict.fromkeys(it.name for it in everything))  # the whole run's, so merged parts keep its order
    got = work.Collected(items)
    progress = _progress(args)

    def prepare(i: int) -> tuple:
        it = items[i]
        return (lambda: suite.check_case(it.subject, it.fusion, device, use_cache=not args.no_cache,
                                         timeout=args.timeout)), args.timeout + HARNESS_LIMIT_S

    def deliver(i: int, value) -> None:
        if isinstance(value, fork_each.Failure):
            value = _failed(items[i], value)
        got.put(i, value)
        progress(len(got.values), len(items), value[1], value[0])

    def body() -> int:
        with fusion.pattern_graphs_memoized():
            fusion.prime_pattern_graphs()
            fork_each.run(len(items), prepare, deliver, args.workers, isolate=not args.no_isolation)
        return _finish(report_dir, args, fusions, device, got, started, graphs)

    return work.guarded(body, lambda: _finish(report_dir, args, fusions, device, got, started, graphs))


def _finish(report_dir, args, fusions, device, got, started, graphs: list) -> int:
    from vulkan.backend import executors
    from vulkan.reports import table

    results = [r for _, (res, _) in got.in_order() for r in res]
    records = [rec for _, (_, rec) in got.in_order()]
    status = 1 if any(r.is_violation(args.strict) for r in results) or not got.complete else 0
    _write(report_dir, args, fusions, device, results, records, started, status, got.complete, graphs)
    if not args.quiet and got.complete:
        for f in fusions:
            print(f"\n## {f.name}\n")
            print(table.markdown(table.per_op([r for r in records if r.fusion == f.name])))
        ok, why = executors.ExecutorchVulkanExecutor().available()
        if not ok and device is None:
            print(f"device_vs_reference skipped: {why}", file=sys.stderr)
    return status


def _write(report_dir, args, fusions, device, results, records, started, status, complete, graphs) -> None:
    import json

    from harness.core.io import atomic_write_bytes
    from harness.report import results_json as report_json
    from vulkan.entry import work
    from vulkan.reports import table

    rows = table.per_op(records)
    config = {**work.configuration(args, fusions, device, "recipes"), "count": args.count, "graphs": graphs}
    cases = [{"name": r.case, "source": "quantized", "recipe": r.recipe, "op": r.op, "fusion": r.fusion,
              "timings": r.timings} for r in records]
    extra = {"vulkan": {"table": rows, "records": [r.to_json() for r in records]}}
    doc = report_json.document(results, config, cases, started_at=started, complete=complete,
                               exit_status=status, strict=args.strict, extra=extra)
    report_json.write(report_dir, doc)
    md = "".join(f"## {f.name}\n\n" + table.markdown(table.per_op([r for r in records if r.fusion == f.name])) + "\n"
                 for f in fusions)
    atomic_write_bytes(report_dir / "vulkan_table.md", md.encode())
    atomic_write_bytes(report_dir / "vulkan_table.json", (json.dumps(rows, indent=1, default=str) + "\n").encode())
