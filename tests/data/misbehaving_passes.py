"""Passes that take the interpreter down in every way isolation has to survive.

Each one is well behaved until it is called; the harness must turn what it
does into a ``runs`` failure for that pair and carry on with the others.
"""

import ctypes
import os
import sys
import time

from torch.fx.passes.infra.pass_base import PassResult


def identity(gm):
    """A correct pass, run between the bad ones."""
    return PassResult(gm, False)


def raises(gm):
    raise RuntimeError("this pass is broken on purpose")


def sleeps(gm):
    """A Python-level hang: the in-process deadline stops it."""
    time.sleep(3600)


def spins_in_c(gm):
    """A loop in C that holds the GIL and never checks signals: only a kill stops it."""
    return sum(range(10**13))


def aborts(gm):
    os.abort()


def segfaults(gm):
    ctypes.string_at(0)


def exits(gm):
    sys.exit(3)


def hard_exits(gm):
    os._exit(7)


def slow(gm):
    """Correct, but slow enough that a run can be interrupted between two pairs."""
    time.sleep(1.0)  # long enough that a signal sent after pair 1 lands before pair 3 ends, even under load
    return PassResult(gm, False)
