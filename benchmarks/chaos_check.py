"""What the chaos campaign judges after a fault: whole files, the rerun's verdicts against the reference, the errors.

Files: every report, cache entry, verdict record and baseline a run leaves
must read back whole (the atomic-write contract of
:mod:`harness.core.io`); a lowered case is judged by the checksum its header
carries (the cache's own test, without unpickling torch objects here).
Verdicts: the ``passgate report diff`` comparison (:func:`harness.report.diff.diff`)
plus check-by-check status equality, so a verdict that changed from pass to
skip counts too. Errors: no traceback in stderr, and exit status 2 comes
with exactly one ``passgate: error:`` line.
"""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

__all__ = ["Verdicts", "TRACEBACK", "has_traceback", "bad_error", "corrupt_files", "debris", "compare", "load"]

TRACEBACK = "Traceback (most recent call last)"


def has_traceback(text: str) -> bool:
    return TRACEBACK in text


def bad_error(status: Optional[int], stderr: str) -> bool:
    """Exit status 2 without exactly one ``passgate: error:`` line (or another status with one)."""
    errors = [line for line in stderr.splitlines() if line.startswith("passgate: error:")]
    return (status == 2) != (len(errors) == 1)


def load(path: Path) -> Optional[dict]:
    try:
        return json.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        return None


def _whole(path: Path) -> bool:
    data = path.read_bytes()
    name = path.name
    if name.endswith(".json"):
        try:
            json.loads(data)
            return True
        except ValueError:
            return False
    if name.endswith(".xml"):
        try:
            ET.fromstring(data)
            return True
        except ET.ParseError:
            return False
    if name.endswith(".html"):
        return data.rstrip().endswith(b"</html>")
    if name.endswith(".case"):
        header, sep, payload = data.partition(b"\n")
        try:
            return bool(sep) and json.loads(header).get("sha256") == hashlib.sha256(payload).hexdigest()
        except ValueError:
            return False
    return bool(data)  # summary.md and the rest: written whole or not at all


def corrupt_files(*folders: Path) -> list[str]:
    """Files under ``folders`` (temporary ``.*.tmp`` names aside) that do not read back whole."""
    bad = []
    for folder in folders:
        for path in sorted(Path(folder).rglob("*")) if Path(folder).exists() else ():
            if not path.is_file() or path.name.endswith(".tmp") or "torchinductor" in path.parts:
                continue
            if path.suffix not in (".json", ".xml", ".html", ".case", ".md"):
                continue
            try:
                ok = _whole(path)
            except OSError:
                ok = False
            if not ok:
                bad.append(str(path))
    return bad


def debris(*folders: Path) -> list[str]:
    """Temporary files a write left behind (a SIGKILL in the middle of one leaves its ``.NAME.PID-TID.tmp``)."""
    return sorted(str(p) for f in folders if Path(f).exists() for p in Path(f).rglob(".*.tmp"))


@dataclass
class Verdicts:
    """How a rerun's results.json compares with the uninterrupted reference run's."""

    identical: bool
    differences: int  # `passgate report diff`: regressions + fixed + gone, both ways
    lost: int  # reference pass x graph x check verdicts the rerun does not have
    changed: int  # verdicts whose status differs
    wrong_cache_hits: int  # of those, verdicts the rerun took from the verdict cache

    def to_json(self) -> dict:
        return dict(self.__dict__)


def _statuses(doc: dict) -> dict:
    return {(r["pass_name"], r["graph"], r["check"]): r for r in doc.get("results", ())}


def compare(reference: dict, doc: Optional[dict]) -> Verdicts:
    """``doc`` (a rerun's results, None: unreadable or absent) against ``reference``."""
    from harness.report.diff import diff

    ref = _statuses(reference)
    if doc is None:
        return Verdicts(False, len(ref), len(ref), 0, 0)
    got = _statuses(doc)
    d, back = diff(reference, doc), diff(doc, reference)
    differences = len(d.regressions) + len(d.fixed) + len(d.gone) + len(back.regressions)
    lost = sum(1 for k in ref if k not in got)
    changed = [k for k, r in ref.items() if k in got and got[k]["status"] != r["status"]]
    extra = sum(1 for k in got if k not in ref)
    wrong = sum(1 for k in changed if "reused" in (got[k].get("details") or {}))
    identical = not (differences or lost or changed or extra) and bool(doc.get("complete"))
    return Verdicts(identical, differences, lost + extra, len(changed), wrong)
