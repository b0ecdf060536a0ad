"""The passes catalog entries run first (``Build(after=...)``), named once for every catalog.

Why one place: several catalogs run a pass where an upstream flow runs it, after the same step
(``to_executorch`` runs its passes after SpecPropPass; XNNPACK's preprocess hands its passes a program
without dead nodes; ``to_edge`` runs OpReplacePass first). One name per step keeps them one step.

A step no upstream module offers as a pass is a class here (:class:`DelegateAddsToDevice`).
"""

from __future__ import annotations

__all__ = ["SPEC_PROP", "DCE", "OP_REPLACE", "ADDMM_TO_LINEAR", "DELEGATE_TO_DEVICE", "DelegateAddsToDevice"]

# SpecPropPass, plus meta['spec'] on placeholders as to_executorch's flow leaves them
SPEC_PROP = "harness.pipelines.pipeline:SpecPropWithPlaceholders"
DCE = "executorch.exir.passes:dead_code_elimination_pass"
OP_REPLACE = "executorch.exir.passes.replace_aten_with_edge_pass:OpReplacePass"
# to_edge leaves a linear as permute_copy + addmm / mm; VulkanBackend.preprocess rebuilds it first
ADDMM_TO_LINEAR = "executorch.backends.transforms.addmm_mm_to_linear:AddmmToLinearTransform"
DELEGATE_TO_DEVICE = f"{__name__}:DelegateAddsToDevice"

try:
    from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult
except ImportError:  # listing the catalog needs no executorch; running a step does
    ExportedProgramPassBase = object


class DelegateAddsToDevice(ExportedProgramPassBase):
    """``to_backend`` with ExecuTorch's own ``DeviceAwarePartitioner("cuda:0")``: every aten.add is delegated to
    ``BackendWithCompilerDemo`` under a ``target_device`` CompileSpec, as a GPU backend's partitioner tags its
    delegates.

    Why: ``PropagateDevicePass`` acts only at such delegate boundaries, and no CPU backend sets that spec. Both
    classes ship in the executorch wheel (``exir/backend/test/``: upstream tests the pass with them); the
    demo backend's delegate runs its original module, so the program still executes here, on a CPU.
    """

    def call(self, exported_program):
        from executorch.exir.backend.backend_api import to_backend
        from executorch.exir.backend.test.device_util import DeviceAwarePartitioner

        return ExportedProgramPassResult(to_backend(exported_program, DeviceAwarePartitioner("cuda:0")), True)
