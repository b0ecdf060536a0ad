"""The lowered-graph cache: lower once, reuse, never trust a bad entry."""

from __future__ import annotations

import time

import pytest

from fixtures.builtin import BUILTIN_SPECS
from harness.graphs import cache as cache_mod
from harness.graphs.cases import load_case
from harness.graphs.memos import MEMOS


@pytest.fixture
def fresh_cache(tmp_path):
    c = cache_mod.CaseCache(tmp_path / "cache")
    MEMOS.clear()
    yield c
    MEMOS.clear()


SPEC = BUILTIN_SPECS[1]  # conv_bn_relu


def test_second_load_comes_from_disk_and_is_faster(fresh_cache):
    started = time.perf_counter()
    cold = load_case(SPEC, fresh_cache)
    cold_s = time.perf_counter() - started
    MEMOS.clear()
    started = time.perf_counter()
    warm = load_case(SPEC, fresh_cache)
    warm_s = time.perf_counter() - started
    assert not cold.from_cache and warm.from_cache
    assert fresh_cache.hits == 1 and fresh_cache.misses == 1
    assert warm_s < cold_s
    # the same program either way: cold runs also work on the round-tripped form
    assert str(cold.edge.graph) == str(warm.edge.graph)
    assert str(cold.exported.graph) == str(warm.exported.graph)


def test_corrupt_entry_is_rebuilt_with_a_warning(fresh_cache, capsys):
    load_case(SPEC, fresh_cache)
    path = fresh_cache.path_for(SPEC)
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF  # flip one byte of the payload
    path.write_bytes(bytes(data))
    MEMOS.clear()
    with pytest.warns(UserWarning, match="corrupt"):
        case = load_case(SPEC, fresh_cache)
    assert not case.from_cache and fresh_cache.rebuilt == 1
    assert "corrupt" in capsys.readouterr().err
    MEMOS.clear()
    assert load_case(SPEC, fresh_cache).from_cache  # rebuilt entry is good again


def test_truncated_entry_is_rebuilt(fresh_cache):
    load_case(SPEC, fresh_cache)
    path = fresh_cache.path_for(SPEC)
    path.write_bytes(path.read_bytes()[:100])
    MEMOS.clear()
    with pytest.warns(UserWarning):
        assert not load_case(SPEC, fresh_cache).from_cache


def test_key_depends_on_definition():
    import dataclasses

    edited = dataclasses.replace(SPEC, definition=SPEC.definition + "\n# edited")
    assert edited.key != SPEC.key


def test_program_copies_are_independent(builtin_cases):
    case = builtin_cases["mlp"]
    a = case.program("edge")
    a.graph_module.graph.erase_node(next(n for n in a.graph.nodes if n.op == "output"))
    assert any(n.op == "output" for n in case.program("edge").graph.nodes)
    assert any(n.op == "output" for n in case.edge.graph.nodes)


def test_a_case_another_process_is_lowering_is_taken_last(fresh_cache):
    """load_cases skips a case whose lock is held (another xdist worker lowering it) and lowers the next one
    meanwhile; flock locks belong to the open file, so holding one here blocks the loader's thread like a
    second process would."""
    import threading

    from harness.graphs.cases import load_cases

    first, second = BUILTIN_SPECS[0], BUILTIN_SPECS[1]
    order: list = []
    result: dict = {}
    with fresh_cache.lowering(first) as entry:
        assert entry is None
        worker = threading.Thread(target=lambda: result.update(
            cases=load_cases([first, second], fresh_cache, loaded=lambda i, c: order.append(c.name))))
        worker.start()
        deadline = time.monotonic() + 120
        while order != [second.name] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert order == [second.name]  # lowered while the first one's lock was held elsewhere
    worker.join(120)
    assert order == [second.name, first.name]
    assert [c.name for c in result["cases"]] == [first.name, second.name]  # the caller's order
    assert fresh_cache.misses == 2 and fresh_cache.hits == 0


def test_a_loaded_case_is_verified_as_it_was_lowered_whatever_the_process_lowered_before(fresh_cache):
    """ExecuTorch's deserializer takes the edge verifier torch's registry holds, the one the process created
    last: after a lowering with IR validity off, a loaded case's verifier would check no op."""
    import dataclasses

    from executorch.exir import EdgeCompileConfig
    from executorch.exir.dialects._ops import ops as exir_ops
    from executorch.exir.verification.verifier import EXIREdgeDialectVerifier

    from harness.check.verifiers import dialect_verifier
    from harness.core.results import Status

    load_case(SPEC, fresh_cache)
    MEMOS.clear()
    EXIREdgeDialectVerifier(edge_compile_config=EdgeCompileConfig(_check_ir_validity=False), class_only=True)
    case = load_case(SPEC, fresh_cache)  # from disk, deserialized after the validity-off verifier was made
    assert case.from_cache and case.edge.verifiers[0]().enable
    ep = case.program("edge")
    relu = next(n for n in ep.graph.nodes if n.op == "call_function" and "relu" in str(n.target))
    relu.target = exir_ops.edge.aten.gelu.default  # a valid edge op: still passes
    assert dialect_verifier(ep).status is Status.PASS
    relu.target = exir_ops.edge.aten.prelu.default  # not core ATen: the case's own verifier rejects it
    assert dialect_verifier(ep).status is Status.FAIL
    # a case lowered with validity off keeps a verifier that checks no op, wherever it is loaded
    lax = dataclasses.replace(SPEC, check_ir_validity=False)
    assert not load_case(lax, fresh_cache).edge.verifiers[0]().enable
