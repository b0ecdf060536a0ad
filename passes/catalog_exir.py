"""Catalog of ``executorch.exir.passes``: the passes of ExecuTorch's own lowering flow.

Stages follow where ExecuTorch runs each pass: ``to_edge`` / ``EdgeProgramManager.transform``
passes at ``edge``; the ``to_executorch`` passes (out variants, memory planning,
view-copy removal) need ``SpecPropPass`` first, as ``edge_to_executorch_passes``
orders them, and are built with ``after`` (the out-variant ones after ``RemoveGraphAssertsPass`` too, memory
planning after the default ``ConstraintBasedSymShapeEvalPass`` as well: ``BEFORE_OUT``, ``PLANNING``); ``OpReplacePass`` turns ATen ops into
edge ops, so it runs on the ``export`` program, as do the passes ``to_edge`` runs
on the ATen program before it (``NormalizeTransposePass``, ``ScalarToTensorPass``,
``SymToTensorPass``, ``RemoveMixedTypeOperators``, ``ReplaceBrokenOpsWithFunctionalOpsPass``,
``remove_unused_parameters_pass``, ``convert_constant_dim_order_pass``, ``PruneEmptyTensorsPass``,
``RemoveNonCoreAtenOpGraphAssertsPass``, ``RemoveNoopPass``, ``RemoveToCopyPass``,
``FoldRedundantDequantizeQuantizePass``): on an edge
program they find nothing left to do. passgate's ``export`` program is the
training IR, not the core ATen program ``to_edge`` decomposes to first; where
that shows, a ``precondition`` known failure says so. The forms only the core
ATen program has (a no-op ``_to_copy``, a full slice, a dequantize next to a
quantize with the same qparams) come from the case tagged ``core_aten``
(``targeted_exir_stages``, whose ``build()`` ends with ``run_decompositions()``).

Passes whose constructor takes options have one entry per construction
(``Name[config]``, see :class:`harness.catalog.Config`): the flags
``to_executorch`` and the backends set (``ExecutorchBackendConfig``'s memory
planning and reinplace options, ``QuantFusionPass``'s meta fix), each where a
graph of the corpus reaches the code the flag changes. The table of every
parameterized pass is in :mod:`passes.catalog`.
"""

from __future__ import annotations

from harness.catalog import ANY_GRAPH, Build, Catalog, Config, Lazy, entry, known
from passes.prerequisites import (
    DCE,
    DELEGATE_TO_DEVICE,
    OP_REPLACE,
    SPEC_PROP,
    TO_OUT,
    VIEW_COPIES,
    VIEW_COPY_TO_VIEW,
)

try:
    from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult
except ImportError:  # listing the catalog needs no executorch; running a step does
    ExportedProgramPassBase = object

__all__ = ["CATALOGS"]

C = "exir"
P = "executorch.exir.passes"

_PROGRAM_FN = Build("program_function")
# to_executorch runs RemoveGraphAssertsPass before ToOutVarPass (edge_to_executorch_passes): an _assert_scalar a
# data-dependent size leaves has no out variant, so the out-variant passes are handed the program without them
REMOVE_ASSERTS = f"{P}.remove_graph_asserts_pass:RemoveGraphAssertsPass"
BEFORE_OUT = (SPEC_PROP, REMOVE_ASSERTS)
# and the default sym_shape_eval_pass before ToOutVarPass: memory planning reads sizes, and a data-dependent one
# has no hint to guard on (GuardOnDataDependentSymNode) until this pass makes it its upper bound
SYM_EVAL = f"{P}.sym_shape_eval_pass:ConstraintBasedSymShapeEvalPass"
PLANNING = (*BEFORE_OUT, SYM_EVAL, TO_OUT)
# what to_executorch runs before memory planning with ExecutorchBackendConfig(reinplace_extra_ops={slice_scatter}):
# reinplace_pass, SpecPropPass, RemoveGraphAssertsPass, NormalizeViewCopyBasePass, dead code elimination,
# ReplaceViewCopyWithViewPass, ConstraintBasedSymShapeEvalPass (the default sym_shape_eval_pass), ToOutVarPass
EXECUTORCH_FLOW = (f"{__name__}:ReinplaceSharingScatters", SPEC_PROP, REMOVE_ASSERTS,
                   f"{P}.normalize_view_copy_base_pass:NormalizeViewCopyBasePass", DCE, VIEW_COPY_TO_VIEW,
                   SYM_EVAL, TO_OUT)
# a case tag (fixtures/corpus/targeted_exir_stages.py): its export program is the core ATen one
# (ExportedProgram.run_decompositions()), what to_edge hands the passes it runs before OpReplacePass
CORE_ATEN = "core_aten"


