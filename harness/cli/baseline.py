"""``passgate baseline``: write or show the baseline the gate compares runs with.

``update`` records exactly the violations of one run (running the catalog
with the same options as ``passgate run``, or reading a ``results.json`` with
``--from``). Reasons survive updates: an entry already in the baseline keeps
its reason and upstream reference; a new one takes the catalog's known-failure
reason where the catalog has one, else the reason of the triage rules content
registers under the ``passgate.triage`` entry point group (passgate's own:
``passes/triage.py``), and is marked ``untriaged`` otherwise, so a reviewer
sees in the diff what still needs a reason.

What happens to each old entry (``update --help`` says the same): a known
one (the run violates it again) is *refreshed*, its ``message`` and
``fingerprint`` set to the violation's now, its reason kept; a worsened one
(its fingerprint got worse, which fails the gate) is refreshed the same way,
so the update *accepts* it, and the command names it; a fixed one (the check held)
and a stale one (its pair ran but the check was not judged, or fails only as
a should-level warning: :func:`harness.report.baseline.entry_state`) are
*dropped*, and the command names both; so is an entry whose pair the run did
not run at all, since the baseline records exactly the run's violations.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

from harness.core.errors import UsageError
from harness.report.baseline import DEFAULT_PATH

__all__ = ["add_parser", "run_update", "run_show"]



def add_parser(sub) -> None:
    from harness.cli.run import add_incremental_arguments, add_run_arguments

    p = sub.add_parser("baseline", help="write (update) or show the gate's baseline of known violations",
                       description="Manage reports/baseline.json, the known violations `passgate run --baseline` "
                                   "waives, each with its reason.")
    inner = p.add_subparsers(dest="baseline_command", metavar="ACTION", parser_class=type(p))
    up = inner.add_parser("update", help="rewrite the baseline from a run (or from --from RESULTS)",
                          description="Record exactly the violations of one run. Entries the run violates again "
                          "are refreshed (message and fingerprint updated, reason kept), worsened ones too (known "
                          "violations whose fingerprint got worse: more or other offending nodes, another exception, a "
                          "larger error), so the update accepts them; new violations get the catalog's or the triage "
                          "rules' reason, else are marked untriaged; fixed entries (the check held) and stale "
                          "entries (their pass x graph ran but the check was not judged, or fails only as a "
                          "should-level warning) are dropped and listed; entries of pairs the run did not run are "
                          "dropped too, so update from a run that covers the whole baseline (or keep them with "
                          "--keep-unrun, to record a run over added graphs only).")
    up.add_argument("--baseline", default=DEFAULT_PATH, metavar="FILE",
                    help="the baseline to write (default reports/baseline.json); reasons already in it are kept")
    up.add_argument("--from", dest="from_results", metavar="RESULTS",
                    help="take the violations of this results.json (or its folder) instead of running")
    up.add_argument("--exercised-only", action="store_true",
                    help="record only which pass x graph pairs the run changed (the map still_exercised compares "
                         "with) and keep every known-violation entry as it is")
    up.add_argument("--keep-unrun", action="store_true",
                    help="keep the entries of pass x graph pairs the run did not run as they are: record a run over "
                         "added graphs (or entries) without judging the rest again")
    add_run_arguments(up)
    add_incremental_arguments(up)  # the run it records from reuses unchanged verdicts unless --no-incremental
    up.set_defaults(run=run_update)
    show = inner.add_parser("show", help="list the baseline's entries")
    show.add_argument("--baseline", default=DEFAULT_PATH, metavar="FILE")
    show.set_defaults(run=run_show)
    p.set_defaults(run=lambda args: (p.print_help(), 2)[1])


def _catalog_reasons(catalog_names):
    """(pass, graph, check) -> the catalog's KnownFailure, for reasons of new entries."""
    from harness.catalog import all_entries, resolve_catalogs
    from harness.graphs import sources

    entries = {e.name: e for e in all_entries(resolve_catalogs(catalog_names))}
    specs = sources.known_static()

    def reason(pass_name: str, graph: str, check: str):
        e = entries.get(pass_name)
        if e is None and "/" in pass_name:  # a pipeline step: vulkan/07:FuseClampPass -> any catalog entry of it
            attr = pass_name.rpartition(":")[2].split("#")[0]
            e = next((x for x in entries.values() if x.spec.endswith(":" + attr) and x.known), None)
        if e is None:
            return None
        spec = specs.get(graph)
        tags = (spec.tags | {spec.source}) if spec is not None else ()
        return e.known_for(check, graph, tags)

    return reason


