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
from passes.prerequisites import MEMORY_PLANNING_INPUT, SPEC_PROP, TO_OUT, VIEW_COPY_TO_VIEW

__all__ = ["CATALOGS"]

B = "executorch.backends"
PROG = Build("program")
_MUTATES = ("mutates the graph module it is handed, then returns the copy ExportPass.call retraces: the "
            "caller's program changes too")


def mem_constraints():
    """Cadence's memory-constraint passes record into a MemConstraints object: a fresh default one."""
    from executorch.backends.cadence.aot.memory_constraints import MemConstraints

    return MemConstraints()


def cadence_kv_cache_ops():
    """AdvanceQuantizeOpAboveDefChainPass's ``extra_quantizable_ops``: slice_scatter, both tensor inputs
    quantizable (what upstream's test_advance_quantize_above_extra_quantizable_op passes)."""
    from executorch.exir.dialects._ops import ops as exir_ops

    return {exir_ops.edge.aten.slice_scatter.default: (0, 1)}


def _mem(spec: str, contract: str, observing: bool):
    """A memory-constraint generator, run on what upstream runs it on: inside Cadence's memory-planning algorithm
    (GenerateMemConstraints, called by to_executorch's MemoryPlanningPass), on the program with views as
    memory.view, out variants and TensorSpec lifetimes. ``observing``: it only records constraints into its
    MemConstraints and changes no program (the others also retarget the ops they make no-ops)."""
    return entry("cadence", f"{B}.cadence.aot.memory_constraints:{spec}", contract=contract,
                 semantics="observing" if observing else "preserving",
                 known=_SPLIT_OUT + (() if observing else _NOP_RUNNABLE),
                 build=Build("call", (Lazy("passes.catalog_backends:mem_constraints"),), after=MEMORY_PLANNING_INPUT))


def cadence_default_mode():
    """CompileMode.DEFAULT, the mode Cadence's compiler plans memory in unless asked otherwise."""
    from executorch.backends.cadence.aot.pass_utils import CompileMode

    return CompileMode.DEFAULT


def cadence_two_memories():
    """A MemoryConfig of two memories, a 1 KiB one (a DSP's local data RAM) in front of a large one (system RAM):
    the hierarchy CadenceMemoryPlanning's algorithms fill in order, a tensor going to the first that fits it."""
    from executorch.backends.cadence.aot.utils import MemoryConfig

    return MemoryConfig(memory_sizes=[1024, 1 << 30])


def _cmp(mem_algo: int, memory_config: str, *kwargs: tuple) -> Build:
    """CadenceMemoryPlanning(memory_config, mode=DEFAULT, mem_algo=...) as _lower_ep_to_cadence_gen_etrecord builds
    it for to_executorch, run as to_executorch runs a memory-planning pass (run(gm, graph_signature)) on what it
    hands one: after SpecPropPass, views as memory.view and out variants (it computes the lifetimes itself)."""
    return Build("memory_planning", (Lazy(memory_config),),
                 kwargs=(("mode", Lazy("passes.catalog_backends:cadence_default_mode")), ("mem_algo", mem_algo),
                         *kwargs),
                 after=(SPEC_PROP, VIEW_COPY_TO_VIEW, TO_OUT))


_CMP_CONTRACT = ("plans every tensor's memory (TensorSpec mem_id / mem_offset) under the constraints Cadence's "
                 "GenerateMemConstraints records; cat / slice / select that the plan makes in-place become their _nop "
                 "variants")
# what makes the nop variants legal is the memory plan itself: the ops have no CPU kernel
_NOP_RUNNABLE = (known("runnable", "the program keeps aten._cat_nop.out / _slice_copy_nop.Tensor_out / "
                       "_select_copy_nop.int_out where the plan placed the inputs in the output's memory; they are "
                       "registered with a meta kernel only (Cadence's runtime runs them as no-ops), so the program "
                       "no longer runs on CPU", "backends/cadence/aot/memory_constraints.py "
                       "(GenerateCatNopConstraints, GenerateSliceAndSelectNopConstraints)", kind="by-design"),)
# the out-variant program these entries are handed (ToOutVarPass) already has it; they do not touch the split
_SPLIT_OUT = (known("val_matches_execution", "split_with_sizes_copy.out of the out-variant program they are handed "
                    "(ToOutVarPass made it) writes into its out tensors and returns None while meta['val'] keeps the "
                    "functional result, a list: the ExecuTorch dialect is not run op by op",
                    "exir/passes/__init__.py (ToOutVarPass)",
                    graphs=("inplace_views", "corpus_5c0e5150", "corpus_6c801e7c"), kind="by-design"),)


