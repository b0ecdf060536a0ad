"""``passgate fuzz`` as a session: fuzz until the budget is spent, check what was kept, shrink what failed.

The run, in order:

1. warm-up: one random graph is exported and lowered in this process (a
   cold torch.export costs a child ~6 s, a warm one ~0.8 s); the baseline
   graphs (``builtin`` by default) are measured in forked children, then one
   of them once more here for every target that did not fail on it. Every
   later child inherits those imports and caches instead of paying them on
   every draw, and since the warm-up is the same in every run, so is the
   state each draw is measured from. With quantization flows, one program
   goes through each here too (imports, PT2E's pattern graphs);
2. generations of draws (:class:`harness.fuzz.loop.Fuzzer`) until the time
   budget (counted from here) or ``max_draws`` is reached; each generation's kept graphs are
   lowered once more through the case cache and *every* check is run on them,
   for the targets that kept them (:func:`harness.run.scheduler.check_all`,
   in isolated workers), so a violation shows up while the run goes on;
3. failures are shrunk and get their ``repro_*.py`` exactly as ``passgate
   check --graphs random`` does (:func:`harness.reduce.shrink.shrink_failures`:
   a kept graph is a random program, registered through ``spec_of``);
4. the kept graphs are written as plain torch programs to the corpus folder
   (:mod:`harness.fuzz.corpus`), the results document gets a ``fuzz`` section
   and the closing table says, per target, the branch coverage before and
   after, the graphs kept and the violations found.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from harness.core.config import RunConfig
from harness.fuzz.loop import Fuzzer, Kept

__all__ = ["Campaign", "render_table", "warm_lowering", "warm_up"]


@dataclass
class Campaign:
    """One ``passgate fuzz`` run's settings, and what it found."""

    fuzzer: Fuzzer
    budget: float
    config: RunConfig  # how kept graphs are checked (isolation, workers, stage, timeout)
    baseline: tuple = ("builtin",)
    max_draws: Optional[int] = None
    check: bool = True
    strict: bool = False
    corpus_dir: Optional[Path] = None
    shrink: bool = True
    shrink_seconds: float = 30.0
    progress_every: float = 10.0

    def body(self, session) -> None:
        """The session body: baseline, generations until the budget, checks, shrinking, the corpus folder."""
        fz = self.fuzzer
        fz.note = session.note
        if fz.isolate:
            warm_lowering(fz.flows)
        if self.baseline:
            self._baseline(session)
        started = time.monotonic()  # the budget is for drawing: warming up and the baseline cost what they cost
        session.note(f"fuzzing {len(fz.targets)} pass(es) for {self.budget:g} s"
                     + (f" or {self.max_draws} draws" if self.max_draws else "") + f": {fz.progress()}")
        last = time.monotonic()
        while time.monotonic() - started < self.budget:
            room = None if self.max_draws is None else self.max_draws - fz.counts.draws
            if room is not None and room <= 0:
                break
            kept = fz.step(room)
            for k in kept:
                session.note(f"kept {k.name} (draw {k.number}): {_why(k)}")
            if self.check and kept:
                self._check(session, kept)
            if kept or time.monotonic() - last >= self.progress_every:
                last = time.monotonic()
                session.note(f"fuzz {time.monotonic() - started:.0f}/{self.budget:g} s: {fz.progress()}, "
                             f"{_violations(session.results, self.strict)} violation(s)")
        session.configuration["graphs"] = [k.name for k in fz.kept]
        if self.check and self.shrink:
            self._shrink(session)
        if self.corpus_dir is not None:
            from harness.fuzz.corpus import write_kept

            path = write_kept(self.corpus_dir, fz.kept)
            session.note(f"{len(fz.kept)} kept graph(s) written to {path} (`passgate corpus show NAME` prints one)")

    def _baseline(self, session) -> None:
        from harness.graphs import sources

        specs = sources.select(list(self.baseline))
        observations = self.fuzzer.measure_baseline(specs)
        warm_up(self.fuzzer, specs, observations)

    def _check(self, session, kept: list[Kept]) -> None:
        """Every check on the newly kept graphs, for the targets that kept them."""
        from harness.graphs.random.generate import spec_of
        from harness.run.scheduler import Tally, check_all

        cases = session.load_cases([spec_of(k.draw.program) for k in kept])  # via the disk cache; in the report

        def sink(pair) -> None:
            session.results.extend(pair.results)
            for r in pair.results:
                if r.is_violation(self.strict):
                    first = (r.message.splitlines() or [""])[0][:160]
                    session.note(f"violation: {pair.pass_name} x {pair.graph}: {r.check}: {first}")

        tally = Tally(sink)
        for t in self.fuzzer.targets:
            mine = [case for k, case in zip(kept, cases) if t.name in k.reasons]
            if mine:
                check_all([t.loaded], mine, replace(self.config, skip_checks=t.skip_checks), tally)

    def _shrink(self, session) -> None:
        from harness.graphs.random.generate import spec_of
        from harness.reduce.shrink import shrink_failures

        specs = [spec_of(k.draw.program) for k in self.fuzzer.kept]
        shrink_failures(session.results, [t.loaded for t in self.fuzzer.targets], specs, self.config,
                        session.report_dir, self.strict, self.shrink_seconds, 2 * self.shrink_seconds,
                        note=session.note)

    def section(self, results: list) -> dict:
        """The results document's ``fuzz`` section."""
        fz = self.fuzzer
        rows = fz.coverage_rows()
        found = _violations_by_target(results, self.strict)
        for r in rows:
            r["violations"] = found.get(r["name"], 0)
        c = fz.counts
        return {"seed": fz.seed, "budget_s": self.budget, "max_draws": self.max_draws, "baseline": list(self.baseline),
                "quantize": list(fz.flows),
                "generations": c.generations, "draws": c.draws, "mutants": c.mutants, "duplicates": c.duplicates,
                "not_lowered": c.not_lowered, "crashed": c.crashed,
                "kept": [{"name": k.name, "draw": k.number, "parent": k.draw.parent,
                          "statements": k.draw.program.size, "dynamic": k.draw.program.dynamic,
                          "quantized": k.draw.flow or None,
                          "reasons": k.reasons} for k in fz.kept],
                "targets": rows}


