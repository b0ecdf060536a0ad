"""The ``signature`` check on programs that return a Python constant.

torch.export records a returned int as a ``ConstantArgument`` output spec (name '', value 3) and the output
node returns the int itself. The check compared the spec's name, '', with the returned value's text, so every
pass on such a program failed ``signature`` though graph and signature agreed (a passgate false positive).
It now compares a constant output by value, and still flags a graph whose returned constant or tensor is not
the one its signature records."""

from __future__ import annotations

import torch
from executorch.exir import to_edge

from harness.check.verifiers import signature
from harness.core.results import Status


class ReturnsAnInt(torch.nn.Module):
    def forward(self, x):
        return x + 1, 3


def _edge():
    return to_edge(torch.export.export(ReturnsAnInt(), (torch.ones(2),), strict=True)).exported_program()


def _output(ep):
    return next(n for n in reversed(ep.graph.nodes) if n.op == "output")


def test_a_returned_constant_that_matches_its_signature_passes():
    ep = _edge()
    assert any(type(s.arg).__name__ == "ConstantArgument" for s in ep.graph_signature.output_specs)
    verdict = signature(ep)
    assert verdict.status == Status.PASS, verdict.message


def test_a_returned_constant_other_than_the_signature_records_fails():
    ep = _edge()
    out = _output(ep)
    tensor, _ = out.args[0]
    out.args = ((tensor, 4),)
    verdict = signature(ep)
    assert verdict.status == Status.FAIL and "4" in verdict.message and "3" in verdict.message


def test_a_returned_tensor_other_than_the_signature_records_still_fails():
    ep = _edge()
    out = _output(ep)
    x = next(n for n in ep.graph.nodes if n.op == "placeholder")
    out.args = ((x, 3),)
    verdict = signature(ep)
    assert verdict.status == Status.FAIL and "outputs" in verdict.message


class ReturnsNoneAndAFloat(torch.nn.Module):
    def forward(self, x):
        return x * 2, None, 2.5


def test_none_and_float_outputs_match_their_constant_specs():
    ep = to_edge(torch.export.export(ReturnsNoneAndAFloat(), (torch.ones(2),), strict=True)).exported_program()
    verdict = signature(ep)
    assert verdict.status == Status.PASS, verdict.message