# EnnBackend.preprocess runs AnnotateQparamsPass(ep) (Q/DQ params into node.meta['quantize_attrs']) and then
# FoldQDQPass (erases the Q/DQ) before the passes that read those annotations: the entries that read them run after
# both, in that order. The other passes preprocess runs in between (FuseActivationPass, ConstantPropPass, ...,
# ReplaceOpsWithScalar) are entries of their own; they make no annotation (FuseActivationPass and Conv1dToConv2d
# only carry existing ones onto the nodes they fuse or make), so the prefix leaves them out.
# What the prefix brings along: FoldQDQPass's own runnable / verifier failures on these graphs (int8 weights left
# feeding float ops), and its runs failure on vit_tiny_q8, where the entries are then not applicable.
SAMSUNG_ANNOTATE = f"{B}.samsung._passes.annotate_qparams:AnnotateQparamsPass"
SAMSUNG_FOLD_QDQ = f"{B}.samsung._passes.fold_qdq:FoldQDQPass"
_ANNOTATED = Build("program", after=(SAMSUNG_ANNOTATE, SAMSUNG_FOLD_QDQ))
_SAMSUNG_KNOWN = {
    "customized_constant_prop:ConstantPropPass": (
        known("verifier", "calls constant_prop_pass with its default _skip_dim_order=True, so an output that folds to a "
              "constant is returned through aten.clone, which the edge verifier rejects in dim-order mode; Samsung "
              "lowers with EdgeCompileConfig(_skip_dim_order=True), where aten.clone is legal",
              "backends/samsung/utils/export_utils.py (get_edge_compile_config)",
              graphs=("corpus_06c14c3d", "corpus_dd0ad1fb", "targeted_layout_bn", "targeted_qnn_ops"), kind="precondition"),),
    "fuse_activation:FuseActivationPass": (
        known("runs", "map_hardtan_relux reads hardtanh's min_val / max_val as args[1] / args[2]: when they are "
              "keywords (exir.serde save/load) it raises IndexError; positional bounds other than (0, 6), as "
              "F.hardtanh's default (-1, 1), fail its assert instead, though Samsung's own op_hardtanh lowers any "
              "bounds (CLIP)", "backends/samsung/_passes/fuse_activation.py (map_hardtan_relux, "
              "FuseActivationPass._fuse)", graphs=("corpus_7f0d7a1f", "corpus_c994b397", "targeted_qnn_samsung_ops")),),
    "conv1d_to_conv2d:Conv1dToConv2d": (
        known("runnable", "update_kernel unsqueezes a conv1d weight only when it is a parameter or a lifted tensor "
              "constant; a registered buffer (a fixed smoothing kernel) falls through to RuntimeError('Weight of 1d "
              "conv should be constant tensor or Parameter obj'), which it builds but never raises, so the buffer "
              "stays 3-D under the now 2-D convolution and the program no longer runs",
              "backends/samsung/_passes/conv1d_to_conv2d.py (update_kernel)", graphs=("targeted_qnn_samsung_ops",)),),
    "replace_scalar_ops:ReplaceOpsWithScalar": (
        known("verifier", "wraps the scalar operand as torch.tensor(scalar), whose dtype is int64 for a Python int "
              "(float32 for a float) whatever the tensor operand's: pow.Tensor_Scalar of an int32 tensor becomes "
              "pow.Tensor_Tensor(int32, int64), which the edge verifier rejects as mixed dtypes",
              "backends/samsung/_passes/replace_scalar_ops.py (ReplaceOpsWithScalar.call_operator)",
              graphs=("corpus_a4e73bfe",)),),
}

