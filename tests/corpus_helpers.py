"""Helpers for the tests of the hand-written corpus programs (``fixtures/corpus/targeted_*.py``)."""

from __future__ import annotations

import runpy
from pathlib import Path

import torch

from harness.fuzz.corpus import load_dir

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"


def corpus_spec(name: str):
    """The committed corpus program ``name`` as a graph source's case spec."""
    return next(s for s in load_dir(CORPUS) if s.name == name)


def eager_outputs(name: str, case):
    """What the file's nn.Module computes (not its export) on the case's inputs: its ``Program``, seeded as
    ``build()`` seeds it, with fresh buffers, so a pass's numerics are judged against the model itself."""
    namespace = runpy.run_path(str(CORPUS / f"{name}.py"))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(namespace["SEED"])
        model = namespace["Program"]().eval()
    with torch.no_grad():
        return model(*case.sample_inputs())
