"""Everything the Vulkan checks of one (fusion, case) share, computed once and lazily.

The Q/DQ program's outputs and LSB probes, the float model's outputs, and the
executors' outputs on every input draw are each needed by two or more
checks (and by the diagnosis), so they are computed on first use and kept.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Optional

import torch

from vulkan.backend.executors import ExecutorError, Subject
from vulkan.backend.fusion import FusionRun
from vulkan.cases.recipes import VulkanCase, _draw, input_draws
from vulkan.judging import tolerance

__all__ = ["SQNR_MIN_ELEMENTS", "SQNR_MAX_DRAWS", "Outputs", "CaseContext"]

SQNR_MIN_ELEMENTS = 512  # output elements per SQNR figure: enough that +-1 dB is not chance
SQNR_MAX_DRAWS = 32


@dataclass
class Outputs:
    """One executor's outputs per draw (None where it raised), and the first error."""

    per_draw: list
    error: Optional[str] = None
    error_draw: Optional[str] = None
    seconds: float = 0.0


@dataclass
class CaseContext:
    vcase: VulkanCase
    qdq_case: Any  # harness.graphs.cases.GraphCase of the Q/DQ program
    fusion_name: str
    run: FusionRun
    reference: Any  # the CPU reference executor
    device: Any = None  # a device executor, if one is plugged in
    timings: dict = field(default_factory=dict)

    @property
    def recipe(self):
        return self.vcase.recipe

    @property
    def applicable(self) -> bool:
        return self.recipe.negative or self.run.mode in self.recipe.modes

    @cached_property
    def subject(self) -> Subject:
        return Subject(self.vcase, self.qdq_case.shared("edge"), self.run.program, self.fusion_name)

    @cached_property
    def draws(self) -> list:
        return input_draws(self.vcase, self.qdq_case.sample_inputs())

    @cached_property
    def probes(self) -> list:
        """Per draw: the Q/DQ program's outputs and LSBs (the truth)."""
        started = time.perf_counter()
        out = [tolerance.probe(self.qdq_case.shared("edge"), inputs) for _, inputs in self.draws]
        self.timings["qdq_run_s"] = round(time.perf_counter() - started, 4)
        return out

    @cached_property
    def float_outputs(self) -> list:
        started = time.perf_counter()
        model = self.vcase.float_model()
        outs = []
        with torch.no_grad():
            for _, inputs in self.draws:
                y = model(*inputs)
                outs.append([t.detach() for t in torch.utils._pytree.tree_leaves(y)])
        self.timings["float_run_s"] = round(time.perf_counter() - started, 4)
        return outs

    def _outputs(self, executor) -> Outputs:
        started = time.perf_counter()
        per, err, err_draw = [], None, None
        for name, inputs in self.draws:
            try:
                per.append(executor.run(self.subject, tuple(x.clone() for x in inputs)))
            except ExecutorError as exc:
                per.append(None)
                if err is None:
                    err, err_draw = str(exc), name
            except Exception as exc:  # noqa: BLE001 - a vendor executor that crashes is reported, not fatal
                per.append(None)
                if err is None:
                    err, err_draw = f"{type(exc).__name__}: {exc}", name
        return Outputs(per, err, err_draw, time.perf_counter() - started)

    @cached_property
    def fused_outputs(self) -> Outputs:
        out = self._outputs(self.reference)
        self.timings["fused_run_s"] = round(out.seconds, 4)
        return out

    @cached_property
    def device_outputs(self) -> Outputs:
        out = self._outputs(self.device)
        self.timings["device_run_s"] = round(out.seconds, 4)
        return out

    def _extra(self, kind: str, count: int) -> list:
        sample = self.qdq_case.sample_inputs()
        out = []
        for j in range(count):
            gen = torch.Generator().manual_seed(self.vcase.seed * 100 + 50 + j + (1000 if kind == "saturate" else 0))
            out.append(tuple(_draw(x, kind, gen, self.recipe.inputs) for x in sample))
        return out

    @cached_property
    def sqnr_sets(self) -> dict:
        """SQNR (dB) of fused and Q/DQ outputs against the float model on a typical and a saturating input set."""
        from harness.check.execution import execute

        started = time.perf_counter()
        per_draw = max(1, sum(t.numel() for t in self.probes[0].outputs))
        want = min(SQNR_MAX_DRAWS, -(-SQNR_MIN_ELEMENTS // per_draw))
        named = dict(self.draws)
        base = {"typical": [named[k] for k in ("sample", "random", "random2")], "saturate": [named["saturate"]]}
        model = self.vcase.float_model()
        sets = {}
        for name, inputs_list in base.items():
            inputs_list = inputs_list + self._extra("random" if name == "typical" else "saturate",
                                                    max(0, want - len(inputs_list)))
            f_all, q_all, r_all, error = [], [], [], None
            for inputs in inputs_list:
                q = execute(self.qdq_case.shared("edge"), inputs)
                try:
                    f = self.reference.run(self.subject, tuple(x.clone() for x in inputs))
                except ExecutorError as exc:
                    error = str(exc)
                    break
                with torch.no_grad():
                    r = [t.detach() for t in torch.utils._pytree.tree_leaves(model(*inputs))]
                if not q.ok:
                    continue
                if [t.shape for t in f] != [t.shape for t in r]:
                    error = f"fused outputs have shapes {[tuple(t.shape) for t in f]}, the float model's " \
                            f"{[tuple(t.shape) for t in r]}"
                    break
                f_all += self.decode(f)
                q_all += self.decode(q.outputs)
                r_all += [t.double() for t in r]
            if error:
                sets[name] = {"error": error, "draws": len(inputs_list)}
                continue
            cat = lambda xs: torch.cat([x.reshape(-1) for x in xs]) if xs else torch.zeros(0)  # noqa: E731
            F, Q, R = cat(f_all), cat(q_all), cat(r_all)
            sets[name] = {"draws": len(inputs_list), "elements": int(R.numel()), "fused": tolerance.sqnr(F, R),
                          "qdq": tolerance.sqnr(Q, R), "fused_vs_qdq": tolerance.sqnr(F, Q)}
        self.timings["sqnr_runs_s"] = round(time.perf_counter() - started, 4)
        return sets

    def decode(self, outputs: list) -> list:
        """Outputs as float values: int8 outputs of hand-built graphs dequantized with their qparams."""
        if "_qp" not in self.__dict__:
            self.__dict__["_qp"] = self.vcase.output_qparams()
        qp = self.__dict__["_qp"]
        res = []
        for y in outputs:
            if qp is not None and not y.dtype.is_floating_point:
                s, zp = qp
                y = (y.to(torch.float64) - zp) * s
            res.append(y.double())
        return res