SAMSUNG = Catalog("samsung", (f"{B}.samsung._passes",), tuple(
    entry("samsung", f"{B}.samsung._passes.{spec}", build=b, stage=stage, contract=c,
          known=_SAMSUNG_KNOWN.get(spec, ())) for spec, b, stage, c in (
        ("annotate_qparams:AnnotateQparamsPass", PROG, "quantized-edge", "qparams from Q/DQ into node metadata"),
        ("annotate_scalar_parameters:AnnotateScalarParametersPass", _ANNOTATED, "quantized-edge",
         "0-d operands of annotated mul/add/sub/div annotated (after AnnotateQparamsPass, FoldQDQPass)"),
        ("compose_rms_norm:RecomposeRmsNorm", Build(), "edge", "decomposed RMSNorm recomposed"),
        ("conv1d_to_conv2d:Conv1dToConv2d", PROG, "edge", "conv1d -> conv2d"),
        ("customized_constant_prop:ConstantPropPass", PROG, "edge", "constant propagation over parameters"),
        ("fold_qdq:FoldQDQPass", Build(), "quantized-edge", "erases Q/DQ"),
        ("fuse_activation:FuseActivationPass", Build(), "edge", "activations fused into producers"),
        ("insert_qdq:InsertQDQPass", _ANNOTATED, "quantized-edge",
         "re-inserts Q/DQ from annotated qparams (after AnnotateQparamsPass, FoldQDQPass)"),
        ("remove_useless_ops:RemoveUselessOpPass", Build(), "edge", "removes no-op ops"),
        ("replace_scalar_ops:ReplaceOpsWithScalar", Build(), "edge", "tensor ops with scalar operands -> scalar ops"),
        ("transform_quantized_mask:TransformQuantizedMaskPass", _ANNOTATED, "quantized-edge",
         "quantized attention masks (after AnnotateQparamsPass, FoldQDQPass)"),
    )), "Samsung Exynos passes (run without the ENN SDK)")

_SLICE = "backends/cadence/aot/simplify_ops.py (SimplifySliceOpPass.maybe_remove_or_replace)"
_CADENCE_314 = "uses typing.override (Python >= 3.12) while executorch 1.5.1 declares Requires-Python >=3.10"

