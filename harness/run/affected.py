"""Affected-only selection: which units a change can reach, from what each one executed when last recorded.

``--changed-since GITREF`` (the files ``git diff`` names between GITREF and
the working tree, untracked files included) and ``--affected-by FILE...``
give a set of changed files; a unit is *affected* when its recorded
dependencies (:mod:`harness.run.verdicts`) include one of them. A unit with
no readable record (never run here, a changed definition, case, check
selection or version, a corrupt record) is always affected: there is
nothing to say it is not. Units that are not affected are not run and not
reported; the summary counts them.

The record looked up is the one the unit's current key names, so a change
to anything in the static half of the key (entry definition, case, versions)
selects the unit too.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from harness.core.errors import UsageError

__all__ = ["Selection", "changed_since", "normalize", "select"]


def normalize(files: Iterable[str]) -> set:
    """Absolute, symlink-free paths (what recordings hold)."""
    return {os.path.realpath(os.path.abspath(f)) for f in files}


def _git(args: list, cwd: str) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"--changed-since: cannot run git: {exc}") from None
    if proc.returncode != 0:
        msg = (proc.stderr.strip().splitlines() or ["git failed"])[-1]
        raise UsageError(f"--changed-since: git {' '.join(args[:2])}: {msg}")
    return proc.stdout


def changed_since(ref: str, cwd: Optional[str] = None) -> set:
    """Files that differ between ``ref`` and the working tree of the repository around ``cwd``, and untracked ones."""
    cwd = cwd or os.getcwd()
    top = _git(["rev-parse", "--show-toplevel"], cwd).strip()
    names = _git(["diff", "--name-only", "--no-renames", ref, "--"], top).splitlines()
    names += _git(["ls-files", "--others", "--exclude-standard"], top).splitlines()
    return normalize(str(Path(top) / n) for n in names if n)


@dataclass
class Selection:
    """The units to consider, and how many were left out as not affected."""

    units: list
    not_affected: list = field(default_factory=list)
    changed: set = field(default_factory=set)


def select(units: list, keys: dict, cache, changed: Optional[set]) -> Selection:
    """Split ``units`` by whether a file of ``changed`` is among their recorded dependencies.

    ``keys`` maps unit key -> its static key (:func:`harness.run.verdicts.static_key`, None: uncacheable);
    ``changed`` None: no selection asked for, every unit is kept.
    """
    if changed is None:
        return Selection(list(units))
    kept, left = [], []
    for u in units:
        key = keys.get(u.key)
        rec = cache.read(key) if (cache is not None and key) else None
        files = cache.files(rec) if rec is not None else None
        if files is None or files & changed:
            kept.append(u)
        else:
            left.append(u)
    return Selection(kept, left, set(changed))
