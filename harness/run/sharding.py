"""``--shard I/N`` and ``passgate report merge``: one run split over N CI machines, joined again.

The work items are the pass x graph pairs (every check of a pair runs in
one process, because the checks share the pass's output). Pairs are sorted
graph first, then pass, and cut into N contiguous runs of near-equal length
(sizes differ by at most one). Sorting makes the split independent of the
order passes and graphs were named on the command line; cutting graph-major
keeps each graph on as few shards as possible, because lowering a graph
(seconds for zoo and quantized models) is what a fresh CI machine pays per
graph it touches, while a pass costs nothing to load. Every machine must see
the same pass and graph lists (same commit, same seed), which ``merge``
verifies.

Merging puts the records back in the order an unsharded run writes them
(the configuration's pass order, then its graph order, checks as the runner
emitted them), so a merged results.json equals the unsharded one apart from
timings. A missing, repeated or foreign part is a one-line usage error.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from harness.core.errors import UsageError

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
# environment fields that must agree between parts: the verdicts depend on them
SAME_ENVIRONMENT = ("python", "torch", "executorch", "torchao", "passgate")


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def bounds(self, total: int) -> tuple[int, int]:
        """[start, end) of this shard's run among ``total`` sorted items."""
        return (self.index - 1) * total // self.count, self.index * total // self.count


def parse(text: Optional[str]) -> Optional[Shard]:
    if text is None or isinstance(text, Shard):
        return text
    m = _SHARD.match(str(text))
    if not m:
        raise UsageError(f"--shard expects I/N, e.g. 2/4, got {text!r}")
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1 or not 1 <= index <= count:
        raise UsageError(f"--shard {text}: I must be between 1 and N (N >= 1)")
    return Shard(index, count)


