"""``passgate fuzz --contexts`` as a session: per target, what it rewrites, the search, failures checked and shrunk.

The search itself is :class:`harness.fuzz.contexts_run.ContextSearch`; this
module runs it for every target inside a :class:`harness.run.session.Session`
(the report, progress lines, exit status), checks each failing graph through
the session's case cache like ``passgate fuzz`` checks its kept graphs,
shrinks its program and writes its reproducer (:mod:`harness.reduce`), and
writes the kept graphs as a corpus folder (:mod:`harness.fuzz.corpus`).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional

from harness.core.config import RunConfig
from harness.fuzz.contexts_run import ContextSearch, KeepReason, rewritten_items

__all__ = ["ContextCampaign", "by_context", "render_contexts_table"]


@dataclass
class ContextCampaign:
    """One ``passgate fuzz --contexts`` run's settings, and per target what it found."""

    targets: list
    config: RunConfig
    seed: int = 0
    seconds: float = 180.0  # per target
    max_draws: int = 120  # per target
    flows: tuple = ()
    baseline: tuple = ("builtin",)
    strict: bool = False
    isolate: bool = True
    shrink: bool = True
    shrink_seconds: float = 45.0
    corpus_dir: Optional[Path] = None
    keep_reason: Optional[KeepReason] = None
    searches: list = field(default_factory=list)

    def body(self, session) -> None:
        from harness.fuzz.campaign import warm_lowering
        from harness.fuzz.loop import Fuzzer
        from harness.graphs import sources

        if self.isolate:
            warm_lowering(self.flows)
        fuzzer = Fuzzer(self.targets, self.seed, self.config, 1, self.isolate, note=session.note)
        observations = fuzzer.measure_baseline(sources.select(list(self.baseline))) if self.baseline else []
        for t in self.targets:
            items = rewritten_items(t.name, observations, t.files)
            session.note(f"{t.name}: rewrites {' '.join('>'.join(i) for i in items[:12])}"
                         + (f" (+{len(items) - 12})" if len(items) > 12 else "") + f"; searching {len(items)} op(s) "
                         f"for {self.max_draws} draws or {self.seconds:g} s")
            search = ContextSearch(t, items, self.seed, self.config, self.strict, self.flows, self.isolate,
                                   self.max_draws, self.seconds, self.shrink_seconds,
                                   base_arcs=frozenset(fuzzer.base_arcs.get(t.name, ())),
                                   keep_reason=self.keep_reason, note=session.note)
            started = time.monotonic()
            search.run()
            session.note(f"{search.progress()} in {time.monotonic() - started:.0f} s")
            self.searches.append(search)
            if search.failures:
                self._check(session, search)
        session.configuration["graphs"] = [k.graph.name for s in self.searches for k in s.kept]
        if self.corpus_dir is not None and any(s.kept for s in self.searches):
            path = self._write_corpus()
            session.note(f"{sum(len(s.kept) for s in self.searches)} kept graph(s) written to {path} "
                         "(`passgate corpus distill --from` takes them into a corpus)")

    def _check(self, session, search: ContextSearch) -> None:
        """Every check of the target on its failing graphs, through the session; then shrink and reproduce."""
        from harness.graphs.random.generate import spec_of
        from harness.run.scheduler import Tally, check_all

        t = search.target
        specs = [spec_of(f.graph.program) for f in search.failures]
        cases = session.load_cases(specs)
        mine: list = []

        def sink(pair) -> None:
            mine.extend(pair.results)
            session.results.extend(pair.results)

        check_all([t.loaded], cases, replace(self.config, skip_checks=t.skip_checks), Tally(sink))
        for f in search.failures:
            hit = next((r for r in mine if r.graph == f.graph.name and r.check == f.check), None)
            if hit is None:
                continue
            hit.details["contexts"] = {"op": list(f.graph.combo.op), **f.graph.combo.contexts(),
                                       "label": f.graph.combo.label, "draws": f.draws}
            if self.shrink and hit.is_violation(self.strict):
                self._shrink(session, t, f, hit)

    def _shrink(self, session, target, failure, result) -> None:
        from harness.reduce.repro import write_repro
        from harness.reduce.shrink import shrink

        label = f"shrinking {target.name} x {failure.graph.name} ({failure.check}, {failure.graph.combo.label})"
        session.note(f"{label} ...")
        got = shrink(target.loaded, failure.graph.program, failure.check, self.config, self.shrink_seconds)
        if got is None:
            session.note(f"{label}: does not reproduce in-process; not shrunk")
            result.details["shrink"] = {"reproduced": False}
            return
        path = write_repro(session.report_dir, target.loaded, failure.check, failure.graph.name, got, self.config)
        result.details["shrunk_graph"] = got.program.code()
        result.details["shrunk_nodes"] = got.nodes
        result.details["shrink"] = {"reproduced": True, "level": got.level, "statements_before": got.statements_before,
                                    "statements_after": got.program.size, "call_function_nodes": got.nodes,
                                    "tries": got.tries, "duration_s": round(got.seconds, 3)}
        if path is not None:
            result.details["repro"] = path.name
        session.note(f"shrunk {target.name} x {failure.graph.name} ({failure.check}): {got.statements_before} -> "
                     f"{got.program.size} statements" + (f"; reproducer: {path}" if path else ""))

    def _write_corpus(self) -> Path:
        from harness.fuzz.corpus import Entry, corpus_name, write

        entries: dict = {}
        for s in self.searches:
            for k in s.kept:
                name = corpus_name(k.graph.code)
                e = entries.get(name) or Entry(name, k.graph.code, k.graph.name, {
                    "statements": k.graph.program.size, "dynamic": k.graph.program.dynamic,
                    "quantized": k.graph.program.quantizer or None, "contexts": k.graph.combo.label, "reasons": {}})
                e.info["reasons"][s.target.name] = {"arcs": 0, "atoms": k.reasons}
                entries[name] = e
        return write(self.corpus_dir, list(entries.values()), "Kept by `passgate fuzz --contexts`: an op the pass "
                     "rewrites, in the contexts its name in index.json lists")

    def section(self, results: list) -> dict:
        """The results document's ``contexts`` section."""
        found: dict = {}
        for r in results:
            if r.is_violation(self.strict):
                found.setdefault(r.pass_name, set()).add((r.graph, r.check))
        return {"seed": self.seed, "seconds_per_target": self.seconds, "draws_per_target": self.max_draws,
                "quantize": list(self.flows), "baseline": list(self.baseline),
                "targets": [{"name": s.target.name, "ops": [">".join(i) for i in s.items], "draws": s.draws,
                             "not_built": s.not_built, "not_lowered": s.not_lowered, "arcs": len(s.arcs),
                             "base_arcs": len(s.base_arcs), "verdict_patterns": len(s.patterns),
                             "kept": [{"name": k.graph.name, "draw": k.draw, "contexts": k.graph.combo.label,
                                       "reasons": k.reasons} for k in s.kept],
                             "failures": [{"graph": f.graph.name, "check": f.check, "contexts": f.graph.combo.label,
                                           "draws": f.draws, "message": f.message} for f in s.failures],
                             "violations": len(found.get(s.target.name, ()))} for s in self.searches],
                "by_context": by_context(self.searches)}


