"""The verdict cache: a unit's results, reused while nothing it depends on has changed.

Key (DESIGN.md: "a verdict is reused only under a key that changes whenever
anything it depends on changes"), in two halves:

- the *static* half names the record file: the unit (kind, name, graph), its
  definition (the catalog entry, pipeline or plugged case, rendered without
  memory addresses by :func:`stable`; a definition that cannot be rendered
  stably is never cached), the case fingerprint (``CaseSpec.key``: the graph's
  source, sizes and seed), the checks, seed, draws and timeout asked for, and
  the versions of passgate, Python, torch and executorch;
- the *dependency* half is checked against the record: the content hash of
  every file the unit executed when it was recorded (:mod:`harness.run.deps`).

A record that is missing, unreadable, of another format, or whose any
dependency file is missing or changed is a miss: the unit runs. Records are
JSON, written with :func:`harness.core.io.atomic_write_bytes`, one file per
unit, so an interrupted run keeps every unit it finished, and concurrent
writers (pytest-xdist workers) never see half a file.

Layout under ``<cache dir>/verdicts/``: ``units/<key>.json`` (results, the run
they came from, the ids of the dependency groups) and ``deps/<id>.json``
(one folder's executed files; content-addressed, shared by every unit that
executed the same files of that folder, so the cache stays a few KB a unit
instead of the ~80 KB a full path list takes).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import os
import platform
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

from harness.core.io import atomic_write_bytes, sweep_debris
from harness.core.results import CheckResult, Status
from harness.core.version import __version__
from harness.run import deps

__all__ = ["FORMAT", "REUSED", "Unstable", "stable", "versions", "config_key", "static_key", "Record",
           "VerdictCache", "new_run", "mark_reused", "cacheable"]

FORMAT = 1
REUSED = "reused"  # details key on a reused result: {"run": id, "started_at": time}


class Unstable(Exception):
    """A value whose text would differ from process to process (a memory address): never a key part."""


def _qualified(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', getattr(obj, '__name__', '?'))}"


def stable(obj: Any, depth: int = 0, memo: Optional[dict] = None) -> str:
    """Text of ``obj`` that is the same in every process: callables by qualified name, sets sorted.

    The code of a callable is a dependency recorded when it runs, so its name
    suffices here; its defaults and closure values are data, rendered too.
    ``memo`` (id -> (object, text)) keeps the text of each dataclass met, for
    a caller that renders many values sharing parts (the units of one plan
    share their entries); it holds the objects, so an id is never reused.
    """
    if depth > 12:
        raise Unstable("nested too deep")
    d = depth + 1
    if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
        return repr(obj)
    if isinstance(obj, enum.Enum):
        return f"{_qualified(type(obj))}.{obj.name}"
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if memo is not None and id(obj) in memo:
            return memo[id(obj)][1]
        body = ",".join(f"{f.name}={stable(getattr(obj, f.name, None), d, memo)}" for f in dataclasses.fields(obj))
        text = f"{_qualified(type(obj))}({body})"
        if memo is not None:
            memo[id(obj)] = (obj, text)
        return text
    if isinstance(obj, (list, tuple)):
        return f"{type(obj).__name__}[{','.join(stable(x, d, memo) for x in obj)}]"
    if isinstance(obj, (set, frozenset)):
        return f"set[{','.join(sorted(stable(x, d, memo) for x in obj))}]"
    if isinstance(obj, dict):
        return "{" + ",".join(sorted(f"{stable(k, d, memo)}:{stable(v, d, memo)}" for k, v in obj.items())) + "}"
    if isinstance(obj, functools.partial):
        return f"partial({stable(obj.func, d, memo)},{stable(obj.args, d, memo)},{stable(obj.keywords, d, memo)})"
    if hasattr(obj, "__self__") and hasattr(obj, "__func__"):  # bound method
        return f"bound({stable(obj.__self__, d, memo)},{obj.__func__.__qualname__})"
    if isinstance(obj, type) or getattr(obj, "__code__", None) is not None:
        extra = ""
        if getattr(obj, "__code__", None) is not None:
            cells = [c.cell_contents for c in (obj.__closure__ or ()) if _filled(c)]
            extra = f"{stable(obj.__defaults__, d, memo)}{stable(cells, d, memo) if cells else ''}"
        return f"<{_qualified(obj)}{extra}>"
    text = repr(obj)
    if " at 0x" in text or " object at " in text:
        state = getattr(obj, "__dict__", None)
        if isinstance(state, dict):  # a plain object (a Vulkan fusion): its type and its state
            return f"{_qualified(type(obj))}{stable(state, d, memo)}"
        raise Unstable(text[:80])
    return f"{_qualified(type(obj))}:{text}"


def _filled(cell) -> bool:
    try:
        return cell.cell_contents is not _EMPTY
    except ValueError:  # an empty cell (a closure variable not assigned yet)
        return False


_EMPTY = object()


@functools.lru_cache(maxsize=1)
def versions() -> dict:
    """The versions every key holds: passgate's, Python's, torch's and executorch's."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"passgate": __version__, "python": platform.python_version()}
    for pkg in ("torch", "executorch"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


def config_key(config) -> str:
    """What of a :class:`harness.core.config.RunConfig` changes verdicts (not workers, resume skips, recording)."""
    checks = sorted(config.checks) if config.checks is not None else None
    hash_seed = ["hash_seed_check"] if getattr(config, "hash_seed_check", False) else []  # off: the keys as before
    return stable([config.stage, config.semantics, config.timeout, config.seed, config.draws, checks,
                   list(config.skip_checks), config.isolate] + hash_seed)


def static_key(unit, case_key: str, config, memo: Optional[dict] = None, config_text: Optional[str] = None,
               defined_in: Iterable[str] = ()) -> Optional[str]:
    """The record name of ``unit`` judged on a case of fingerprint ``case_key``; None: never cached.

    ``defined_in``: the files the unit's pass is defined in, as :func:`portable` names them. The dependency half
    checks the files a record *executed*; a spec that now resolves to another file (the same module name in
    another folder) would find those unchanged and serve the other file's verdicts, so where it resolves is
    part of the name. A caller keying a whole plan passes a ``memo`` (see :func:`stable`) and the
    ``config_text`` of :func:`config_key`, computed once: thousands of units share their entries and config."""
    try:
        identity = stable(unit, memo=memo)
    except Unstable:
        return None
    ctext = config_text if config_text is not None else config_key(config)
    text = json.dumps([FORMAT, unit.key, identity, case_key, ctext, versions(), sorted(defined_in)], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def new_run() -> dict:
    """The id and start of this run, as reused results name it."""
    return {"id": f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}",
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def mark_reused(results: list, run: dict) -> list:
    for r in results:
        r.details = {**r.details, REUSED: {"run": run.get("id"), "started_at": run.get("started_at")}}
    return results


def cacheable(results: list) -> bool:
    """Verdicts worth keeping: no passgate error and no timeout (both may not recur), something judged."""
    return bool(results) and not any(
        r.status is Status.ERROR or (r.details or {}).get("outcome") in ("timeout", "harness_error")
        for r in results)


@dataclass
class Record:
    """One unit's recorded results and what they depended on."""

    unit: str
    groups: list  # ids of deps/ groups
    digest: str  # the combined digest of the groups when recorded
    run: dict
    results: list = field(default_factory=list)  # JSON of each CheckResult
    checked: Optional[list] = None  # the CheckResults of ``results``, once :meth:`VerdictCache.hit` parsed them


def _roots() -> tuple:
    """(token, real path) of the folders a dependency is recorded relative to, most specific first.

    A cache folder restored elsewhere (a CI cache, a second clone, another
    virtualenv with the same pinned packages) names the same files under
    other absolute paths: recorded relative to the checkout and to the
    installed packages, its records still hit there. Files outside these
    roots (a user's pass file elsewhere) stay absolute.
    """
    import sysconfig

    checkout = os.path.realpath(Path(__file__).resolve().parents[2])
    site = {os.path.realpath(p) for k in ("purelib", "platlib") if (p := sysconfig.get_paths().get(k))}
    roots = [(f"{{site{i}}}", p) for i, p in enumerate(sorted(site))] + [("{checkout}", checkout)]
    return tuple(sorted(roots, key=lambda r: -len(r[1])))


def portable(folder: str, roots: Optional[tuple] = None) -> str:
    """``folder`` with the longest root it lies in replaced by that root's token."""
    for token, root in roots or _roots():
        if folder == root or folder.startswith(root + os.sep):
            return token + folder[len(root):]
    return folder


def local(folder: str, roots: Optional[tuple] = None) -> str:
    """The real path a :func:`portable` folder names here."""
    if folder.startswith("{"):
        for token, root in roots or _roots():
            if folder == token or folder.startswith(token + os.sep):
                return root + folder[len(token):]
    return folder


@dataclass
class VerdictCache:
    """Records under ``root`` (``<cache dir>/verdicts``); counts what it found."""

    root: Path
    corrupt: int = 0
    # id -> (folder here, names, folder as stored) or None when unreadable
    _groups: dict = field(default_factory=dict)
    _digests: dict = field(default_factory=dict)  # id -> digest (None: a file is gone)
    roots: tuple = field(default_factory=_roots)  # what folders are recorded relative to (:func:`portable`)
    write_errors: int = 0  # records that could not be written (a full disk, a read-only folder)
    _written: dict = field(default_factory=dict)  # frozenset of dependency files -> their group ids, this run

    def __post_init__(self):
        # what killed writes of earlier runs left (harness/core/io.py): one folder per key prefix
        root = Path(self.root)
        for folder in (root / "cases", *(root / "units").glob("??"), *(root / "deps").glob("??")):
            sweep_debris(folder)

    def _unit_path(self, key: str) -> Path:
        return self.root / "units" / key[:2] / f"{key}.json"

    def read(self, key: str) -> Optional[Record]:
        """The record of ``key`` as stored (hashes not checked); None when there is none or it is unreadable."""
        path = self._unit_path(key)
        try:
            doc = json.loads(path.read_bytes())
            if doc.get("format") != FORMAT:
                return None
            rec = Record(doc["unit"], list(doc["groups"]), str(doc["digest"]), dict(doc["run"]), list(doc["results"]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.corrupt += 1
            return None
        return rec

    def group(self, gid: str) -> Optional[tuple]:
        """(folder here, file names, folder as recorded) of one dependency group; None when missing or unreadable.

        Records written before folders were recorded relative to roots hold absolute folders: they are
        digested by those names, as they were written, so they still hit where they were made."""
        if gid not in self._groups:
            try:
                doc = json.loads((self.root / "deps" / gid[:2] / f"{gid}.json").read_bytes())
                stored = str(doc["folder"])
                self._groups[gid] = (local(stored, self.roots), frozenset(str(n) for n in doc["files"]), stored)
            except FileNotFoundError:
                self._groups[gid] = None
            except (OSError, ValueError, KeyError, TypeError):
                self.corrupt += 1
                self._groups[gid] = None
        return self._groups[gid]

    def files(self, rec: Record) -> Optional[set]:
        """Every dependency file of ``rec``; None when a group is unreadable."""
        out: set = set()
        for gid in rec.groups:
            g = self.group(gid)
            if g is None:
                return None
            out.update(os.path.join(g[0], n) for n in g[1])
        return out

    def _group_digest(self, gid: str) -> Optional[str]:
        if gid not in self._digests:
            g = self.group(gid)
            # files named as recorded (relative to a root), so the digest is the same wherever the roots are
            self._digests[gid] = None if g is None else deps.digest(
                {os.path.join(g[2], n): os.path.join(g[0], n) for n in g[1]})
        return self._digests[gid]

    def current_digest(self, groups: Iterable[str]) -> Optional[str]:
        h = hashlib.sha256()
        for gid in sorted(groups):
            d = self._group_digest(gid)
            if d is None:
                return None
            h.update(f"{gid}:{d}\n".encode())
        return h.hexdigest()

    def holds(self, rec: Record) -> bool:
        """Does every dependency of ``rec`` still hash as recorded?"""
        return bool(rec.groups) and self.current_digest(rec.groups) == rec.digest

    def hit(self, key: Optional[str]) -> Optional[Record]:
        """The record of ``key`` when every dependency still hashes as recorded; None: run the unit."""
        if key is None:
            return None
        rec = self.read(key)
        if rec is None or not self.holds(rec):
            return None
        try:
            rec.checked = [CheckResult.from_json(r) for r in rec.results]  # parsed once: the reuse takes these
        except (KeyError, ValueError, TypeError, AttributeError):
            self.corrupt += 1
            return None
        return rec

    def read_case(self, case_key: str) -> Optional[dict]:
        """What a run noted of a case (its report record and ops), so a run that reuses every unit on it
        need not load it; None when there is no readable note."""
        try:
            doc = json.loads((self.root / "cases" / f"{case_key.replace('/', '_')}.json").read_bytes())
            return {"record": dict(doc["record"]), "ops": [str(o) for o in doc["ops"]]}
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            self.corrupt += 1
            return None

    def _store(self, path: Path, body: bytes) -> bool:
        """Write one file of the cache. A cache that cannot be written costs the next run time, never this
        run its verdicts: the error is a warning (the first one only), the file is left unwritten."""
        try:
            atomic_write_bytes(path, body, durable=False)  # an unreadable record is judged again (read)
            return True
        except OSError as exc:
            self.write_errors += 1
            if self.write_errors == 1:
                warnings.warn(f"passgate: cannot write the verdict cache ({exc.strerror or exc}: {path}); "
                              "the verdicts it cannot record will be judged again next time", stacklevel=3)
            return False

    def write_case(self, case_key: str, record: dict, ops: Iterable[str]) -> None:
        body = json.dumps({"record": record, "ops": sorted(ops)}, default=str).encode()
        self._store(self.root / "cases" / f"{case_key.replace('/', '_')}.json", body)

    def write(self, key: str, unit_key: str, files: Iterable[str], results: list, run: dict) -> bool:
        """Record ``results`` of ``unit_key`` with the dependency ``files``; False when a file is unreadable."""
        files = frozenset(files)
        groups = self._written.get(files)  # the units of one entry share their files: grouped once
        if groups is None:
            groups = self._write_groups(files)
            if groups is None:
                return False
            self._written[files] = groups
        dig = self.current_digest(groups)
        if dig is None:
            return False
        doc = {"format": FORMAT, "unit": unit_key, "groups": groups, "digest": dig, "run": run,
               "results": [r.to_json() for r in results]}
        return self._store(self._unit_path(key), json.dumps(doc, default=str).encode())

    def _write_groups(self, files: frozenset) -> Optional[list]:
        """The ids of ``files``' groups (one per folder), each written when new; None when one cannot be."""
        by_folder: dict = {}
        for f in files:
            by_folder.setdefault(os.path.dirname(f), set()).add(os.path.basename(f))
        groups = []
        for folder, names in sorted(by_folder.items()):
            stored = portable(folder, self.roots)
            body = json.dumps({"folder": stored, "files": sorted(names)}, sort_keys=True).encode()
            gid = hashlib.sha256(body).hexdigest()[:32]
            if self.group(gid) is None:  # new, or unreadable: (re)written, and its digest computed afresh
                if not self._store(self.root / "deps" / gid[:2] / f"{gid}.json", body):
                    return None
                self._groups[gid] = (folder, frozenset(names), stored)
                self._digests.pop(gid, None)
            groups.append(gid)
        return groups
