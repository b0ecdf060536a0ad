"""``results.json``: the machine-readable record of a run.

One record per pass x graph x check, the environment (versions, platform,
git revision), the configuration and seed, and a summary. Same seed, same
document apart from timings (``duration_s``, ``started_at``,
``lower_seconds``). Written atomically, also when a run is interrupted
(``complete: false``), so nothing already computed is lost.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Callable, Iterable, Optional

from harness.core.errors import UsageError
from harness.core.io import atomic_write_bytes, sweep_debris
from harness.core.results import CheckResult, summarize
from harness.core.version import __version__

__all__ = ["RESULTS_FILE", "SCHEMA_VERSION", "document", "dumps", "ensure_writable", "environment", "load", "write"]

SCHEMA_VERSION = "1.0"
RESULTS_FILE = "results.json"


def _git_revision() -> Optional[str]:
    root = Path(__file__).resolve().parents[2]  # the repository (harness/report/ is two levels down)
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def environment() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    def v(pkg: str) -> Optional[str]:
        try:
            return version(pkg)
        except PackageNotFoundError:
            return None

    import torch

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "torch": torch.__version__,
        "executorch": v("executorch"),
        "torchao": v("torchao"),
        "passgate": __version__,
        "git_revision": _git_revision(),
    }


def ensure_writable(report_dir: os.PathLike) -> Path:
    """Create the report folder now, so a bad --report fails before any work is done."""
    path = Path(report_dir)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".passgate-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
        sweep_debris(path)  # a killed run's half-written reports (harness/core/io.py)
    except OSError as exc:
        raise UsageError(f"report folder {path} cannot be written: {exc.strerror or exc}") from None
    return path


def document(results: Iterable[CheckResult], configuration: dict, cases: list[dict], *,
             started_at: float, complete: bool, exit_status: int, strict: bool,
             extra: Optional[dict] = None, json_of: Optional[Callable[[CheckResult], Optional[dict]]] = None) -> dict:
    """The results document. ``json_of(result)``: its record when the caller has it already (a reused
    verdict, as recorded), None to serialize it here (``to_json``)."""
    results = list(results)
    doc = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "passgate", "version": __version__},
        "environment": environment(),
        "configuration": configuration,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started_at)),
        "duration_s": round(time.time() - started_at, 3),
        "complete": complete,
        "cases": cases,
        "results": [r.to_json() for r in results] if json_of is None
        else [json_of(r) or r.to_json() for r in results],
        "summary": summarize(results, strict),
        "exit_status": exit_status,
    }
    if extra:
        doc.update(extra)
    return doc


def write(report_dir: os.PathLike, doc: dict) -> Path:
    """``doc`` as results.json (the sections computed from its records, such as ``blind``, are added by
    :func:`harness.report.writers.write_results`, which knows every section)."""
    path = Path(report_dir) / RESULTS_FILE
    atomic_write_bytes(path, dumps(doc).encode())
    return path


_RESULTS_SLOT = "\x00passgate results\x00"


def dumps(doc: dict) -> str:
    """``doc`` as results.json holds it: indented, except one line per result record.

    Why not ``json.dumps(doc, indent=1)``: with ``indent`` the json module encodes in Python, not C, and a
    standard run has ~200,000 records (several seconds of a warm gate); each record is encoded by the C
    encoder instead, on a line of its own (still one record per line to read or grep).
    """
    results = doc.get("results")
    if not isinstance(results, list) or not results:
        return json.dumps(doc, indent=1, default=str) + "\n"
    head = json.dumps({**doc, "results": _RESULTS_SLOT}, indent=1, default=str)
    lines = ",\n  ".join(json.dumps(r, default=str) for r in results)
    return head.replace(json.dumps(_RESULTS_SLOT), f"[\n  {lines}\n ]", 1) + "\n"


def load(path: os.PathLike) -> dict:
    """Read a results.json, with a one-line UsageError for anything unreadable."""
    p = Path(path)
    if p.is_dir():
        p = p / RESULTS_FILE
    try:
        doc = json.loads(p.read_text())
    except FileNotFoundError:
        raise UsageError(f"results file not found: {p}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read results file {p}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"results file {p} is not valid JSON (line {exc.lineno}): truncated or corrupt") from None
    if not isinstance(doc, dict) or "schema_version" not in doc or not isinstance(doc.get("results"), list):
        raise UsageError(f"results file {p} does not follow the passgate results schema")
    return doc
