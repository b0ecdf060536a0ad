"""The passes catalog entries run first (``Build(after=...)``), named once for every catalog.

Why one place: several catalogs run a pass where an upstream flow runs it, after the same step
(``to_executorch`` runs its passes after SpecPropPass; XNNPACK's preprocess hands its passes a program
without dead nodes; ``to_edge`` runs OpReplacePass first). One name per step keeps them one step.
"""

from __future__ import annotations

__all__ = ["SPEC_PROP", "DCE", "OP_REPLACE"]

# SpecPropPass, plus meta['spec'] on placeholders as to_executorch's flow leaves them
SPEC_PROP = "harness.pipelines.pipeline:SpecPropWithPlaceholders"
DCE = "executorch.exir.passes:dead_code_elimination_pass"
OP_REPLACE = "executorch.exir.passes.replace_aten_with_edge_pass:OpReplacePass"
