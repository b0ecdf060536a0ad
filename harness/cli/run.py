"""``passgate run``: run pass catalogs (and backend pipelines) over graph sources; optionally gate.

``passgate check`` answers "is this pass right?"; ``run`` answers "are all
the passes we ship right, and did anything get worse?": every runnable
catalog entry on every graph it applies to, at its stage, built the way its
backend builds it, plus the backend pipelines verified after each pass.
With ``--baseline`` the exit status is the gate's: 1 only for a violation
the baseline does not record (a regression); fixed ones are reported.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from harness.cli.check import (
    add_common_run_options,
    add_hash_seed_option,
    configure_cache,
    judge_exercised,
    positive_int,
)

__all__ = ["add_parser", "add_run_arguments", "add_incremental_arguments", "incremental_of", "catalog_section",
           "annotate_known", "plan_of", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser(
        "run",
        help="run pass catalogs over graph sources under IR-spec verification; gate against a baseline",
        description=(
            "Run every runnable entry of the selected catalogs on the graphs it applies to (and, in the standard "
            "and full profiles, the Vulkan / XNNPACK / to_executorch pipelines verified after each pass). "
            "Profiles: quick (core catalogs, built-in graphs, no slow passes: pre-merge, a few minutes on 2 cores), "
            "standard (every catalog, built-in + quantized graphs, pipelines: tox -e conformance), full (every "
            "graph source: certification). With --baseline FILE, exit 1 only on a regression."
        ),
    )
    add_run_arguments(p)
    add_hash_seed_option(p)
    p.add_argument("--baseline", metavar="FILE", help="gate against this baseline (e.g. reports/baseline.json)")
    p.add_argument("--shard-costs", metavar="FILE",
                   help="with --shard: cut the shards by the time each unit took in an earlier run (its results.json, "
                        "or a file `passgate report costs` wrote), not by unit count; every shard must read the same "
                        "file")
    add_incremental_arguments(p)
    p.set_defaults(run=run)


def add_incremental_arguments(p) -> None:
    """The verdict cache and affected-only selection (harness/run/incremental.py); ``run`` only, never certify."""
    p.add_argument("--incremental", action=argparse.BooleanOptionalAction, default=True,
                   help="reuse the recorded results of units whose executed files, case, checks and versions are "
                        "unchanged (the verdict cache under the cache folder's verdicts/; default on); "
                        "--no-incremental runs every unit (and still records them)")
    p.add_argument("--changed-since", metavar="GITREF",
                   help="run only the units whose recorded dependencies include a file changed since GITREF "
                        "(git diff GITREF, untracked files included); units with no record always run")
    p.add_argument("--affected-by", nargs="+", metavar="FILE",
                   help="run only the units whose recorded dependencies include one of these files "
                        "(units with no record always run)")


def _check_selection(text: str) -> frozenset:
    from harness.cli.check import check_selection

    return check_selection(text)


def add_run_arguments(p) -> None:
    """The workload options ``run`` and ``baseline update`` share."""
    from harness.run.profiles import PROFILES

    p.add_argument("--catalog", nargs="+", metavar="NAME|SPEC",
                   help="catalog names (see `passgate passes`) or module:attr / file.py:attr giving a Catalog; "
                        "default: the profile's")
    p.add_argument("--profile", choices=tuple(PROFILES), default="standard",
                   help="workload (default standard)")
    p.add_argument("--only", nargs="+", metavar="PATTERN", help="only entries whose name matches a glob")
    p.add_argument("--pipeline", dest="pipelines", action="append", metavar="NAME|SPEC",
                   help="also run this pipeline verify-each (repeatable; default: the profile's, none with --catalog)")
    p.add_argument("--no-pipelines", action="store_true", help="run no pipeline")
    p.add_argument("--partitioner", dest="partitioners", action="append", choices=("vulkan", "xnnpack"),
                   help="also check this backend partitioner (repeatable; default: the profile's, none with --catalog)")
    p.add_argument("--no-partitioners", action="store_true", help="check no partitioner")
    p.add_argument("--runtime", action=argparse.BooleanOptionalAction, default=None,
                   help="a runtime unit per case, each pipeline's result and the XNNPACK partitioner's lowered "
                        "program through the runtime checks (serialize_roundtrip, runtime_runs, runtime_numerics; "
                        "docs/runtime.md); default: the profile's (standard: all three), none with --catalog or "
                        "--only")
    p.add_argument("--checks", type=_check_selection, metavar="LIST",
                   help="judge only these checks of each entry on each graph (ids and the levels must / should, "
                        "comma-separated, as `passgate check --checks`; runs is always in); default: every one. "
                        "`--checks runs` measures only what each pass changes, the map `baseline update "
                        "--exercised-only` records")
    p.add_argument("-j", "--workers", type=positive_int, metavar="N",
                   help="units judged at once, each in a worker process (default: the cores this process may run "
                        "on); results, reports and progress come in the same order whatever N")
    add_common_run_options(p)


def catalog_section(entries, runnable, applied: dict, skipped_slow) -> dict:
    from harness.cli.passes import entry_json

    ran = {name for name, graphs in applied.items() if graphs}
    return {
        "entries": len(entries),
        "runnable": len(runnable),
        "ran": len(ran),
        "unavailable": [{"name": e.name, "spec": e.spec, "reason": e.unavailable} for e in entries if e.unavailable],
        "not_run": [{"name": e.name, "reason": "no selected graph applies (stage/graphs: "
                     f"{e.stage} {', '.join(e.applies_to) or 'float graphs'})"}
                    for e in runnable if not applied.get(e.name)]
                   + [{"name": e.name, "reason": "slow: left out of this profile"} for e in skipped_slow],
        "ran_on": {name: graphs for name, graphs in applied.items() if graphs},
        "definitions": [entry_json(e) for e in entries if not e.unavailable],
    }


def annotate_known(results, entries, specs_by_name) -> None:
    """Mark violations the catalog expects with its reason (the baseline decides what fails)."""
    by_name = {e.name: e for e in entries}
    for r in results:
        e = by_name.get(r.pass_name)
        spec = specs_by_name.get(r.graph)
        if e is None or spec is None or not r.is_violation(strict=True):
            continue
        k = e.known_for(r.check, r.graph, spec.tags | {spec.source})
        if k is not None:
            r.details = {**r.details, "known": {"reason": k.reason, "upstream": k.upstream, "kind": k.kind}}


def plan_of(args):
    """The :class:`harness.run.plan.RunPlan` ``run``'s options select (shared with ``baseline update``)."""
    from harness.run import plan

    return plan.build(args.profile, catalogs=args.catalog, only=args.only, graphs=args.graphs, count=args.count,
                      seed=args.seed, pipelines=args.pipelines, no_pipelines=args.no_pipelines,
                      partitioners=args.partitioners, no_partitioners=args.no_partitioners,
                      runtime=getattr(args, "runtime", None))


