"""Files written so that a reader never sees half of one, and the fault layer that proves it.

Reports, cache entries, baselines and bundles are all read by other
processes (a CI job, a second shard, the next run): each is written to a
temporary name and renamed into place.

Every such write goes through :func:`atomic_write_bytes`, so it is also the
one place where the chaos campaign (``benchmarks/chaos.py``) injects faults
into passgate's own I/O without ``LD_PRELOAD`` or a special filesystem:
``PASSGATE_FAULTS=SEED:KIND@GLOB[#N]`` makes the N-th write (default the
first; ``#*`` every one) whose path matches GLOB fail. KIND is ``enospc``,
``eio`` or ``erofs`` (an ``OSError`` with that errno after part of the data
reached the temporary file, as a full disk fails), or ``kill`` (part of the
data written, then SIGKILL to the whole process group: the run dies in the
middle of writing, with no chance to clean up). SEED picks how much of the
data is written first; with ``PASSGATE_FAULTS_LOG=FILE`` each fault that
strikes appends a line there, so the campaign knows it struck. Unset, the
layer costs one environment lookup.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import random
import re
import signal
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

__all__ = ["FAULTS_ENV", "FAULTS_LOG_ENV", "KINDS", "STALE_TMP_S", "Fault", "atomic_write_bytes", "parse_fault",
           "sweep_debris"]

FAULTS_ENV = "PASSGATE_FAULTS"
FAULTS_LOG_ENV = "PASSGATE_FAULTS_LOG"
_ERRNOS = {"enospc": errno.ENOSPC, "eio": errno.EIO, "erofs": errno.EROFS}
KINDS = (*_ERRNOS, "kill")
# a temporary name of atomic_write_bytes (".NAME.PID-THREAD.tmp"), and how old one must be before another
# process may take it for debris: no write takes minutes, and a writer in another PID namespace (a container
# sharing the cache folder) is not visible to the liveness test
_TMP_NAME = re.compile(r"^\..+\.(\d+)-\d+\.tmp$")
STALE_TMP_S = 300.0

# writes each fault spec has matched so far in this process (a forked child inherits the count)
_seen: dict = {}


@dataclass(frozen=True)
class Fault:
    """One injected I/O fault: what happens (``kind``), to which writes (``glob``), the how-many-th (``nth``)."""

    seed: int
    kind: str
    glob: str
    nth: Optional[int] = 1  # None: every matching write

    def cut(self, size: int) -> int:
        """How many bytes reach the temporary file before the fault strikes (seeded, never the whole file)."""
        return random.Random(f"{self.seed}:{self.glob}").randrange(size) if size else 0


@lru_cache(maxsize=8)
def parse_fault(spec: str) -> Fault:
    """``SEED:KIND@GLOB[#N|#*]`` -> :class:`Fault`; ValueError naming what is wrong."""
    seed, sep, rest = spec.partition(":")
    kind, at, target = rest.partition("@")
    glob, _, nth = target.partition("#")
    if not (sep and at and glob and seed.isdigit()) or kind not in KINDS or not (nth in ("", "*") or nth.isdigit()):
        raise ValueError(f"{FAULTS_ENV}={spec!r}: expected SEED:KIND@GLOB[#N|#*], KIND one of {', '.join(KINDS)}")
    return Fault(int(seed), kind, glob, None if nth == "*" else int(nth or 1))


def _strikes(path: Path) -> Optional[Fault]:
    """The fault that strikes this write of ``path``, if the campaign set one and this is its turn."""
    spec = os.environ.get(FAULTS_ENV)
    if not spec:
        return None
    fault = parse_fault(spec)
    if not fnmatch.fnmatch(str(path), fault.glob):
        return None
    _seen[spec] = count = _seen.get(spec, 0) + 1
    return fault if fault.nth is None or count == fault.nth else None


def _inject(fault: Fault, f, path: Path, data: bytes) -> None:
    log = os.environ.get(FAULTS_LOG_ENV)
    if log:
        with open(log, "a") as out:
            out.write(f"{fault.kind} {path}\n")
    f.write(data[:fault.cut(len(data))])
    f.flush()
    if fault.kind == "kill":
        os.fsync(f.fileno())
        os.killpg(os.getpgrp(), signal.SIGKILL)  # the campaign starts each run in a process group of its own
    code = _ERRNOS[fault.kind]
    raise OSError(code, os.strerror(code), str(path))


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True) -> None:
    """Write ``data`` so that ``path`` is either the old file or the whole new one.

    The temporary name is unique per process and thread, and it is removed
    when the write is cut short (full disk, Ctrl-C, SIGTERM), so an
    interrupted run leaves neither a half-written file nor debris.
    ``durable=False`` skips the fsync: the rename alone survives any crash of
    the process; only a crash of the machine can leave the file empty. For a
    cache whose unreadable record is judged again, that is cheaper than an
    fsync per record (a cold suite writes tens of thousands).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    fault = _strikes(path)
    try:
        with open(tmp, "wb") as f:
            if fault is not None:
                _inject(fault, f, path, data)
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def sweep_debris(folder: Path, older_than_s: float = STALE_TMP_S) -> int:
    """Remove the temporary files that writers killed in the middle of a write left in ``folder`` (not its
    subfolders): those whose process is gone and that are older than ``older_than_s``. How many went.

    Nothing ever reads them (a reader only sees renamed files), but a cache folder outlives its runs, and a
    SIGKILL during a lowered case's write would leave megabytes behind for good."""
    try:
        entries = os.scandir(folder)
    except OSError:
        return 0
    removed, now = 0, time.time()
    with entries:
        for entry in entries:
            m = _TMP_NAME.match(entry.name)
            if m is None or _alive(int(m.group(1))):
                continue
            try:
                if now - entry.stat(follow_symlinks=False).st_mtime >= older_than_s:
                    os.unlink(entry.path)
                    removed += 1
            except OSError:  # gone meanwhile, or not ours to remove: it stays
                pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True