CADENCE = Catalog("cadence", (f"{B}.cadence.aot",), (
    entry("cadence", f"{B}.cadence.aot.compiler_funcs:QuantFusionPass",
          unavailable="needs the Cadence quantizer's pattern list and a graph quantized by the Cadence quantizer"),
    entry("cadence", f"{B}.cadence.aot.compiler_funcs:prepare",
          unavailable="not a graph pass: prepare(model, quantizer) is Cadence's PT2E quantization entry point, "
                      "which discovery finds by its GraphModule signature"),
    entry("cadence", f"{B}.cadence.aot.decompose_ops:DecomposeAtenApproxGeluPass",
          contract="gelu(approximate='tanh') -> its tanh formula"),
    _mem("GenerateCatNopConstraints", "cat.out along the outermost dim whose inputs can be placed contiguously -> "
         "_cat_nop.out, with the placement constraints recorded", observing=False),
    _mem("GenerateMemoryViewConstraints", "records that a memory.view shares its input's memory", observing=True),
    _mem("GenerateSliceAndSelectNopConstraints", "slice_copy.Tensor_out / select_copy.int_out along the outermost "
         "dim -> their _nop variants, with the offset constraints recorded", observing=False),
    _mem("GenerateIdmaConstraints", "records iDMA placement constraints (cadence idma_load/idma_store/idma_wait.out, "
         "which only Cadence's own iDMA lowering inserts)", observing=True),
    entry("cadence", f"{B}.cadence.aot.memory_planning:CadenceMemoryPlanning", contract=_CMP_CONTRACT,
          build=_cmp(0, "executorch.backends.cadence.aot.utils:get_default_memory_config"),
          known=_NOP_RUNNABLE + _SPLIT_OUT,
          configs={
              "heuristic_no_io": Config(
                  _cmp(1, "executorch.backends.cadence.aot.utils:get_default_memory_config",
                       ("alloc_graph_input", False), ("alloc_graph_output", False)),
                  contract="mem_algo=1 (GreedyWithHeuristic) with alloc_graph_input / alloc_graph_output False, as "
                           "upstream's alignment test builds it: program inputs and outputs left unplanned"),
              "two_memories": Config(
                  _cmp(0, "passes.catalog_backends:cadence_two_memories"),
                  contract="mem_algo=0 (PositionBasedGreedyWithHierarchy) over a 1 KiB memory in front of a large "
                           "one: tensors that do not fit the first go to the second")}),
    entry("cadence", f"{B}.cadence.aot.memory_planning:SimplifyIdmaOpsPass", contract="simplifies iDMA copies",
          known=(known("exercised", "rewrites only cadence idma_load.out / idma_store.out, out variants of iDMA ops "
                       "no ExecuTorch pass inserts (upstream's tests build them by hand); it runs inside "
                       "CadenceMemoryPlanning.run after memory planning, past the edge dialect of passgate's cases",
                       "backends/cadence/aot/memory_planning.py (SimplifyIdmaOpsPass.call)", kind="precondition"),)),
    entry("cadence", f"{B}.cadence.aot.reorder_ops:AdvanceQuantizeOpAboveDefInBranchPass",
          contract="quantize ops moved above their producer in branches"),
    entry("cadence", f"{B}.cadence.aot.reorder_ops:AdvanceQuantizeOpAboveDefChainPass",
          contract="quantize ops moved up chains of movable ops",
          configs={"slice_scatter": Config(
              Build("call", kwargs=(("extra_quantizable_ops", Lazy("passes.catalog_backends:cadence_kv_cache_ops")),)),
              contract="extra_quantizable_ops={slice_scatter: (0, 1)}, as upstream's test of the option builds it: a "
                       "quantize of a slice_scatter (a quantized KV-cache update) moved above it onto both inputs")}),
    *(entry("cadence", f"{B}.cadence.aot.reorder_ops:{name}", contract=c) for name, c in (
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
    entry("cadence", f"{B}.cadence.aot.simplify_ops:SimplifySliceOpPass", contract="slice arguments canonicalized",
          known=(known("numerics", "reads slice_copy's dim / start / end / step only from node.args: when they are "
                       "keywords (exir.serde save/load leaves every defaulted argument one, and passgate's case cache "
                       "goes through it) it takes dim 0 and the full range and rewrites the slice into "
                       "slice_copy(x, 0, 0, len, 1), a no-op, so the next op gets the unsliced tensor",
                       _SLICE, graphs=("corpus_08caff71", "corpus_58026ce9", "corpus_67e9cdbc", "corpus_95d5c773",
                                       "corpus_f25443a2")),)),
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
    # export stage: to_edge decomposes aten.linear, so no edge program of ours keeps it; the ATen program does,
    # as Metal's edge programs do (the AOTI partitioner's ops_to_not_decompose keeps every op), and it matches both
    entry("misc", f"{B}.apple.metal.passes.decompose_linear_pass:DecomposeLinearPass", stage="export",
          contract="linear -> matmul + add (Metal)"),
    entry("misc", f"{B}.native.passes.reinplace:NativeReinplacePass", contract="functional ops -> in-place (native)"),
    entry("misc", f"{B}.example.example_backend_delegate_passes.merge_to_dim_pass:MergeToDimPass",
          contract="example backend: to_dim_order copies merged",
          known=(known("exercised", "reads a _to_dim_order_copy's dtype and dim_order from node.args[-1] as a dict, "
                       "but they are keyword-only in its schema: every such node (to_edge's, and the ones "
                       "PermuteMemoryFormatsPass inserts before it in ExampleBackend.preprocess) has args == "
                       "(input,) and them in kwargs. Where its guard holds (a _to_dim_order_copy whose single user "
                       "has exactly two positional args, e.g. x.to(torch.float16) + y) args[-1] is the input Node "
                       "and subscripting it raises TypeError ('Node' object is not subscriptable, checked); "
                       "elsewhere it edits nothing, though it returns modified=True",
                       "backends/example/example_backend_delegate_passes/merge_to_dim_pass.py (MergeToDimPass.call)"),
                 known("runs", "TypeError: 'Node' object is not subscriptable wherever a _to_dim_order_copy has a "
                       "single user with exactly two positional args: the cast to_edge puts on a lifted scalar "
                       "constant feeding an add or a div (hardswish's x + 3 and / 6, a Python-float operand), which "
                       "passes its guard; it then reads dtype and dim_order from node.args[-1], the copy's input "
                       "Node, as if it were a kwargs dict (both are keyword-only in the schema)",
                       "backends/example/example_backend_delegate_passes/merge_to_dim_pass.py (MergeToDimPass.call)"))),
    entry("misc", f"{B}.example.example_backend_delegate_passes.permute_memory_formats_pass:PermuteMemoryFormatsPass",
          semantics="changing", contract="example backend: NCHW <-> NHWC permutes around convs (layout change)"),
), "CUDA, AOTI, Metal, native and example-backend passes")

_NXP_VIEW = "backends/nxp/edge_passes/convert_reshaping_nodes_to_view.py (ConvertReshapingNodesToViewPass.run)"
NXP = Catalog("nxp", (f"{B}.nxp.edge_passes",), (
    entry("nxp", f"{B}.nxp.edge_passes.convert_reshaping_nodes_to_view:ConvertReshapingNodesToViewPass",
          contract="reshaping nodes -> view_copy",
          known=(known("runnable", "gives the view_copy replacing a [un]squeeze the size meta['val'].shape: on a "
                       "dynamic batch dim that holds a SymInt, so the program no longer runs on real tensors "
                       "('SymIntArrayRef expected to contain only concrete integers')", _NXP_VIEW,
                       graphs=("corpus_dd0ad1fb",)),)),
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