_KILLS = re.compile(r"kills (\d+) surviving mutant")


def by_context(searches: list) -> dict:
    """Per context (``family=name``, the plain ones left out): the kept graphs that hold it and the surviving
    mutants those graphs killed (a graph's kills count for every context it holds)."""
    tally: dict = {}
    for s in searches:
        for k in s.kept:
            kills = sum(int(m.group(1)) for r in k.reasons for m in [_KILLS.search(r)] if m)
            held = k.graph.combo.non_plain() or ["plain"]
            for key in held:
                row = tally.setdefault(key, {"kept": 0, "mutants_killed": 0})
                row["kept"] += 1
                row["mutants_killed"] += kills
    return dict(sorted(tally.items()))


def render_contexts_table(section: dict) -> str:
    """The closing table: per target its ops, draws, new arcs, verdict patterns, kept graphs and failures."""
    head = f"{'pass':<48} {'ops':>4} {'draws':>6} {'arcs':>11} {'patterns':>9} {'kept':>5} {'failures':>9}"
    lines = [head, "-" * len(head)]
    for t in section["targets"]:
        lines.append(f"{t['name'][:48]:<48} {len(t['ops']):>4} {t['draws']:>6} "
                     f"{t['base_arcs']:>5}->{t['arcs']:<5} {t['verdict_patterns']:>9} {len(t['kept']):>5} "
                     f"{len(t['failures']):>9}")
        for f in t["failures"]:
            lines.append(f"    {f['check']}: {f['contexts']} ({f['graph']}, draw {f['draws']})")
    if section.get("by_context"):
        lines += ["", f"{'context':<28} {'kept':>5} {'mutants killed':>15}"]
        lines += [f"{k:<28} {v['kept']:>5} {v['mutants_killed']:>15}" for k, v in section["by_context"].items()]
    return "\n".join(lines)