def _by_design(reason: str, upstream: str):
    """Why no program ``to_edge`` makes can make this entry change anything."""
    return known("exercised", reason, upstream, kind="by-design")

_DEVICE_COPIES = ("the et_copy._h2d_copy / _d2h_copy ops it inserts are not edge ops: it runs in to_executorch, "
                  "after SpecPropPass, where the program has left the edge dialect its verifier checks")
_MUTATES = ("mutates the graph module it is handed and returns a retraced copy; EdgeProgramManager.transform "
            "documents that it returns 'a copy', yet the caller's program changes too")
_OVERWRITES_OUTPUT = ("writes in place into a tensor the program returns: the backward walk records a value as "
                      "read later only by call_function nodes, never by the output node, so an op whose input is "
                      "also returned (targeted_exir_memory: `w` and `w.index_put(...)`, and with elementwise op sets "
                      "the KV-cache buffer's new value, read by `cache * cache`) is rewritten to overwrite it, and "
                      "that output comes back changed (to_executorch(run_reinplace_pass=True) too, at runtime)")
_OUT_VARIANTS = ("out-variant ops and memory.alloc are the ExecuTorch dialect: the edge verifier rejects "
                 "them by design (to_executorch does not re-verify with it)")


def _e(spec: str, **kw):
    return entry(C, spec, **kw)


# -- constructor arguments made in the worker (edge ops and planning suites do not pickle) ----------------

def naive_planning():
    """``MemoryPlanningPass(memory_planning_algo=...)``: the suite with only the naive algorithm (no reuse)."""
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite, naive

    return MemoryPlanningAlgorithmSuite([naive])


def skip_targets_no_quant():
    """``constant_prop_pass(custom_skip_targets=...)`` without the quantization primitives (Samsung's set)."""
    from executorch.exir.passes.constant_prop_pass import get_default_skip_targets_no_quant

    return set(get_default_skip_targets_no_quant())


def elementwise_inplace_ops():
    """``reinplace_pass(ops_to_inplace=...)``: the default set plus elementwise ops every float graph has, as
    ``ExecutorchBackendConfig.reinplace_extra_ops`` adds them."""
    from executorch.exir.dialects._ops import ops
    from executorch.exir.passes.reinplace import DEFAULT_INPLACEABLE_OPS

    a = ops.edge.aten
    return set(DEFAULT_INPLACEABLE_OPS) | {a.add.Tensor, a.mul.Tensor, a.relu.default, a.gelu.default,
                                           a.hardtanh.default, a.clamp.default}


def sharing_scatter_ops():
    """``reinplace_pass(ops_to_inplace=...)``: the default set plus slice_scatter, as
    ``ExecutorchBackendConfig(reinplace_extra_ops={slice_scatter})`` asks. aten has no ``slice_scatter_``, so the
    pass cannot rewrite it; it annotates the node (``_share_alloc_with_arg_idx``) for memory planning to put the
    result in the storage of the input it scatters into, when nothing reads that input later."""
    from executorch.exir.dialects._ops import ops
    from executorch.exir.passes.reinplace import DEFAULT_INPLACEABLE_OPS

    return set(DEFAULT_INPLACEABLE_OPS) | {ops.edge.aten.slice_scatter.default}


def mlx_inplace_ops():
    """``reinplace_pass(ops_to_inplace=...)``: the set ``MLXReinplacePass`` (backends/mlx/passes.py) hands it, built
    as backends/mlx/ops.py builds it: its unary ops that have an aten in-place overload, add/sub/mul/div.Tensor, and
    clamp (default, Tensor), gelu, relu, leaky_relu, hardtanh, pow (Tensor_Scalar, Tensor_Tensor). Mirrored here:
    the MLX backend does not import without its generated serialization schema."""
    import torch
    from executorch.exir.dialects._ops import ops

    a = ops.edge.aten
    unary = ("silu", "sigmoid", "tanh", "rsqrt", "floor", "ceil", "trunc", "square", "exp", "sqrt", "reciprocal",
             "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log", "log2",
             "log10", "log1p", "erf", "expm1", "abs", "neg", "sign", "logical_not")
    out = {getattr(a, n).default for n in unary if getattr(getattr(torch.ops.aten, n + "_", None), "default", None)}
    out |= {getattr(a, n).Tensor for n in ("add", "sub", "mul", "div")}
    out |= {a.clamp.default, a.clamp.Tensor, a.gelu.default, a.relu.default, a.leaky_relu.default,
            a.hardtanh.default, a.pow.Tensor_Scalar, a.pow.Tensor_Tensor}
    return out


