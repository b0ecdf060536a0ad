"""Corpus folders: generated graphs as plain torch programs, one readable file each, and an index.

Two kinds of folder use the same format:

- what ``passgate fuzz --corpus DIR`` keeps: files named after the draw
  (``random_s0_012.py``, ``random_s0_012_m3.py``: the name is also the recipe,
  :func:`harness.fuzz.draws.by_name`), for inspection and as input to
  ``passgate corpus distill --from DIR``;
- the distilled corpus in the gate (``fixtures/corpus/``): files named
  ``corpus_<hash8>.py`` after the program's own text, so a graph keeps its
  name (and its lines in ``reports/baseline.json``) for as long as its code
  is the same, whatever run or seed found it.

A file is a docstring saying where the graph came from and which passes it
was kept for, then exactly what ``passgate graphs --show`` prints for a
random graph: the ``nn.Module``, ``make_inputs()``, ``DYNAMIC_SHAPES`` and
``build()``. The file is the source of truth: :func:`load_dir` executes it
to build the case (its text is the case definition hashed into the cache
key), never the generator, so a committed corpus graph does not change when
the random vocabulary does. ``index.json`` is a readable summary, not needed
to load the folder.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import linecache
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from harness.core.errors import UsageError
from harness.core.io import atomic_write_bytes

__all__ = ["INDEX", "KEPT_TITLE", "COVERS_TITLE", "Entry", "corpus_name", "program_code", "render", "write", "write_kept", "read",
           "statements_of", "spec_from_text", "load_dir", "show", "is_generated", "is_generated_name"]

INDEX = "index.json"
TARGETED_PREFIX = "targeted_"
_MAIN = '''

if __name__ == "__main__":
    model, inputs, dynamic_shapes = build()
    print(model)
    run = model.module() if isinstance(model, torch.export.ExportedProgram) else model  # a quantized case's
    print([tuple(t.shape) for t in run(*inputs)])
'''


@dataclass(frozen=True)
class Entry:
    """One graph of a corpus folder: its name, its program text, where it came from and why it is there."""

    name: str
    code: str  # Program.code(): plain torch, nothing passgate-specific
    origin: str = ""  # the fuzz draw it was found as (random_s0_012_m3)
    info: dict = field(default_factory=dict, compare=False)  # statements, dynamic, why it was kept


def corpus_name(code: str) -> str:
    """``corpus_<first 8 hex of sha256(code)>``: stable for as long as the program is the same."""
    return "corpus_" + hashlib.sha256(program_code(code).encode()).hexdigest()[:8]


def program_code(text: str) -> str:
    """The program part of a corpus file: the text after its docstring and ``# ruff: noqa`` line, and
    without the ``__main__`` stanza."""
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    start = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        start = body[0].end_lineno
    rest = "".join(line for line in lines[start:] if not line.startswith("# ruff: noqa"))
    return rest.split(_MAIN.strip("\n").splitlines()[0])[0].strip("\n") + "\n"


def _why(reasons: dict) -> list[str]:
    out = []
    for target, r in sorted(reasons.items()):
        if "crashed" in r:
            out.append(f"  {target}: the measuring process died: {r['crashed']}")
            continue
        parts = [f"{r['arcs']} new arcs"] if r.get("arcs") else []
        if r.get("atoms"):
            parts.append("changes: " + " ".join(r["atoms"]))
        out.append(f"  {target}: {'; '.join(parts) or 'kept'}")
    return out


KEPT_TITLE = "Kept for what it made these passes do first:"
COVERS_TITLE = "What it reaches beyond the baseline graphs (arcs of each pass's own source, parts of its changes):"


def render(entry: Entry, kind: str, title: str = KEPT_TITLE) -> str:
    """The file text of ``entry``: docstring, then the program, then a ``__main__`` stanza that runs it."""
    info = entry.info
    facts = [f"{info['statements']} statements" if "statements" in info else "",
             "dynamic batch dimension" if info.get("dynamic") else "static shapes",
             f"PT2E-quantized by the {info['quantized']!r} flow" if info.get("quantized") else "",
             f"drawn as {entry.origin}" if entry.origin and entry.origin != entry.name else ""]
    lines = [f"{entry.name}: a generated graph ({', '.join(f for f in facts if f)}).", "", f"{kind}.",
             f"`build()` gives (model, example inputs, dynamic shapes); `passgate corpus show {entry.name}` prints it.",
             ""]
    why = _why(info.get("reasons") or {})
    if why:
        lines += [title, *why]
    doc = "\n".join(lines).replace('"""', "'''").replace("\\", "/").rstrip()
    return f'"""{doc}\n"""\n# ruff: noqa\n{program_code(entry.code)}{_MAIN}'


