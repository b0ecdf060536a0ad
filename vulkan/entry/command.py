"""``passgate vulkan``: Vulkan Q/DQ fusion conformance from the command line.

Registered as ``vulkan = "vulkan.entry.command"`` in the ``passgate.commands`` entry
point group (pyproject.toml), which ``harness/cli/main.py`` merges into its
command table (``add_parser(subparsers)`` / ``run(args) -> int``; nothing
heavy at module level, torch imported only in ``run``, so ``passgate --help``
stays fast).

Two ways to pick cases:

- the search (default, :mod:`vulkan.entry.search_run`): hypothesis draws cases
  over each fused op's configuration space (:mod:`vulkan.search.space`) within
  ``--budget`` seconds or ``--examples`` draws per op, and shrinks every
  failure to its smallest case and boundary; ``--replay FILE`` judges
  committed cases instead. Writes ``vulkan_errors.csv``, reproducers and
  ``report.html`` too;
- ``--count N``: the fixed recipe list of :mod:`vulkan.cases.catalog`, N drawn
  shapes per recipe (what this command did before the search).

Both judge the same checks by the same ids: ``fusion_expected``,
``fused_vs_qdq``, ``fused_vs_float``, ``device_vs_reference`` and the IR
checks of the fused program (:mod:`vulkan.judging.ircheck`). ``--bundles DIR``
writes the search's passing cases as BundledPrograms for a device
(:mod:`vulkan.reports.bundles`).

Both write ``DIR/results.json`` (the harness's schema; the per-op table
under the ``"vulkan"`` key), ``DIR/vulkan_table.md`` and
``DIR/vulkan_table.json``. Exit status: 0 all checks hold, 1 a violation,
2 bad usage (one line on stderr).

Both cut the work into items (a fusion on a case, or a fusion's search of
one op: :mod:`vulkan.entry.work`), judged ``-j N`` at a time in forked workers
(:mod:`harness.run.fork_each`; the same verdicts in the same order whatever N),
``--shard I/N`` of them on this machine. Fused programs are cached, a
vendor's ``--pass`` under its source's hash (:mod:`vulkan.cases.lowering`), so a
rerun fuses only what an edit to the pass changed. Ctrl-C (exit 130) and
SIGTERM (exit 1) write the report of the items finished, ``"complete":
false``.
"""

from __future__ import annotations

from harness.cli.check import positive_float, positive_int
from harness.core.shards import argument as shard_argument

__all__ = ["DEFAULT_REPORT_DIR", "MODES", "add_parser", "run"]

DEFAULT_REPORT_DIR = "reports/generated/vulkan"
MODES = ("vulkan-preprocess", "fuse-patterns")
DEFAULT_BUDGET = 600.0  # vulkan.entry.search_run.DEFAULT_BUDGET, kept here so --help imports nothing heavy
BUNDLE_BACKENDS = ("vulkan", "xnnpack", "portable")  # harness.report.bundles.BACKENDS


