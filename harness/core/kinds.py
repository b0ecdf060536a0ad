"""Small closed vocabularies as enums: exit statuses, how a pass call ended, what a pass promises.

They are contracts (DESIGN.md's exit statuses; the ``outcome`` recorded in a
result's details), so they are spelled once here rather than as bare ints
and strings across the CLI and the runner. Both are ``int`` / ``str`` enums:
they compare equal to, and serialize as, the values scripts already read.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum

from harness.core.stability import stable

__all__ = ["ExitCode", "Outcome", "Semantics"]


@stable
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


class Semantics(StrEnum):
    """What a pass promises about the program's meaning (``passgate_semantics``, ``--semantics``, catalog entries)."""

    PRESERVING = "preserving"
    """The result computes what the input computed: ``numerics`` compares them."""
    CHANGING = "changing"
    """It changes meaning on purpose (a fusion moving an activation into metadata): ``numerics`` is skipped."""
    OBSERVING = "observing"
    """It only records or prints (a debug printer, an analysis filling a table of its own): by contract it changes
    no program, so ``exercised`` (did a case make it change the program?) does not apply to it."""
