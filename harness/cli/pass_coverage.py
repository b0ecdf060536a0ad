"""Coverage of pass code: which lines and branches of each catalog entry's own source the graph corpus executes.

Runs the catalog (and the backend pipelines and partitioners, which reach
the Vulkan pattern registry) in this process under coverage.py with branch
coverage, and reports per catalog entry, per catalog and over all runnable
entries the share of statements and of branches executed, and how many
entries no case made change the program (the run's ``exercised`` verdicts).
The measuring lives in :mod:`harness.run.pass_coverage`; this is its command.

Usage (what ``tox -e coverage`` runs)::

    python -m harness.cli.pass_coverage [--profile quick|standard|full] [--catalog NAME ...]
                                    [--graphs ...] [--report DIR] [--min-percent P] [-j N]

``-j N`` measures in N processes, each running one shard of the pass x graph
pairs under its own coverage.py data file; the parts are then joined as
pytest-cov joins xdist workers': ``Coverage.combine`` for the data, ``passgate
report merge`` for the results (a run in one process takes ~60 CPU-minutes
with the standard profile's corpus).

Writes ``DIR/pass_coverage.json`` (what ``passgate passes`` shows per entry)
and ``DIR/pass_coverage.md`` beside the run's reports, and prints the
summary; exit status 0 (2 on bad usage; 1 only when ``--min-percent`` is
given and a module of the Vulkan catalog falls below it in line coverage).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.core.kinds import ExitCode

__all__ = ["DEFAULT_REPORT", "JSON_FILE", "MD_FILE", "render", "main"]

DEFAULT_REPORT = "reports/generated/coverage"
JSON_FILE = "pass_coverage.json"
MD_FILE = "pass_coverage.md"


def _pct(c: dict) -> str:
    return (f"{c['executed']}/{c['statements']} lines ({c['line_percent']:.1f}%), "
            f"{c['covered_branches']}/{c['branches']} branches ({c['branch_percent']:.1f}%)")


def _reachable(c: dict) -> dict:
    return c.get("reachable") or c  # a document written before reachability was reported: as measured


def render(doc: dict) -> str:
    """The Markdown report: totals, per catalog, per entry (not exercised first), per module, unreachable code."""
    t = doc["total"]
    r = _reachable(t)
    applied = [x for x in doc.get("unreachable", ()) if not x["refused"]]
    lines = [f"Runnable entries: {t['entries']} over {t['files']} source files: {_pct(t)}; "
             f"not exercised (no case changed the program): {t['not_exercised']} "
             f"({len(t.get('not_exercised_unexplained', ()))} without a reason); not run: {t['not_run']}", "",
             f"Over reachable code ({t['branches'] - r['branches']} branches and {t['statements'] - r['statements']} "
             f"lines in {len(applied)} functions declared dead or traced-only left out, listed below): {_pct(r)}", "",
             "| catalog | entries | files | lines | branches | branches (reachable) | not exercised | not run |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, c in doc["by_catalog"].items():
        lines.append(f"| {name} | {c['entries']} | {c['files']} | {c['line_percent']:.1f}% | "
                     f"{c['branch_percent']:.1f}% | {_reachable(c)['branch_percent']:.1f}% | {c['not_exercised']} | {c['not_run']} |")
    lines += ["", "| entry | exercised (cases changed / run) | lines | branches |", "| --- | --- | ---: | ---: |"]
    order = {"fail": 0, None: 1, "skip": 1, "not_applicable": 2, "pass": 3}
    for e in sorted(doc["entries"], key=lambda e: (order.get((e["exercised"] or {}).get("status"), 1), e["name"])):
        x = e["exercised"]
        ex = f"{x['status']} ({x['cases_changed']}/{x['ran']})" if x else "not run"
        lines.append(f"| {e['name']} | {ex} | {e['line_percent']:.1f}% | {e['branch_percent']:.1f}% |")
    lines += ["", "Not exercised, and why no graph can exercise it (the catalog's known `exercised` failure):", ""]
    for e in doc["entries"]:
        if (e["exercised"] or {}).get("status") != "fail":
            continue
        why = e.get("why_not_exercised")
        lines.append(f"- `{e['name']}`: " + (f"{why['kind']}: {why['reason']}" + (f" ({why['upstream']})"
                     if why["upstream"] else "") if why else "no reason recorded: the corpus lacks a graph that "
                     "triggers it"))
    lines += ["", "Declared unreachable (dead: nothing calls it; traced: run only symbolically by torch.export's dynamo, "
                  "which coverage.py cannot see) with the catalog's reason; refused when the measurement contradicts "
                  "it:", ""]
    for x in doc.get("unreachable", ()):
        what = (f"refused: {x['refused']}" if x["refused"] else
                f"{x.get('kind', 'dead')}: {x['branches']} branches, {x['lines']} lines")
        lines.append(f"- `{x['module'].replace('executorch.', '')}`: {', '.join(x['functions'])} ({what}): "
                     f"{x['reason']}")
    lines += ["", "| catalog | pass module | statements | lines | branches |", "| --- | --- | ---: | ---: | ---: |"]
    for m in doc["modules"]:
        lines.append(f"| {m['catalog']} | `{m['module'].replace('executorch.', '')}` | {m['statements']} | "
                     f"{m['line_percent']:.1f}% | {m['branch_percent']:.1f}% |")
    return "\n".join(lines)


def _run_args(args, report: str) -> list[str]:
    # --no-incremental: a reused verdict executes no pass code, so coverage would read it as never run
    run_args = ["run", "--profile", args.profile, "--no-isolation", "--no-incremental", "-q", "--report", report]
    run_args += ["--shard", args.shard] if args.shard else []
    run_args += ["--catalog", *args.catalog] if args.catalog else []
    run_args += ["--graphs", *args.graphs] if args.graphs else []
    run_args += ["--cache-dir", args.cache_dir] if args.cache_dir else []
    if args.catalog:  # --catalog alone switches pipelines and partitioners off in `run`: keep them here
        run_args += ["--pipeline", "vulkan", "--partitioner", "vulkan"]
    return run_args


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness.cli.pass_coverage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=("quick", "standard", "full"), default="standard")
    parser.add_argument("--catalog", nargs="+", metavar="NAME")
    parser.add_argument("--graphs", nargs="+", metavar="NAME")
    parser.add_argument("--report", default=DEFAULT_REPORT, metavar="DIR")
    parser.add_argument("--cache-dir", metavar="DIR")
    parser.add_argument("--min-percent", type=float, help="exit 1 if a Vulkan pass module's lines are covered less")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                        help="measure in N processes, one shard of the pairs each (default 1)")
    parser.add_argument("--join", nargs="+", metavar="DIR", default=[],
                        help="add the measurements of earlier runs (their --report folders, measured with -j, of "
                             "the same code and packages): lines, branches and exercised verdicts are the union. "
                             "Measure only new graphs and join the full run, instead of measuring everything again")
    parser.add_argument("--no-measure", action="store_true",
                        help="measure nothing: report the union of the --join folders (after adding a declaration "
                             "to passgate.unreachable, or to join measurements made one by one)")
    parser.add_argument("--shard", help=argparse.SUPPRESS)  # I/N: a -j child's part
    parser.add_argument("--data-file", help=argparse.SUPPRESS)  # where a -j child saves its coverage data
    return parser


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("-j must be at least 1")
    if args.no_measure and not args.join:
        parser.error("--no-measure needs --join: there is nothing else to report")
    from harness.core.errors import UsageError

    try:
        joined = [_joinable(d) for d in args.join]  # a folder without the data: exit 2 before measuring
    except UsageError as exc:
        print(f"passgate: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE

    from harness.run import pass_coverage as measure

    if args.no_measure:
        cov, status = measure.start(None, started=False), ExitCode.OK
    elif args.jobs > 1 and not args.shard:
        cov, status = _measure_in_parts(args)
    else:
        cov = measure.start(args.data_file)  # before torch and every pass module are imported
        try:
            from harness.cli.main import main as passgate

            status = passgate(_run_args(args, args.report))
        finally:
            cov.stop()
        if args.data_file:  # a -j child: the parent joins the parts and reports
            cov.save()
            return status
    if status == ExitCode.USAGE:
        return ExitCode.USAGE
    doc = _document(args, cov, joined)
    _write(doc, Path(args.report))
    low = [r for r in doc["modules"] if r["catalog"] == "vulkan" and args.min_percent is not None
           and r["line_percent"] < args.min_percent]
    return ExitCode.VIOLATION if low else ExitCode.OK


def _document(args: argparse.Namespace, cov, joined: list) -> dict:
    """The measurement of this run and the joined ones, as one run over all their graphs."""
    from harness.catalog import resolve_catalogs
    from harness.report import view
    from harness.run import pass_coverage as measure
    from harness.run.profiles import profile

    catalogs = resolve_catalogs(args.catalog or list(profile(args.profile).catalogs) or None)
    for parts, _ in joined:
        cov.combine([str(p) for p in parts], keep=True)
    runs = ([] if args.no_measure else [view.load(args.report)]) + [earlier for _, earlier in joined]
    planned = [(r.get("configuration") or {}).get("entries") for r in runs]
    return {"profile": args.profile, "catalogs": [c.name for c in catalogs], "graphs": args.graphs,
            "joined": [str(d) for d in args.join],
            "complete": all(r.get("complete", True) for r in runs),  # false: a run was cut short: partial figures
            **measure.analyse(cov, catalogs, measure.joined_verdicts(*map(measure.exercised_verdicts, runs)),
                              None if None in planned else sorted({e for p in planned for e in p}))}


def _write(doc: dict, report: Path) -> None:
    """pass_coverage.json and .md in ``report``; the totals and the per-catalog table printed."""
    report.mkdir(parents=True, exist_ok=True)
    (report / JSON_FILE).write_text(json.dumps(doc, indent=1) + "\n")
    text = render(doc)
    (report / MD_FILE).write_text("# Pass code executed by the graph corpus\n\n" + text + "\n")
    print("\n".join(text.split("\n\n")[:3]))  # totals and the per-catalog table; the rest is in the files


def _joinable(folder: str):
    """(coverage data files, results document) of an earlier ``-j`` measurement; UsageError when it has none."""
    from harness.core.errors import UsageError
    from harness.report import view

    parts = sorted((Path(folder) / "parts").glob("coverage.*"))
    if not parts:
        raise UsageError(f"--join {folder}: no coverage data in {folder}/parts (measure it with -j 2 or more)")
    return parts, view.load(folder)


def _measure_in_parts(args):
    """Run ``args.jobs`` shard children, then join their coverage data and their results.json."""
    import subprocess

    from harness.cli.main import main as passgate
    from harness.run import pass_coverage as measure

    parts = Path(args.report) / "parts"
    children = []
    for i in range(1, args.jobs + 1):
        cmd = [sys.executable, "-m", "harness.cli.pass_coverage", "--profile", args.profile,
               "--report", str(parts / f"shard-{i}"), "--shard", f"{i}/{args.jobs}",
               "--data-file", str(parts / f"coverage.{i}")]
        cmd += ["--catalog", *args.catalog] if args.catalog else []
        cmd += ["--graphs", *args.graphs] if args.graphs else []
        cmd += ["--cache-dir", args.cache_dir] if args.cache_dir else []
        children.append(subprocess.Popen(cmd))
    statuses = [child.wait() for child in children]
    if ExitCode.USAGE in statuses:
        return measure.start(None, started=False), ExitCode.USAGE
    passgate(["report", "merge", "--quiet", "--out", args.report, *(str(parts / f"shard-{i}")
                                                                    for i in range(1, args.jobs + 1))])
    cov = measure.start(None, started=False)
    cov.combine([str(parts / f"coverage.{i}") for i in range(1, args.jobs + 1)], keep=True)
    return cov, max(statuses)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
