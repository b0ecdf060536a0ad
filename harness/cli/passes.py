"""``passgate passes``: list the pass catalog (name, module, stage, contract).

Answers "which passes does passgate run, how does it build each, and what
does it expect of them" without running anything: the explicit entries, the
passes discovery found that have no entry yet, the passes that cannot run
here (with why), and, with ``--check-discovery``, a non-zero exit when
discovery and the catalog disagree (a new upstream pass nobody catalogued, or
an entry whose pass is gone), which is what keeps the catalog complete.

When a pass-coverage report exists (``tox -e coverage``, or ``--coverage
FILE``), each entry also shows whether the corpus exercised it (cases that
changed the program / cases run) and how much of its own source's branches
the corpus executed: listing a pass says nothing about whether it is tested.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

__all__ = ["DEFAULT_COVERAGE", "add_parser", "entry_json", "load_coverage", "measured_text", "run", "render"]

DEFAULT_COVERAGE = "reports/generated/coverage/pass_coverage.json"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "passes",
        help="list the pass catalog: name, module, stage, contract",
        description="List every catalog entry: its name, module:attr, stage, semantics, how passgate builds it, "
                    "the graphs it applies to, known failing checks, or why it cannot run here.",
    )
    p.add_argument("--catalog", nargs="+", metavar="NAME", help="only these catalogs (default: all)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--verbose", "-v", action="store_true", help="also construction, applies-to and known failures")
    p.add_argument("--check-discovery", action="store_true",
                   help="exit 1 when discovery finds a pass without a catalog entry, or an entry's pass is gone")
    p.add_argument("--coverage", metavar="FILE", help="pass-coverage JSON to show per entry: exercised (cases that "
                   f"changed the program / cases run) and branch coverage (default {DEFAULT_COVERAGE} when it exists; "
                   "written by tox -e coverage)")
    p.set_defaults(run=run)


def load_coverage(path: Optional[str]) -> dict:
    """entry name -> its record in a pass_coverage.json; {} when the default file does not exist.

    An explicit ``--coverage`` that cannot be read is a usage error: the user asked for it.
    """
    from harness.core.errors import UsageError

    p = Path(path or DEFAULT_COVERAGE)
    if not p.exists() and path is None:
        return {}
    try:
        doc = json.loads(p.read_text())
        return {e["name"]: e for e in doc["entries"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"cannot read pass coverage {p}: {type(exc).__name__}: {exc}") from None


def measured_text(record: Optional[dict]) -> str:
    """``exercised 3/12, branches 41.2% (lines 60.0%)`` for one entry's coverage record; "" without one."""
    if not record:
        return ""
    x = record.get("exercised") or {}
    ex = {"pass": f"exercised {x.get('cases_changed')}/{x.get('ran')}",
          "fail": f"NOT EXERCISED 0/{x.get('ran')}", "not_applicable": "not applicable to any case",
          "skip": "did not run on any case"}.get(x.get("status"), "not run")
    return f"{ex}, branches {record['branch_percent']:.1f}% (lines {record['line_percent']:.1f}%)"


def entry_json(e) -> dict:
    return {
        "name": e.name, "catalog": e.catalog, "spec": e.spec, "stage": e.stage, "semantics": e.semantics,
        "construct": e.construct, "applies_to": list(e.applies_to), "contract": e.contract,
        "curated": e.curated, "slow": e.slow, "unavailable": e.unavailable or None,
        "known": [{"check": k.check, "reason": k.reason, "upstream": k.upstream, "graphs": list(k.graphs),
                   "kind": k.kind} for k in e.known],
    }


def run(args) -> int:
    from harness import catalog

    measured = load_coverage(args.coverage)
    chosen = catalog.select(args.catalog, discovered=False)
    rows, problems = [], []
    for c in chosen:
        full, check = catalog.with_discovered(c)
        rows.append((full, check))
        problems += [f"{c.name}: discovered but not catalogued: {d.spec}" for d in check.uncatalogued if not d.abstract]
        problems += [f"{c.name}: catalogued but not found: {e.spec}" for e in check.stale]
    if args.json:
        print(json.dumps({"catalogs": [{
            "name": full.name, "description": full.description, "packages": list(full.packages),
            "entries": [{**entry_json(e), **({"measured": measured[e.name]} if e.name in measured else {})}
                        for e in full.entries],
            "import_failures": [{"module": f.module, "error": f.error, "order_dependent": f.order_dependent}
                                for f in check.failures],
        } for full, check in rows], "discovery_problems": problems}, indent=1))
    else:
        print(render(rows, args.verbose, measured))
        for line in problems:
            print(f"passgate: {line}")
    return 1 if args.check_discovery and problems else 0


def render(rows, verbose: bool = False, measured: Optional[dict] = None) -> str:
    lines = []
    total = runnable = 0
    for full, check in rows:
        entries = full.entries
        total += len(entries)
        runnable += sum(1 for e in entries if e.runnable)
        lines.append(f"== {full.name}: {full.description} ({len(entries)} entries, "
                     f"{sum(1 for e in entries if e.runnable)} runnable)")
        width = max((len(e.name) for e in entries), default=4)
        for e in entries:
            if e.unavailable:
                lines.append(f"  {e.name:<{width}}  {'-':<14}  unavailable: {e.unavailable}")
                continue
            flags = "".join((" [changing]" if e.semantics == "changing" else "", " [slow]" if e.slow else "",
                             "" if e.curated else " [uncurated]"))
            shown = measured_text((measured or {}).get(e.name))
            lines.append(f"  {e.name:<{width}}  {e.stage:<14}  {e.contract}{flags}" + (f"  [{shown}]" if shown else ""))
            if verbose:
                lines.append(f"  {'':<{width}}  module: {e.spec}; build: {e.construct}"
                             + (f"; applies to: {', '.join(e.applies_to)}" if e.applies_to else ""))
                for k in e.known:
                    where = f" on {', '.join(k.graphs)}" if k.graphs else ""
                    lines.append(f"  {'':<{width}}  known {k.check} ({k.kind}){where}: {k.reason}"
                                 + (f" [{k.upstream}]" if k.upstream else ""))
        for f in check.failures:
            kind = "imports only after its package (circular import)" if f.order_dependent else "does not import"
            lines.append(f"  ! {f.module} {kind}: {f.error}")
    lines.append(f"{total} catalog entries, {runnable} runnable here, {total - runnable} unavailable (with reasons)")
    if measured:
        missing = sum(1 for r in measured.values() if (r.get("exercised") or {}).get("status") == "fail")
        lines.append(f"pass coverage: {len(measured)} entries measured, {missing} not exercised (no case changed "
                     "the program); [exercised cases changed/run, branch and line coverage of the entry's own source]")
    return "\n".join(lines)
