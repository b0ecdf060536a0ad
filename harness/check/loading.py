"""Resolving ``--pass SPEC`` into something the runner can call.

SPEC is ``package.module:Name`` or ``path/to/file.py:Name`` (DESIGN.md). Name
may be a class (built with no arguments, or with the ExportedProgram when its
constructor asks for one), an instance, or a plain function taking a
``torch.fx.GraphModule``. A class is instantiated afresh for every run so
state a pass keeps between calls cannot leak from one case into the next.

A pass declares what it is with plain attributes, read here and overridable
from the command line:

- ``passgate_semantics = "changing"``: it changes meaning on purpose, so
  ``numerics`` is skipped (default ``"preserving"``); ``"observing"``: it
  only records or prints (a debug printer, an analysis filling a table), so
  by contract it changes no program, and ``exercised`` (did a case make it
  change the program?) does not apply to it;
- ``passgate_stage = "export"``: it is written for the program as
  ``torch.export`` returns it rather than the edge program (default ``"edge"``).
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import inspect
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Optional

from harness.core.errors import UsageError
from harness.core.kinds import Semantics
from harness.graphs.cases import STAGES

__all__ = ["SEMANTICS", "LoadedPass", "instantiate", "import_file", "import_module", "is_file_location", "source_file",
           "resolve_spec", "load_pass", "from_object"]

SEMANTICS = tuple(s.value for s in Semantics)


@dataclass
class LoadedPass:
    """A resolved pass SPEC. ``make(ep)`` gives a fresh callable pass for one run."""

    spec: str
    name: str
    obj: Any
    kind: str  # class | instance | function | factory (``obj(exported_program)`` builds the pass)
    semantics: str = "preserving"
    stage: str = "edge"

    def make(self, exported_program=None) -> Any:
        if self.kind == "factory":  # catalog entries whose constructor needs real arguments
            return self.obj(exported_program)
        if self.kind == "class":
            return instantiate(self.obj, exported_program)
        if self.kind == "instance":
            try:  # a fresh copy per run: passes may keep state between calls
                return copy.deepcopy(self.obj)
            except Exception:
                return self.obj
        return self.obj

    @property
    def wants_program(self) -> bool:
        return self.kind == "class" and _required_params(self.obj) == 1


def _required_params(cls: type) -> int:
    try:
        sig = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return 0
    params = list(sig.parameters.values())[1:]  # drop self
    return sum(
        1
        for p in params
        if p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    )


def instantiate(cls: type, exported_program=None) -> Any:
    n = _required_params(cls)
    if n == 0:
        return cls()
    if n == 1:
        return cls(exported_program)
    raise UsageError(
        f"pass class {cls.__qualname__} needs {n} constructor arguments; "
        "passgate can build classes that take none or only the ExportedProgram "
        "(wrap it in a subclass or module-level instance)"
    )


@contextmanager
def _user_import(folder: Optional[str]):
    """Import from ``folder`` (a pass file's own, or the cwd) while the import runs, and write nothing.

    The folder leaves ``sys.path`` again afterwards, so a file there named like a
    module passgate or torch imports later (``difflib.py``, ``tokenize.py``) is
    never executed; ``dont_write_bytecode`` keeps ``__pycache__`` out of the
    user's folders (passgate writes only to its report and cache folders).
    """
    added = folder is not None and folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        yield
    finally:
        sys.dont_write_bytecode = saved
        if added and folder in sys.path:
            sys.path.remove(folder)


def import_file(path: str):
    """The pass file at ``path`` as a module (imported once per process), its folder importable while it loads."""
    if not os.path.isfile(path):
        raise UsageError(f"pass file not found: {path}")
    mod_name = "passgate_user_" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(path))
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import pass file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    # Let the file import its siblings, as `python file.py` would.
    try:
        with _user_import(os.path.dirname(os.path.abspath(path))):
            spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[mod_name]
        raise UsageError(f"syntax error in pass file {path}, line {exc.lineno}: {exc.msg}") from None
    except Exception as exc:
        del sys.modules[mod_name]
        raise UsageError(f"importing pass file {path} failed: {type(exc).__name__}: {exc}") from None
    return module


def import_module(name: str):
    """The module ``name``, resolved from the working folder as ``python -m`` would; UsageError if it does not import."""
    cwd = None if "" in sys.path else os.getcwd()  # package.module SPECs resolve from the cwd, as `python -m` does
    try:
        with _user_import(cwd):
            return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            raise UsageError(f"pass module not found: {name}") from None
        raise UsageError(f"importing pass module {name} failed: No module named {exc.name!r}") from None
    except SyntaxError as exc:
        raise UsageError(f"syntax error in pass module {name} ({exc.filename}, line {exc.lineno}): {exc.msg}") from None
    except Exception as exc:
        raise UsageError(f"importing pass module {name} failed: {type(exc).__name__}: {exc}") from None


def _kind_of(obj: Any) -> Optional[str]:
    if inspect.isclass(obj):
        return "class" if callable(obj) and "__call__" in dir(obj) else None
    if inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj):
        return "function"
    if callable(obj) and not inspect.ismodule(obj):
        return "instance"
    return None


def _declared(obj: Any, attr: str, allowed, default: str, spec: str) -> str:
    value = getattr(obj, attr, None)
    if value is None:
        return default
    if value not in allowed:
        raise UsageError(f"pass {spec} declares {attr}={value!r}; expected one of {', '.join(allowed)}")
    return value


def is_file_location(location: str) -> bool:
    """Does the part of a SPEC before ``:`` name a file (``path/to/file.py``) rather than a module?"""
    return location.endswith(".py") or os.sep in location or "/" in location


def source_file(location: str) -> Optional[str]:
    """The real path of the source file a SPEC (``module:attr``, ``path.py:attr``) or module name points at,
    found without importing it; None when it has no Python source file.

    One helper for everyone who keys data by a pass's file: the verdict cache
    (a unit depends on its pass's file) and pass coverage (coverage.py keys
    its data by real paths).
    """
    target = location.rsplit(":", 1)[0] if ":" in location else location
    if is_file_location(target):
        return os.path.realpath(target)
    try:
        found = importlib.util.find_spec(target)
    except (ImportError, ValueError):
        return None
    origin = getattr(found, "origin", None)
    return os.path.realpath(origin) if origin and os.path.isabs(origin) and origin.endswith(".py") else None


def resolve_spec(spec: str, what: str = "pass", forms: str = "package.module:Name or path/to/file.py:Name") -> Any:
    """The object a SPEC names: ``package.module:Name`` or ``path/to/file.py:Name``, ``Name`` possibly dotted.

    Every SPEC passgate takes (passes, pipelines, catalogs, executors) goes
    through here, so they all accept the same forms and fail with the same
    one-line :class:`UsageError`; ``what`` and ``forms`` word that error.
    """
    location, sep, attr = spec.rpartition(":")
    if not sep or not location or not attr:
        raise UsageError(f"{what} SPEC {spec!r} must be {forms}")
    obj: Any = import_file(location) if is_file_location(location) else import_module(location)
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{location} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def load_pass(spec: str, semantics: Optional[str] = None, stage: Optional[str] = None) -> LoadedPass:
    """Resolve SPEC. Raises :class:`UsageError` naming what was not found."""

    obj = resolve_spec(spec)
    attr = spec.rpartition(":")[2]
    kind = _kind_of(obj)
    if kind is None or inspect.ismodule(obj):
        raise UsageError(f"{spec} is not a pass: {'an' if type(obj).__name__[0] in 'aeiouAEIOU' else 'a'} {type(obj).__name__} is neither a class, an instance nor a function")
    if kind == "class" and issubclass(obj, BaseException):
        raise UsageError(f"{spec} is not a pass: it is an exception class")
    if kind == "class" and _required_params(obj) > 1:
        instantiate(obj)  # raises the UsageError that says what it needs
    return _loaded(spec, attr, obj, kind, semantics, stage)


def from_object(obj: Any, name: Optional[str] = None, semantics: Optional[str] = None,
                stage: Optional[str] = None) -> LoadedPass:
    """A LoadedPass for a Python object (for the library API and tests)."""

    kind = _kind_of(obj)
    if kind is None:
        raise UsageError(f"{obj!r} is not a pass")
    label = name or getattr(obj, "__qualname__", None) or type(obj).__name__
    return _loaded(label, label, obj, kind, semantics, stage)


def _loaded(spec: str, name: str, obj: Any, kind: str, semantics: Optional[str], stage: Optional[str]) -> LoadedPass:
    """The LoadedPass, its semantics and stage as given, else as the pass declares them, else the defaults."""
    return LoadedPass(
        spec=spec, name=name, obj=obj, kind=kind,
        semantics=semantics or _declared(obj, "passgate_semantics", SEMANTICS, "preserving", spec),
        stage=stage or _declared(obj, "passgate_stage", STAGES, "edge", spec),
    )