def add_parser(sub) -> None:
    p = sub.add_parser(
        "vulkan",
        help="check ExecuTorch Vulkan Q/DQ fusions against the Q/DQ program and the float model",
        description=(
            "For each Q/DQ pattern executorch's Vulkan backend fuses (or must decline), quantize a family of "
            "modules with the flow that makes it, run the fusion under test (default: the backend's own "
            "preprocess passes, and FusePatternsPass alone) and check fusion_expected, fused_vs_qdq, "
            "fused_vs_float, device_vs_reference and the IR checks on the fused program. The truth is the "
            "un-fused Q/DQ program and the float model, never the et_vk CPU implementations."
        ),
    )
    p.add_argument("--ops", nargs="+", metavar="OP", help="only recipes whose name or op contains one of these "
                   "(e.g. q8ta_conv2d linear_q4gsw decline); default: all")
    p.add_argument("--executor", metavar="SPEC", help="reference (default; et_vk CPU implementations), "
                   "executorch-vulkan (needs a runtime with VulkanBackend), or a vendor's module:Name / file.py:Name")
    p.add_argument("--pass", dest="fusion_pass", metavar="SPEC", help="a vendor's fusion pass or pipeline "
                   "instead of ExecuTorch's (package.module:Name or path/to/file.py:Name)")
    p.add_argument("--mode", choices=MODES + ("both",), help="which built-in fusion (default both); with --pass, "
                   "which recipes apply (default: the pass's passgate_vulkan_mode, else vulkan-preprocess)")
    p.add_argument("--budget", type=positive_float, metavar="SECONDS",
                   help="search: seconds of new draws, shared out over the fused ops and fusions (default "
                        f"{DEFAULT_BUDGET:g} unless --examples is given); shrinking each failure gets --shrink-time more")
    p.add_argument("--examples", type=positive_int, metavar="N", help="search: at most N draws per fused op "
                   "(default 24); without --budget the search is fully deterministic for a seed")
    p.add_argument("--shrink-time", type=positive_float, default=90.0, metavar="SECONDS",
                   help="search: seconds to shrink one failure and probe around it (default 90)")
    p.add_argument("--replay", metavar="FILE", help="search mode without drawing: judge the cases of FILE (e.g. "
                   "fixtures/vulkan_cases/executorch-1.5.1.json, the shrunk failures a search found) and report them")
    p.add_argument("--save-shrunk", metavar="FILE", help="search: also write the shrunk failing cases to FILE "
                   "(the format --replay reads; how fixtures/vulkan_cases/ was made)")
    p.add_argument("--count", type=positive_int, default=None, help="the fixed recipe list instead of the search: "
                   "cases (hypothesis-drawn shapes) per recipe (the behaviour before the search; 3 was the default)")
    p.add_argument("--seed", type=int, default=0, help="seed for shapes, weights and input draws (default 0)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds one fusion run may take (default 120)")
    p.add_argument("--report", default=DEFAULT_REPORT_DIR, metavar="DIR",
                   help=f"folder for results.json and the table (default {DEFAULT_REPORT_DIR})")
    p.add_argument("--strict", action="store_true", help="should-level checks (meta_debug_handle) fail the run too")
    p.add_argument("--cache-dir", metavar="DIR", help="case cache (default $PASSGATE_CACHE_DIR or ~/.cache/passgate)")
    p.add_argument("--no-cache", action="store_true", help="quantize, lower and fuse everything afresh (by default "
                   "fused programs are cached too: a --pass under the SHA-256 of its source, so only editing it "
                   "fuses again)")
    p.add_argument("-j", "--workers", type=positive_int, default=None, metavar="N",
                   help="judge N items at once, each in a forked worker process: cases (--count) or fused ops "
                        "(the search) (default: the cores this process may use); the same verdicts, in the "
                        "same order, whatever N")
    p.add_argument("--shard", type=shard_argument, metavar="I/N", help="run only part I of N of the items "
                   "(fusion x case, or fusion x fused op for the search; a deterministic split, the parts disjoint "
                   "and covering); join the parts' results.json with `passgate report merge`")
    p.add_argument("--no-isolation", action="store_true", help="judge the items one by one in this process "
                   "(for a debugger): no workers, no deadline past --timeout")
    p.add_argument("--bundles", metavar="DIR", help="search: also write the passing cases (the first of each op x "
                   "configuration) as BundledPrograms for a device, with index.json, into DIR (new or empty): run "
                   "them with `passgate device run`, judge them with `passgate device ingest`")
    p.add_argument("--bundle-backends", nargs="+", choices=BUNDLE_BACKENDS, default=["vulkan"], metavar="NAME",
                   help=f"with --bundles: lower for these ({', '.join(BUNDLE_BACKENDS)}; default vulkan, the "
                        "VulkanPartitioner's program, run by the vendor; portable runs here)")
    p.add_argument("--list", action="store_true", help="list the recipes and exit")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines or table")
    p.set_defaults(run=run)


def _fusions(args) -> list:
    from vulkan.backend import fusion

    if args.fusion_pass:
        from harness.check.loading import load_pass

        loaded = load_pass(args.fusion_pass)
        mode = args.mode if args.mode in MODES else None
        return [fusion.UserFusion(loaded, mode)]
    modes = MODES if args.mode in (None, "both") else (args.mode,)
    return [fusion.builtin(m) for m in modes]


def run(args) -> int:
    from harness.core.errors import UsageError
    from harness.report.results_json import ensure_writable

    if args.list:
        from vulkan.cases import catalog
        from vulkan.search import spaces

        for r in catalog.select(args.ops):
            print(f"{r.name:55s} {'declines' if r.negative else ', '.join(r.expected)}")
        for sp in spaces.select(args.ops):
            print(f"search: {sp.name:47s} {sp.notes or 'every configuration its pattern matches'}")
        return 0
    report_dir = ensure_writable(args.report)
    if args.bundles:
        from harness.run.bundle import check_out

        if args.count is not None:
            raise UsageError("--bundles writes the search's passing cases: leave out --count")
        check_out(args.bundles, "--bundles")
    from vulkan.backend.executors import load_executor
    from vulkan.cases import catalog
    from vulkan.search import spaces

    recipes_ = catalog.select(args.ops) if args.count is not None else spaces.select(args.ops)
    if not recipes_:
        what = "" if args.count is not None else " (nor any fused op's search space)"
        raise UsageError(f"no recipe matches --ops {' '.join(args.ops)}{what} (see passgate vulkan --list)")
    fusions = _fusions(args)
    device = load_executor(args.executor) if args.executor else None
    if device is not None and not getattr(device, "is_device", True):
        device = None  # "reference" is what fused_vs_qdq already runs
    from harness.graphs import cache

    cache.configure(args.cache_dir, disabled=args.no_cache)
    if args.workers is None:
        from harness.run.fork_each import default_jobs

        args.workers = default_jobs()
    if args.count is None:
        from vulkan.entry.search_run import run_search

        return run_search(args, report_dir, fusions, device)
    from vulkan.entry.cases_run import run_cases

    return run_cases(args, report_dir, fusions, device, recipes_)