def _catalog_text(p, applied: dict, results: list) -> str:
    """What ran of the catalog, and which entries no case made change the program (their green says nothing)."""
    from harness.core.results import PASS_LEVEL, Status

    n_ran = sum(1 for graphs in applied.values() if graphs)
    lines = [f"passgate: catalog: {len(p.entries)} entries, {len(p.runnable)} runnable, {n_ran} ran, "
             f"{sum(1 for e in p.entries if e.unavailable)} unavailable (see `passgate passes`)"]
    judged = [r for r in results if r.check == "exercised" and r.graph == PASS_LEVEL]
    if judged:
        idle = [r.pass_name for r in judged if r.status is Status.FAIL]
        lines.append(f"passgate: exercised: {len(judged) - len(idle)} of {len(judged)} entries changed the program "
                     f"on some case; not exercised: {', '.join(idle) or 'none'}")
    return "\n".join(lines)


def incremental_of(args):
    """The :class:`harness.run.incremental.Incremental` ``run``'s options ask for.

    With ``--no-cache`` there is no verdict cache: nothing is reused or recorded, and every unit is
    affected (there is no record to say otherwise)."""
    from pathlib import Path

    from harness.graphs import cache as case_cache
    from harness.run import affected, incremental, verdicts

    changed = None
    if getattr(args, "changed_since", None):
        changed = affected.changed_since(args.changed_since)
    if getattr(args, "affected_by", None):
        changed = (changed or set()) | affected.normalize(args.affected_by)
    if getattr(args, "no_cache", False):
        return incremental.Incremental(None, reuse=False, changed=changed)
    root = case_cache.default_cache_root() if not getattr(args, "cache_dir", None) else args.cache_dir
    return incremental.Incremental(verdicts.VerdictCache(Path(root) / "verdicts"),
                                   reuse=getattr(args, "incremental", True), changed=changed)


def _shard_costs(args):
    """``--shard-costs``: units -> their recorded seconds, for the shard split; None without the option."""
    from harness.core.errors import UsageError

    path = getattr(args, "shard_costs", None)
    if path is None:
        return None
    if getattr(args, "shard", None) is None:
        raise UsageError("--shard-costs only applies with --shard I/N")
    from harness.run import costs

    recorded = costs.read(path)
    return lambda units: costs.unit_costs(units, recorded)


