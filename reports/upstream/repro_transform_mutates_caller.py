"""EdgeProgramManager.transform documents that it returns "a copy of the calling EdgeProgramManager
with the transformations applied". With any of these ExportPass subclasses (executorch 1.5.1) the
calling manager's own graph changes too: the pass edits the graph module it is handed in place and
then returns the copy ExportPass.call retraces (passgate check input_unchanged).
Standalone: torch + executorch only. Exit status 1 while any of them reproduces.
"""
import sys

import executorch.backends.vulkan.vulkan_preprocess  # noqa: F401  (import-order workaround)
import torch
from executorch.backends.transforms.canonicalize_view_copy_permute_pass import CanonicalizeViewCopyPermutePass
from executorch.backends.transforms.enforce_contiguous_dim_order import EnforceContiguousDimOrder
from executorch.backends.transforms.fuse_cascaded_view_ops import FuseCascadedViewOps
from executorch.backends.transforms.fuse_view_copy import FuseViewCopyTransform
from executorch.backends.xnnpack._passes.convert_to_linear import ConvertToLinearPass
from executorch.backends.xnnpack._passes.remove_noop_expand_copy_pass import RemoveNoopExpandCopyPass
from executorch.exir import to_edge


class Views(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 12)

    def forward(self, x):
        h = self.fc(x).view(-1, 3, 4).view(-1, 12)
        return h.transpose(0, 1).contiguous().transpose(0, 1) + 1


reproduced = []
for make in (FuseViewCopyTransform, FuseCascadedViewOps, EnforceContiguousDimOrder, CanonicalizeViewCopyPermutePass,
             ConvertToLinearPass, RemoveNoopExpandCopyPass):
    manager = to_edge(torch.export.export(Views().eval(), (torch.randn(2, 12),)))
    before = str(manager.exported_program().graph_module.graph)
    try:
        manager.transform([make()])
        outcome = "although transform() returned a new manager"
    except Exception as exc:  # e.g. the edge verifier rejecting aten.linear after ConvertToLinearPass
        outcome = f"although transform() raised ({type(exc).__name__})"
    if str(manager.exported_program().graph_module.graph) != before:
        reproduced.append(make.__name__)
        print(f"REPRODUCED: {make.__name__}: the caller's program changed, {outcome}")
sys.exit(1 if reproduced else 0)
