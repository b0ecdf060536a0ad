"""Mutation operators: the small ways a pass is broken, found in its source with :mod:`ast`.

Why our own operators and not cosmic-ray's or mutmut's: the mutants that
matter for a graph pass are domain ones those tools do not have (a removed
``meta`` copy, a dropped keyword argument of a node constructor, a guard or
early return taken away, two arguments swapped, a dim or index off by one),
and their engines apply a mutant by rewriting the file on disk (cosmic-ray in
place; mutmut a trampolined copy of the tree run by its own test runner),
where here the file is an installed ExecuTorch module that other processes
read, and the cases the mutant runs on are already loaded in a warm parent.
So mutants are made on the AST and compiled in memory
(:mod:`harness.mutate.overlay`), never written anywhere. The generic
operators (comparison, boolean, arithmetic, number replacement) follow
cosmic-ray's operator set.

Only code inside functions and methods is mutated: module- and class-level
statements run once at import, before any mutant could be applied.
Every mutant is addressed by a stable id (``file:line:col:operator:k``) so a
seeded sample and a report name the same mutants on every machine.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

__all__ = ["OPERATORS", "Site", "Mutant", "functions", "mutants_of", "mutated_tree"]

_COMPARE_SWAPS = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
_BINOP_SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
                ast.Div: ast.Mult, ast.Mod: ast.FloorDiv}
_EXITS = (ast.Return, ast.Continue, ast.Break, ast.Raise)


@dataclass(frozen=True)
class Site:
    """One place an operator can change: the node's position in ``ast.walk`` order of its function, and how."""

    operator: str
    index: int  # position of the node in ast.walk(function) order
    choice: int  # which of the operator's changes at that node
    line: int
    col: int
    before: str
    after: str


def _is_meta(node: ast.AST) -> bool:
    """Does this expression read or write a node's ``meta`` (``n.meta[...]``, ``n.meta.update``, ``meta=...``)?"""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr == "meta":
            return True
        if isinstance(sub, ast.keyword) and sub.arg == "meta":
            return True
    return False


def _stmt_writes_meta(node: ast.stmt) -> bool:
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(_is_meta(t) for t in targets)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return _is_meta(node.value.func) or any(kw.arg == "meta" for kw in node.value.keywords)
    return False