def _triage():
    """The triage rules content registers under ``passgate.triage`` (``passgate`` first, then by name), as one
    function (pass name, check, message) -> KnownFailure or None: the first rule set that explains it."""
    import inspect

    from harness.core import plugins

    rules = [rule for _ep, rule in plugins.load_all(plugins.TRIAGE, "triage")]

    def takes_graph(rule) -> bool:  # the graph is an optional fourth argument: older rule sets do without it
        try:
            return "graph" in inspect.signature(rule).parameters
        except (TypeError, ValueError):
            return False

    calls = [(lambda p, c, m, g, r=rule: r(p, c, m, graph=g)) if takes_graph(rule) else
             (lambda p, c, m, g, r=rule: r(p, c, m)) for rule in rules]

    def triage(pass_name: str, check: str, message: str, graph: Optional[str] = None):
        return next((k for k in (call(pass_name, check, message, graph) for call in calls) if k is not None), None)

    return triage


def run_update(args) -> int:
    from harness.core.results import CheckResult
    from harness.report import baseline as bl
    from harness.report import results_json as report_json

    previous = bl.load(args.baseline) if Path(args.baseline).exists() else None
    if args.from_results:
        doc = report_json.load(args.from_results)
        source = str(args.from_results)
    else:
        from harness.cli import run as cmd_run

        args.baseline_target, args.baseline = args.baseline, None
        cmd_run.run(args)
        args.baseline = args.baseline_target
        doc = report_json.load(Path(args.report))
        source = f"passgate run --profile {args.profile}"
    if not doc.get("complete", True):
        raise UsageError(f"the run in {source} is incomplete (interrupted): not recording a baseline from it")
    results = [CheckResult.from_json(d) for d in doc["results"]]
    catalogs = (doc.get("configuration") or {}).get("catalogs") or getattr(args, "catalog", None)
    try:
        from_catalog = _catalog_reasons(catalogs)
    except UsageError:
        from_catalog = None  # a catalog of the recorded run is not installed here
    # `passgate run` already marked the violations its catalogs expect (details["known"]).
    annotated = {(r.pass_name, r.graph, r.check): r.details["known"] for r in results
                 if isinstance(r.details.get("known"), dict)}

    def reasons(pass_name, graph, check):
        k = annotated.get((pass_name, graph, check))
        if k:
            from harness.catalog import KnownFailure

            return KnownFailure(check, k.get("reason", ""), k.get("upstream", ""), (), k.get("kind", "bug"))
        k = from_catalog(pass_name, graph, check) if from_catalog else None
        if k is None:
            k = triage(pass_name, check, messages.get((pass_name, graph, check), ""), graph)
        return k
    if getattr(args, "exercised_only", False):
        return _record_exercised(results, previous, args)
    messages = {(r.pass_name, r.graph, r.check): r.message for r in results}
    triage = _triage()
    env = doc.get("environment", {})
    new = bl.updated(results, previous, reasons, args.strict, generated={
        "by": "passgate baseline update", "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "from": source, "executorch": env.get("executorch"), "torch": env.get("torch"),
        "configuration": doc.get("configuration", {}),
    })
    ran = {(r.pass_name, r.graph) for r in results}
    if args.keep_unrun and previous:
        new.entries += [e for e in previous.entries if (e.pass_name, e.graph) not in ran]
        _merge_unrun(new, previous, ran)
    path = bl.save(new, args.baseline)
    old_keys = set(previous.by_key()) if previous else set()
    new_keys = set(new.by_key())
    untriaged = sum(1 for e in new.entries if e.kind == "untriaged")
    pairs = sum(len(g) for g in new.exercised.values())
    print(f"passgate: baseline {path}: {len(new.entries)} known violation(s) (+{len(new_keys - old_keys)} "
          f"-{len(old_keys - new_keys)}), {untriaged} untriaged; {pairs} exercised pass x graph pair(s)",
          file=sys.stdout)
    if previous:
        _say_dropped(bl.gate(results, previous, args.strict))
        if not args.keep_unrun:
            gone = sum(1 for e in previous.entries if (e.pass_name, e.graph) not in ran)
            if gone:
                print(f"passgate: dropped {gone} entr{'y' if gone == 1 else 'ies'} of pairs this run did not run "
                      "(--keep-unrun keeps them)", file=sys.stdout)
    return 0


