"""`passgate fuzz --contexts`: every op a pass rewrites, in every context of the vocabulary; real graphs, no mocks.

Every context of the vocabulary builds a program that exports and lowers, for ops of each kind (unary,
binary, a layout op); the hypothesis strategy is deterministic and shrinks toward the plain graph. Three
passes broken in one context each (tests/context_broken_passes.py: two users of the op's result, an argument
given by keyword, a data-dependent size) are found by `passgate fuzz --contexts` within its default budget,
shrunk to a few statements, and their reproducer exits 1 against the broken pass and 0 against the fixed one.
"""

from __future__ import annotations

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
