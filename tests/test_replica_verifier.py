"""The dialect verifier is judged once per case for every pass that hands back an exact replica of its input.

Most passes change nothing on most cases; their results are the program they were handed, so the verifier's
verdict on them is that program's verdict. A result that differs in anything (here: one node's metadata) is
verified on its own.
"""

from __future__ import annotations

import pytest
import torch
from torch.fx.passes.infra.pass_base import PassBase, PassResult

from harness.check import verifiers
from harness.graphs.memos import MEMOS
from harness.run.library import check_pass


class ChangesNothing(PassBase):
    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        return PassResult(graph_module, False)


class TouchesOneNode(PassBase):
    """Adds a custom metadata key to the first call_function node: another program, by the exact fingerprint."""

    def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
        node = next(n for n in graph_module.graph.nodes if n.op == "call_function")
        node.meta["custom"] = {"touched": True}
        return PassResult(graph_module, True)


@pytest.fixture(autouse=True)
def fresh_memo():
    """Each test starts and ends with no memoized verdict: a verdict of a patched verifier must not outlive it
    (a later test in the same worker would be handed it for the same case)."""
    MEMOS.handed_verdicts.clear()
    yield
    MEMOS.handed_verdicts.clear()


def _verifier_calls(monkeypatch) -> list:
    calls: list = []
    real = verifiers.dialect_verifier

    def counted(program):
        calls.append(program)
        return real(program)

    monkeypatch.setattr(verifiers, "dialect_verifier", counted)
    return calls


def test_unchanged_results_share_the_handed_programs_verdict_changed_ones_are_verified(monkeypatch):
    calls = _verifier_calls(monkeypatch)
    first = check_pass(ChangesNothing, ("mlp", "conv_bn_relu"), name="a.ChangesNothing")
    again = check_pass(ChangesNothing, ("mlp", "conv_bn_relu"), name="b.ChangesNothing")
    verdicts = [(r.graph, r.status.value) for r in first + again if r.check == "verifier"]
    assert verdicts == [("mlp", "pass"), ("conv_bn_relu", "pass")] * 2
    cases = len(MEMOS.handed_verdicts)
    assert cases == 2 and len(calls) <= cases  # one verdict per case, whichever pass met it first

    before = len(calls)
    touched = check_pass(TouchesOneNode, ("mlp",), name="c.TouchesOneNode")
    assert [r.status.value for r in touched if r.check == "verifier"] == ["pass"]
    assert len(calls) == before + 1  # not a replica: verified on its own


def test_a_replica_of_a_program_the_verifier_rejects_fails_as_that_program_does(monkeypatch):
    """The memo stores the verdict, failures included; each record gets its own copy of the details."""
    rejected = verifiers.Verdict(verifiers.Status.FAIL, "rejected for the test", {"ops": ["x"]})
    monkeypatch.setattr(verifiers, "dialect_verifier", lambda program: rejected)
    results = check_pass(ChangesNothing, ("mlp",), name="d.ChangesNothing") + \
        check_pass(ChangesNothing, ("mlp",), name="e.ChangesNothing")
    failed = [r for r in results if r.check == "verifier"]
    assert [r.status.value for r in failed] == ["fail", "fail"] and failed[0].details is not failed[1].details
