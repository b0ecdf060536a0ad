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
