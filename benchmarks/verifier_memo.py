"""The verifier_memo figure: what the ``verifier`` check costs with the replica memo against without it.

A pass that leaves its case exactly as it was handed (most entries on most
graphs) gets the handed program's verifier verdict, judged once per case
(:func:`harness.check.verifiers.dialect_verdict`). This figure runs the same
catalog entries on the same cases twice in this process, back to back: once
as passgate runs them, once with that memo bypassed (every result verified
afresh); the value is the verifier's time with the memo over its time
without, and the verdicts of both must be the same, check for check.
"""

from __future__ import annotations

import time

from benchmarks.context import Context, record

__all__ = ["CATALOGS", "figure"]

CATALOGS = ("exir", "transforms")  # many entries, most leaving most built-in graphs as they were handed


def _run(entries: list, cases: list, config) -> tuple[float, list]:
    from harness.graphs.memos import MEMOS
    from harness.run.plan import run_entry

    MEMOS.clear()
    started = time.perf_counter()
    rs = [r for e in entries for r in run_entry(e, cases, config)]
    return time.perf_counter() - started, rs


def figure(ctx: Context) -> dict:
    import torch

    from harness import catalog
    from harness.check import verifiers
    from harness.core.config import RunConfig
    from harness.graphs import cache, sources
    from harness.graphs.cases import load_case

    cache.configure(ctx.cache_dir)
    specs = sources.select(["mlp"] if ctx.tiny else ["builtin"])
    cases = [load_case(s) for s in specs]
    entries = [e for e in catalog.all_entries(catalog.select(list(CATALOGS))) if e.runnable]
    entries = entries[:3] if ctx.tiny else entries
    config = RunConfig(seed=ctx.seed)
    original = verifiers.dialect_verdict
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the workers that run every check
    try:
        _t_memo, with_memo = _run(entries, cases, config)
        verifiers.dialect_verdict = lambda res, entry_program=None, replica=None: original(res, entry_program)
        _t_plain, without = _run(entries, cases, config)
    finally:
        verifiers.dialect_verdict = original
        torch.set_num_threads(threads)

    def verifier_s(rs: list) -> float:
        return sum(r.duration_s for r in rs if r.check == "verifier")

    same = [(r.pass_name, r.graph, r.check, r.status) for r in with_memo] == \
        [(r.pass_name, r.graph, r.check, r.status) for r in without]
    memo_s, plain_s = verifier_s(with_memo), verifier_s(without)
    check_s = sum(r.duration_s for r in without)
    ratio = round(memo_s / plain_s, 3) if plain_s and same else None
    return record(ratio, 1.0, "verifier time with the memo / without (same verdicts)", "lower",
                  workload=f"{len(entries)} entries of {', '.join(CATALOGS)} x {len(cases)} built-in graphs",
                  verdicts=len(with_memo), same_verdicts=same, verifier_s_with_memo=round(memo_s, 2),
                  verifier_s_without=round(plain_s, 2), saved_share_of_check_time=round(
                      (plain_s - memo_s) / check_s, 3) if check_s else None)
