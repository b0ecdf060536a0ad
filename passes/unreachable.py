"""Pass code no program can make run (or that runs where coverage.py cannot see it), with why: the ``passgate.unreachable`` plugin of passgate's catalogs.

The coverage report (``tox -e coverage``) leaves these functions out of its
"reachable" figures and lists them beside the raw ones
(:mod:`harness.run.reachable`). Each was traced in the ExecuTorch version the
suite pins (1.5.1): a declaration whose body the corpus runs is refused by the
measurement, so a fix upstream that makes the code live shows up as a refusal.
"""

from __future__ import annotations

from harness.run.reachable import Unreachable

__all__ = ["UNREACHABLE", "unreachable"]

_TRACED = ("the decomposition module the pass builds and exports strictly (dynamo traces its forward symbolically: "
           "coverage.py's tracer never sees those lines run, whatever the graph)")

UNREACHABLE: tuple[Unreachable, ...] = (
    Unreachable(
        "executorch.exir.passes.sym_shape_eval_pass", ("nonzero", "index_Tensor"),
        "upper-bound shape rules registered in upper_bound_shape_inference_table, a dict nothing in executorch "
        "1.5.1 or torch reads (grep: its only mention is its definition); both Sym shape passes evaluate shapes "
        "through sym_util.eval_upper_bound instead"),
    Unreachable(
        "executorch.exir.passes", ("update_args",),
        "a helper no code in executorch 1.5.1 calls (grep: its only mention is its definition)"),
    Unreachable(
        "executorch.backends.vulkan._passes.tag_memory_meta_pass", ("TagMemoryMetaPass.constrain_repset_with_user",),
        "a method no code in executorch 1.5.1 calls (grep: its only mention is its definition; the pass constrains "
        "representations through its other constrain_* methods)"),
    Unreachable(
        "executorch.backends.cadence.aot.memory_constraints", ("MemConstraints.add_mem_id_to_blocklist",),
        "only Cadence's unit tests call it (grep outside */test*: its definition alone), so no memory-id blocklist is "
        "ever filled in a pass run"),
    # -- branches of a live function no program reaches (line ranges of executorch 1.5.1)
    Unreachable(
        "executorch.backends.xnnpack._passes.convert_to_upsample_bilinear2d",
        ("ConvertToUpsampleBilinear2d.create_upsample_bilinear_2d",),
        "past its early return: every pattern is the one upsample_bilinear2d.vec node export keeps whole in torch "
        "2.13 (PRESERVED_ATEN_CIA_OPS), and the pass returns when the matched node is that op (the catalog's "
        "exercised known failure)", lines=(32, 52)),
    Unreachable(
        "executorch.backends.example.example_backend_delegate_passes.merge_to_dim_pass", ("MergeToDimPass.call",),
        "past line 46, which raises wherever the guard holds: node.args[-1] is the copy's input Node, subscripted as "
        "a dict (the catalog's runs known failure); every real _to_dim_order_copy takes dtype and dim_order as "
        "keywords", lines=(47, 81)),
    Unreachable(
        "executorch.backends.cadence.aot.reorder_ops", ("HoistOpsCloserToDefPass.maybe_remove_or_replace",),
        "the quantize_per_channel branch: the pass visits only the nodes of its targets (quantize_per_tensor, "
        "cadence.quantize_per_tensor, slice_copy, select_copy), so no node it is handed is a quantize_per_channel",
        lines=(734, 746)),
    # -- run, but unmeasurable: QNN decompositions export a small torch module with torch.export(strict=True) and
    #    splice its graph in; dynamo runs the module's bytecode symbolically, so coverage.py sees none of its lines
    *(Unreachable(f"executorch.backends.qualcomm._passes.{module}", functions, _TRACED, kind="traced")
      for module, functions in (("decompose_any", ("Any.forward",)),
                                ("decompose_linalg_vector_norm", ("LinalgVectorNorm.forward",)),
                                ("decompose_pad", ("ReflectionPad3d._pad_dim", "ReflectionPad3d.forward")),
                                ("decompose_roll", ("SliceCopy.forward",)))),
)


def unreachable() -> tuple[Unreachable, ...]:
    """The declarations (the entry point's callable)."""
    return UNREACHABLE
