"""The plugin API, declared: every entry-point group passgate reads, what an entry must give, and when it is read.

Why one module of declarations: a vendor plugs in through several groups,
and their contracts used to live in ``pyproject.toml`` comments, which
nobody checks. Here they are data, as pytest declares its hooks in
``hookspec.py``: :mod:`harness.core.plugins` reads only groups declared
here, ``docs/reference/plugin-api.md`` is written from them, and
``tests/test_plugin_spec.py`` checks that the declared groups are exactly
the ones ``pyproject.toml`` registers and that every type they name is
exported from ``harness`` and marked :func:`~harness.core.stability.stable`.

Every group is read in one stable order (the entry point named ``passgate``
first, then by name); an entry that fails to load is bad input, named in
one line (exit status 2). ``examples/passgate-example-vendor`` is a plugin
package using four of them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EntryPointGroup", "CATALOGS", "PIPELINES", "GRAPH_SOURCES", "UNITS", "SUITE_PASSES", "QUANTIZERS",
           "UNREACHABLE", "COMMANDS", "TRIAGE", "REPORT_SECTIONS", "PYTEST11", "GROUPS", "group"]


@dataclass(frozen=True)
class EntryPointGroup:
    """One entry-point group: its contract with the plugins registering under it."""

    #: the group's name in a plugin's ``[project.entry-points."<name>"]`` table
    name: str
    #: what an entry point of the group names (a callable, a module, an object)
    entry: str
    #: what that gives the engine
    returns: str
    #: when passgate reads the group (and so when a plugin's module is imported)
    read_when: str
    #: a registration as a plugin writes it: the TOML line, then the Python it names
    example: str
    #: the names of ``harness`` a plugin of this group builds or reads its values with
    types: tuple[str, ...] = ()


CATALOGS = EntryPointGroup(
    "passgate.catalogs", "a callable (or a Catalog, or a list of them)",
    "a Catalog or a list of Catalogs; catalog names are unique across plugins",
    "a run, `passes`, `certify` and the conformance suite build their plan; `--catalog NAME` selects one",
    'mine = "mybackend.passgate_catalog:catalogs"\n\n'
    'def catalogs():\n    return [Catalog("mine", ("mybackend.passes",), (entry("mine", "mybackend.passes:FuseX"),))]',
    ("Catalog", "CatalogEntry", "entry", "known", "KnownFailure", "Build", "Config", "Lazy"))
PIPELINES = EntryPointGroup(
    "passgate.pipelines", "a zero-argument callable, or a dict name -> such callable (registering several)",
    "a Pipeline: its passes run in order, the program verified after every step (a step's numerics against "
    "its own input; `Step(..., semantics=\"changing\")` declares that one step meaning-changing)",
    "`--pipeline NAME`, `bisect`, and the profiles that name pipelines",
    'mine = "mybackend.passgate_pipelines:mine"\n\n'
    'def mine():\n    return Pipeline("mine", (Step("FuseX", EntryFactory("mybackend.passes:FuseX", Build())),))',
    ("Pipeline", "Step", "EntryFactory", "Build"))
GRAPH_SOURCES = EntryPointGroup(
    "passgate.graph_sources", "a callable or an attribute; the callable's `order` attribute ranks the source",
    "a tuple of CaseSpec",
    "`--graphs NAME` uses the source; `passgate graphs` lists the names (importing none of them)",
    'mine = "mybackend.passgate_graphs:graphs"\n\n'
    'def graphs():\n    return (CaseSpec("my_block", "mine", build_my_block, definition=SOURCE_TEXT),)',
    ("CaseSpec", "ModelInputs"))
UNITS = EntryPointGroup(
    "passgate.units", "a callable (profile, seed)",
    "a list of Unit subclass instances: work a plan adds beside catalog entries, pipelines and partitioners "
    "(a vendor's partitioner check, its fusion cases)",
    "a plan is built for a profile, unless `--catalog`, `--only` or `--graphs` narrows the run",
    'mine = "mybackend.passgate_units:units"\n\n'
    'def units(profile, seed):\n    return [MyPartitionerUnit("mine", g) for g in ("mlp", "residual_block")]',
    ("Unit", "BackendPartitioner", "check_backend_partitioner", "CheckResult", "Status"))
SUITE_PASSES = EntryPointGroup(
    "passgate.suite_passes", "a zero-argument callable",
    "(pass SPECs, known(graphs) -> {(pass name, graph, check): reason}): passes the versioned suite runs and "
    "their recorded violations (known() without graphs: on the graphs the plugin picks)",
    "the conformance suite and `certify` build their workload",
    'mine = "mybackend.passgate_suite:suite_passes"\n\n'
    'def known(graphs=("my_block",)):\n    return {("FuseX", g, "meta_val"): "upstream issue 12" for g in graphs}\n\n'
    'def suite_passes():\n    return ("mybackend.passes:FuseX",), known',
    ())
QUANTIZERS = EntryPointGroup(
    "passgate.quantizers",
    "a PT2EFlow, or source text defining quantize(model, inputs, dynamic_shapes) -> ExportedProgram",
    "a PT2E quantization flow; the entry point's name is the `_q<name>` suffix of the cases it makes",
    "random programs are drawn for quantized passes (`fuzz --quantize`, `--graphs random_quantized`)",
    'mine = "mybackend.passgate_quant:FLOW"\n\n'
    'FLOW = PT2EFlow("mine", QUANTIZE_SOURCE, "MyQuantizer, per-channel int8")',
    ("PT2EFlow",))
UNREACHABLE = EntryPointGroup(
    "passgate.unreachable", "a callable (or a list)",
    "Unreachable records: pass code no program can reach (whole functions, or a line range of one), each with its "
    "reason",
    "`tox -e coverage` gives its figures over reachable code beside the raw ones; `passgate mutate` counts a mutant "
    "no case reaches there as unreachable, out of the score and listed",
    'mine = "mybackend.passgate_coverage:unreachable"\n\n'
    'def unreachable():\n    return [Unreachable("mybackend.passes", ("FuseX._legacy",), "no caller since 2.0")]',
    ("Unreachable",))
COMMANDS = EntryPointGroup(
    "passgate.commands", "a module",
    "add_parser(subparsers) and run(args) -> exit status; torch imported only in run; "
    "a name cannot replace an engine command",
    "`passgate` builds its parser (the module is imported then; the group is read without importing it)",
    'mine = "mybackend.passgate_cli"\n\n'
    'def add_parser(subparsers):\n    subparsers.add_parser("mine", help="...")\n\ndef run(args):\n    return 0',
    ("ExitCode", "UsageError"))
TRIAGE = EntryPointGroup(
    "passgate.triage", "a callable (pass name, check, message, graph=None)",
    "a KnownFailure explaining the violation, or None; consulted in entry point order, the first answer wins",
    "`passgate baseline update` records a violation that no catalog entry's known failures name",
    'mine = "mybackend.passgate_triage:triage"\n\n'
    'def triage(pass_name, check, message, graph=None):\n'
    '    return KnownFailure(check, "drops stack traces") if "FuseX" in pass_name else None',
    ("KnownFailure",))
REPORT_SECTIONS = EntryPointGroup(
    "passgate.report_sections", "a callable (doc: the results.json document)",
    "an HTML string, or \"\" for nothing; one that raises costs its section, not the report",
    "`report.html` is written",
    'mine = "mybackend.passgate_report:section"\n\n'
    'def section(doc):\n    return "<h2>MyBackend</h2>" if doc["results"] else ""',
    ())
PYTEST11 = EntryPointGroup(
    "pytest11", "the module harness.pytest_plugin (pytest's own group: passgate registers, plugins do not)",
    "the `passgate` fixture",
    "every pytest run in an environment with passgate installed (imports only pytest until the fixture is used)",
    'passgate = "harness.pytest_plugin"',
    ())

#: every group passgate reads, in the order the plugin API page lists them
GROUPS: tuple[EntryPointGroup, ...] = (CATALOGS, PIPELINES, GRAPH_SOURCES, UNITS, SUITE_PASSES, QUANTIZERS,
                                       UNREACHABLE, COMMANDS, TRIAGE, REPORT_SECTIONS, PYTEST11)


def group(name: str) -> EntryPointGroup:
    """The declaration of group ``name``; ValueError for a group nobody declared (a typo in the engine)."""
    for g in GROUPS:
        if g.name == name:
            return g
    raise ValueError(f"entry-point group {name!r} is not declared in harness.core.pluginspec")