def write(folder: Path, entries: list[Entry], kind: str, meta: Optional[dict] = None,
          replace_all: bool = False, title: str = KEPT_TITLE) -> Path:
    """Write ``entries`` (one ``<name>.py`` each) and ``index.json`` into ``folder``; with ``replace_all``,
    remove the folder's other generated graph files (a distilled corpus replaces the previous one; the
    hand-written ``targeted_*`` graphs stay: no draw can stand for them)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = {e.name for e in entries}
    adopted = _adopted(folder) if replace_all else {}
    if replace_all:
        for old in _graph_files(folder):
            if old.stem not in names | set(adopted) and not old.stem.startswith(TARGETED_PREFIX):
                old.unlink()
    for e in entries:
        atomic_write_bytes(folder / f"{e.name}.py", render(e, kind, title).encode())
    rows = [{"name": e.name, "file": f"{e.name}.py", "origin": e.origin, **e.info} for e in entries]
    index = {"schema": "passgate-corpus", "schema_version": 1, **(meta or {}),
             "graphs": rows + [row for name, row in adopted.items() if name not in names]}
    atomic_write_bytes(folder / INDEX, (json.dumps(index, indent=1, sort_keys=False, default=str) + "\n").encode())
    return folder


def _adopted(folder: Path) -> dict:
    """The index rows of graphs kept for the mutants they kill (``passgate corpus adopt``), whose files exist: a
    distilled cover of arcs keeps them, since arcs are not what they were kept for."""
    try:
        listed = json.loads((Path(folder) / INDEX).read_text()).get("graphs", [])
    except (OSError, ValueError, AttributeError):
        return {}
    return {g["name"]: g for g in listed if g.get("kills") and (Path(folder) / g.get("file", "")).is_file()}


def write_kept(folder: Path, kept: list) -> Path:
    """The graphs a fuzz run kept (:class:`harness.fuzz.loop.Kept`), named after their draws."""
    entries = [Entry(k.name, k.draw.code, k.name, {
        "draw": k.number, "parent": k.draw.parent, "statements": k.draw.program.size,
        "dynamic": k.draw.program.dynamic, "quantized": k.draw.flow or None, "reasons": k.reasons}) for k in kept]
    return write(folder, entries, "Kept by `passgate fuzz`; the name is the recipe: the same name draws the same "
                                  "graph")


def _graph_files(folder: Path) -> list[Path]:
    return sorted(p for p in Path(folder).glob("*.py") if not p.name.startswith("_"))


def read(folder: Path) -> list[Entry]:
    """The graphs of a corpus folder, by file name; ``index.json`` adds their origin and info when present."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"corpus folder not found: {folder}")
    try:
        listed = {g["name"]: g for g in json.loads((folder / INDEX).read_text()).get("graphs", [])}
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        listed = {}
    out = []
    for path in _graph_files(folder):
        g = listed.get(path.stem, {})
        info = {k: v for k, v in g.items() if k not in ("name", "file", "origin")}
        out.append(Entry(path.stem, path.read_text(), g.get("origin", ""), info))
    return out


def spec_from_text(name: str, text: str, source: str = "corpus", filename: Optional[str] = None):
    """A CaseSpec that builds the program of a corpus file (``build()`` of its text, executed)."""
    from harness.graphs.cases import CaseSpec, ModelInputs
    from harness.graphs.quantizers import patterns_memoized

    label = filename or f"<passgate {source} {name}>"
    dynamic = "DYNAMIC_SHAPES = None" not in text
    tags = {source, "random"} | ({"dynamic"} if dynamic else set()) | declared_tags(text)
    import_op_libraries(name, declared_op_libraries(text))  # before its case can be read back from the cache

    def build() -> ModelInputs:
        linecache.cache[label] = (len(text), None, text.splitlines(True), label)  # tracebacks show its lines
        # a module of its own, importable while it builds: strict (dynamo) export imports a class's module
        module = types.ModuleType(f"passgate_{source}_{name}")
        module.__file__ = label
        sys.modules[module.__name__] = module
        try:  # a quantized program runs PT2E: its pattern graphs exported once per process
            with patterns_memoized() if "quantized" in tags else contextlib.nullcontext():
                exec(compile(text, label, "exec"), module.__dict__)  # noqa: S102 - a corpus program, plain torch
                model, inputs, dynamic_shapes = module.build()
        finally:
            sys.modules.pop(module.__name__, None)
        return ModelInputs(model, inputs, dynamic_shapes)

    statements = statements_of(text)
    origin = "generated" if is_generated_name(name) else "hand-written"
    return CaseSpec(name=name, source=source, build=build, definition=text, tags=frozenset(tags),
                    description=f"{statements} statements{', dynamic batch' if dynamic else ''} ({origin})",
                    preserve_ops=declared_preserve_ops(text))


