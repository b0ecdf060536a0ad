"""Delegates on a device: ``PropagateDevicePass`` given the programs it exists for, and the metadata checks of an
entry run after a prerequisite that makes nodes of its own (``to_backend``'s delegate calls)."""

from __future__ import annotations

from harness.core.results import Status


def _by_check(results, graph: str) -> dict:
    return {r.check: r for r in results if r.graph == graph}


def _exir(name: str):
    from harness.catalog.registry import load_catalogs

    return next(e for e in load_catalogs()["exir"].entries if e.name == name).loaded()


def _case(name: str):
    from harness.graphs import sources
    from harness.graphs.cases import load_case

    return load_case(sources.select([name])[0])


def test_propagate_device_pass_acts_at_the_delegates_a_device_partitioner_made():
    """residual_block's add is delegated to cuda:0: the default construction tags the delegate's specs (a
    metadata change), [device_copies] inserts H2D / D2H copies around it; mlp has no add, so nothing to do."""
    from harness.check.runner import check_pass_on_case

    residual, mlp = _case("residual_block"), _case("mlp")
    tagged = _by_check(check_pass_on_case(_exir("exir.PropagateDevicePass"), residual), "residual_block")
    assert tagged["runs"].details["changed"] == {"ops": False, "structure": False, "metadata": True}
    assert tagged["numerics"].status is Status.PASS and tagged["verifier"].status is Status.PASS
    copies = _by_check(check_pass_on_case(_exir("exir.PropagateDevicePass[device_copies]"), residual),
                       "residual_block")
    ops = copies["runs"].details["ops_changed"]
    assert ops.get("_h2d_copy.default", 0) > 0 and ops.get("_d2h_copy.default", 0) > 0, ops
    assert copies["numerics"].status is Status.PASS  # the copies are clones on a CPU: same values
    untouched = _by_check(check_pass_on_case(_exir("exir.PropagateDevicePass"), mlp), "mlp")
    assert not any(untouched["runs"].details["changed"].values())


def test_metadata_a_prerequisite_did_not_give_is_not_the_entrys_loss():
    """to_backend's executorch_call_delegate nodes carry no stack_trace. Run as an entry, the delegation is
    flagged for it; an entry run after it (dead-code elimination, which makes no node) is not, because the
    metadata checks compare against what the entry itself was handed."""
    from harness.catalog import Build, entry
    from harness.check.runner import check_pass_on_case

    delegate = "passes.prerequisites:DelegateAddsToDevice"
    case = _case("residual_block")
    itself = _by_check(check_pass_on_case(entry("demo", delegate, stage="edge").loaded(), case), case.name)
    assert itself["meta_stack_trace"].status is Status.FAIL
    assert "executorch_call_delegate" in itself["meta_stack_trace"].message
    after = entry("demo", "executorch.exir.passes:dead_code_elimination_pass", stage="edge",
                  build=Build("graph_function", after=(delegate,))).loaded()
    judged = _by_check(check_pass_on_case(after, case), case.name)
    assert judged["meta_stack_trace"].status is not Status.FAIL, judged["meta_stack_trace"].message