def warm_lowering(flows: tuple = ()) -> None:
    """Export and lower one random graph here, before any child is forked: torch.export's and to_edge's
    first call in a process costs seconds (about 6 s against 0.8 s warm), and every child would pay it.
    With quantization flows, one program through each as well: the quantizers' imports and the PT2E pattern
    graphs (:func:`harness.graphs.quantizers.patterns_memoized`, up to 96 exports for a program with a batch
    norm) are then made once, here, and inherited."""
    from harness.fuzz.draws import fresh
    from harness.fuzz.measure import lower_fresh
    from harness.graphs.random.generate import spec_of

    programs = [fresh(0, 0).program] + [_warm_program().quantized(flow) for flow in flows]
    for program in programs:
        try:
            lower_fresh(spec_of(program))
        except Exception:  # noqa: BLE001 - only a warm-up: the draws themselves report what does not lower
            pass


def _warm_program():
    """A program holding what PT2E builds pattern graphs for: linear, conv1d/2d (+relu), an add, batch norms
    after a conv and on their own (those make convert_pt2e look for its conv-bn patterns)."""
    from harness.graphs.random.program import Decl, Program, Stmt
    from harness.graphs.random.types import Val

    decls = (Decl("m0", ("{m} = nn.Conv2d(2, 2, 1)",)), Decl("m1", ("{m} = nn.BatchNorm2d(2)",)),
             Decl("m2", ("{m} = nn.Conv1d(2, 2, 1)",)), Decl("m3", ("{m} = nn.BatchNorm1d(2)",)),
             Decl("m4", ("{m} = nn.Linear(2, 2)",)), Decl("m5", ("{m} = nn.BatchNorm1d(2)",)))
    stmts = (Stmt(("v1",), "F.relu(self.m1(self.m0({0})))", ("x0",)), Stmt(("v2",), "{0}.mean(-1)", ("v1",)),
             Stmt(("v3",), "self.m3(self.m2({0}))", ("v2",)), Stmt(("v4",), "self.m5({0}.relu())", ("v3",)),
             Stmt(("v5",), "self.m4({0}.transpose(1, 2)) + 1.0", ("v4",)))
    inputs = (Val("x0", (1, 2, 3, 3), "float32", (False,) * 4),)
    return Program("passgate_warm_pt2e", 0, inputs, decls, stmts, ("v5",), ())


