"""Coverage of pass code: which lines of each upstream pass module the graph corpus executes.

A catalog run that is all green says little about a pass whose rewrite no
graph ever triggers: FusePatternsPass "passes" on a float MLP because none of
its patterns match. This runs the catalog (and the backend pipelines and
partitioners, which reach the Vulkan pattern registry) under coverage.py and
reports, per pass module, the share of its statements executed, so pass
logic no graph reaches is visible.

Coverage starts before torch or any pass module is imported, so module-level
lines (imports, ``def``s, pattern registrations) count as executed the way a
normal import executes them, and the run is in-process (isolated workers are
forked children coverage would not see).

Usage (what ``tox -e coverage`` runs)::

    python -m harness.cli.pass_coverage [--profile quick|standard|full] [--catalog NAME ...]
                                    [--graphs ...] [--report DIR] [--min-percent P]

Writes ``DIR/pass_coverage.json`` and ``DIR/pass_coverage.md`` and prints the
table; exit status 0 (2 on bad usage; 1 only when ``--min-percent`` is given
and a module of the Vulkan catalog falls below it).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

from harness.core.kinds import ExitCode

__all__ = ["DEFAULT_REPORT", "ModuleCoverage", "measured_modules", "module_file", "analyse", "render", "main"]

DEFAULT_REPORT = "reports/generated/coverage"


@dataclass
class ModuleCoverage:
    module: str
    catalog: str
    statements: int
    executed: int
    missing_lines: list

    @property
    def percent(self) -> float:
        return 100.0 * self.executed / self.statements if self.statements else 100.0


def _executorch_root() -> str:
    from importlib.util import find_spec

    spec = find_spec("executorch")
    return list(spec.submodule_search_locations)[0]


def measured_modules(catalog_names) -> dict:
    """module name -> catalog name: every module a runnable entry lives in, plus the Vulkan patterns."""
    from harness.catalog import resolve_catalogs

    out: dict = {}
    for c in resolve_catalogs(catalog_names):
        for e in c.entries:
            module = e.spec.partition(":")[0]
            if e.runnable and module.startswith("executorch."):
                out.setdefault(module, c.name)
        if c.name == "vulkan":
            import pkgutil

            import executorch.backends.vulkan.patterns as patterns

            out.setdefault(patterns.__name__, "vulkan")
            for info in pkgutil.iter_modules(patterns.__path__, patterns.__name__ + "."):
                out.setdefault(info.name, "vulkan")
    return out


def module_file(module: str) -> Optional[str]:
    from importlib.util import find_spec

    try:
        spec = find_spec(module)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec and spec.origin and spec.origin.endswith(".py") else None


def analyse(cov, modules: dict) -> list[ModuleCoverage]:
    rows = []
    for module, catalog in sorted(modules.items(), key=lambda kv: (kv[1], kv[0])):
        path = module_file(module)
        if path is None:
            continue
        _, statements, _, missing, _ = cov.analysis2(path)
        rows.append(ModuleCoverage(module, catalog, len(statements), len(statements) - len(missing), list(missing)))
    return rows


def render(rows: list[ModuleCoverage]) -> str:
    lines = ["| catalog | pass module | statements | executed | coverage |", "| --- | --- | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r.catalog} | `{r.module.replace('executorch.', '')}` | {r.statements} | {r.executed} | "
                     f"{r.percent:.1f}% |")
    by_catalog: dict = {}
    for r in rows:
        s, e = by_catalog.get(r.catalog, (0, 0))
        by_catalog[r.catalog] = (s + r.statements, e + r.executed)
    lines.append("")
    lines += [f"- {c}: {e}/{s} statements, {100.0 * e / s if s else 100:.1f}%" for c, (s, e) in by_catalog.items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.cli.pass_coverage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=("quick", "standard", "full"), default="standard")
    parser.add_argument("--catalog", nargs="+", metavar="NAME")
    parser.add_argument("--graphs", nargs="+", metavar="NAME")
    parser.add_argument("--report", default=DEFAULT_REPORT, metavar="DIR")
    parser.add_argument("--cache-dir", metavar="DIR")
    parser.add_argument("--min-percent", type=float, help="exit 1 if a Vulkan pass module is covered less")
    args = parser.parse_args(argv)

    import coverage

    cov = coverage.Coverage(data_file=None, source=[_executorch_root()], branch=False,
                            omit=["*/test/*", "*/tests/*", "*/third-party/*"])
    cov.start()
    try:
        from harness.cli.main import main as passgate

        run_args = ["run", "--profile", args.profile, "--no-isolation", "-q", "--report", args.report]
        run_args += ["--catalog", *args.catalog] if args.catalog else []
        run_args += ["--graphs", *args.graphs] if args.graphs else []
        run_args += ["--cache-dir", args.cache_dir] if args.cache_dir else []
        if args.catalog:  # --catalog alone switches pipelines and partitioners off in `run`: keep them here
            run_args += ["--pipeline", "vulkan", "--partitioner", "vulkan"]
        status = passgate(run_args)
    finally:
        cov.stop()
    if status == ExitCode.USAGE:
        return ExitCode.USAGE
    from harness.run.profiles import profile

    rows = analyse(cov, measured_modules(args.catalog or list(profile(args.profile).catalogs) or None))
    report = Path(args.report)
    report.mkdir(parents=True, exist_ok=True)
    (report / "pass_coverage.json").write_text(json.dumps(
        {"profile": args.profile, "modules": [{**asdict(r), "percent": round(r.percent, 2)} for r in rows]}, indent=1))
    table = render(rows)
    (report / "pass_coverage.md").write_text("# Pass code executed by the graph corpus\n\n" + table + "\n")
    print(table)
    low = [r for r in rows if r.catalog == "vulkan" and args.min_percent is not None and r.percent < args.min_percent]
    return ExitCode.VIOLATION if low else ExitCode.OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