def _compare(node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in _COMPARE_SWAPS:
                new = copy.deepcopy(node)
                new.ops[i] = _COMPARE_SWAPS[type(op)]()
                yield new, ""


def _boolean(node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    if isinstance(node, ast.BoolOp):
        new = copy.deepcopy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield new, ""
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield copy.deepcopy(node.operand), ""
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield ast.Constant(not node.value), ""


def _arithmetic(node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAPS:
        new = copy.deepcopy(node)
        new.op = _BINOP_SWAPS[type(node.op)]()
        yield new, ""


def _number(node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Off by one: an integer literal (a dim, an index, a count) one more and one less."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        yield ast.Constant(node.value + 1), ""
        yield ast.Constant(node.value - 1), ""


def _keyword(node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """A call with one keyword argument dropped (the callee's default takes its place)."""
    if isinstance(node, ast.Call):
        for i, kw in enumerate(node.keywords):
            if kw.arg is None:
                continue  # **kwargs
            new = copy.deepcopy(node)
            del new.keywords[i]
            yield new, f"drop {kw.arg}="


def _swap(node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """A call with its first two positional arguments swapped."""
    if isinstance(node, ast.Call) and len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args[:2]):
        if ast.dump(node.args[0]) != ast.dump(node.args[1]):
            new = copy.deepcopy(node)
            new.args[0], new.args[1] = new.args[1], new.args[0]
            yield new, ""


def _guard(node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """An ``if`` whose test is forced: always taken, never taken (a guard removed, a rewrite never done)."""
    if isinstance(node, ast.If):
        for value in (True, False):
            new = copy.deepcopy(node)
            new.test = ast.Constant(value)
            yield new, f"if {value}:"


def _exit(node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """An early exit (return / continue / break / raise inside an ``if`` or loop) taken away."""
    if isinstance(node, _EXITS) and getattr(node, "_passgate_nested", False):
        yield ast.Pass(), "pass"


def _meta(node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """A statement that copies or sets node metadata removed."""
    if isinstance(node, ast.stmt) and _stmt_writes_meta(node):
        yield ast.Pass(), "pass"


OPERATORS: dict[str, Callable[[ast.AST], Iterator[tuple[ast.AST, str]]]] = {
    "compare": _compare,
    "boolean": _boolean,
    "arithmetic": _arithmetic,
    "number": _number,
    "keyword": _keyword,
    "swap_args": _swap,
    "guard": _guard,
    "early_exit": _exit,
    "meta": _meta,
}
"""Operator name -> a function yielding (replacement node, how it reads) for a node it can change."""


def functions(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    """(qualname, node) of every module-level function and every method of a module-level class, in order.

    The outermost function is the unit an overlay swaps: a mutant inside a nested function or lambda
    changes the constants of its outer function's code, which the overlay replaces whole."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{node.name}.{sub.name}", sub


def _mark_nested_exits(fn: ast.AST) -> None:
    """Mark exits inside an ``if`` / loop / ``with`` body: the early ones (a function's last return is not)."""
    for node in ast.walk(fn):
        if isinstance(node, (ast.If, ast.For, ast.While, ast.With)):
            for child in node.body + getattr(node, "orelse", []):
                if isinstance(child, _EXITS):
                    child._passgate_nested = True


def _walk_body(fn: ast.AST) -> list[ast.AST]:
    """The nodes of a function's body in ``ast.walk`` order, decorators and annotations left out."""
    out: list[ast.AST] = []
    for stmt in fn.body:
        out.extend(ast.walk(stmt))
    return out


def _docstring(fn: ast.AST) -> Optional[ast.AST]:
    first = fn.body[0] if fn.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.value
    return None


@dataclass(frozen=True)
class Mutant:
    """One small break of one function of one source file."""

    file: str
    qualname: str  # the outermost function or method holding the change
    site: Site

    @property
    def id(self) -> str:
        return f"{self.path}:{self.site.line}:{self.site.col}:{self.site.operator}:{self.site.choice}"

    @property
    def path(self) -> str:
        """The file as an import path reads it (``executorch/exir/passes/x.py``): the same on every machine."""
        for marker in ("site-packages/", "dist-packages/"):
            if marker in self.file:
                return self.file.rsplit(marker, 1)[1]
        return self.file

    @property
    def line(self) -> int:
        return self.site.line

    def diff(self) -> str:
        """The change as a reader wants it: ``L123: before -> after``."""
        return f"L{self.site.line}: {self.site.before} -> {self.site.after}"

    def to_json(self) -> dict:
        return {"id": self.id, "file": self.path, "function": self.qualname, "line": self.site.line,
                "operator": self.site.operator, "diff": self.diff()}


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def mutants_of(file: str, source: str, operators: Optional[list[str]] = None) -> list[Mutant]:
    """Every mutant of the functions of one source file, in source order (stable across runs)."""
    tree = ast.parse(source)
    chosen = {k: OPERATORS[k] for k in (operators or OPERATORS)}
    out: list[Mutant] = []
    for qualname, fn in functions(tree):
        _mark_nested_exits(fn)
        doc = _docstring(fn)
        for index, node in enumerate(_walk_body(fn)):
            if node is doc or not hasattr(node, "lineno"):
                continue
            shown = node.test if isinstance(node, ast.If) else node
            before = _short(ast.get_source_segment(source, shown) or ast.unparse(shown))
            before = f"if {before}:" if shown is not node else before
            for name, operator in chosen.items():
                for choice, (new, how) in enumerate(operator(node)):
                    site = Site(name, index, choice, node.lineno, node.col_offset, before,
                                how if how and isinstance(new, ast.Pass) else _short(how or ast.unparse(new)))
                    out.append(Mutant(file, qualname, site))
    return out


def mutated_tree(source: str, mutant: Mutant) -> ast.Module:
    """The module's AST with ``mutant`` applied (a fresh tree: the original is never touched)."""
    tree = ast.parse(source)
    fn = dict(functions(tree))[mutant.qualname]
    _mark_nested_exits(fn)
    target = _walk_body(fn)[mutant.site.index]
    replacement = list(OPERATORS[mutant.site.operator](target))[mutant.site.choice][0]
    ast.copy_location(replacement, target)
    _replace(fn, target, replacement)
    return ast.fix_missing_locations(tree)


def _replace(root: ast.AST, old: ast.AST, new: ast.AST) -> None:
    """Put ``new`` where ``old`` is, in its parent's field (a single child or one item of a list)."""
    for parent in ast.walk(root):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is old:
                        value[i] = new
                        return
    raise LookupError("mutation site not found in its function")