class ReinplaceSharingScatters(ExportedProgramPassBase):
    """``reinplace_pass(ep, ops_to_inplace=sharing_scatter_ops())``, the first step of ``to_executorch`` with
    ``ExecutorchBackendConfig(reinplace_extra_ops={slice_scatter})``: index_put on a mutable buffer becomes
    index_put_, and a slice_scatter whose input nothing reads later is annotated to share its storage.

    Why a step here: a prerequisite is built the default way (a pass class, no arguments), and reinplace_pass is a
    function over the program that takes the op set."""

    def call(self, exported_program):
        from executorch.exir.passes.reinplace import reinplace_pass

        return ExportedProgramPassResult(reinplace_pass(exported_program, ops_to_inplace=sharing_scatter_ops()), True)


def constant_tag(node):
    """``external_constants_pass(gen_tag_fn=...)``: weights go to one file, every other constant stays
    (``None``), so both branches of a tagging function are taken."""
    return "passgate_weights" if "weight" in node.name else None


ENTRIES = (
    # an observer: it logs, and by contract changes no program (exercised does not apply)
    _e(f"{P}:DebugPass", build=Build("call", kwargs=(("enable_debug_pass", False),)), semantics="observing",
       contract="debug printer; built with printing off (it writes to stdout): must leave the graph intact",
       configs={"enabled": Config(Build("call", kwargs=(("enable_debug_pass", True), ("show_src", True),
                                                        ("show_all_frames", True), ("show_spec", True),
                                                        ("path_filter", "fixtures|harness")), after=(SPEC_PROP,)),
                                  contract="debug printer on (code, nodes, frames, specs, op counts at DEBUG level, "
                                           "to the root logger), after SpecPropPass so that show_spec has TensorSpecs "
                                           "to print: printing must leave the graph intact")}),
    _e(TO_OUT, build=Build(after=BEFORE_OUT),
       contract="functional ops -> out variants with memory.alloc nodes (control-flow submodules too); after "
                "SpecPropPass and RemoveGraphAssertsPass, as to_executorch runs it",
       known=(known("verifier", _OUT_VARIANTS, kind="by-design"),
              known("meta_stack_trace", "memory.alloc nodes it creates carry no stack_trace",
                    "exir/passes/__init__.py (make_alloc_node)"),
              known("meta_nn_module_stack", "memory.alloc nodes carry no nn_module_stack",
                    "exir/passes/__init__.py (make_alloc_node)"),
              known("val_matches_execution", "split_with_sizes_copy.out returns None when run, while meta['val'] "
                    "keeps the list of tensors", graphs=("inplace_views",)),
              known("runnable", "the Python implementation registered for dim_order_ops._empty_dim_order.out (the out "
                    "variant of torch.empty(2, 4) in the edge dialect) calls aten.empty.out with memory_format=, which "
                    "aten rejects with an out tensor ('memory_format' argument is incompatible with 'out' tensor "
                    "argument): the program stops there (the runtime has its own C++ kernel)",
                    "exir/passes/dim_order_ops_registry.py (_empty_dim_order_out_impl, _op_impl); "
                    "reports/upstream/repro_empty_dim_order_out_impl.py",
                    graphs=("targeted_exir_memory",))),
       configs={"ignore_missing": Config(
           Build("call", kwargs=(("ignore_to_out_var_failure", True),), after=BEFORE_OUT), applies_to=("quantized",),
           contract="ignore_to_out_var_failure=True on quantized graphs: ops without an out variant (the "
                    "quantized_decomposed Q/DQ ops) stay functional instead of raising 'Missing out variants'")}),
    _e(f"{P}:dead_code_elimination_pass", contract="removes nodes without users or side effects",
       known=(_by_design("to_edge ends with this very pass (base_post_op_replace_passes), so an edge program has no "
                         "dead node but impure ones it keeps too; the only dead nodes of a loaded case are the "
                         "deserializer's <node>_unused_N getitems, which exercised does not count",
                         "exir/passes/__init__.py (dead_code_elimination_pass, base_post_op_replace_passes)"),)),
    _e(f"{P}:to_scratch_op_pass", build=Build(after=(*BEFORE_OUT, TO_OUT)),
       contract="out variants that need scratch memory get alloc'ed scratch arguments",
       known=(known("verifier", _OUT_VARIANTS, kind="by-design"),
              known("exercised", "rewrites only out variants that have a scratch twin (a schema of SchemaKind."
                    "scratch: out arguments plus _scratch_ ones, registered with get_scratch_metas by "
                    "exir.operator.manip); none of the 3,933 schemas torch registers is one, so only a custom op "
                    "library could give it work", "exir/operator/convert.py (to_scratch_op)", kind="by-design"))),
    _e(f"{P}.const_prop_pass:ConstPropPass", contract="folds constant subexpressions"),
    _e(f"{P}.constant_prop_pass:constant_prop_pass", build=_PROGRAM_FN,
       contract="folds nodes whose inputs are all parameters/constants into new lifted constants",
       configs={"fold_quant": Config(
           Build("program_function", kwargs=(("custom_skip_targets", Lazy(f"{__name__}:skip_targets_no_quant")),)),
           applies_to=("quantized",), contract="custom_skip_targets without the quantization primitives (as "
                                               "Samsung's ConstantPropPass): Q/DQ of constant weights fold too")}),
    _e(f"{P}.convert_constant_dim_order_pass:convert_constant_dim_order_pass", build=_PROGRAM_FN, stage="export",
       contract="constant tensors get default or channels_last dim order"),
    _e(f"{P}.cse_pass:CSEPass", contract="common subexpression elimination"),
    _e(f"{P}.debug_handle_generator_pass:DebugHandleGeneratorPass", stage="export", build=Build(after=(OP_REPLACE,)),
       applies_to=(ANY_GRAPH,),
       contract="gives every node a debug_handle (ties runtime profiles to source): nodes with the same oldest "
                "meta['from_node'] ancestor share one; run where to_edge runs it, on the program OpReplacePass "
                "retraced (it asserts on from_node), float or quantized. A float training-IR case is 1:1 with its "
                "source, so it numbers call nodes 1..N in graph order, the handles passgate seeds (no change); it "
                "changes them where nodes share a source: each quantize -> dequantize pair convert_pt2e inserts shares "
                "one handle, the op's whose output it quantizes (every quantized case), and the nodes "
                "run_decompositions makes of one op share that op's (targeted_exir_stages: a linear's view, permute, "
                "addmm, view)"),
    _e(f"{P}.external_constants_pass:external_constants_pass", build=Build(after=(SPEC_PROP,)),
       contract="tags constants for external storage (node metadata only); after SpecPropPass, as to_executorch "
                "runs it: it tags only placeholders whose meta['spec'] says const, so anywhere earlier it tags "
                "nothing",
       configs={"gen_tag_fn": Config(Build("graph_function", (constant_tag,), after=(SPEC_PROP,)),
                                     contract="with a gen_tag_fn: weights tagged, other constants given None")}),
    _e(f"{P}.external_constants_pass:external_mutable_weights_pass",
       build=Build("graph_and_program", after=(SPEC_PROP,)),
       contract="tags mutable weights for external storage (node metadata only); after SpecPropPass as "
                "to_executorch runs it: it tags only parameters whose meta['spec'] says const and whose gradient "
                "is an output (GRADIENT_TO_PARAMETER: a joint training program, targeted_exir_joint)"),
    _e(f"{P}.fold_redundant_qdq_pass:FoldRedundantDequantizeQuantizePass", stage="export", applies_to=("quantized",),
       contract="folds dequantize -> quantize pairs with matching qparams; run where to_edge runs it, on the ATen "
                "program (base_pre_op_replace_passes), of the quantized graphs: a pair is adjacent only once "
                "run_decompositions dropped a no-op between them (targeted_exir_stages: a no-op .to(float32) "
                "between two quantized regions); to_edge's edge program has none left"),
    _e(f"{P}.init_mutable_pass:InitializedMutableBufferPass", build=Build("call", (["running_", "cache"],)),
       contract="marks buffers whose name matches a pattern as initialized (meta['et_init_buffer'])"),
    _e(f"{P}.insert_write_back_for_buffers_pass:insert_write_back_for_buffers_pass",
       unavailable="returns (graph module, graph signature) for to_executorch to rebuild the program from: "
                   "not a pass over a program; exercised inside the to_executorch flow"),
    _e(f"{P}.legalize_portable_dim_order_pass:LegalizePortableDimOrderPass",
       contract="contiguous dim-order copies before portable default-layout ops"),
    _e(f"{P}.memory_format_ops_pass:DimOrderOpsRevertPass",
       contract="dim_order ops -> memory_format ops (for backends without dim order support)",
       known=(known("verifier", "reverts to _to_copy/clone with memory_format, which the edge verifier rejects in "
                    "dim-order mode; XNNPACK runs it on its own delegated subgraph", kind="by-design"),)),
    _e(f"{P}.memory_format_ops_pass:MemoryFormatOpsPass", stage="export", build=Build(after=(OP_REPLACE,)),
       contract="memory_format ops -> dim_order ops; run where to_edge runs it: after OpReplacePass made the edge "
                "ops taking memory_format (_to_copy, clone, empty.memory_format) it rewrites",
       known=(known("runs", "a clone keeps its input's dim order, and here a permute is still a view (permuted "
                    "strides, dim order [0, 3, 1, 2], which no memory format names): to_edge turns views into "
                    "*_copy ops first (ReplaceViewOpsWithViewCopyOpsPass, after run_decompositions), which this "
                    "export-stage case has not had; run there, that pass raises on the program's aten.reshape",
                    "exir/program/_program.py (_generate_edge_program)", graphs=("targeted_transforms_permutes",),
                    kind="precondition"),)),
    _e(f"{P}.memory_planning_pass:MemoryPlanningPass", build=Build("memory_planning", after=PLANNING),
       contract="assigns every tensor spec a memory id and offset; run as to_executorch runs it: run(graph module, graph "
                "signature), then run_multimethod()",
       known=(known("verifier", _OUT_VARIANTS, kind="by-design"),),
       configs={
           "executorch_flow": Config(
               Build("memory_planning", after=EXECUTORCH_FLOW),
               contract="after every pass to_executorch runs before it, with reinplace_extra_ops={slice_scatter}: "
                        "view_copy nodes are memory.view (their specs views of their base's), symbolic shapes are "
                        "upper bounds, and an out variant whose functional op reinplace_pass annotated "
                        "(_share_alloc_with_arg_idx) is planned in the storage of the input it writes into "
                        "(targeted_exir_memory's slice assignment)"),
           "naive": Config(Build("memory_planning", kwargs=(("memory_planning_algo", Lazy(f"{__name__}:naive_planning")),),
                                 after=PLANNING),
                           contract="the naive algorithm (no reuse) instead of greedy"),
           "no_io_alloc": Config(Build("memory_planning", kwargs=(("alloc_graph_input", False), ("alloc_graph_output", False)),
                                       after=PLANNING),
                                 contract="graph inputs and outputs left to the caller (alloc_graph_input/output="
                                          "False, as most ExecuTorch LLM exports plan)"),
           "overlap": Config(Build("memory_planning", kwargs=(("allow_lifetime_and_storage_overlap", True),),
                                   after=PLANNING),
                             contract="allow_lifetime_and_storage_overlap=True: tensors may share storage across "
                                      "lifetimes (what Cadence plans with)"),
           # mutable buffers: the zoo's KV-cache models (the full profile) and targeted_exir_memory, hence applies_to
           "no_mutable_alloc": Config(Build("memory_planning", kwargs=(("alloc_mutable_buffers", False),),
                                            after=PLANNING), applies_to=("buffer_mutation",),
                                      contract="alloc_mutable_buffers=False: mutable buffers left to the runtime"),
           "share_mutable": Config(Build("memory_planning", kwargs=(("share_mutable_buffers", True),), after=PLANNING),
                                   applies_to=("buffer_mutation",),
                                   contract="share_mutable_buffers=True: mutable buffers planned in a shared arena "
                                            "(multi-method programs)"),
       }),
    _e(f"{P}.normalize_transpose_pass:NormalizeTransposePass", stage="export", contract="aten.t -> aten.t_copy"),
    _e(f"{P}.normalize_view_copy_base_pass:NormalizeViewCopyBasePass",
       contract="every view_copy reads the first non-view upstream"),
    _e(f"{P}.propagate_device_pass:PropagateDevicePass", build=Build(after=(DELEGATE_TO_DEVICE, SPEC_PROP)),
       contract="tags the specs at delegate boundaries with the delegate's target device; run as to_executorch "
                "runs it (after SpecPropPass) on a program whose adds a device partitioner delegated (ExecuTorch's "
                "DeviceAwarePartitioner, target cuda:0): a graph without adds has no delegate to act on",
       configs={"device_copies": Config(
           Build("call", kwargs=(("enable_non_cpu_memory_planning", True),), after=(DELEGATE_TO_DEVICE, SPEC_PROP)),
           contract="enable_non_cpu_memory_planning=True: H2D copies before each delegate input, D2H copies after "
                    "each delegate output, device->host->device round trips between delegates elided",
           known=(known("verifier", _DEVICE_COPIES, "exir/program/_program.py (edge_to_executorch_passes)",
                        kind="by-design"),)),
                "skip_io_copies": Config(
           Build("call", kwargs=(("enable_non_cpu_memory_planning", True), ("skip_h2d_for_method_inputs", True),
                                 ("skip_d2h_for_method_outputs", True)), after=(DELEGATE_TO_DEVICE, SPEC_PROP)),
           contract="device copies, except that a program input feeding a delegate is tagged with the device "
                    "instead of copied, and a delegate output that is a program output stays on the device",
           known=(known("verifier", _DEVICE_COPIES, "exir/program/_program.py (edge_to_executorch_passes)",
                        kind="by-design"),
                  known("runs", "skip_h2d_for_method_inputs retags the spec of a program input that feeds a delegate, so "
                        "it requires that input to have no other user and raises RuntimeError otherwise (a stated "
                        "limit of the option)", "exir/passes/propagate_device_pass.py (_insert_h2d_copies)",
                        kind="precondition")))}),
    _e(f"{P}.prune_empty_tensors_pass:PruneEmptyTensorsPass", stage="export",
       contract="removes empty inputs of aten.cat (ATen ops: to_edge runs it on the ATen program, "
                "base_pre_op_replace_passes; on edge ops it matches nothing)"),
    _e(f"{P}.quant_fusion_pass:QuantFusionPass", stage="quantized-edge", slow=True,
       contract="dequant -> op -> quant patterns -> quantized ops",
       configs={"fix_meta_val": Config(
           Build("call", kwargs=(("_fix_node_meta_val", True),)),
           contract="_fix_node_meta_val=True: nodes the rewrite leaves without meta['val'] get one computed from "
                    "their inputs",
           known=(known("val_matches_execution", "even with _fix_node_meta_val=True: the fix only fills nodes that "
                        "have no meta['val'], and _fuse_quantized_cat rewires the cat to int8 inputs but keeps its "
                        "float32 meta['val'], so the int8 cat still claims float32",
                        "exir/passes/quant_fusion_pass.py (_fuse_quantized_cat, QuantFusionPass.call)"),))}),
    _e(f"{P}.quant_fusion_pass:quant_fusion_and_const_prop_pass", stage="quantized-edge", build=_PROGRAM_FN,
       slow=True, contract="QuantFusionPass then constant propagation of the folded weights"),
    _e(f"{P}.quantize_io_pass:QuantizeInputs",
       unavailable="needs an EdgeProgramManager and the indices of inputs that are quantized by a leading "
                   "quantize op: a method-IO rewrite, not a graph pass"),
    _e(f"{P}.quantize_io_pass:QuantizeOutputs",
       unavailable="needs an EdgeProgramManager and the indices of outputs ending in a dequantize op: "
                   "a method-IO rewrite, not a graph pass"),
    _e(f"{P}.reinplace:reinplace_pass", build=_PROGRAM_FN, contract="functional ops -> in-place where safe",
       known=(known("verifier", "emits in-place ops (index_put_ by default; mul_, relu_, ... with ops_to_inplace), "
                    "which are not core ATen: to_executorch runs reinplace_pass after the edge program was verified",
                    kind="by-design"),
              known("meta_stack_trace", "the in-place node replacing a functional one gets only meta['val']: its "
                    "stack_trace (and debug_handle) are dropped", "exir/passes/reinplace.py (reinplace_pass)"),
              known("meta_nn_module_stack", "likewise: the in-place node carries no nn_module_stack",
                    "exir/passes/reinplace.py (reinplace_pass)"),
              known("numerics", _OVERWRITES_OUTPUT, "exir/passes/reinplace.py (reinplace_pass: seen_nodes); "
                    "reports/upstream/repro_reinplace_overwrites_graph_output.py", graphs=("targeted_exir_memory",))),
       configs={"share_alloc": Config(
           Build("program_function", kwargs=(("ops_to_inplace", Lazy(f"{__name__}:sharing_scatter_ops")),)),
           contract="ops_to_inplace adds slice_scatter (ExecutorchBackendConfig.reinplace_extra_ops): an op with no "
                    "in-place overload is only annotated (_share_alloc_with_arg_idx) where its input is safe to "
                    "overwrite, for memory planning to share that input's storage (MemoryPlanningPass["
                    "executorch_flow] reads it)"),
                "mlx": Config(
           Build("program_function", kwargs=(("ops_to_inplace", Lazy(f"{__name__}:mlx_inplace_ops")),)),
           contract="the op set MLXReinplacePass hands it: unary math ops, add/sub/mul/div.Tensor, clamp, pow, "
                    "activations; in-place overloads found by schema (pow.Tensor_Tensor -> pow_.Tensor past "
                    "pow_.Scalar, clamp.Tensor -> clamp_.Tensor past clamp_)"),
                "elementwise": Config(
           Build("program_function", kwargs=(("ops_to_inplace", Lazy(f"{__name__}:elementwise_inplace_ops")),)),
           contract="ops_to_inplace adds add/mul/relu/gelu/hardtanh/clamp (ExecutorchBackendConfig."
                    "reinplace_extra_ops): the default set holds only index_put (targeted_exir_memory's KV-cache write)")}),
    _e(f"{P}.remove_graph_asserts_pass:RemoveGraphAssertsPass", contract="removes assert ops"),
    _e(f"{P}.remove_graph_asserts_pass:RemoveNonCoreAtenOpGraphAssertsPass", stage="export",
       contract="removes aten._assert_tensor_metadata, which torch.export puts before .to(dtype) (to_edge runs it "
                "on the ATen program, _generate_edge_program: no edge program has one)"),
    _e(f"{P}.remove_mixed_type_operators:RemoveMixedTypeOperators", stage="export",
       contract="explicit casts where binary ops mix dtypes (ATen ops: on edge ops it matches nothing)",
       known=(known("runs", "calls torch.tensor(arg.data) on a non-tensor operand: targeted_asserts' x * i.item() "
                    "hands it an unbacked SymInt, whose value it cannot read (GuardOnDataDependentSymNode); to_edge's "
                    "decompositions make that operand a scalar_tensor first, so it never sees one",
                    "exir/passes/remove_mixed_type_operators.py (call_operator)", graphs=("targeted_asserts",),
                    kind="precondition"),
              known("runs", "raises AttributeError ('float' object has no attribute 'data') on a Python scalar "
                    "operand (x * 0.5): to_edge runs ScalarToTensorPass just before it, so it never sees one",
                    "exir/passes/remove_mixed_type_operators.py (call_operator)", kind="precondition"),)),
    _e(f"{P}.remove_noop_pass:RemoveNoopPass", stage="export", build=Build(after=(VIEW_COPIES,)),
       applies_to=(CORE_ATEN,),
       contract="removes ops that pass their input through (a full slice_copy; a to.dtype whose meta['val'] is its "
                "input's), and a dequantize -> quantize pair with the same qparams around one it removed; run where "
                "to_edge runs it: on the core ATen program after ReplaceViewOpsWithViewCopyOpsPass (the training IR "
                "has no slice_copy: torch.export drops a full x[..., :n], a full narrow becomes one only when "
                "decomposed; and that prerequisite raises on the training IR's views), so on the core ATen cases "
                "(targeted_exir_stages). Its to.dtype branch is unreachable there: run_decompositions removes "
                "to.dtype"),
    _e(f"{P}.remove_noop_pass:RemoveToCopyPass", stage="export", applies_to=(ANY_GRAPH,),
       contract="removes _to_copy ops that change nothing (dtype, device, shape and strides kept); run where to_edge "
                "runs it, on the ATen program of every graph, float or quantized: the training IR keeps casts as "
                "aten.to.*, so only the core ATen program has the no-op _to_copy a .to(dtype, copy=True) decomposes "
                "to (targeted_exir_stages)"),
    _e(f"{P}.remove_unused_parameters_pass:remove_unused_parameters_pass", build=_PROGRAM_FN, stage="export",
       contract="drops parameters no node reads"),
    _e(f"{P}.replace_aten_with_edge_pass:OpReplacePass", stage="export",
       contract="ATen ops -> edge ops (what to_edge does)"),
    _e(f"{P}.replace_broken_ops_with_function_ops_pass:ReplaceBrokenOpsWithFunctionalOpsPass", stage="export",
       contract="non-functionalized ops -> functional equivalents",
       known=(known("runs", "raises AttributeError on view ops of the training IR that have no aten *_copy "
                    "twin (chunk, reshape, moveaxis, swapdims, swapaxes, tensor_split, to.dtype): to_edge hands it "
                    "the core ATen program (run_decompositions first), where they are decomposed",
                    "exir/passes/replace_broken_ops_with_function_ops_pass.py (call_operator)",
                    kind="precondition"),
              known("numerics", "on the training IR a write through a view mutates the buffer under it "
                    "(targeted_exir_running_stats' history[1:].copy_(...) and history[0].copy_(...): slice / select, "
                    "then copy_); the pass swaps those views for slice_copy / select_copy, so copy_ writes into a "
                    "fresh tensor and the buffer keeps its old rows (history.sum(0) misses the new row). to_edge "
                    "hands it the functionalized program, where such writes are slice_scatter / select_scatter",
                    "exir/passes/replace_broken_ops_with_function_ops_pass.py (call_operator)",
                    graphs=("targeted_exir_running_stats",), kind="precondition"),)),
    _e(f"{P}.replace_edge_with_backend_pass:EdgeToBackendOpsPass",
       contract="sym ops -> executorch_prim ops; backend ops -> BackendOpOverload"),
    _e(f"{P}.replace_sym_size_op_pass:ReplaceSymSizeOpPass", contract="sym_size packets -> sym_size.int",
       known=(known("exercised", "rewrites only OpOverloadPacket targets (aten.sym_size, sym_stride, sym_numel) "
                    "that the legacy exir.capture tracer emitted; torch.export always records the overload "
                    "(aten.sym_size.int), at export and edge alike, so no program has a packet to replace",
                    "exir/passes/replace_sym_size_op_pass.py (ReplaceSymSizeOpPass.call)", kind="by-design"),)),
    _e(f"{P}.replace_view_copy_with_view_pass:ReplaceViewCopyWithViewPass", build=Build(after=(SPEC_PROP,)),
       contract="view_copy -> memory.view (aliasing view) after spec propagation",
       known=(known("verifier", "turns view_copy into memory.view, which only the memory-planned ExecuTorch dialect "
                    "accepts; the edge verifier asserts on it (the pass belongs to to_executorch, after the edge "
                    "program was verified)", "exir/verification/verifier.py (check_valid_edge_op)",
                    graphs=("targeted_exir_memory",), kind="by-design"),)),
    _e(f"{P}.scalar_to_tensor_pass:ScalarToTensorPass", stage="export",
       contract="scalars in Tensor schema slots -> tensors",
       known=(known("verifier", "leaves the tensors it makes as get_attr constants, which the export verifier "
                    "rejects ('Invalid get_attr type'); _generate_edge_program lifts them right after "
                    "(lift_constant_tensor_pass)", "exir/program/_program.py (_generate_edge_program)",
                    kind="by-design"),)),
    _e(f"{P}.spec_prop_pass:SpecPropPass", contract="every node gets meta['spec'] (TensorSpec)"),
    _e(f"{P}.sym_shape_eval_pass:ConstraintBasedSymShapeEvalPass", build=Build(after=(SPEC_PROP,)),
       contract="symbolic shapes -> upper bounds from the range constraints"),
    _e(f"{P}.sym_shape_eval_pass:HintBasedSymShapeEvalPass", build=Build(after=(SPEC_PROP,)),
       contract="symbolic shapes -> hints (deprecated upstream)"),
    _e(f"{P}.sym_to_tensor_pass:SymToTensorPass", stage="export",
       contract="SymInt/SymFloat in Tensor slots -> tensors"),
    _e(f"{P}.to_device_pass:ToDevicePass", build=Build("call", ("cpu:0",)), stage="export", applies_to=(ANY_GRAPH,),
       contract="rewrites every explicit device= kwarg that is not the target device (and moves the module's own "
                "tensors); run on the ATen program, float or quantized, as Arm's post-quantization device switch "
                "runs it on convert_pt2e's module. Built with cpu:0, the one other device a CPU machine can name: "
                "torch.device('cpu:0') != torch.device('cpu'), so each device=cpu kwarg (arange, full, "
                "_assert_tensor_metadata, ...) is rewritten, while a tensor made on cpu:0 is a cpu tensor, so the "
                "program must still verify, run and give the same results. Not with cpu: a no-op on this machine; "
                "not at the edge stage, where upstream does not run it: the edge verifier re-propagates fake "
                "tensors, and a FakeTensor keeps cpu:0 (a real one becomes cpu), so it rejects the rewritten "
                "program on mixed devices though it runs; not with meta: the program's lifted parameters and its "
                "inputs stay on cpu (the pass moves a module's own tensors only), so it no longer runs"),
    _e(f"{P}.weights_to_outputs_pass:weights_to_outputs_pass", build=_PROGRAM_FN,
       contract="training graphs: weights with gradients become outputs (a no-op without gradients; exercised by "
                "the joint program targeted_exir_joint)",
       known=(known("verifier", "the weights it appends get OutputSpec kind TOKEN with a TensorArgument, which the "
                    "export verifier rejects ('expected TokenArgument for TOKEN kind'); upstream calls it a hack: "
                    "there is no OutputKind for a parameter", "exir/passes/weights_to_outputs_pass.py",
                    kind="by-design"),
              known("numerics", "it appends the weights with a gradient to the program's outputs: more outputs "
                    "than before is what it is for", "exir/passes/weights_to_outputs_pass.py", kind="by-design"),
              known("idempotent", "a second run appends the same weights to the outputs again (it does not look for "
                    "the TOKEN outputs it added), so the output list grows on every run",
                    "exir/passes/weights_to_outputs_pass.py (weights_to_outputs_pass)"))),
    _e(f"{P}.dynamic_shape_prop_pass:DynamicShapePropPass",
       unavailable="module does not import in executorch 1.5.1: it imports LoweredBackendModule from "
                   "executorch.exir.delegate, which no longer defines it (dead module, upstream)"),
)

CATALOGS = (Catalog(C, (P,), ENTRIES, "ExecuTorch's own lowering passes (executorch.exir.passes)"),)
