"""Catalogs of the other backends ExecuTorch 1.5.1 ships: whatever of them imports offline runs.

- ``samsung``, ``cuda``, ``aoti``, ``metal``, ``native``, ``example`` import without
  their SDKs: every pass is an entry that runs;
- ``cadence``: the package imports, but ``fuse_ops``, ``remove_ops``, ``replace_ops``
  and ``passes`` use ``typing.override`` (Python 3.12) while executorch 1.5.1
  declares ``Requires-Python >=3.10``: their passes are listed, unavailable, with
  that reason (found by reading their source); the rest run;
- ``nxp``: the edge passes that do not touch the Neutron SDK run;
- ``arm`` (+ VGF), ``cortex_m``, ``mediatek``, ``openvino``, ``mlx`` need a vendor SDK
  (``tosa_serializer``, ``mtk_converter``, ``openvino``, generated MLX files) to import:
  their passes are found in their source and listed with the import error.
"""

from __future__ import annotations

from harness.catalog import Build, Catalog, Config, Lazy, entry, known

__all__ = ["CATALOGS"]

B = "executorch.backends"
PROG = Build("program")
SPEC_PROP = "harness.pipelines.pipeline:SpecPropWithPlaceholders"
_MUTATES = ("mutates the graph module it is handed, then returns the copy ExportPass.call retraces: the "
            "caller's program changes too")


def mem_constraints():
    """Cadence's memory-constraint passes record into a MemConstraints object: a fresh default one."""
    from executorch.backends.cadence.aot.memory_constraints import MemConstraints

    return MemConstraints()


def _mem(spec: str, contract: str):
    return entry("cadence", f"{B}.cadence.aot.memory_constraints:{spec}", contract=contract,
                 build=Build("call", (Lazy("passes.catalog_backends:mem_constraints"),)))


SAMSUNG = Catalog("samsung", (f"{B}.samsung._passes",), tuple(
    entry("samsung", f"{B}.samsung._passes.{spec}", build=b, stage=stage, contract=c) for spec, b, stage, c in (
        ("annotate_qparams:AnnotateQparamsPass", PROG, "quantized-edge", "qparams from Q/DQ into node metadata"),
        ("annotate_scalar_parameters:AnnotateScalarParametersPass", PROG, "edge", "scalar operands annotated"),
        ("compose_rms_norm:RecomposeRmsNorm", Build(), "edge", "decomposed RMSNorm recomposed"),
        ("conv1d_to_conv2d:Conv1dToConv2d", PROG, "edge", "conv1d -> conv2d"),
        ("customized_constant_prop:ConstantPropPass", PROG, "edge", "constant propagation over parameters"),
        ("fold_qdq:FoldQDQPass", Build(), "quantized-edge", "erases Q/DQ"),
        ("fuse_activation:FuseActivationPass", Build(), "edge", "activations fused into producers"),
        ("insert_qdq:InsertQDQPass", PROG, "quantized-edge", "re-inserts Q/DQ from annotated qparams"),
        ("remove_useless_ops:RemoveUselessOpPass", Build(), "edge", "removes no-op ops"),
        ("replace_scalar_ops:ReplaceOpsWithScalar", Build(), "edge", "tensor ops with scalar operands -> scalar ops"),
        ("transform_quantized_mask:TransformQuantizedMaskPass", PROG, "quantized-edge", "quantized attention masks"),
    )), "Samsung Exynos passes (run without the ENN SDK)")

_CADENCE_314 = "uses typing.override (Python >= 3.12) while executorch 1.5.1 declares Requires-Python >=3.10"

