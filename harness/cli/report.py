"""``passgate report merge|diff|render``: work on results.json files after the run.

- ``merge DIR... --out DIR`` joins the parts of a ``--shard I/N`` run into the
  report the unsharded run would have written, and exits with its status;
- ``diff OLD NEW`` lists regressions, fixes and unchanged failures, exit 1 on
  a regression (``--gate-into DIR`` also writes them into NEW's reports);
- ``render DIR`` rewrites junit.xml, summary.md and report.html from a
  results.json (after an upgrade of passgate, or for a results file someone sent);
- ``blind RESULTS`` lists the entries whose numerics no case could judge
  (:mod:`harness.report.blind`), with the check that blocked them;
- ``costs RESULTS... --out FILE`` keeps what each pass x graph pair took, the
  file ``passgate run --shard I/N --shard-costs FILE`` cuts shards by
  (:mod:`harness.run.costs`).

None of these imports torch: merging 100 shards costs what reading JSON costs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.core.kinds import ExitCode

__all__ = ["add_parser", "run_merge", "run_diff", "run_render", "run_blind", "run_costs"]


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="merge shard reports, diff two runs, re-render reports",
                       description="Work on results.json files after a run: merge the parts of a --shard I/N run "
                       "(merge), compare two runs (diff), rewrite junit.xml / summary.md / report.html (render).")
    rsub = p.add_subparsers(dest="report_command", metavar="ACTION", parser_class=type(p), required=True)

    m = rsub.add_parser("merge", help="join the reports of --shard I/N runs into one",
                        description="Join the results of shard runs (each folder holds one results.json, made with "
                        "--shard I/N for every I of the same N) into one report that agrees with the unsharded run. "
                        "Exits 1 if the merged run has a violation, 2 when the parts do not make one run.")
    m.add_argument("parts", nargs="+", metavar="DIR", help="report folders (or results.json files) of the shards")
    m.add_argument("--out", required=True, metavar="DIR", help="folder for the merged reports")
    m.add_argument("--quiet", "-q", action="store_true")
    m.set_defaults(run=run_merge)

    d = rsub.add_parser("diff", help="regressions, fixes and unchanged failures between two runs",
                        description="Compare two results.json (folders or files) by pass x graph x check. "
                        "Exit 1 when NEW has a violation OLD did not have (a regression), else 0.")
    d.add_argument("old", metavar="OLD")
    d.add_argument("new", metavar="NEW")
    d.add_argument("--strict", action="store_true", help="judge should-level checks as violations on both sides")
    d.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    d.add_argument("--gate-into", metavar="DIR", help="also write NEW's reports into DIR with the comparison "
                   "as their gate section (regressions / fixed in summary.md and report.html)")
    d.set_defaults(run=run_diff)

    r = rsub.add_parser("render", help="rewrite junit.xml, summary.md and report.html from a results.json")
    r.add_argument("source", metavar="DIR", help="report folder or results.json")
    r.add_argument("--out", metavar="DIR", help="where to write (default: beside the results.json)")
    r.set_defaults(run=run_render)

    b = rsub.add_parser("blind", help="entries whose numerics no case could judge, and what blocked them",
                        description="List the entries whose numerics were judged on no case (or on at most --few) "
                        "because runs or runnable failed where they ran: the blocking check, its first message, "
                        "and whether the baseline records it. Exit 0; 2 on unreadable input.")
    b.add_argument("source", metavar="RESULTS", help="results.json or the report folder holding it")
    b.add_argument("--baseline", metavar="FILE", help="count the violations this baseline records as known")
    b.add_argument("--few", type=int, default=2, metavar="N", help="also flag entries judged on at most N cases "
                   "while blocked on others (default 2)")
    b.add_argument("--json", action="store_true", help="print the whole report as JSON")
    b.set_defaults(run=run_blind)

    c = rsub.add_parser("costs", help="the seconds of each pass x graph pair, for --shard-costs",
                        description="Write what each pass x graph pair took in these runs (results.json files or "
                        "report folders: a whole run, or every shard of one) as a small costs file that "
                        "`passgate run --shard I/N --shard-costs FILE` cuts the shards by. Exit 0; 2 on "
                        "unreadable input.")
    c.add_argument("sources", nargs="+", metavar="RESULTS", help="results.json files or the report folders holding them")
    c.add_argument("--out", required=True, metavar="FILE", help="the costs file to write (e.g. reports/unit-costs.json)")
    c.set_defaults(run=run_costs)


def _label(path: str) -> str:
    p = Path(path)
    return str(p.parent if p.name == "results.json" else p)


def _write(out: str, doc: dict) -> Path:
    from harness.report import results_json as report_json
    from harness.report import writers

    out_dir = report_json.ensure_writable(out)
    writers.write_all(out_dir, doc)
    writers.write_results(out_dir, doc)
    return out_dir


def run_merge(args) -> int:
    from harness.report import view as reports
    from harness.report.merge import merge

    docs = [reports.load(p) for p in args.parts]
    merged = merge(docs, [_label(p) for p in args.parts])
    errors = reports.validation_errors(merged, limit=1)
    if errors:  # a bug of ours, not the user's input: say so loudly
        raise RuntimeError(f"merged report does not follow the schema: {errors[0]}")
    out = _write(args.out, merged)
    if not args.quiet:
        from harness.report import terminal

        # the counts of every status, the headline every report states, and where they are
        print(f"passgate: merged {len(docs)} shards: " + "\n".join(terminal.closing(merged, out))[len("passgate: "):])
    return int(merged["exit_status"] != 0)


def run_diff(args) -> int:
    from harness.report import diff as report_diff
    from harness.report import summary_md as report_markdown
    from harness.report import view as reports

    old, new = reports.load(args.old), reports.load(args.new)
    d = report_diff.diff(old, new, strict=True if args.strict else None,
                         old_label=_label(args.old), new_label=_label(args.new))
    if args.format == "json":
        print(json.dumps(d.gate() | {"gone": [report_diff.change(r) for r in d.gone]}, indent=1))
    elif args.format == "markdown":
        print(report_markdown.render({**new, "gate": d.gate()}))
    else:
        print(d.text())
    if args.gate_into:
        _write(args.gate_into, {**new, "gate": d.gate()})
    return ExitCode.VIOLATION if d.regressions else ExitCode.OK


def run_render(args) -> int:
    from harness.report import results_json as report_json
    from harness.report import view as reports
    from harness.report import writers

    doc = reports.load(args.source)
    src = Path(args.source)
    out = args.out or str(src.parent if src.name.endswith(".json") else src)
    out_dir = report_json.ensure_writable(out)
    paths = writers.write_all(out_dir, doc)
    from harness.report import headline

    print(f"passgate: {headline.compute(doc).text()}", file=sys.stdout)
    print("passgate: wrote " + ", ".join(str(p) for p in paths), file=sys.stdout)
    return ExitCode.OK


def run_blind(args) -> int:
    from harness.core.errors import UsageError
    from harness.report import baseline as report_baseline
    from harness.report import blind
    from harness.report import view as reports

    if args.few < 0:
        raise UsageError(f"--few must be 0 or more, not {args.few}")
    doc = reports.load(args.source)
    base = report_baseline.load(args.baseline) if args.baseline else None
    report = blind.compute(doc, base, args.few)
    print(json.dumps(report.to_json(), indent=1) if args.json else report.text())
    return ExitCode.OK


def run_costs(args) -> int:
    from harness.run import costs

    recorded: dict = {}
    for source in args.sources:
        path = Path(source) / "results.json" if Path(source).is_dir() else Path(source)
        recorded.update(costs.read(path))
    costs.write(recorded, args.out)
    print(f"passgate: {len(recorded)} pass x graph costs, {sum(recorded.values()):.0f} s in all: {args.out}")
    return ExitCode.OK