def _digest(path) -> str:
    import hashlib
    from pathlib import Path

    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def run(args) -> int:
    """``passgate run``: a one-shot process, so the cycle collector runs only where graphs are made
    (loading cases, judging: harness/core/memory.py), not over the imports and records of the rest."""
    from harness.core.memory import collection_paused

    with collection_paused():
        return _run(args)


def _run(args) -> int:
    from harness.core.config import RunConfig, configuration
    from harness.report import baseline as bl
    from harness.report import results_json as report_json
    from harness.run import forking, parallel, sharding
    from harness.run.scheduler import Tally
    from harness.run.session import Session

    base = bl.load(args.baseline) if getattr(args, "baseline", None) else None  # bad baseline: exit 2 before any work
    unit_costs = _shard_costs(args)  # a bad costs file: exit 2 before any work
    inc = incremental_of(args)  # a bad --changed-since: exit 2 before any work
    from harness.run import hashseed

    worker = hashseed.started(getattr(args, "hash_seed_check", False))  # its imports overlap the plan's
    p = plan_of(args)
    report_dir = report_json.ensure_writable(args.report)
    configure_cache(args)
    config = RunConfig(timeout=args.timeout, seed=args.seed, checks=getattr(args, "checks", None),
                       isolate=not getattr(args, "no_isolation", False) and forking.available(),
                       hash_seed_check=getattr(args, "hash_seed_check", False),
                       workers=getattr(args, "workers", None) or parallel.default_jobs())
    full_applied = {k: list(v) for k, v in p.applied.items()}
    shard = getattr(args, "shard", None)
    # what the run is made of, named before a shard keeps its block: the configuration of every shard of one run
    # is the same (report merge checks it), also when a shard holds no unit of some pipeline or partitioner
    pipelines, partitioners = [x.name for x in p.pipelines], list(p.partitioners)
    if shard:  # contiguous block I of N of the units, graph-major (fewer lowerings each), by count or recorded time
        p.keep(set(sharding.split(p.units(), shard, key=lambda u: (u.graph, u.kind, u.name), costs=unit_costs)))
    session = Session(report_dir=report_dir, strict=args.strict, quiet=args.quiet,
                      resume=getattr(args, "resume", False), configuration=configuration(
        "run", profile=p.profile.name, catalogs=[c.name for c in p.catalogs], entries=[e.name for e in p.runnable],
        pipelines=pipelines, partitioners=partitioners, graphs=[s.name for s in p.specs],
        **({"hash_seed_check": True} if config.hash_seed_check else {}),
        # shards cut by different costs do not make one run: report merge compares this too
        **({"shard_costs": _digest(args.shard_costs)} if unit_costs is not None else {}),
        graph_selection=args.graphs or p.profile.graphs, seed=args.seed, count=args.count, timeout=args.timeout,
        strict=args.strict, baseline=getattr(args, "baseline", None), shard=shard,
        **({"checks": sorted(config.checks)} if config.checks else {})))
    session.json_of = inc.recorded_json  # reused verdicts go into results.json as they were recorded
    for note in p.notes:
        session.note(note)
    gate_box: dict = {}

    def body(s: Session) -> None:
        units = p.units()
        total = sum(u.pairs for u in units)
        # reused units load no case; not affected ones do not run (harness/run/incremental.py)
        inc.execute(p, units, replace(config, skip=s.done_pairs), Tally(s.record, total), load_cases=s.load_cases)
        inc.case_notes(p, s)  # cases only reused units ran on: reported from the cache's notes, not loaded
        s.note(inc.counts.text())
        # the entries (and SPEC passes) are the passes under test: pipeline steps and partitioners are not
        judge_exercised(s, [e.name for e in p.runnable] + [x.name for x in p.passes], shard)

    def extra() -> dict:
        annotate_known(session.results, p.entries, p.specs_by_name)
        doc = {"catalog": catalog_section(p.entries, p.runnable, p.applied, p.skipped_slow),
               "incremental": inc.to_json()}
        if base is not None:
            g = bl.gate(session.results, base, args.strict, args.baseline)
            session.waived = g.waived()
            gate_box["gate"] = g
            doc["gate"] = g.to_json()
        return doc

    try:
        status = session.run(body, extra=extra)
    finally:
        if worker is not None:
            hashseed.close()
    if not args.quiet:
        print(_catalog_text(p, full_applied, session.results), file=sys.stdout)
    if "gate" in gate_box:
        print(bl.render(gate_box["gate"]), file=sys.stdout if not args.quiet else sys.stderr)
    return status
