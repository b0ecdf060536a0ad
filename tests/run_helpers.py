"""Helpers for tests that run the real `passgate` console script or compare whole reports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

EXE = os.path.join(os.path.dirname(sys.executable), "passgate")
DATA = Path(__file__).resolve().parent / "data"
BAD = f"{DATA}/misbehaving_passes.py"

# What may differ between two runs with the same seed (DESIGN.md: "same seed, same report, timings aside").
TIMING_KEYS = {"duration_s", "started_at", "lower_seconds", "from_cache"}


def start(args: list, folder: Path, cwd=None, env=None) -> tuple[subprocess.Popen, Path]:
    """Start `passgate ARGS` with stdout/stderr in files of ``folder``; returns (process, stderr path)."""
    err = folder / "passgate.stderr"
    with open(folder / "passgate.stdout", "wb") as out, open(err, "wb") as e:
        # SIG_DFL for SIGINT: a shell that starts the suite in the background hands down an ignored SIGINT,
        # and Python installs no KeyboardInterrupt handler when it starts with SIGINT ignored
        proc = subprocess.Popen([EXE, *args], stdout=out, stderr=e, cwd=cwd, env=env,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return proc, err


def wait_for(proc: subprocess.Popen, err: Path, marker: str, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if marker in err.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise AssertionError(f"passgate exited ({proc.returncode}) before {marker!r}:\n{err.read_text()}")
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"no {marker!r} within {timeout} s:\n{err.read_text()}")


def load(report: Path) -> dict:
    return json.loads((Path(report) / "results.json").read_text())


def pairs(doc: dict) -> list:
    """The (pass, graph) pairs of a results document, in report order."""
    out = []
    for r in doc["results"]:
        if (r["pass_name"], r["graph"]) not in out:
            out.append((r["pass_name"], r["graph"]))
    return out


def strip_timings(value):
    """The document without the fields allowed to differ between runs."""
    if isinstance(value, dict):
        return {k: strip_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [strip_timings(v) for v in value]
    return value


def files_under(root: Path) -> set:
    return {str(p.relative_to(root)) for p in Path(root).rglob("*")}


def two_file_catalog(tmp_path: Path, passgate_cache, prefix: str, passes: dict, name: str) -> dict:
    """A catalog module ``<name>_catalog.py`` of one entry per ``passes`` item (``class name -> source``), each pass
    in a module file of its own (so editing one changes one entry's dependencies), and a cache folder of our own
    that links the shared lowered graphs. Returns the paths; the caller puts ``src`` on sys.path and forgets the
    modules (``mods``) after."""
    import uuid

    tag = uuid.uuid4().hex[:8]
    src = tmp_path / "src"
    src.mkdir()
    mods, rows = [], []
    for i, (cls, text) in enumerate(passes.items()):
        mod = f"{prefix}_{i}_{tag}"
        (src / f"{mod}.py").write_text(text)
        mods.append(mod)
        rows.append(f"entry('{name}', '{mod}:{cls}', contract='{chr(ord('a') + i)}')")
    (src / f"{name}_catalog.py").write_text("from harness.catalog import Catalog, entry\n"
                                           f"CATALOG = Catalog('{name}', (), ({', '.join(rows)},))\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    for f in Path(passgate_cache).glob("*.case"):
        (cache / f.name).symlink_to(f)
    return {"src": src, "cache": cache, "files": [src / f"{m}.py" for m in mods], "mods": tuple(mods),
            "spec": f"{src}/{name}_catalog.py:CATALOG", "tmp": tmp_path}
