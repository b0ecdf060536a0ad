"""passgate's exceptions: one base, :class:`PassgateError`, so a caller can catch everything passgate raises.

Two kinds hang under it. :class:`UsageError` means bad usage or bad input
(exit status 2, one line, no traceback). The others are internal signals
between layers (a pass that ran out of time, a corrupt cache entry, a forked
child that died, a pipeline step that failed); they become verdicts, never
reach the user as tracebacks, and are raised only where a caller expects them.
"""

from __future__ import annotations

from harness.core.stability import stable

__all__ = ["PassgateError", "UsageError", "IRSpecViolation", "PassTimeout", "CorruptCacheEntry", "ChildFailed",
           "StepFailed"]


@stable
class PassgateError(Exception):
    """Base class of every exception passgate defines (hypothesis' ``HypothesisException`` is the model)."""


@stable
class UsageError(PassgateError):
    """Raised for anything the user must fix (bad SPEC, unknown graph, unwritable folder).

    The CLI prints ``passgate: error: <message>`` on stderr and exits 2. The
    message must fit on one line and name the thing that was not found.
    """

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class IRSpecViolation(PassgateError, AssertionError):
    """A graph breaks the IR spec (:func:`harness.assert_ir_spec`, :class:`harness.IRSpecCheck`); ``check`` is its id.

    An AssertionError too, so a test that calls the library fails as an assertion does.
    """

    def __init__(self, check: str, message: str):
        super().__init__(f"[{check}] {message}")
        self.check = check


class PassTimeout(PassgateError):
    """A pass call ran past its in-process deadline (SIGALRM, :func:`harness.check.invoke.deadline`)."""


class CorruptCacheEntry(PassgateError):
    """A lowered case on disk cannot be read back; the cache rebuilds it with a warning."""


class ChildFailed(PassgateError, RuntimeError):
    """A forked child died, timed out or could not send its result back (:func:`harness.run.isolation.call`)."""


class StepFailed(PassgateError, RuntimeError):
    """A step of a pass sequence raised, timed out or refused the program (its ``requires``)."""

    def __init__(self, index: int, step: str, outcome: str, error: str):
        super().__init__(f"step {index + 1} ({step}) {outcome}: {error}")
        self.index, self.step, self.outcome, self.error = index, step, outcome, error
