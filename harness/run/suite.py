"""The versioned conformance suite: which passes on which graphs, per profile.

``tox -e conformance``, ``passgate certify`` and the pre-merge gate all take
their workload from here, so "the suite" means one thing. The suite version
changes whenever the workload or a known violation changes; a certification
bundle records it.

Known violations are expected failures with their reason: the conformance
suite reports them as xfail (strict: a fixed one turns the run red until the
record is updated, like a Vulkan CTS waiver that no longer applies).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SUITE_VERSION = "2026.11.1"  # .1: standard adds the model zoo; full adds quantized and random graphs
PROFILES = ("quick", "standard", "full")

REFERENCE_PASSES = (
    "passes.reference:ReplaceInPlaceReluWithOutOfPlaceReluPass",
    "passes.reference:ReplaceAddWithMulSub",
    "passes.reference:RemoveDetachPass",
    "passes.reference:ScalarToTensorPass",
    "passes.reference:ReplaceAddPass",
    "passes.reference:replace_add_mul_with_sub",
    "passes.reference:ReplaceAddMulWithSubKeepingMeta",
    "passes.reference:GuidePipeline",
)

_GUIDE_REWRITER = "the guide: nodes created by the subgraph rewriter lack stack_trace, val and nn_module_stack"


@dataclass(frozen=True)
class Workload:
    profile: str
    passes: tuple[str, ...]
    graphs: tuple[str, ...]  # --graphs selection
    random_count: int = 0
    seed: int = 0
    known: dict = field(default_factory=dict)  # (pass name, graph, check) -> reason


# graph sources and random graphs per profile: what a certification of that profile covers
_GRAPHS = {"quick": ("builtin",), "standard": ("builtin", "zoo"), "full": ("builtin", "zoo", "quantized", "random")}
_RANDOM = {"quick": 0, "standard": 0, "full": 25}


def known_violations(graphs=("inplace_views",)) -> dict:
    """The guide's own rewriter example loses metadata wherever its pattern (add then mul) matches."""
    known = {}
    # must-level checks only: a should-level failure does not fail the gate, so it needs no waiver
    for graph in graphs:
        for check in ("meta_val", "meta_stack_trace", "meta_nn_module_stack"):
            known[("replace_add_mul_with_sub", graph, check)] = _GUIDE_REWRITER
    return known


def workload(profile: str = "standard") -> Workload:
    if profile not in PROFILES:
        from harness.core.errors import UsageError

        raise UsageError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    from harness.graphs import sources

    graphs, count = _GRAPHS[profile], _RANDOM[profile]
    names = [s.name for s in sources.select(list(graphs), count or None, 0)]
    return Workload(profile, REFERENCE_PASSES, graphs, random_count=count, known=known_violations(names))
