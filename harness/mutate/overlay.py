"""A mutant applied in memory: the live function's code object swapped for the mutated one.

Why swap ``__code__`` rather than import a mutated copy of the module from
an overlay folder: by the time a mutant runs, the pass's module has been
imported, its classes are held by catalog entries, base classes, pass
managers and ``functools.partial`` objects all over the process, and a
second module object would leave every one of those pointing at the
unmutated code. Swapping the code object of the one function that holds the
change keeps every reference and changes what each of them runs. It happens
in a forked child (:mod:`harness.mutate.campaign`), so the installed package,
its files and the parent process are never touched; :func:`apply` returns
the undo for the in-process mode tests and debuggers use.

A mutant that cannot be swapped in (its function is gone from the module,
or the change removed the last use of a closure variable, which changes the
code's free variables) raises :class:`NotApplied`: it is counted apart, never
as survived.
"""

from __future__ import annotations

import inspect
import os
import sys
import types
from typing import Callable, Iterator, Optional

from harness.core.errors import PassgateError
from harness.mutate.operators import Mutant, mutated_tree

__all__ = ["NotApplied", "apply", "module_of", "live_function", "source_of"]


class NotApplied(PassgateError):
    """The mutant could not be put in place (see the module docstring)."""


def _real(path: str) -> str:
    return os.path.realpath(path)


def module_of(file: str) -> types.ModuleType:
    """The imported module whose source is ``file``."""
    wanted = _real(file)
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and _real(path) == wanted:
            return module
    raise NotApplied(f"no imported module has the source file {file}")


def source_of(file: str) -> str:
    with open(file, encoding="utf-8") as fh:
        return fh.read()


def _candidates(obj) -> Iterator[types.FunctionType]:
    """The plain functions behind a class attribute or module global (decorators and descriptors unwrapped)."""
    for raw in (obj, getattr(obj, "__func__", None), getattr(obj, "fget", None)):
        seen = set()
        while raw is not None and id(raw) not in seen:
            seen.add(id(raw))
            if isinstance(raw, types.FunctionType):
                yield raw
            raw = getattr(raw, "__wrapped__", None)


def live_function(module: types.ModuleType, qualname: str) -> types.FunctionType:
    """The function object the module holds for ``qualname`` (``f`` or ``Class.method``)."""
    owner_name, _, name = qualname.rpartition(".")
    owner = module.__dict__.get(owner_name) if owner_name else module
    if owner is None:
        raise NotApplied(f"{module.__name__} has no {owner_name}")
    namespace = owner.__dict__ if inspect.isclass(owner) else module.__dict__
    for fn in _candidates(namespace.get(name)):
        if fn.__code__.co_qualname == qualname:
            return fn
    raise NotApplied(f"{module.__name__}.{qualname} is not a plain function the module holds")


def _code_named(code: types.CodeType, qualname: str) -> Optional[types.CodeType]:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_qualname == qualname:
                return const
            found = _code_named(const, qualname)
            if found is not None:
                return found
    return None


def apply(mutant: Mutant, source: Optional[str] = None) -> Callable[[], None]:
    """Put ``mutant`` in place in this process; returns the function that takes it out again."""
    module = module_of(mutant.file)
    source = source if source is not None else source_of(mutant.file)
    tree = mutated_tree(source, mutant)
    try:
        compiled = compile(tree, mutant.file, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise NotApplied(f"the mutant does not compile: {exc}") from None
    new = _code_named(compiled, mutant.qualname)
    if new is None:
        raise NotApplied(f"no code object {mutant.qualname} in the mutated module")
    fn = live_function(module, mutant.qualname)
    old = fn.__code__
    if new.co_freevars != old.co_freevars:
        raise NotApplied(f"the mutant changes the free variables of {mutant.qualname}")
    fn.__code__ = new

    def undo() -> None:
        fn.__code__ = old

    return undo
