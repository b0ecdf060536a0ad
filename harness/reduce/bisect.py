"""Bisecting a pipeline: the first pass after which a check fails, as LLVM's opt-bisect finds it.

``-opt-bisect-limit=N`` runs only the first N passes; searching N between
"all good" and "broken" finds the pass that broke the program in log2(n)
probes. Here a probe runs the first N steps as one pass and judges the
result against the *original* program with every check of the runner
(so ``numerics`` compares with what the model computed before any pass),
which makes failures persistent as N grows: the state checks stay broken
and the per-node metadata checks keep seeing the node that lost its stack
trace. The search assumes exactly that monotonicity; it then confirms the
culprit by judging that one step alone on the program it was handed (the
verify-each view), and writes a standalone reproducer.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from harness.check.invoke import run_pass
from harness.check.runner import check_pass_on_case
from harness.core.config import RunConfig
from harness.core.io import atomic_write_bytes
from harness.pipelines.pipeline import PIPELINE_CHECKS, Pipeline, _Prepared, derived_case, forget

__all__ = ["Probe", "BisectResult", "bisect", "failing_alone", "REPRO", "write_repro"]


@dataclass
class Probe:
    steps: int  # the first ``steps`` passes ran
    failing: list[str]


@dataclass
class BisectResult:
    pipeline: str
    graph: str
    total_steps: int
    check: Optional[str]  # the check bisected on; None: any violation
    first_bad: Optional[int] = None  # 0-based index of the culprit step; None: the pipeline holds
    step: str = ""
    failing: list[str] = field(default_factory=list)  # checks the culprit makes fail
    confirmed: list[str] = field(default_factory=list)  # of those, failing when the step is judged alone
    probes: list[Probe] = field(default_factory=list)
    results: list = field(default_factory=list)  # CheckResults of the first failing prefix
    repro: Optional[str] = None

    def to_json(self) -> dict:
        return {
            "pipeline": self.pipeline, "graph": self.graph, "total_steps": self.total_steps, "check": self.check,
            "first_bad_step": None if self.first_bad is None else self.first_bad + 1, "step": self.step,
            "failing": self.failing, "confirmed_alone": self.confirmed,
            "probes": [{"steps": p.steps, "failing": p.failing} for p in self.probes], "repro": self.repro,
        }

    def summary(self) -> str:
        if self.first_bad is None:
            return f"{self.pipeline} x {self.graph}: every check holds after all {self.total_steps} passes"
        return (f"{self.pipeline} x {self.graph}: first bad pass is step {self.first_bad + 1}/{self.total_steps} "
                f"{self.step}: {', '.join(self.failing)} ({len(self.probes)} probes)")


def _violations(results, strict: bool, check: Optional[str]) -> list[str]:
    return sorted({r.check for r in results if r.is_violation(strict) and (check is None or r.check == check)})


def bisect(pipeline: Pipeline, case, config=None, check: Optional[str] = None, strict: bool = False,
           on_probe: Optional[Callable[[Probe], None]] = None) -> BisectResult:

    config = config or RunConfig(stage=pipeline.stage, checks=PIPELINE_CHECKS)
    n = len(pipeline.steps)
    out = BisectResult(pipeline.name, case.name, n, check)
    cache: dict[int, list] = {}

    def probe(k: int) -> list[str]:
        if k not in cache:
            results = check_pass_on_case(pipeline.loaded(k), case, config)
            cache[k] = results
            p = Probe(k, _violations(results, strict, check))
            out.probes.append(p)
            if on_probe:
                on_probe(p)
        return _violations(cache[k], strict, check)

    if not probe(n):
        return out
    lo, hi = 0, n  # the first lo steps hold (none ran: the case itself), the first hi steps break something
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if probe(mid):
            hi = mid
        else:
            lo = mid
    out.first_bad = hi - 1
    out.step = pipeline.steps[hi - 1].name
    out.failing = probe(hi)
    out.results = cache[hi]
    out.confirmed = failing_alone(pipeline, case, hi - 1, config, strict, check)
    return out


def failing_alone(pipeline: Pipeline, case, index: int, config, strict: bool, check: Optional[str]) -> list[str]:
    """Judge step ``index`` alone, on the program the previous steps left (verify-each)."""
    from dataclasses import replace


    stage = config.stage or pipeline.stage
    program = case.program(stage)
    if index:
        run = run_pass(pipeline.loaded(index), program, config.timeout)
        if run.outcome != "ok":
            return []
        program = run.program
    here = derived_case(case, stage, program, f"after {index} steps of {pipeline.name}")
    step = pipeline.steps[index]
    loaded = replace(step.loaded(pipeline.semantics, stage), obj=_Prepared(step.factory))
    try:
        return _violations(check_pass_on_case(loaded, here, config), strict, check)
    finally:
        forget([here])


REPRO = '''\
"""Reproducer written by `passgate bisect`: {summary}

Rebuilds graph case {graph!r}, runs the first {before} pass(es) of pipeline {pipeline!r}, then judges
step {step_no} ({step}) alone on the program they leave. Exit status 1 while the failure reproduces.
Run from the passgate checkout: python {name}
"""
import sys

from harness.graphs import sources
from harness.reduce.bisect import failing_alone
from harness.graphs.cases import load_case
from harness.pipelines.pipeline import PIPELINE_CHECKS, resolve_pipeline
from harness.core.config import RunConfig

pipeline = resolve_pipeline({spec!r})
(spec,) = sources.select([{graph!r}], {count!r}, {seed!r})
case = load_case(spec)
config = RunConfig(stage=pipeline.stage, seed={seed!r}, checks=PIPELINE_CHECKS)
failing = failing_alone(pipeline, case, {index}, config, strict={strict!r}, check={check!r})
print(f"step {step_no} ({{pipeline.steps[{index}].name}}) on {graph}: " + (", ".join(failing) or "every check holds"))
sys.exit(1 if failing else 0)
'''


def write_repro(result: BisectResult, spec: str, folder: Path, seed: int = 0, count: Optional[int] = None,
                strict: bool = False) -> Optional[Path]:
    if result.first_bad is None:
        return None
    safe = "".join(c if c.isalnum() else "_" for c in f"{result.pipeline}_{result.graph}")[:80]
    path = Path(folder) / f"repro_bisect_{safe}.py"

    atomic_write_bytes(path, textwrap.dedent(REPRO).format(
        summary=result.summary(), graph=result.graph, before=result.first_bad, pipeline=result.pipeline,
        step_no=result.first_bad + 1, step=result.step, name=path.name, spec=spec, count=count, seed=seed,
        index=result.first_bad, strict=strict, check=result.check).encode())
    result.repro = str(path)
    return path
