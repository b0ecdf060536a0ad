"""What judging the IR checks on every search draw costs: the IR checks' seconds against the whole draw's.

``passgate vulkan``'s search judges the IR checks of the fused program
(:mod:`vulkan.judging.ircheck`) on every draw. Per draw of a fixed, seeded
workload (``--ops``, ``--examples`` draws each, under both built-in
fusions, the fused-program cache as configured), this times, back to back
in one process: the draw as the search judges it (:func:`vulkan.search.evaluate.evaluate`,
IR checks included), then the IR checks alone on the same fused program.
The figure is the IR checks' share of a draw. The machine's load average is
recorded before and after. Run::

    python benchmarks/vulkan_ir.py [--ops q8ta_add q8ta_linear] [--examples 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time

__all__ = ["measure", "main"]


def _ir_seconds(desc, fuse) -> float:
    from vulkan.backend import fusion
    from vulkan.backend.executors import ReferenceExecutor
    from vulkan.cases import lowering
    from vulkan.judging.context import CaseContext
    from vulkan.judging.ircheck import ir_checks
    from vulkan.search import spaces

    vcase = spaces.desc_case(desc)
    qdq = lowering.load(vcase.spec)
    ctx = CaseContext(vcase, qdq, fuse.name, fusion.fuse(fuse, vcase, qdq), ReferenceExecutor(), None, {})
    started = time.perf_counter()
    ir_checks(ctx)
    return time.perf_counter() - started


def measure(ops: list, examples: int) -> dict:
    from vulkan.backend import fusion
    from vulkan.cases import flows
    from vulkan.search import op_search, spaces
    from vulkan.search.evaluate import evaluate

    rows = []
    with fusion.pattern_graphs_memoized(), flows.quantizer_patterns_memoized():
        fusion.prime_pattern_graphs()
        for op in ops:
            for mode in ("vulkan-preprocess", "fuse-patterns"):
                fuse = fusion.builtin(mode)
                for desc in op_search.draws(spaces.space(op), 0, examples)[:examples]:
                    started = time.perf_counter()
                    out = evaluate(desc, fuse)
                    draw_s = time.perf_counter() - started
                    rows.append({"op": op, "fusion": mode, "case": desc.name(), "draw_s": round(draw_s, 4),
                                 "ir_s": round(_ir_seconds(desc, fuse), 4), "ir_failed": list(out.ir_failed)})
    draw, ir = sum(r["draw_s"] for r in rows), sum(r["ir_s"] for r in rows)
    return {"draws": len(rows), "draw_s": round(draw, 3), "ir_s": round(ir, 3),
            "ir_share": round(ir / draw, 4) if draw else None, "rows": rows}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", nargs="+", default=["et_vk.q8ta_add", "et_vk.q8ta_linear"])
    p.add_argument("--examples", type=int, default=3)
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)
    load_before = os.getloadavg()
    figure = measure(args.ops, args.examples)
    figure.update(load_before=load_before, load_after=os.getloadavg(), cpus=os.cpu_count())
    print(f"{figure['draws']} draws: {figure['draw_s']:.1f} s judged, of which IR checks {figure['ir_s']:.2f} s "
          f"({100 * (figure['ir_share'] or 0):.1f}%); load {load_before[0]:.1f} -> {figure['load_after'][0]:.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figure, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
