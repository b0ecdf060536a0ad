"""The on-disk cache of lowered graph cases.

One file per case, keyed by the case definition and the torch / executorch /
cache-format versions, so an upgrade or an edited model never reuses a stale
lowering. Programs are stored with ExecuTorch's own serializer
(``executorch.exir.serde``), which round-trips an edge program in ~30 ms
against ~700 ms to lower it again.

Safe for concurrent writers (pytest-xdist workers, sharded CI jobs on a
shared folder): every write goes to a temporary file that is renamed into
place, so a reader sees a whole entry or none, and a process that misses a
case lowers it under an exclusive lock on ``.locks/<entry>.lock``
(:meth:`CaseCache.lowering`), so processes that miss the same case at once
lower it once: the others wait and read the entry. Every entry carries the
SHA-256 of its payload; an entry that does not verify is rebuilt, with a
warning, never trusted.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from harness.core.errors import CorruptCacheEntry
from harness.core.io import atomic_write_bytes, sweep_debris

__all__ = ["FORMAT_VERSION", "ENV_VAR", "LOG_ENV_VAR", "BUSY", "default_cache_root",
           "serialize_program", "deserialize_program", "roundtrip", "CaseCache", "configure", "default_cache"]

FORMAT_VERSION = 1
ENV_VAR = "PASSGATE_CACHE_DIR"
# When set, every process appends one JSON line per cache event (hit, miss, lowered, waited) to this file:
# how the benchmarks count lowerings across xdist workers.
LOG_ENV_VAR = "PASSGATE_CACHE_LOG"


def _log_event(event: str, spec) -> None:
    path = os.environ.get(LOG_ENV_VAR)
    if not path:
        return
    line = json.dumps({"event": event, "case": spec.name, "pid": os.getpid()}) + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())  # one short O_APPEND write: lines of concurrent writers never interleave
        finally:
            os.close(fd)
    except OSError:
        pass


BUSY = object()  # CaseCache.lowering(wait=False): another process is lowering this case now



def default_cache_root() -> Path:
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "passgate"


def serialize_program(ep) -> dict:
    """``ep`` as the cache stores it (ExecuTorch's serde, plus the ``custom`` metadata serde drops)."""
    from executorch.exir.serde.serialize import serialize

    art = serialize(ep)
    return {
        "exported_program": art.exported_program,
        "state_dict": art.state_dict,
        "constants": art.constants,
        "example_inputs": art.example_inputs,
        CUSTOM: _custom_meta(ep),
    }


# ExecuTorch's serde (a fork of torch.export's) drops node.meta['custom'], which torch.export's own serializer
# keeps: user annotations (torch.fx.traceback.annotate under strict export) that passes such as XNNPACK's
# PropagateCustomMetaPass read. The cache keeps them beside the artifact, by node name (serde keeps names).
CUSTOM = "custom_meta"


def _custom_meta(ep) -> dict:
    return {n.name: json.dumps(n.meta["custom"]) for n in ep.graph.nodes if n.meta.get("custom")}


def deserialize_program(blob: dict):
    """The program :func:`serialize_program` stored, with a fake mode and ShapeEnv of its own."""
    from executorch.exir.serde.export_serialize import SerializedArtifact
    from executorch.exir.serde.serialize import deserialize

    blob = dict(blob)
    custom = blob.pop(CUSTOM, None) or {}
    ep = deserialize(SerializedArtifact(**blob))
    for node in ep.graph.nodes:
        if node.name in custom:
            node.meta["custom"] = json.loads(custom[node.name])
        if node.op == "call_function" and "val" not in node.meta and _returns_nothing(node.target):
            # torch.export and to_edge record val None on an op without outputs (aten._assert_scalar); serde
            # drops the key, and a pass that reads node.meta["val"] on every node would raise only here
            node.meta["val"] = None
    return ep


def _returns_nothing(target) -> bool:
    schema = getattr(target, "_schema", None)
    return schema is not None and not schema.returns


def roundtrip(ep):
    """The program as the cache would give it back (what every run works on)."""
    return deserialize_program(serialize_program(ep))


def _versions() -> str:
    import torch

    try:
        from importlib.metadata import version

        et = version("executorch")
    except Exception:  # pragma: no cover - executorch always installed with passgate
        et = "unknown"
    return f"torch={torch.__version__};executorch={et};format={FORMAT_VERSION}"


@dataclass
class CaseCache:
    root: Path
    hits: int = 0
    misses: int = 0
    rebuilt: int = 0

    def __post_init__(self):
        sweep_debris(self.root)  # what killed writes of earlier runs left (harness/core/io.py)

    def path_for(self, spec) -> Path:
        digest = hashlib.sha256(f"{spec.key}\0{_versions()}".encode()).hexdigest()[:32]
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in spec.name)[:60]
        return self.root / f"{safe}-{digest}.case"

    def summary(self, spec) -> Optional[dict]:
        """What a report records of the case (its ops, where it came from), stored beside its entry, or None.

        Why: a run that reuses every verdict on a case still reports its ops;
        read from here it need not deserialize the case's programs (a warm
        conformance run read 146 cases for that alone).
        """
        try:
            return json.loads(self._summary_path(spec).read_text())
        except (OSError, ValueError):
            return None

    def store_summary(self, spec, summary: dict) -> None:
        atomic_write_bytes(self._summary_path(spec), json.dumps(summary, sort_keys=True).encode())

    def _summary_path(self, spec) -> Path:
        return self.path_for(spec).with_suffix(".summary.json")

    def load(self, spec):
        """(inputs, exported, edge) or None when absent; rebuilds corrupt entries."""
        path = self.path_for(spec)
        if not path.exists():
            self.misses += 1
            _log_event("miss", spec)
            return None
        try:
            entry = self._read(path)
        except Exception as exc:  # any failure to read means: do not trust it
            warnings.warn(f"passgate: cache entry {path.name} is corrupt ({exc}); rebuilding", stacklevel=2)
            print(f"passgate: warning: cache entry {path.name} is corrupt; rebuilding", file=sys.stderr)
            self.rebuilt += 1
            try:
                path.unlink()
            except OSError:
                pass
            return None
        self.hits += 1
        _log_event("hit", spec)
        return entry

    @contextmanager
    def lowering(self, spec, wait: bool = True):
        """Hold the lock for lowering ``spec``; yields the entry if another process stored it meanwhile, else None.

        The caller lowers and stores inside the block. Without ``fcntl`` (or when
        the lock file cannot be made) it yields None at once: every process
        lowers, as before, and the atomic rename still keeps entries whole.
        With ``wait=False`` it yields :data:`BUSY` at once when another process
        holds the lock (is lowering ``spec`` now).
        """
        try:
            import fcntl

            lock_dir = self.root / ".locks"
            lock_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_dir / (self.path_for(spec).name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        except (ImportError, OSError):
            yield None
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.misses -= 1  # counted when the caller takes it again, after the other process stored it
                yield BUSY
                return
            path = self.path_for(spec)
            entry = None
            if path.exists():
                self.misses -= 1  # not a miss after all: another process lowered it while we waited
                entry = self.load(spec)
                if entry is not None:
                    _log_event("waited", spec)
            if entry is None:
                _log_event("lowered", spec)
            yield entry
        finally:
            os.close(fd)  # releases the lock

    def _read(self, path: Path):
        import torch

        raw = path.read_bytes()
        header_line, sep, payload = raw.partition(b"\n")
        if not sep:
            raise CorruptCacheEntry("no header")
        header = json.loads(header_line)
        if header.get("format") != FORMAT_VERSION or header.get("versions") != _versions():
            raise CorruptCacheEntry("stale format or versions")
        if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
            raise CorruptCacheEntry("checksum mismatch")
        blob = pickle.loads(payload)
        inputs = torch.load(io.BytesIO(blob["inputs"]), weights_only=False)
        return (
            tuple(inputs),
            deserialize_program(blob["exported"]),
            deserialize_program(blob["edge"]),
        )

    def store(self, spec, inputs, exported, edge):
        """Write the entry; return it as read back, so cold and warm runs agree."""
        import torch

        buf = io.BytesIO()
        torch.save(tuple(inputs), buf)
        blob = {
            "inputs": buf.getvalue(),
            "exported": serialize_program(exported),
            "edge": serialize_program(edge),
        }
        payload = pickle.dumps(blob, protocol=pickle.HIGHEST_PROTOCOL)
        header = {
            "format": FORMAT_VERSION,
            "versions": _versions(),
            "case": spec.name,
            "sha256": hashlib.sha256(payload).hexdigest(),
        }
        path = self.path_for(spec)
        try:
            atomic_write_bytes(path, json.dumps(header).encode() + b"\n" + payload)
        except OSError as exc:
            warnings.warn(f"passgate: cannot write cache entry {path} ({exc}); continuing without it", stacklevel=2)
        return (
            tuple(inputs),
            deserialize_program(blob["exported"]),
            deserialize_program(blob["edge"]),
        )


_DEFAULT: Optional[CaseCache] = None
_DISABLED = False


def configure(root: Optional[os.PathLike], disabled: bool = False) -> Optional[CaseCache]:
    """Set the process-wide cache (``--cache-dir``, ``--no-cache``)."""
    global _DEFAULT, _DISABLED
    _DISABLED = disabled
    _DEFAULT = None if disabled else CaseCache(Path(root) if root else default_cache_root())
    return _DEFAULT


def default_cache() -> Optional[CaseCache]:
    global _DEFAULT
    if _DISABLED:
        return None
    if _DEFAULT is None:
        _DEFAULT = CaseCache(default_cache_root())
    return _DEFAULT