def is_generated_name(name: str) -> bool:
    """A corpus file name of a drawn (distilled or context) graph; ``targeted_<topic>.py`` ones are written by hand
    for entries no generated graph made change (their docstring says which)."""
    return not name.startswith(TARGETED_PREFIX)


def is_generated(spec) -> bool:
    """A case from a corpus folder that a generator drew, not one written by hand (built-in, quantized, zoo and
    ``targeted_*`` graphs are hand-written)."""
    return spec.source == "corpus" and is_generated_name(spec.name)


def _declared(text: str, variable: str) -> tuple[str, ...]:
    """The strings of a module-level ``<variable> = (...)`` tuple or list of the program, in order."""
    return _declarations(text).get(variable, ())


@functools.lru_cache(maxsize=512)
def _declarations(text: str) -> dict[str, tuple[str, ...]]:
    """Every module-level ``NAME = (...)`` tuple or list of strings of a program, parsed once per text: a
    listing reads several of them from each of the corpus's ~60 files, and `passgate serve` lists on every
    request."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, (ast.Tuple, ast.List))):
            out.setdefault(node.targets[0].id, tuple(e.value for e in node.value.elts
                                                     if isinstance(e, ast.Constant) and isinstance(e.value, str)))
    return out


def declared_tags(text: str) -> set[str]:
    """The tags a program declares with a module-level ``TAGS = ("quantized", ...)`` (a hand-written graph whose
    ``build()`` runs the PT2E flow is a quantized case: the quantized-edge entries apply to it).

    Read from the text, not by running it: listing cases builds nothing."""
    return set(_declared(text, "TAGS"))


def declared_preserve_ops(text: str) -> tuple[str, ...]:
    """The ops a program's lowering keeps whole, declared with a module-level
    ``PRESERVE_OPS = ("aten._prelu_kernel.default", ...)`` (:attr:`harness.graphs.cases.CaseSpec.preserve_ops`):
    a hand-written graph for a pass that acts only on an op ``to_edge`` would otherwise decompose. Read from
    the text like :func:`declared_tags`."""
    return _declared(text, "PRESERVE_OPS")


def declared_op_libraries(text: str) -> tuple[str, ...]:
    """The modules that register ops a program uses, declared with a module-level
    ``OP_LIBRARIES = ("executorch.extension.llm.custom_ops.custom_ops",)`` (the llama KV-cache ops).

    Why: a case loaded from the cache is deserialized before its ``build()`` runs, and an op whose library
    is not loaded then comes back as a fake operator that fails every pass that meets it. So listing the
    program imports them (:func:`import_op_libraries`), in every process that may load its case."""
    return _declared(text, "OP_LIBRARIES")


def import_op_libraries(name: str, modules: Iterable[str]) -> None:
    """Import ``modules`` (a corpus program's op libraries); a library that does not import is a usage error
    that names the graph, never a run of fake operators."""
    import importlib

    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - any import failure: the graph cannot be loaded here
            raise UsageError(f"corpus graph {name} needs the op library {module}, which does not import here: "
                             f"{type(exc).__name__}: {exc}") from None


def statements_of(text: str) -> int:
    """How many statements the program's ``forward`` has (its body up to the ``return``)."""
    count, inside = 0, False
    for line in text.splitlines():
        if line.strip().startswith("def forward("):
            inside = True
        elif inside and line.strip().startswith("return"):
            break
        elif inside and line.strip():
            count += 1
    return count


def load_dir(folder: Path, source: str = "corpus") -> tuple:
    """Every graph of a corpus folder as a CaseSpec (empty when the folder has none)."""
    folder = Path(folder)
    if not folder.is_dir():
        return ()
    return tuple(spec_from_text(p.stem, p.read_text(), source, str(p)) for p in _graph_files(folder))


def show(name: str, folders: Iterable[Path]) -> str:
    """The program of graph ``name``: a corpus file of ``folders``, else a fuzz draw rebuilt from its name."""
    for folder in folders:
        path = Path(folder) / f"{name}.py"
        if path.is_file():
            return path.read_text()
    from harness.fuzz.draws import by_name, is_fuzz_name

    if is_fuzz_name(name):
        draw = by_name(name)
        if draw is None:
            raise UsageError(f"{name} cannot be drawn: a step of its recipe overran or has no choices to mutate")
        return draw.code
    raise UsageError(f"unknown graph {name!r}: not a file of {', '.join(map(str, folders)) or 'any corpus folder'} "
                     f"and not a fuzz draw name (random_s<seed>_<index>[_m<k>...])")