CADENCE = Catalog("cadence", (f"{B}.cadence.aot",), (
    entry("cadence", f"{B}.cadence.aot.compiler_funcs:QuantFusionPass",
          unavailable="needs the Cadence quantizer's pattern list and a graph quantized by the Cadence quantizer"),
    entry("cadence", f"{B}.cadence.aot.compiler_funcs:prepare",
          unavailable="not a graph pass: prepare(model, quantizer) is Cadence's PT2E quantization entry point, "
                      "which discovery finds by its GraphModule signature"),
    entry("cadence", f"{B}.cadence.aot.decompose_ops:DecomposeAtenApproxGeluPass",
          contract="gelu(approximate='tanh') -> its tanh formula"),
    _mem("GenerateCatNopConstraints", "records which cats can be no-ops (metadata only)"),
    _mem("GenerateMemoryViewConstraints", "records view aliasing constraints (metadata only)"),
    _mem("GenerateSliceAndSelectNopConstraints", "records which slices/selects can be no-ops"),
    _mem("GenerateIdmaConstraints", "records iDMA placement constraints"),
    entry("cadence", f"{B}.cadence.aot.memory_planning:SimplifyIdmaOpsPass", contract="simplifies iDMA copies"),
    *(entry("cadence", f"{B}.cadence.aot.reorder_ops:{name}", contract=c) for name, c in (
        ("AdvanceQuantizeOpAboveDefInBranchPass", "quantize ops moved above their producer in branches"),
        ("AdvanceQuantizeOpAboveDefChainPass", "quantize ops moved up chains of movable ops"),
        ("PostponeDequantizeOpBelowUseChainPass", "dequantize ops moved below chains of movable ops"),
        ("SinkOpsCloserToUsePass", "ops sunk next to their use"),
        ("HoistOpsCloserToDefPass", "ops hoisted next to their definition"),
        ("PostponePermuteOpBelowSqueezeOrUnsqueezeLikeView", "permutes moved below squeeze-like views"),
        ("MovePermuteAfterConcat", "permutes of cat inputs moved after the cat"),
        ("MoveSliceBeforePermutePass", "slices moved before permutes"),
        ("MoveSliceBeforeViewPass", "slices moved before views"),
        ("PropagateSlice", "slices propagated towards inputs"),
        ("SplitDequantizedCatPass", "dequantized cats split"),
    )),
    entry("cadence", f"{B}.cadence.aot.simplify_ops:SimplifySliceOpPass", contract="slice arguments canonicalized"),
    entry("cadence", f"{B}.cadence.aot.simplify_ops:BindOptionalArgsPass", contract="optional arguments bound"),
    entry("cadence", f"{B}.cadence.aot.to_out_var_pass:CadenceToOutVarPass", build=Build(after=(SPEC_PROP,)),
          contract="functional ops -> out variants (Cadence kernels)",
          known=(known("verifier", "out-variant ops are the ExecuTorch dialect: the edge verifier rejects them",
                       kind="by-design"),),
          configs={"ignore_missing": Config(
              Build("call", kwargs=(("ignore_to_out_var_failure", True),), after=(SPEC_PROP,)),
              applies_to=("quantized",), contract="ignore_to_out_var_failure=True on quantized graphs: ops "
                                                  "without an out variant stay functional instead of raising")}),
    entry("cadence", f"{B}.cadence.aot.type_dispatch:CompileTimeTypeDispatchPass",
          contract="quantized ops dispatched to dtype-specific kernels"),
), "Cadence (Xtensa) passes", {f"{B}.cadence.aot.{m}": _CADENCE_314 for m in (
    "compiler", "export_example", "fuse_ops", "passes", "remove_ops", "replace_ops")})

SMALL = Catalog("misc", (
    f"{B}.cuda.passes", f"{B}.aoti.passes", f"{B}.apple.metal.passes", f"{B}.apple.coreai.passes",
    f"{B}.native.passes", f"{B}.example.example_backend_delegate_passes",
), (
    entry("misc", f"{B}.cuda.passes.replace_int64_floordiv:ReplaceInt64FloorDivWithFloatPass",
          contract="int64 floor division via float (CUDA)"),
    entry("misc", f"{B}.aoti.passes.replace_view_copy_with_view:ReplaceViewCopyWithViewPass",
          contract="view_copy -> view (AOTI)"),
    entry("misc", f"{B}.apple.metal.passes.decompose_linear_pass:DecomposeLinearPass",
          contract="linear -> matmul + add (Metal)"),
    entry("misc", f"{B}.native.passes.reinplace:NativeReinplacePass", contract="functional ops -> in-place (native)"),
    entry("misc", f"{B}.example.example_backend_delegate_passes.merge_to_dim_pass:MergeToDimPass",
          contract="example backend: to_dim_order copies merged"),
    entry("misc", f"{B}.example.example_backend_delegate_passes.permute_memory_formats_pass:PermuteMemoryFormatsPass",
          semantics="changing", contract="example backend: NCHW <-> NHWC permutes around convs (layout change)"),
), "CUDA, AOTI, Metal, native and example-backend passes")

NXP = Catalog("nxp", (f"{B}.nxp.edge_passes",), (
    entry("nxp", f"{B}.nxp.edge_passes.convert_reshaping_nodes_to_view:ConvertReshapingNodesToViewPass",
          contract="reshaping nodes -> view_copy"),
    entry("nxp", f"{B}.nxp.edge_passes.neutron_edge_pass:NeutronEdgePass",
          unavailable="abstract parent of the Neutron edge passes: run() is left to subclasses"),
    entry("nxp", f"{B}.nxp.edge_passes.remove_as_strided_copy_nodes:RemoveUselessAsStridedCopyNodes",
          contract="removes as_strided_copy nodes that change nothing", known=(known("input_unchanged", _MUTATES),)),
    entry("nxp", f"{B}.nxp.edge_passes.remove_io_quant_ops_pass:RemoveIOQuantOpsPass",
          unavailable="needs the EdgeProgramManager (reads its methods' IO quantization): a method-IO rewrite"),
), "NXP edge passes that import without the eIQ Neutron SDK",
    {f"{B}.nxp.aten_passes": "imports the eIQ Neutron SDK (neutron_converter), not installed"})

_SDK = "needs a vendor SDK to import"
UNAVAILABLE = tuple(Catalog(name, packages, (), f"{what}: passes listed from source ({_SDK})") for name, packages, what in (
    ("arm", (f"{B}.arm._passes", f"{B}.arm.vgf._passes"), "Arm TOSA / VGF (tosa_serializer)"),
    ("cortex_m", (f"{B}.cortex_m.passes",), "Arm Cortex-M (tosa_serializer)"),
    ("mediatek", (f"{B}.mediatek._passes",), "MediaTek (mtk_converter)"),
    ("openvino", (f"{B}.openvino._passes",), "OpenVINO (openvino)"),
    ("mlx", (f"{B}.mlx.passes",), "Apple MLX (generated delegate files)"),
))

CATALOGS = (SAMSUNG, CADENCE, SMALL, NXP, *UNAVAILABLE)
