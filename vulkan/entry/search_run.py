"""``passgate vulkan`` in search mode (the default; ``--count N`` keeps the fixed recipe list).

Draws cases over each fused op's configuration space within ``--budget``
seconds (or ``--examples`` draws per op), shrinks every failure to its
smallest case, and writes beside ``results.json``: ``vulkan_table.md`` /
``vulkan_table.json`` (the per-op table with each failure's boundary),
``vulkan_errors.csv`` (error statistics per op x configuration x
comparison), one ``repro_vulkan_*.py`` per shrunk failure and
``report.html`` (whose Vulkan section plots the statistics).

Each (fusion, op) is one work item (:mod:`vulkan.entry.work`): its search, and
the full re-judging of its shrunk failures, run in a forked worker
(:mod:`harness.run.fork_each`), ``-j`` ops at a time; the reports are assembled in
item order, so they read as a ``-j 1`` run's. A ``--budget`` is shared out
as items start (:class:`vulkan.entry.work.Shares`).
"""

from __future__ import annotations

import sys
import time

from harness.core.results import CheckResult, Status, result

__all__ = ["DEFAULT_BUDGET", "run_search"]

DEFAULT_BUDGET = 600.0


def _progress(args):
    from vulkan.search.space import describe

    def progress(kind, item):
        if args.quiet:
            return
        if kind == "defect":
            print(f"passgate: {item.op}: {item.check} fails; shrunk to {describe(item.case)}: {item.boundary}",
                  file=sys.stderr, flush=True)
        elif kind == "draw":
            bad, ir = ",".join(item.failed), ",".join(item.ir_failed)
            print(f"passgate: {describe(item.desc)}: {'FAIL ' + bad if bad else 'ok'}"
                  f"{'; IR fails ' + ir if ir else ''} ({item.seconds:.1f}s)", file=sys.stderr, flush=True)

    return progress


def _outcome_results(fusion_name: str, outcome) -> list[CheckResult]:
    from vulkan.search.spaces import desc_case

    name = desc_case(outcome.desc).name
    out = []
    for check, status in outcome.statuses.items():
        details = {"op": outcome.desc.op, "config": outcome.desc.config_id(), **outcome.details.get(check, {})}
        out.append(result(fusion_name, name, check, Status(status), outcome.messages.get(check, ""), details))
    return out


def _shrunk_results(fuse, defect, device) -> list[CheckResult]:
    """The shrunk case judged again by the full checks, with the diagnosis a search draw goes without."""
    from vulkan.judging import suite
    from vulkan.search.evaluate import DEVICE_CHECK, IR_CHECKS, SEARCH_CHECKS
    from vulkan.search.spaces import desc_case

    res, _ = suite.check_case(desc_case(defect.case), fuse, device, wanted=SEARCH_CHECKS + (DEVICE_CHECK,) + IR_CHECKS)
    for r in res:
        r.details.update(op=defect.op, config=defect.case.config_id(), shrunk=True, boundary=defect.boundary)
        if r.check == defect.check:
            defect.outcome.messages[defect.check] = r.message
    return res


def _results(fuse, searches: list, device=None) -> list[CheckResult]:
    seen, out = set(), []
    for r in searches:
        for d in r.defects:
            seen.add(d.case)
            out += _shrunk_results(fuse, d, device)
        for o in r.draws:
            if o.desc not in seen:
                seen.add(o.desc)
                out += _outcome_results(fuse.name, o)
    return out


def _limit(args, share, examples: int) -> float:
    """Seconds one op's search may take before its worker is killed: a safety net well past what it should take."""
    from harness.run.forking import HARNESS_LIMIT_S
    from vulkan.search import op_search

    explore = examples * args.timeout if share is None else share + op_search.MIN_DRAWS * args.timeout
    return HARNESS_LIMIT_S + explore + op_search.MAX_DEFECTS * (args.shrink_time + 15.0 + args.timeout)