def warm_up(fuzzer: Fuzzer, specs: list, observations: list) -> None:
    """Run every target once here, on the first baseline graph it did not fail on in its child: the
    imports and caches that warms are inherited by every child forked later. Targets that failed there
    are left cold rather than risked in this process (it has no isolation of its own)."""
    from harness.fuzz.measure import measure
    from harness.graphs.cases import load_case

    if not fuzzer.isolate or not specs:
        return
    by_name = {o.name: o for o in observations}
    for t in fuzzer.targets:
        for spec in specs:
            obs = by_name.get(spec.name)
            if obs is not None and obs.ok and t.name in obs.arcs and t.name not in obs.failures:
                measure(t, load_case(spec), fuzzer.config)
                break


def _why(k: Kept) -> str:
    if len(k.reasons) == 1:
        (name, r), = k.reasons.items()
        if "crashed" in r:
            return f"{name}: {r['crashed']}"
        atoms = f", new: {' '.join(r['atoms'][:6])}" if r["atoms"] else ""
        return f"{name} +{r['arcs']} arcs{atoms}"
    arcs = sum(r.get("arcs", 0) for r in k.reasons.values())
    atoms = sum(len(r.get("atoms", ())) for r in k.reasons.values())
    return f"{len(k.reasons)} passes, +{arcs} arcs, {atoms} new change atoms"


def _violations(results: list, strict: bool) -> int:
    return len({(r.pass_name, r.graph, r.check) for r in results if r.is_violation(strict)})


def _violations_by_target(results: list, strict: bool) -> dict:
    out: dict = {}
    for key in {(r.pass_name, r.graph, r.check) for r in results if r.is_violation(strict)}:
        out[key[0]] = out.get(key[0], 0) + 1
    return out


def _cell(part: int, total: int) -> str:
    return f"{part} ({100.0 * part / total:.1f}%)" if total else "-"


def render_table(section: dict) -> str:
    """The closing table: per target (and per catalog) branches, coverage before/after, kept, violations."""
    rows = list(section["targets"])
    catalogs: dict = {}
    for r in rows:
        if r["catalog"]:
            agg = catalogs.setdefault(r["catalog"], {"name": f"catalog {r['catalog']}", "branches": 0, "before": 0,
                                                     "after": 0, "kept": 0, "violations": 0})
            for key in ("branches", "before", "after", "violations"):
                agg[key] += r[key]
    kept_by_catalog: dict = {}
    for k in section["kept"]:
        for c in {r["catalog"] for r in rows if r["name"] in k["reasons"] and r["catalog"]}:
            kept_by_catalog[c] = kept_by_catalog.get(c, 0) + 1
    for c, agg in catalogs.items():
        agg["kept"] = kept_by_catalog.get(c, 0)
    lines_of = rows + (list(catalogs.values()) if catalogs else [])
    width = max([len("entry")] + [len(r["name"]) for r in lines_of])
    head = f"{'entry':<{width}}  {'branches':>8}  {'before':>14}  {'after':>14}  {'kept':>5}  {'violations':>10}"
    out = [head]
    for i, r in enumerate(lines_of):
        if catalogs and i == len(rows):
            out.append("-" * len(head))
        out.append(f"{r['name']:<{width}}  {r['branches']:>8}  {_cell(r['before'], r['branches']):>14}  "
                   f"{_cell(r['after'], r['branches']):>14}  {r['kept']:>5}  {r['violations']:>10}")
    s = section
    out.append(f"fuzz: seed {s['seed']}, {s['draws']} draws ({s['mutants']} mutants) in {s['generations']} "
               f"generations, {len(s['kept'])} kept; before = the {', '.join(s['baseline']) or 'no'} graphs, "
               f"after = with this run's draws")
    return "\n".join(out)
