"""Pass code no graph can reach: declared by content, checked against the measurement, reported beside it.

Some of a pass module's branches cannot run whatever the corpus holds (a
function registered in a table nothing reads), and some run where coverage.py
cannot see them (a module a pass exports strictly: dynamo interprets its
bytecode, no line executes). Counted as missing, they put a floor under every coverage figure that
no graph can lift, and hide which misses a new graph *could* fix. A catalog
declares them (entry-point group ``passgate.unreachable``: a callable
returning :class:`Unreachable` records, each with its reason), and the
coverage report gives two figures side by side: the raw one, and the one over
reachable code, with every exclusion listed.

coverage.py has the same idea (``exclude_also`` regexes, ``# pragma: no
cover``), but its patterns are global to a run and upstream files cannot carry
pragmas; a declaration here names one function of one module. A declaration is
also a claim the measurement checks: if any line of the declared body ran, the
declaration is wrong, it is not applied, and the report says so; a ``traced``
declaration also needs a line that names its owner (the export call) to have run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Iterable

from harness.core.stability import stable

__all__ = ["Unreachable", "Exclusion", "declared", "exclude", "body_spans"]


@stable
@dataclass(frozen=True)
class Unreachable:
    """Functions of one pass module that no program can make run."""

    #: dotted module name, as the coverage report lists it (``executorch.exir.passes.sym_shape_eval_pass``)
    module: str
    #: function names in that module; ``Class.method`` for a method
    functions: tuple[str, ...]
    #: why nothing reaches them (what would call them, and why it never does), with the version checked
    reason: str
    #: ``dead``: nothing calls them. ``traced``: the pass hands them to ``torch.export(strict=True)``, whose
    #: dynamo runs their bytecode symbolically, where coverage.py's tracer never sees a line; they count as
    #: unmeasured, and the declaration holds only if a line that names their owner (the call) ran
    kind: str = "dead"
    #: (first, last): only these lines of the (one) function are declared, e.g. the branch behind a line that
    #: raises on every real program; (): its whole body
    lines: tuple = ()

    def covers(self, qualname: str, line: int) -> bool:
        """Does the declaration take in ``line`` of ``qualname`` (a line of that function, as a mutant names it)?"""
        return qualname in self.functions and (not self.lines or self.lines[0] <= line <= self.lines[1])


@dataclass
class Exclusion:
    """What one declaration took out of a module's figures (or why it was refused)."""

    module: str
    functions: tuple[str, ...]
    reason: str
    kind: str = "dead"
    lines: int = 0  # missing statements taken out
    branches: int = 0  # missing branches taken out
    refused: str = ""  # non-empty: the declaration was not applied, and why

    def to_json(self) -> dict:
        return {"module": self.module, "functions": list(self.functions), "reason": self.reason, "kind": self.kind,
                "lines": self.lines, "branches": self.branches, "refused": self.refused}


def declared() -> list[Unreachable]:
    """Every ``passgate.unreachable`` plugin's declarations, in plugin order."""
    from harness.core import plugins

    out: list[Unreachable] = []
    for _ep, fn in plugins.load_all(plugins.UNREACHABLE, "unreachable-code"):
        out.extend(fn() if callable(fn) else fn)
    return out


def _callers(tree: ast.AST, owner: str, spans: list[tuple[int, int]]) -> set[int]:
    """Lines outside ``spans`` that name ``owner`` (where a traced module or function is handed to export)."""
    inside = _within(spans)
    return {n.lineno for n in ast.walk(tree)
            if ((isinstance(n, ast.Name) and n.id == owner) or (isinstance(n, ast.Attribute) and n.attr == owner))
            and not inside(n.lineno)}


def body_spans(tree: ast.AST, names: Iterable[str]) -> dict[str, tuple[int, int] | None]:
    """name -> (first, last) line of that function's body (its ``def`` and decorators stay: they ran at import);
    None when the module has no such function."""
    found: dict[str, tuple[int, int]] = {}

    def walk(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[prefix + child.name] = (child.body[0].lineno, child.end_lineno)
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")

    walk(tree, "")
    return {n: found.get(n) for n in names}


def _within(spans: list[tuple[int, int]]):
    return lambda line: any(a <= line <= b for a, b in spans)


def exclude(files: dict, declarations: Iterable[Unreachable]) -> tuple[dict, list[Exclusion]]:
    """(module -> its coverage over reachable code, one :class:`Exclusion` per declaration).

    ``files``: module -> ``FileCoverage`` (with its ``path`` and ``executed_lines``). A
    declaration whose module was not measured is listed as refused; one whose body ran is refused and leaves
    the figures as measured."""
    out = dict(files)
    report: list[Exclusion] = []
    for d in declarations:
        ex = Exclusion(d.module, tuple(d.functions), d.reason, d.kind)
        report.append(ex)
        cov = out.get(d.module)
        path = cov.path if cov is not None else ""
        if not path:
            ex.refused = "module not measured"
            continue
        tree = ast.parse(open(path, encoding="utf-8").read())
        spans = body_spans(tree, d.functions)
        absent = [n for n, span in spans.items() if span is None]
        if absent:
            ex.refused = f"no function {', '.join(absent)} in {path}"
            continue
        bodies = [(max(a, d.lines[0]), min(b, d.lines[1])) if d.lines else (a, b) for a, b in spans.values()]
        inside = _within(bodies)
        ran = sorted(line for line in cov.executed_lines if inside(line))
        if ran:
            ex.refused = f"declared unreachable, but lines {ran[:5]} ran"
            continue
        if d.kind == "traced":
            executed = set(cov.executed_lines)
            if not any(executed & _callers(tree, owner, bodies) for owner in {f.split(".")[0] for f in d.functions}):
                ex.refused = "declared traced, but no line that hands it to the tracer ran"
                continue
        lines = [line for line in cov.missing_lines if inside(line)]
        branches = [b for b in cov.missing_branches if inside(b[0])]
        ex.lines, ex.branches = len(lines), len(branches)
        out[d.module] = replace(cov, statements=cov.statements - len(lines), branches=cov.branches - len(branches),
                                missing_lines=[x for x in cov.missing_lines if not inside(x)],
                                missing_branches=[b for b in cov.missing_branches if not inside(b[0])])
    return out, report