def _merge_unrun(new, previous, ran: set) -> None:
    """Keep ``previous``'s exercised pairs of pass x graph pairs the run did not run (``ran``; ``--keep-unrun``)."""
    for pass_name, graphs in previous.exercised.items():
        kept = {g for g in graphs if (pass_name, g) not in ran}
        if kept:
            new.exercised[pass_name] = sorted(kept | set(new.exercised.get(pass_name, ())))


def _record_exercised(results, previous, args) -> int:
    """``--exercised-only``: the run's exercised map into the baseline, its entries untouched."""
    from harness.report import baseline as bl

    if previous is None:
        raise UsageError(f"--exercised-only records into an existing baseline: {args.baseline} does not exist")
    new = bl.Baseline(list(previous.entries), previous.generated, previous.strict, bl.exercised_pairs(results))
    if args.keep_unrun:
        _merge_unrun(new, previous, {(r.pass_name, r.graph) for r in results})
    path = bl.save(new, args.baseline)
    print(f"passgate: baseline {path}: {sum(len(g) for g in new.exercised.values())} exercised pass x graph pair(s) "
          f"of {len(new.exercised)} passes recorded; {len(new.entries)} known-violation entries kept as they were",
          file=sys.stdout)
    _say_lost(bl.gate(results, previous, args.strict))
    return 0


def _say_lost(g) -> None:
    """Name the pass x graph pairs the update accepts as no longer exercised (the gate's still_exercised)."""
    from harness.report import baseline as bl

    for e in g.regressions:
        if e["check"] == bl.STILL_EXERCISED:
            print(f"passgate: accepted no longer exercised: {e['pass']} x {e['graph']}", file=sys.stdout)


def _say_dropped(g) -> None:
    """Name the entries the update dropped as fixed or stale, the worsened ones and lost rewrites it accepted, and
    count the refreshed ones."""
    if g.known:
        print(f"passgate: refreshed {len(g.known)} known entr{'y' if len(g.known) == 1 else 'ies'} "
              "(message updated, reason kept), fingerprints recorded", file=sys.stdout)
    for e in g.worsened:
        print(f"passgate: accepted worsened: {e['pass']} x {e['graph']} x {e['check']} ({e['worse']})", file=sys.stdout)
    _say_lost(g)
    for what, entries in (("fixed (the check holds)", g.fixed),
                          ("stale (its pair ran; the check is now {now}, not a violation)", g.stale)):
        for e in entries:
            print(f"passgate: dropped {what.format(now=e.get('now', ''))}: {e['pass']} x {e['graph']} x "
                  f"{e['check']}", file=sys.stdout)


def run_show(args) -> int:
    from harness.report import baseline as bl

    b = bl.load(args.baseline)
    for e in sorted(b.entries, key=lambda e: e.key):
        print(f"{e.pass_name} x {e.graph} x {e.check} [{e.kind}]: {e.reason}"
              + (f" ({e.upstream})" if e.upstream else ""))
    print(f"passgate: {len(b.entries)} known violation(s) in {args.baseline}")
    return 0
