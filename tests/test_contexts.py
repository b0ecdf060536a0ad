"""`passgate fuzz --contexts`: every op a pass rewrites, in every context of the vocabulary; real graphs, no mocks.

Every context of the vocabulary builds a program that exports and lowers, for ops of each kind (unary,
binary, a layout op); the hypothesis strategy is deterministic and shrinks toward the plain graph. Three
passes broken in one context each (tests/context_broken_passes.py: two users of the op's result, an argument
given by keyword, a data-dependent size) are found by `passgate fuzz --contexts` within its default budget,
shrunk to a few statements, and their reproducer exits 1 against the broken pass and 0 against the fixed one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.fuzz.contexts import CONTEXTS, FAMILIES, FORMS, Combo, combos, plain, variants
from harness.fuzz.contexts_build import build_program


@pytest.mark.parametrize("op", ["add", "permute"])
def test_every_context_builds_and_lowers(op, passgate_cache):
    """Each family's every context that fits the op, the others plain: the program builds eagerly, exports and
    lowers to the edge dialect, and the op is still there."""
    from harness.fuzz.measure import lower_fresh
    from harness.graphs.op_coverage import program_ops
    from harness.graphs.random.generate import spec_of

    seen = set()
    for combo in variants((op,)):
        program = build_program(combo, f"ctx_test_{op}")
        assert program is not None, combo.label
        case = lower_fresh(spec_of(program))
        ops = {k.split(".")[0].removesuffix("_copy") for k in program_ops(case.shared("edge"))}
        assert op in ops, (combo.label, ops)
        seen.update((family, str(value)) for family, value in combo.contexts().items())
    wanted = {(c.family, c.name) for c in CONTEXTS if c.family not in ("quant", "dtype", "argform", "rank")
              and (c.name != "broadcast" or FORMS[op].binary)}
    assert wanted <= seen, wanted - seen
    assert {("argform", f) for f in FORMS[op].argforms} <= seen


def test_a_quantized_context_lowers(passgate_cache):
    """The quant family: a linear put through the xnnpack PT2E flow lowers with its Q/DQ ops."""
    from harness.fuzz.measure import lower_fresh
    from harness.graphs.op_coverage import program_ops
    from harness.graphs.random.generate import spec_of

    combo = Combo(("linear",), quant="xnnpack")
    program = build_program(combo, "ctx_test_linear")
    assert program is not None and program.quantizer == "xnnpack" and "prepare_pt2e" in program.code()
    ops = program_ops(lower_fresh(spec_of(program)).shared("edge"))
    assert any("quantize_per_tensor" in k for k in ops), ops


def test_strategy_is_seeded_and_shrinks_to_the_plain_graph():
    """The same seed draws the same combinations; hypothesis' own find() shrinks a condition on one family back
    to the plain graph everywhere else."""
    import random

    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample

    items = (("relu",), ("add",), ("permute",))
    strategy = combos(items)
    quiet = settings(database=None, max_examples=200, suppress_health_check=list(HealthCheck),
                     phases=[Phase.generate, Phase.shrink])

    def draws(seed: int) -> list:
        out: list = []
        with pytest.raises(NoSuchExample):
            find(strategy, lambda c: out.append(c) and False, settings=settings(quiet, max_examples=30),
                 random=random.Random(seed))
        return out

    assert draws(3) == draws(3)
    assert len({c.label for c in draws(3)}) > 10
    found = find(strategy, lambda c: c.users == "several" and c.op == ("add",), settings=quiet,
                 random=random.Random(0))
    assert found == Combo(("add",), users="several", rank=plain(("add",)).rank)
    assert set(FAMILIES) == {"users", "producer", "rank", "shape", "dtype", "argform", "quant", "neighbour"}


# broken pass, its fixed version, the contexts its failure must keep after shrinking (one of them)
BROKEN = {
    "two_users": ("ReluToClamp", "ReluToClampFixed", ("users=several", "users=one,", "neighbour=present")),
    "keyword": ("AddToSubNeg", "AddToSubNegFixed", ("argform=keyword",)),
    "data_dependent": ("DivToMulReciprocal", "DivToMulReciprocalFixed", ("producer=nonzero", "producer=item")),
}
SEARCH_DRAWS = 25  # fewer than the default draws per pass: found within them is found within the default budget
# (the time budget is lifted: on a loaded machine 180 s may end a search before its draws, and the draw count, not
# the machine's speed, is what the test asserts)


@pytest.mark.parametrize("kind", list(BROKEN))
def test_contexts_finds_shrinks_and_reproduces(kind, tmp_path, passgate_cache):
    """Found within the default budget, shrunk to the context it needs and a few statements; the reproducer
    exits 1 on its own and 0 against the fixed pass."""
    from harness.cli.fuzz import CONTEXT_DRAWS

    broken, fixed, wanted = BROKEN[kind]
    passes = Path(__file__).resolve().parent / "context_broken_passes.py"
    root = passes.parent.parent
    report = tmp_path / "report"
    env = {**os.environ, "PASSGATE_NO_SERVER": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "harness.cli.main", "fuzz", "--contexts", "--pass",
                           f"{passes}:{broken}", "--draws", str(SEARCH_DRAWS), "--budget", "3600", "--report",
                           str(report), "-q"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1 and (report / "results.json").is_file(), proc.stderr[-3000:]
    doc = json.loads((report / "results.json").read_text())
    (target,) = doc["contexts"]["targets"]
    assert target["draws"] == SEARCH_DRAWS <= CONTEXT_DRAWS and target["ops"][0] in ("relu", "add", "div")
    # the search goes on after a failure for failures of other checks: each one it finds is in a context the pass
    # is broken in, shrunk by hypothesis to the contexts it needs (DivToMulReciprocal fails `runs` on a nonzero
    # producer and `runnable` on an item one)
    assert target["failures"]
    for failure in target["failures"]:
        label = failure["contexts"] + ","
        assert any(w in label for w in wanted), failure
        assert label.count("=") <= 3, failure  # of the 8 families: the shrink keeps the ones it needs, give or take one
    failure = target["failures"][0]
    rec = next(r for r in doc["results"] if r["graph"] == failure["graph"] and r["check"] == failure["check"])
    assert rec["status"] in ("fail", "error") and rec["details"]["shrink"]["reproduced"]
    assert rec["details"]["shrink"]["statements_after"] <= 4, rec["details"]["shrunk_graph"]
    assert (report / "contexts" / "index.json").is_file()

    repro = report / rec["details"]["repro"]
    text = repro.read_text()
    spec_line = next(line for line in text.splitlines() if line.startswith("PASS_SPEC = "))
    patched = tmp_path / "repro_fixed.py"
    patched.write_text(text.replace(spec_line, f"PASS_SPEC = {str(passes) + ':' + fixed!r}"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    clean = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    as_is, against_fixed = (subprocess.run([sys.executable, str(s)], cwd=elsewhere, env=clean, capture_output=True,
                                           text=True, timeout=300) for s in (repro, patched))
    assert as_is.returncode == 1 and "REPRODUCED" in as_is.stdout, as_is.stdout + as_is.stderr[-2000:]
    assert against_fixed.returncode == 0, against_fixed.stdout + against_fixed.stderr[-2000:]


def test_keep_criteria_and_the_mutation_hook_are_deterministic(passgate_cache):
    """Two searches of one seed draw the same combinations and keep the same graphs for the same reasons: the
    plain graph first (its arcs are new), then new arcs or verdict patterns, or what keep_reason says."""
    from harness.fuzz.contexts_run import ContextSearch
    from harness.fuzz.targets import for_pass

    target = for_pass(f"{Path(__file__).resolve().parent / 'context_broken_passes.py'}:ReluToClampFixed")
    asked: list = []

    def search():
        mine: list = []

        def keep_reason(target, graph) -> str | None:  # the mutation engine's hook: the third graph kills a mutant
            mine.append(graph.name)
            return "kills 1 surviving mutant" if len(mine) == 3 else None

        s = ContextSearch(target, (("relu",),), seed=1, max_draws=8, seconds=900, keep_reason=keep_reason)
        s.run()
        asked.append(mine)
        return s

    one, two = search(), search()
    assert one.draws == two.draws == 8 and not one.failures
    assert [(k.graph.name, k.graph.combo, k.reasons) for k in one.kept] == \
           [(k.graph.name, k.graph.combo, k.reasons) for k in two.kept]
    assert one.kept[0].graph.combo == plain(("relu",)) and one.kept[0].reasons[0].endswith("arcs")
    assert all(k.reasons for k in one.kept) and len(one.kept) < 8
    (killer,) = [k for k in one.kept if "kills 1 surviving mutant" in k.reasons]
    assert killer.graph.name == asked[0][2] and asked[0] == asked[1]
    assert len(asked[0]) == 8 - one.not_built - one.not_lowered
    # per context: the kept graphs holding it and the mutants they killed (what the closing table lists)
    from harness.fuzz.contexts_campaign import by_context

    tally = by_context([one])
    assert tally["plain"]["kept"] == 1 and tally["plain"]["mutants_killed"] == 0
    held = [f"{f}={v}" for f, v in killer.graph.combo.contexts().items() if v != getattr(plain(("relu",)), f)]
    assert held and all(tally[k]["mutants_killed"] >= 1 for k in held)
    assert sum(v["mutants_killed"] for v in tally.values()) == len(held)


def test_the_ops_a_pass_source_names_are_searched(tmp_path):
    """A pass that rewrites nothing on the baseline graphs is searched on the ops its source matches."""
    from harness.fuzz.contexts_run import rewritten_items, source_forms

    src = tmp_path / "a_pass.py"
    src.write_text("if node.target == exir_ops.edge.aten.permute_copy.default and x == aten.add.Tensor:\n    pass\n")
    assert source_forms([str(src)]) == ["permute", "transpose", "linear", "add"]  # every form lowering to one
    assert rewritten_items("p", [], [str(src)]) == (("permute",), ("transpose",), ("linear",), ("add",))
    assert len(rewritten_items("p", [])) > 30  # nothing named, nothing seen: every form


def test_the_qdq_ops_a_pass_source_names_are_searched(tmp_path):
    """Q/DQ ops are named by namespace, often without an overload (Cadence's reorder passes): they are searched as
    the quantize / dequantize forms, not read as an op called ``quantized_decomposed``."""
    from harness.fuzz.contexts_run import source_forms

    src = tmp_path / "reorder.py"
    src.write_text("ops = {exir_ops.edge.quantized_decomposed.quantize_per_tensor,\n"
                   "       exir_ops.edge.cadence.dequantize_per_tensor.default,\n"
                   "       exir_ops.edge.quantized_decomposed.dequantize_per_channel.default}\n")
    assert source_forms([str(src)]) == ["quantize", "dequantize", "dequantize_pc"]


def test_a_source_naming_qdq_and_view_ops_is_searched_on_chains_around_them(tmp_path, passgate_cache):
    """A pass that moves a quantize above a chain of view ops needs the chain: with the Q/DQ ops and two view ops
    named, the items hold the view ops before the quantize and after the dequantize (one and two of them), each
    chain drawn with the dtype its first op takes, and it builds and lowers with every op still there."""
    from harness.fuzz.contexts import op_key
    from harness.fuzz.contexts_run import rewritten_items
    from harness.fuzz.measure import lower_fresh
    from harness.graphs.op_coverage import program_ops
    from harness.graphs.random.generate import spec_of

    src = tmp_path / "reorder.py"
    src.write_text("a = {exir_ops.edge.aten.permute_copy, exir_ops.edge.aten.unsqueeze_copy.default}  # packets too\n"
                   "b = {exir_ops.edge.quantized_decomposed.quantize_per_tensor.default,\n"
                   "     exir_ops.edge.quantized_decomposed.dequantize_per_tensor.default}\n")
    items = rewritten_items("p", [], [str(src)])
    chains = [i for i in items if len(i) > 1]
    for chain in [("permute", "quantize"), ("unsqueeze", "quantize"), ("dequantize", "permute"),
                  ("permute", "transpose", "quantize"), ("dequantize", "permute", "transpose")]:
        assert chain in chains, chains
    assert not [c for c in chains if "linear" in c]  # a float-only op cannot carry a quantized tensor
    combo = plain(("dequantize", "permute", "unsqueeze"))
    assert combo.dtype == "int8"
    ops = {op_key(k) for k in program_ops(lower_fresh(spec_of(build_program(combo, "ctx_chain"))).shared("edge"))}
    assert {"dequantize_per_tensor", "permute", "unsqueeze"} <= ops, ops


@pytest.mark.parametrize("op", ["quantize", "dequantize", "quantize_pc", "dequantize_pc", "interpolate",
                                "upsample_bilinear", "embedding"])
def test_every_argument_form_of_the_added_ops_lowers_with_its_op(op, passgate_cache):
    """The Q/DQ, upsample and embedding forms, in each argument form: the program builds, exports and lowers, and
    the edge graph holds an op the form says a pass would rewrite; a program calling the Q/DQ ops imports the
    library that registers them, so its corpus file and reproducer run on their own."""
    from dataclasses import replace

    from harness.fuzz.contexts import op_key
    from harness.fuzz.measure import lower_fresh
    from harness.graphs.op_coverage import program_ops
    from harness.graphs.random.generate import spec_of

    for argform in FORMS[op].argforms:
        combo = replace(plain((op,)), argform=argform, users="several")
        program = build_program(combo, f"ctx_test_{op}_{argform}")
        assert program is not None, combo.label
        assert ("torch.ao.quantization.fx._decomposed" in program.code()) == ("quantize" in op)
        ops = {op_key(k) for k in program_ops(lower_fresh(spec_of(program)).shared("edge"))}
        assert ops & set(FORMS[op].aten), (combo.label, ops)


def test_the_vocabulary_page_is_the_vocabulary():
    """docs/contexts.md holds the context and op-form tables exactly as the code declares them."""
    from harness.fuzz.contexts import vocabulary_markdown

    page = (Path(__file__).parents[1] / "docs" / "contexts.md").read_text()
    missing = [line for line in vocabulary_markdown().splitlines() if line and line not in page]
    assert not missing, missing[:3]
