"""``passgate passes``: list the pass catalog (name, module, stage, contract).

Answers "which passes does passgate run, how does it build each, and what
does it expect of them" without running anything: the explicit entries, the
passes discovery found that have no entry yet, the passes that cannot run
here (with why), and, with ``--check-discovery``, a non-zero exit when
discovery and the catalog disagree (a new upstream pass nobody catalogued, or
an entry whose pass is gone), which is what keeps the catalog complete.
"""

from __future__ import annotations

import json

__all__ = ["add_parser", "entry_json", "run", "render"]


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
    p.set_defaults(run=run)


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
            "entries": [entry_json(e) for e in full.entries],
            "import_failures": [{"module": f.module, "error": f.error, "order_dependent": f.order_dependent}
                                for f in check.failures],
        } for full, check in rows], "discovery_problems": problems}, indent=1))
    else:
        print(render(rows, args.verbose))
        for line in problems:
            print(f"passgate: {line}")
    return 1 if args.check_discovery and problems else 0


def render(rows, verbose: bool = False) -> str:
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
            lines.append(f"  {e.name:<{width}}  {e.stage:<14}  {e.contract}{flags}")
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
    return "\n".join(lines)
