"""Small closed vocabularies as enums: exit statuses and how a pass call ended.

They are contracts (DESIGN.md's exit statuses; the ``outcome`` recorded in a
result's details), so they are spelled once here rather than as bare ints
and strings across the CLI and the runner. Both are ``int`` / ``str`` enums:
they compare equal to, and serialize as, the values scripts already read.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum

__all__ = ["ExitCode", "Outcome"]


class ExitCode(IntEnum):
    """The exit status of every passgate command (pytest's ``ExitCode`` is the model)."""

    OK = 0
    """Everything checked holds, or is waived by the baseline."""
    VIOLATION = 1
    """A violation or a regression (also: a run cut short by SIGTERM)."""
    USAGE = 2
    """Bad usage or bad input: one line on stderr, no traceback."""
    INTERRUPTED = 130
    """Ctrl-C: the report of what finished is written, marked incomplete."""


class Outcome(StrEnum):
    """How one call of a pass ended (:class:`harness.check.invoke.PassRun`)."""

    OK = "ok"
    NOT_APPLICABLE = "not_applicable"  # its ``requires`` refused the program
    RAISED = "raised"
    TIMEOUT = "timeout"
