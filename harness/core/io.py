"""Files written so that a reader never sees half of one.

Reports, cache entries, baselines and bundles are all read by other
processes (a CI job, a second shard, the next run): each is written to a
temporary name and renamed into place.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

__all__ = ["atomic_write_bytes"]


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` so that ``path`` is either the old file or the whole new one.

    The temporary name is unique per process and thread, and it is removed
    when the write is cut short (full disk, Ctrl-C, SIGTERM), so an
    interrupted run leaves neither a half-written file nor debris.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
