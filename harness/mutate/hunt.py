"""Does a new graph kill a mutant the suite lets survive? The keep rule inputs are judged by.

A graph that reaches no new branch can still be worth its run time: it may
put a rewrite in the one context where a broken version of the pass shows.
:class:`Hunt` holds the survivors of a campaign (``mutation.json``) and, for
a candidate graph, runs each target's unmutated pass on it under coverage
and then every survivor whose line the graph reaches, each judged by the
same gate as in the campaign (:func:`harness.mutate.campaign.judge`).

It all happens in one forked child per candidate (the mutants are swapped in
and out there one after the other, never in the caller), so the search that
asks (``passgate fuzz --contexts --mutants FILE``) keeps a clean process.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from harness.core.config import RunConfig
from harness.core.errors import UsageError
from harness.mutate.campaign import Settings, judge, reference
from harness.mutate.operators import Mutant, mutants_of
from harness.mutate.overlay import source_of

__all__ = ["Hunt", "read_report", "load_survivors"]


def read_report(path) -> dict:
    """A mutation.json, read (UsageError, one line, when it is missing, corrupt or not a mutation report)."""
    from harness.mutate.report import SCHEMA

    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read mutation report {path}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("mutants"), list):
        raise UsageError(f"{path} is not a passgate mutation report (schema {SCHEMA!r})")
    return doc


def load_survivors(path, targets: list) -> dict[str, list[Mutant]]:
    """Entry name -> its surviving mutants (``survived`` or ``not_reached``) in a mutation.json, rebuilt from their ids
    over the entries' own files (UsageError when the file is not a mutation report)."""
    doc = read_report(path)
    wanted: dict[str, set] = {}
    for m in doc.get("mutants", []):
        if m.get("status") in ("survived", "not_reached"):
            wanted.setdefault(m["entry"], set()).add(m["id"])
    out: dict[str, list[Mutant]] = {}
    for t in targets:
        ids = wanted.get(t.name)
        if ids:
            found = [m for f in t.files for m in mutants_of(f, source_of(f)) if m.id in ids]
            if found:
                out[t.name] = found
    return out


@dataclass
class Hunt:
    """The survivors of a campaign, and which of them a candidate graph kills."""

    survivors: dict  # entry name -> list[Mutant]
    config: RunConfig = field(default_factory=RunConfig)
    settings: Settings = field(default_factory=Settings)
    isolate: bool = True
    killed: dict = field(default_factory=dict)  # entry -> set of mutant ids some kept graph killed

    def kills(self, target, case) -> list[str]:
        """The ids of ``target``'s survivors that ``case`` kills (call in a disposable process: see :meth:`reason`)."""
        mine = [m for m in self.survivors.get(target.name, ()) if m.id not in self.killed.get(target.name, ())]
        if not mine or not target.applies(case.spec):
            return []
        ref = reference(target, [case], self.config, self.settings)
        cases = {case.name: case}
        return [m.id for m in mine if ref.reaching(m)
                and judge(m, target, ref, cases, self.config).status in ("killed", "timed_out")]

    def reason(self, target, program) -> Optional[str]:
        """Why to keep the graph of ``program`` for ``target`` ("kills N surviving mutants"), or None; lowered and
        judged in a forked child."""
        from harness.fuzz.measure import lower_fresh
        from harness.fuzz.workers import evaluate
        from harness.graphs.random.generate import spec_of

        if not self.survivors.get(target.name):
            return None

        def hunt(p) -> list:
            return self.kills(target, lower_fresh(spec_of(p, source="contexts")))

        (ids,) = evaluate([program], hunt, lambda p, why: [], 1, self.isolate, 600.0)
        if not ids:
            return None
        self.killed.setdefault(target.name, set()).update(ids)
        return f"kills {len(ids)} surviving mutant{'s' if len(ids) > 1 else ''}"