def _judge_op(item, args, share, examples: int, device, replayed) -> tuple:
    """In a worker: one fusion's search (or replay) of one op, and its results, the shrunk failures re-judged."""
    from vulkan.search import op_search

    f, sp = item.fusion, item.subject
    if replayed is not None:
        r = op_search.replay_op(sp.name, [d for d in replayed if d.op == sp.name], f, device, not args.no_cache, args.timeout)
    else:
        r = op_search.search_op(sp, f, args.seed, share, examples, args.shrink_time, use_cache=not args.no_cache,
                             progress=_progress(args), timeout=args.timeout, device=device)
    return r, _results(f, [r], device)


def _failed_op(item, failure) -> tuple:
    """An op whose worker died or overran: an error verdict that says how (what it judged died with it)."""
    from vulkan.search.op_search import OpSearch

    r = OpSearch(item.name, stopped="worker", error=failure.message)
    msg = f"passgate could not finish searching {item.name}: {failure.message}"
    return r, [result(item.fusion.name, item.name, "fusion_expected", Status.ERROR, msg, dict(failure.details))]


def _op_done(args, k: int, total: int, item, r) -> None:
    if args.quiet:
        return
    what = f"{len(r.draws)} draws, {len(r.defects)} shrunk failure(s)" + (f", error: {r.error}" if r.error else "")
    print(f"passgate: [{k}/{total}] {item.fusion.name} x {item.name}: {what} ({r.seconds:.0f}s)",
          file=sys.stderr, flush=True)


def run_search(args, report_dir, fusions: list, device=None) -> int:
    """Every (fusion, op) item over ``-j`` forked workers; the report in item order (a partial one when interrupted)."""
    from harness.run import fork_each
    from vulkan.backend import fusion
    from vulkan.cases import flows
    from vulkan.entry import work
    from vulkan.search import op_search, pinned, spaces

    selected = spaces.select(args.ops)
    replayed = pinned.load_cases(args.replay) if getattr(args, "replay", None) else None
    if replayed is not None:
        selected = [sp for sp in selected if any(d.op == sp.name for d in replayed)]
    started = time.time()
    budget = args.budget if args.budget is not None else (None if args.examples else DEFAULT_BUDGET)
    examples = args.examples or op_search.DEFAULT_EXAMPLES
    everything = work.search_items(fusions, selected)
    items = work.shard_items(everything, getattr(args, "shard", None))
    shares = work.Shares(items, None if replayed is not None else budget, len(fusions), everything)
    got = work.Collected(items)

    def prepare(i: int) -> tuple:
        share = shares.take(i)
        return (lambda: _judge_op(items[i], args, share, examples, device, replayed)), _limit(args, share, examples)

    def deliver(i: int, value) -> None:
        if isinstance(value, fork_each.Failure):
            value = _failed_op(items[i], value)
        got.put(i, value)
        shares.done(i, value[0].explore_s)
        _op_done(args, len(got.values), len(items), items[i], value[0])

    meta = {"budget_s": budget, "examples": examples, "executor": getattr(device, "name", "reference")}

    def finish() -> int:
        return _finish(report_dir, args, fusions, got, started, meta)

    def body() -> int:
        with fusion.pattern_graphs_memoized(), flows.quantizer_patterns_memoized():
            fusion.prime_pattern_graphs()
            fork_each.run(len(items), prepare, deliver, args.workers, isolate=not args.no_isolation)
            if getattr(args, "bundles", None) and got.complete:
                _bundle(args, fusions, got, meta)
        return finish()

    return work.guarded(body, finish)


def _bundle(args, fusions: list, got, meta: dict) -> None:
    """The passing cases as BundledPrograms in ``--bundles`` DIR; what was written goes in ``meta`` (results.json)."""
    from vulkan.reports import bundles

    per_fusion = {f.name: [r for it, (r, _) in got.in_order() if it.fusion_index == i] for i, f in enumerate(fusions)}
    descs = bundles.passing_cases(per_fusion)
    say = (lambda _m: None) if args.quiet else (lambda m: print(f"passgate: {m}", file=sys.stderr, flush=True))
    say(f"bundling {len(descs)} passing case(s) for {', '.join(args.bundle_backends)} into {args.bundles}")
    meta["bundles"] = {"dir": str(args.bundles), "complete": False}  # what an interruption leaves said
    index = bundles.write(args.bundles, descs, tuple(dict.fromkeys(args.bundle_backends)), say)
    meta["bundles"] = bundles.summary(args.bundles, index)


