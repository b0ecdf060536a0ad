"""Measuring draws in forked children, ``workers`` at a time, results handed back in the order asked.

Every draw is measured in a child forked from the fuzzing process for that
draw alone (:func:`harness.run.fork_each.run`, the loop ``passgate vulkan``
uses too). Three reasons:

- a pass that segfaults, aborts or spins in native code ends one child, not
  the fuzz run (the draw is reported with how its child ended);
- determinism: every child starts from the same parent state, so what a
  pass does on draw 40 cannot depend on caches an earlier draw warmed in the
  same process (a memoized helper takes its miss branch on every draw alike),
  and a draw's arcs do not depend on which worker measured it or on ``-j``;
- ``-j N`` runs N children at once, and the results still come back in the
  order the draws were planned, which is the order the fuzzer decides in.

What this module adds to the loop: a list in, a list out in the same order,
and a failed draw phrased as a measuring failure for ``failed``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from harness.run import fork_each

__all__ = ["evaluate"]


def _why(failure: fork_each.Failure) -> str:
    if failure.how == fork_each.DIED:
        return f"the measuring child process died: {failure.text}"
    if failure.how == fork_each.TIMED_OUT:
        return f"measuring did not finish within {failure.text} s"
    return f"measuring raised {failure.text}" if failure.in_child else failure.text


def evaluate(items: list, fn: Callable[[Any], Any], failed: Callable[[Any, str], Any], workers: int = 1,
             isolate: bool = True, limit: float = 900.0, done: Optional[Callable[[int, Any], None]] = None) -> list:
    """``[fn(x) for x in items]``, each in a forked child (``isolate``), up to ``workers`` at once.

    A child that dies, raises or outlives ``limit`` seconds gives ``failed(x, why)`` instead.
    Without ``isolate`` the calls run here, one after the other (for a debugger).
    ``done(index, result)`` is called as each result arrives (progress, partial reports), in arrival order.
    """
    results: list = [None] * len(items)

    def prepare(i: int) -> tuple:
        x = items[i]
        return (lambda: fn(x)), limit

    def deliver(i: int, value: Any) -> None:
        results[i] = failed(items[i], _why(value)) if isinstance(value, fork_each.Failure) else value
        if done is not None:
            done(i, results[i])

    fork_each.run(len(items), prepare, deliver, workers, isolate=isolate, name="passgate-fuzz")
    return results
