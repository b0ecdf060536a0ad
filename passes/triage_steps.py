"""Triage rules for the numerics of the XNNPACK pipeline's steps, judged since each step declares its own meaning.

Until suite 2026.12.1 the whole ``xnnpack`` pipeline was declared meaning-changing for FuseActivationPass's
sake, so no step had its numerics judged; now only that step is declared (``passes/pipelines.py``). What the
others' numerics found on the standard profile's graphs, each traced on the graph its rule names:

- where the step's catalog entry already records the cause on the same graph with the same message (the batch
  norm passes' placeholder name collisions, RemoveRedundantCopyPass's dropped casts), the rule takes the entry's
  own known failure, so the two cannot drift apart;
- the rest were met first here, on graphs the float entries do not run on (the quantized zoo).
"""

from __future__ import annotations

from harness.catalog import KnownFailure
from passes.catalog_xnnpack import ENTRIES
from passes.triage_rule import ET, Rule

__all__ = ["STEP_RULES"]

_NOT_CLOSE = r"Tensor-likes are not close"


def _entry_known(attr: str, check: str) -> KnownFailure:
    """The known failure the XNNPACK catalog records for ``attr``'s default entry on ``check``."""
    entry = next(e for e in ENTRIES if e.spec.endswith(f":{attr}"))
    return next(k for k in entry.known if k.check == check)


def _as_entry(attr: str, check: str, message: str) -> Rule:
    k = _entry_known(attr, check)
    return Rule((attr,), (check,), message, k.reason, k.kind, k.upstream, k.graphs)


STEP_RULES: tuple[Rule, ...] = (
    _as_entry("FuseBatchNormPass", "numerics", _NOT_CLOSE),
    _as_entry("DecomposeBatchNorm", "numerics", _NOT_CLOSE),
    _as_entry("RemoveRedundantCopyPass", "numerics", r"attribute 'dtype' do not match"),
    Rule(("ConvertToLinearPass",), ("numerics",), _NOT_CLOSE,
         "vit_tiny_q8's attention projection, self.proj(y.transpose(1, 2).reshape(b, t, d)), a linear over a "
         "non-contiguous rank-3 input, is lowered as expand/view/bmm/view + add(proj bias); the pass rebuilds "
         "aten.linear from the bmm with the weight only (find_bias_for_mm looks at mm, not bmm) and erases the "
         "partition's add: the projection's bias is dropped, the cause of "
         "reports/upstream/repro_convert_to_linear_drops_bias.py",
         upstream=ET + "backends/xnnpack/_passes/convert_to_linear.py (create_linear)", graphs=("vit_tiny_q8",)),
    Rule(("ChannelsLastTaggedReshapePass",), ("numerics",), _NOT_CLOSE + r".*max abs err 0\.00\d",
         "layout only: the channels-last copies it inserts make the CPU convolution read an NHWC tensor and "
         "accumulate in another order (on mobilenet_v2_q8 the first conv's output moves by 4.8e-7), which flips the rounding of a "
         "requantization downstream by one step, so the logits move by a few thousandths on one draw; with every "
         "inserted copy made contiguous the result is bit-identical to the step's input. Not a change of meaning: "
         "XNNPACK runs these convolutions channels-last on purpose",
         "by-design", ET + "backends/xnnpack/_passes/channels_last_tagged_reshape_pass.py",
         graphs=("mobilenet_v2_q8", "resnet_basic_q8")),
)
