"""``passgate report merge``: the shard parts of one run joined into the results document of an unsharded run.

Merging puts the records back in the order an unsharded run writes them
(the configuration's pass order, then its graph order, checks as the runner
emitted them), so a merged results.json equals the unsharded one apart from
timings. A missing, repeated or foreign part is a one-line usage error.

A shard saw part of each pass's cases, so it judges no pass-level
``exercised`` verdict; the merge judges them over the joined ``runs``
records, as the unsharded run would have (:mod:`harness.check.exercised`).
"""

from __future__ import annotations

import json
from typing import Optional

from harness.check import exercised
from harness.core.errors import UsageError
from harness.core.results import PASS_LEVEL, CheckResult, summarize
from harness.core.shards import SAME_ENVIRONMENT, Shard, parse

__all__ = ["merge"]


def _config_without_shard(doc: dict) -> dict:
    return {k: v for k, v in (doc.get("configuration") or {}).items() if k != "shard"}


def _pass_order(config: dict, parts: list[dict]) -> list[str]:
    """The configuration's passes (``check``) or catalog entries (``run``) in its order, then the other units
    (pipelines, partitioners, runtime legs) as the parts met them."""
    names = [p.get("name") for p in config.get("passes") or () if isinstance(p, dict) and p.get("name")]
    names += [e for e in config.get("entries") or () if isinstance(e, str) and e not in names]
    for doc in parts:
        for r in doc["results"]:
            if r["pass_name"] not in names:
                names.append(r["pass_name"])
    return names


def merge(parts: list[dict], labels: Optional[list[str]] = None) -> dict:
    """One results document from the shard parts of a run; UsageError when they do not make one run."""
    labels = labels or [f"part {i}" for i in range(1, len(parts) + 1)]
    if not parts:
        raise UsageError("report merge needs at least one results folder")
    shards = _shards_of(parts, labels)
    first, base_cfg = parts[0], _config_without_shard(parts[0])
    _check_same_run(parts, labels, base_cfg)
    records, graph_idx = _records_in_run_order(parts, labels, base_cfg)
    pairs = len(records)
    complete = all(d.get("complete", True) for d in parts)
    if complete:  # an interrupted part did not see every case of its passes
        records = exercised.judge_records(records, base_cfg)
    strict = bool(base_cfg.get("strict", False))
    judged_bad = any(CheckResult.from_json(r).is_violation(strict) for r in records[pairs:])
    cases: dict = {}
    for doc in parts:
        for c in doc.get("cases", ()):
            cases.setdefault(c["name"], c)
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
        "exit_status": 0 if complete and not judged_bad and all(d.get("exit_status", 0) == 0 for d in parts) else 1,
        "shards": [{"shard": str(s), "source": label, "started_at": d.get("started_at"),
                    "duration_s": d.get("duration_s"), "complete": d.get("complete", True),
                    "platform": (d.get("environment") or {}).get("platform")}
                   for s, label, d in sorted(zip(shards, labels, parts), key=lambda t: t[0].index)],
    }
    _merge_sections(merged, parts)
    return merged


def _shards_of(parts: list[dict], labels: list[str]) -> list[Shard]:
    """Each part's shard; every one of 1/N .. N/N exactly once."""
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
    return shards


def _check_same_run(parts: list[dict], labels: list[str], base_cfg: dict) -> None:
    """Same configuration (but the shard), environment and schema in every part."""
    first = parts[0]
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


def _records_in_run_order(parts: list[dict], labels: list[str], base_cfg: dict) -> tuple[list, dict]:
    """Every part's records, each pair from one part only, sorted as an unsharded run writes them."""
    owner: dict = {}
    records = []
    for doc, label in zip(parts, labels):
        for r in doc["results"]:
            if r["graph"] == PASS_LEVEL:
                continue  # judged again over the joined runs records (merge)
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
    return records, graph_idx


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
        elif len(values) == len(parts) and (joined := _join(values)) is not _UNJOINABLE:
            merged[k] = joined
        # else: per-shard data that cannot be joined exactly (e.g. op coverage over each shard's own cases)


_UNJOINABLE = object()


def _join(values: list):
    """One value from each shard's: dicts key by key, lists concatenated without repeats (each shard's rows of
    a per-case table, e.g. the Vulkan section), anything else only when every shard agrees."""
    if all(isinstance(v, dict) for v in values):
        out = {}
        for key in dict.fromkeys(k for v in values for k in v):
            joined = _join([v[key] for v in values if key in v])
            if joined is _UNJOINABLE:
                return _UNJOINABLE
            out[key] = joined
        return out
    if all(isinstance(v, list) for v in values):
        seen, out = set(), []
        for item in (i for v in values for i in v):
            ident = json.dumps(item, sort_keys=True, default=str)
            if ident not in seen:
                seen.add(ident)
                out.append(item)
        return out
    return values[0] if all(v == values[0] for v in values) else _UNJOINABLE


def _merge_gates(values: list[dict]) -> dict:
    """Each shard judged its own pairs against the baseline: a recorded violation one shard did not
    evaluate may have been judged by another, so ``not_evaluated`` keeps only what no shard judged."""
    def ident(e: dict) -> tuple:
        return (e.get("pass") or e.get("pass_name"), e.get("graph"), e.get("check"))

    gate: dict = {"baseline": values[0].get("baseline")}
    for name in ("regressions", "worsened", "fixed", "unchanged", "known"):
        gate[name] = [e for v in values for e in v.get(name) or ()]
    if not gate["worsened"] and not any("worsened" in v for v in values):
        del gate["worsened"]  # shards gated by a passgate that does not fingerprint
    judged = {ident(e) for name in ("regressions", "worsened", "fixed", "unchanged", "known")
              for e in gate.get(name, ())}
    seen: set = set()
    gate["not_evaluated"] = []
    for v in values:
        for e in v.get("not_evaluated") or ():
            if ident(e) not in judged and ident(e) not in seen:
                seen.add(ident(e))
                gate["not_evaluated"].append(e)
    if any("status" in v for v in values):
        gate["status"] = "fail" if gate["regressions"] or gate.get("worsened") else "pass"
    if any("without_fingerprint" in v for v in values):
        gate["without_fingerprint"] = sum(int(v.get("without_fingerprint") or 0) for v in values)
    return gate