def _finish(report_dir, args, fusions: list, got, started, meta: dict) -> int:
    from vulkan.reports import search_report

    all_results, per_fusion = [], {}
    for i, f in enumerate(fusions):
        done = [(r, res) for it, (r, res) in got.in_order() if it.fusion_index == i]
        searches = [r for r, _ in done]
        spec = args.fusion_pass or f.mode
        search_report.write_repros(report_dir, searches, spec, f.mode if args.fusion_pass else None, f.name)
        all_results += [x for _, res in done for x in res]
        per_fusion[f.name] = searches
    status = 1 if any(r.is_violation(args.strict) for r in all_results) or not got.complete else 0
    if getattr(args, "save_shrunk", None):
        from vulkan.search import pinned

        made_by = f"passgate vulkan --seed {args.seed}" + (f" --ops {' '.join(args.ops)}" if args.ops else "")
        pinned.save_cases(args.save_shrunk, per_fusion, made_by)
    _write(report_dir, args, fusions, per_fusion, all_results, started, status, meta, got.complete)
    if not args.quiet and got.complete:
        for name, searches in per_fusion.items():
            print(f"\n## {name}\n")
            print(search_report.markdown(search_report.rows(searches)))
    return status


def _write(report_dir, args, fusions, per_fusion, results, started, status, meta: dict, complete: bool) -> None:
    import json

    from harness.core.io import atomic_write_bytes
    from harness.report import report_html
    from harness.report import results_json as report_json
    from vulkan.entry.work import configuration as base
    from vulkan.reports import search_report

    meta = dict(meta)
    bundled = meta.pop("bundles", None)
    configuration = {**base(args, fusions, None, "search"), **meta, "shrink_time_s": args.shrink_time}
    tables = {name: search_report.rows(s) for name, s in per_fusion.items()}
    csv_rows = []
    for name, searches in per_fusion.items():
        csv_rows += [{**row, "Fusion": name} for row in search_report.csv_rows(searches)]
    search_report.write_csv(report_dir / search_report.CSV_FILE, _csv_table(csv_rows, len(per_fusion)))
    cases = sorted({r.graph for r in results})
    extra = {"vulkan": {"search": {"tables": tables, "errors": csv_rows,
                                   **({"bundles": bundled} if bundled is not None else {})}}}
    doc = report_json.document(results, configuration, [{"name": c, "source": "quantized"} for c in cases],
                               started_at=started, complete=complete, exit_status=status, strict=args.strict,
                               extra=extra)
    report_json.write(report_dir, doc)
    md = "".join(f"## {name}\n\n" + search_report.markdown(t) + "\n" for name, t in tables.items())
    atomic_write_bytes(report_dir / "vulkan_table.md", md.encode())
    atomic_write_bytes(report_dir / "vulkan_table.json", (json.dumps(tables, indent=1, default=str) + "\n").encode())
    try:
        report_html.write(report_dir, doc)
    except Exception as exc:  # noqa: BLE001 - the verdicts outrank one report format
        print(f"passgate: warning: report.html was not written: {type(exc).__name__}: {exc}", file=sys.stderr)


def _csv_table(rows: list, fusions: int) -> list:
    """The CSV's rows; with several fusions the fusion leads the Test ID (the columns stay the same)."""
    out = []
    for r in rows:
        row = {k: v for k, v in r.items() if k != "Fusion"}
        if fusions > 1:
            row["Test ID"] = f"{r['Fusion']}:{r['Test ID']}"
        out.append(row)
    return out
