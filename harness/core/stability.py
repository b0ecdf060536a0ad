"""``@stable``: the mark on what a plugin may rely on, as torch.fx marks its surface with ``@compatibility``.

``harness.__all__`` says what is public; this says which of it is the plugin
API: a stable object keeps its name, its fields and its call signature
within a major version (fields and keyword arguments may be added, with
defaults). Why a mark on the object and not only a list: someone reading
``harness/catalog/entries.py`` sees at the definition that changing
``Build``'s fields breaks vendors, and ``tests/test_plugin_spec.py`` checks
the mark and the public namespace agree.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["stable", "is_stable"]

T = TypeVar("T")

_MARK = "_passgate_stable"


def stable(obj: T) -> T:
    """Mark a class or function as part of the stable plugin API; returns it unchanged otherwise."""
    setattr(obj, _MARK, True)
    return obj


def is_stable(obj: object) -> bool:
    """Was ``obj`` itself (not a base class) marked with :func:`stable`?"""
    return bool(vars(obj).get(_MARK)) if hasattr(obj, "__dict__") else False
