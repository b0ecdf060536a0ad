"""The passes catalog entries run first (``Build(after=...)``), named once for every catalog.

Why one place: several catalogs run a pass where an upstream flow runs it, after the same step
(``to_executorch`` runs its passes after SpecPropPass; XNNPACK's preprocess hands its passes a program
without dead nodes; ``to_edge`` runs OpReplacePass first). One name per step keeps them one step.

A step no upstream module offers as a pass is a class here (:class:`DelegateAddsToDevice`).
"""

from __future__ import annotations

__all__ = ["SPEC_PROP", "DCE", "OP_REPLACE", "ADDMM_TO_LINEAR", "DELEGATE_TO_DEVICE", "VIEW_COPY_TO_VIEW", "VIEW_COPIES", "TO_OUT",
           "LIFETIMES", "MEMORY_PLANNING_INPUT", "DelegateAddsToDevice", "TensorLifetimes"]

# SpecPropPass, plus meta['spec'] on placeholders as to_executorch's flow leaves them
SPEC_PROP = "harness.pipelines.pipeline:SpecPropWithPlaceholders"
DCE = "executorch.exir.passes:dead_code_elimination_pass"
OP_REPLACE = "executorch.exir.passes.replace_aten_with_edge_pass:OpReplacePass"
# to_edge leaves a linear as permute_copy + addmm / mm; VulkanBackend.preprocess rebuilds it first
ADDMM_TO_LINEAR = "executorch.backends.transforms.addmm_mm_to_linear:AddmmToLinearTransform"
DELEGATE_TO_DEVICE = f"{__name__}:DelegateAddsToDevice"
VIEW_COPY_TO_VIEW = "executorch.exir.passes.replace_view_copy_with_view_pass:ReplaceViewCopyWithViewPass"
# what to_edge's _generate_edge_program runs on the core ATen program before base_pre_op_replace_passes: views ->
# *_copy ops (it raises on the training IR's reshape, chunk, to.dtype, ..., so it runs only on a core ATen case)
VIEW_COPIES = "torch._export.passes:ReplaceViewOpsWithViewCopyOpsPass"
TO_OUT = "executorch.exir.passes:ToOutVarPass"
LIFETIMES = f"{__name__}:TensorLifetimes"
# what to_executorch hands a memory-planning algorithm: specs, views as memory.view, out variants, lifetimes
MEMORY_PLANNING_INPUT = (SPEC_PROP, VIEW_COPY_TO_VIEW, TO_OUT, LIFETIMES)

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


class TensorLifetimes(ExportedProgramPassBase):
    """Every TensorSpec's lifetime (first and last node index using it), set as ``MemoryPlanningPass`` sets them
    before it calls a memory-planning algorithm (``exir.memory_planning.update_all_tensors_lifetime``).

    Why: Cadence's memory-constraint generators run inside such an algorithm and order specs by lifetime; on a
    program without lifetimes they compare ``None``.
    """

    def call(self, exported_program):
        from executorch.exir.memory_planning import update_all_tensors_lifetime

        update_all_tensors_lifetime(exported_program.graph_module, exported_program.graph_signature)
        return ExportedProgramPassResult(exported_program, True)