def argument(text: str) -> Shard:
    """argparse ``type=``: a malformed value becomes argparse's one-line usage error (exit 2)."""
    try:
        return parse(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def work_items(pass_names: Iterable[str], graph_names: Iterable[str]) -> list[tuple[str, str]]:
    """(pass, graph) pairs in the order shards cut them: graph-major."""
    return sorted({(p, g) for p in pass_names for g in graph_names}, key=lambda pg: (pg[1], pg[0]))


def assigned(shard: Optional[Shard], pass_names: Sequence[str], graph_names: Sequence[str]) -> set:
    """The (pass, graph) pairs ``shard`` runs; all of them without a shard."""
    items = work_items(pass_names, graph_names)
    if shard is None:
        return set(items)
    start, end = shard.bounds(len(items))
    return set(items[start:end])


@dataclass
class Plan:
    """What one shard runs: its (pass, graph) pairs and the graph specs they need.

    Computed from the whole selection, never from the cases a shard loads,
    so every machine deals the same items the same way.
    """

    shard: Optional[Shard]
    pairs: set
    specs: list  # only the graph cases this shard uses: a shard should not lower graphs it never runs

    def check(self, passes: Sequence, cases: Sequence, config, progress: Optional[Callable] = None) -> list:
        """:func:`harness.check.runner.check_all` over this shard's pairs, progress counted over the shard."""
        from harness.check.runner import check_all

        if self.shard is None:
            return check_all(passes, cases, config, progress=progress)
        total, done, results = sum(1 for p in passes for c in cases if (p.name, c.name) in self.pairs), 0, []
        for p in passes:
            subset = [c for c in cases if (p.name, c.name) in self.pairs]
            if not subset:
                continue

            def relay(n, _total, pass_name, graph, rs, offset=done):
                if progress:
                    progress(offset + n, total, pass_name, graph, rs)

            results.extend(check_all([p], subset, config, progress=relay))
            done += len(subset)
        return results


def plan(shard: Optional[Shard], pass_names: Sequence[str], specs: Sequence) -> Plan:
    pairs = assigned(shard, pass_names, [s.name for s in specs])
    used = {g for _, g in pairs}
    return Plan(shard, pairs, [s for s in specs if s.name in used])


# ----------------------------------------------------------------------------- merge


def _config_without_shard(doc: dict) -> dict:
    return {k: v for k, v in (doc.get("configuration") or {}).items() if k != "shard"}


def _pass_order(config: dict, parts: list[dict]) -> list[str]:
    names = [p.get("name") for p in config.get("passes") or () if isinstance(p, dict) and p.get("name")]
    for doc in parts:
        for r in doc["results"]:
            if r["pass_name"] not in names:
                names.append(r["pass_name"])
    return names


def merge(parts: list[dict], labels: Optional[list[str]] = None) -> dict:
    """One results document from the shard parts of a run; UsageError when they do not make one run."""
    from harness.core.results import CheckResult, summarize

    labels = labels or [f"part {i}" for i in range(1, len(parts) + 1)]
    if not parts:
        raise UsageError("report merge needs at least one results folder")
    shards = []
    for doc, label in zip(parts, labels):
        raw = (doc.get("configuration") or {}).get("shard")
        if not raw:
            raise UsageError(f"{label} is not a shard (its configuration has no shard): nothing to merge")
        shards.append(parse(raw))
    counts = {s.count for s in shards}
    if len(counts) != 1:
        raise UsageError(f"parts come from different splits: N = {', '.join(str(n) for n in sorted(counts))}")
    n = counts.pop()
    seen: dict[int, str] = {}
    for s, label in zip(shards, labels):
        if s.index in seen:
            raise UsageError(f"shard {s} appears twice: {seen[s.index]} and {label}")
        seen[s.index] = label
    missing = [f"{i}/{n}" for i in range(1, n + 1) if i not in seen]
    if missing:
        raise UsageError(f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} missing: cannot merge a partial run")

    first, base_cfg = parts[0], _config_without_shard(parts[0])
    for doc, label in zip(parts[1:], labels[1:]):
        cfg = _config_without_shard(doc)
        if cfg != base_cfg:
            diff = sorted(k for k in set(cfg) | set(base_cfg) if cfg.get(k) != base_cfg.get(k))
            raise UsageError(f"{label} is from a different run: configuration differs in {', '.join(diff)}")
        env, env0 = doc.get("environment") or {}, first.get("environment") or {}
        for k in SAME_ENVIRONMENT:
            if env.get(k) != env0.get(k):
                raise UsageError(f"{label} ran with {k} {env.get(k)} where {labels[0]} ran with {env0.get(k)}")
        if doc.get("schema_version") != first.get("schema_version"):
            raise UsageError(f"{label} has schema_version {doc.get('schema_version')}, {labels[0]} has "
                             f"{first.get('schema_version')}")

    # records, in the order of an unsharded run
    owner: dict = {}
    records = []
    for doc, label in zip(parts, labels):
        for r in doc["results"]:
            pair = (r["pass_name"], r["graph"])
            if owner.setdefault(pair, label) != label:
                raise UsageError(f"{r['pass_name']} x {r['graph']} was run by both {owner[pair]} and {label}")
            records.append(r)
    pass_idx = {p: i for i, p in enumerate(_pass_order(base_cfg, parts))}
    graph_order = list(base_cfg.get("graphs") or ())
    for doc in parts:
        graph_order += [c["name"] for c in doc.get("cases", ()) if c["name"] not in graph_order]
        graph_order += [r["graph"] for r in doc["results"] if r["graph"] not in graph_order]
    graph_idx = {g: i for i, g in enumerate(graph_order)}
    records.sort(key=lambda r: (pass_idx[r["pass_name"]], graph_idx[r["graph"]]))
    cases: dict = {}
    for doc in parts:
        for c in doc.get("cases", ()):
            cases.setdefault(c["name"], c)

    complete = all(d.get("complete", True) for d in parts)
    strict = bool(base_cfg.get("strict", False))
    merged = {
        "schema_version": first["schema_version"],
        "tool": first.get("tool", {"name": "passgate", "version": first["environment"].get("passgate")}),
        "environment": first["environment"],
        "configuration": {**base_cfg, "shard": None},
        "started_at": min(d["started_at"] for d in parts),
        "duration_s": max(float(d.get("duration_s") or 0) for d in parts),
        "complete": complete,
        "cases": sorted(cases.values(), key=lambda c: graph_idx.get(c["name"], len(graph_idx))),
        "results": records,
        "summary": summarize((CheckResult.from_json(r) for r in records), strict),
        "exit_status": 0 if complete and all(d.get("exit_status", 0) == 0 for d in parts) else 1,
        "shards": [{"shard": str(s), "source": label, "started_at": d.get("started_at"),
                    "duration_s": d.get("duration_s"), "complete": d.get("complete", True),
                    "platform": (d.get("environment") or {}).get("platform")}
                   for s, label, d in sorted(zip(shards, labels, parts), key=lambda t: t[0].index)],
    }
    _merge_sections(merged, parts)
    return merged


_OWN_KEYS = {"schema_version", "tool", "environment", "configuration", "started_at", "duration_s", "complete",
             "cases", "results", "summary", "exit_status", "shards"}


def _merge_sections(merged: dict, parts: list[dict]) -> None:
    """Optional sections: lists of records are joined without repeats; anything else must agree to be kept."""
    extra_keys = sorted({k for d in parts for k in d} - _OWN_KEYS)
    for k in extra_keys:
        values = [d.get(k) for d in parts if k in d]
        if k == "known_violations":
            seen, joined = set(), []
            for v in values:
                for item in v or ():
                    ident = (item.get("pass"), item.get("graph"), item.get("check"))
                    if ident not in seen:
                        seen.add(ident)
                        joined.append(item)
            merged[k] = joined
        elif k == "gate":
            merged[k] = _merge_gates(values)
        elif all(v == values[0] for v in values) and len(values) == len(parts):
            merged[k] = values[0]
        # else: per-shard data that cannot be joined exactly (e.g. op coverage over each shard's own cases)


def _merge_gates(values: list[dict]) -> dict:
    """Each shard judged its own pairs against the baseline: a recorded violation one shard did not
    evaluate may have been judged by another, so ``not_evaluated`` keeps only what no shard judged."""
    def ident(e: dict) -> tuple:
        return (e.get("pass") or e.get("pass_name"), e.get("graph"), e.get("check"))

    gate: dict = {"baseline": values[0].get("baseline")}
    for name in ("regressions", "fixed", "unchanged", "known"):
        gate[name] = [e for v in values for e in v.get(name) or ()]
    judged = {ident(e) for name in ("regressions", "fixed", "unchanged", "known") for e in gate[name]}
    seen: set = set()
    gate["not_evaluated"] = []
    for v in values:
        for e in v.get("not_evaluated") or ():
            if ident(e) not in judged and ident(e) not in seen:
                seen.add(ident(e))
                gate["not_evaluated"].append(e)
    if any("status" in v for v in values):
        gate["status"] = "fail" if gate["regressions"] else "pass"
    return gate
