"""The IR-spec checks of DESIGN.md, one function each, on the program a pass returned.

Each returns a :class:`Verdict`. They are built on what torch and ExecuTorch
already provide: ``Graph.lint``, the program's own verifiers (ExecuTorch's
edge dialect verifier at the edge stage, torch's training-IR verifier at the
export stage), and one real execution recorded by
:class:`harness.check.execution.RecordingInterpreter`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import torch
import torch.fx
from torch.export.graph_signature import ConstantArgument, InputKind

from harness.check.execution import Execution
from harness.check.metadata import META_CHECKS, meta_key_message, missing_key, names_preview, nodes_without_val
from harness.core.results import Status
from harness.graphs.memos import MEMOS

__all__ = ["Verdict", "PASS", "no_call_module", "graph_lint", "meta_val", "meta_key", "val_matches_execution",
           "dialect_verdict",
           "signature", "dialect_verifier", "CONSEQUENCES", "attribute_consequences", "runnable"]


@dataclass
class Verdict:
    status: Status
    message: str = ""
    details: dict = field(default_factory=dict)


PASS = Verdict(Status.PASS)


def no_call_module(ep) -> Verdict:
    bad = [n.name for n in ep.graph_module.graph.nodes if n.op == "call_module"]
    if bad:
        return Verdict(Status.FAIL, f"{len(bad)} call_module node(s): {names_preview(bad)}", {"nodes": bad})
    return PASS


def graph_lint(ep) -> Verdict:
    try:
        ep.graph_module.graph.lint()
    except Exception as exc:  # noqa: BLE001
        return Verdict(Status.FAIL, f"Graph.lint() failed: {exc}")
    return PASS


def meta_val(ep) -> Verdict:
    bad = nodes_without_val(ep.graph_module)
    if bad:
        return Verdict(Status.FAIL, f"{len(bad)} node(s) lack meta['val']: {names_preview(bad)}", {"nodes": bad})
    return PASS


def meta_key(check: str, before: dict, ep) -> Verdict:
    key = META_CHECKS[check]
    missing = missing_key(before, ep.graph_module, key)
    if missing is None:
        return Verdict(Status.SKIP, f"the input graph did not carry {key} on every node")
    lost, never = missing
    if lost or never:
        return Verdict(Status.FAIL, meta_key_message(key, lost, never), {"lost": lost, "new_without": never})
    return PASS


def _dim_ok(claimed: Any, actual: int) -> bool:
    if isinstance(claimed, int):
        return claimed == actual
    # A backed SymInt: its hint is the sample size we ran with. Read the hint, never int(claimed):
    # that guards, and the guard specializes the symbol in the ShapeEnv every copy of the case
    # shares (deepcopy keeps the fake mode), which then read as the pass changing the shared case.
    hint = getattr(getattr(claimed, "node", None), "hint", None)
    if hint is None:  # unbacked: nothing to compare
        return True
    return int(hint) == actual


def _upper_bound_ok(claimed: Any, actual: int) -> bool:
    """Is ``actual`` the upper bound of the symbolic dim ``claimed``? (read from the ShapeEnv's ranges: no guard)"""
    node = getattr(claimed, "node", None)
    if node is None:
        return False
    from torch.utils._sympy.value_ranges import bound_sympy

    try:
        upper = bound_sympy(node.expr, node.shape_env.var_to_range).upper
        return int(upper) == actual
    except (TypeError, ValueError, AttributeError, OverflowError):  # unbounded (int_oo) or no range
        return False


def _is_alloc(node: torch.fx.Node) -> bool:
    # ExecuTorch's memory.alloc evaluates every symbolic dim to its upper bound (exir.sym_util.eval_shape): the
    # planned buffer is upper-bound sized and the out-variant op writing into it resizes it to the real shape
    return getattr(node.target, "__module__", "") == "executorch.exir.memory" and node.target.__name__ == "alloc"


def _val_mismatch(val: Any, produced: Any, upper_bound: bool = False) -> Optional[str]:
    if isinstance(val, torch.Tensor):
        if not (isinstance(produced, tuple) and produced and produced[0] == "tensor"):
            return f"meta['val'] is a tensor, execution gave {produced[0] if produced else produced}"
        _, shape, dtype = produced
        if val.dtype != dtype:
            return f"meta['val'] says {val.dtype}, execution gave {dtype}"
        if len(val.shape) != len(shape) or not all(
                _dim_ok(c, a) or (upper_bound and _upper_bound_ok(c, a)) for c, a in zip(val.shape, shape)):
            return f"meta['val'] says shape {tuple(val.shape)}, execution gave {shape}"
        return None
    if isinstance(val, (list, tuple)):
        if not isinstance(produced, tuple) or (produced and produced[0] in ("tensor", "scalar", "other")):
            return f"meta['val'] is a sequence, execution gave {produced}"
        if len(val) != len(produced):
            return f"meta['val'] has {len(val)} items, execution gave {len(produced)}"
        for v, p in zip(val, produced):
            msg = _val_mismatch(v, p, upper_bound)
            if msg:
                return msg
    return None


def val_matches_execution(ep, execution: Execution) -> Verdict:
    if not execution.ok:
        return Verdict(Status.SKIP, "the program did not run (see runnable)")
    wrong = {}
    for node in ep.graph_module.graph.nodes:
        if node.op not in ("placeholder", "call_function") or "val" not in node.meta:
            continue
        produced = execution.produced.get(node.name)
        if produced is None:
            continue
        msg = _val_mismatch(node.meta["val"], produced, upper_bound=_is_alloc(node))
        if msg:
            wrong[node.name] = msg
    if wrong:
        first = next(iter(wrong))
        return Verdict(
            Status.FAIL,
            f"{len(wrong)} node(s) compute something other than meta['val'] claims; {first}: {wrong[first]}",
            {"nodes": wrong},
        )
    return PASS


def _spec_output(arg) -> Optional[str]:
    """What an output spec says the graph returns: a node's name, or a constant as the output node holds it.

    A returned Python int is a ``ConstantArgument`` whose name is '' (its value is what the graph returns), so
    comparing names alone failed every program that returns a constant."""
    if isinstance(arg, ConstantArgument):
        return repr(arg.value)
    return getattr(arg, "name", None)


def signature(ep, fold_error: Optional[str] = None) -> Verdict:
    if fold_error:
        return Verdict(Status.FAIL, f"the signature could not be rebuilt from the graph: {fold_error}")
    gm = ep.graph_module
    sig = ep.graph_signature
    placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    spec_inputs = [getattr(s.arg, "name", None) for s in sig.input_specs]
    if placeholders != spec_inputs:
        return Verdict(Status.FAIL, f"placeholders {placeholders} do not match the signature's inputs {spec_inputs}")
    output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    returned = [getattr(a, "name", repr(a)) for a in torch.utils._pytree.tree_leaves(output.args[0])]
    spec_outputs = [_spec_output(s.arg) for s in sig.output_specs]
    if len(returned) != len(spec_outputs) or any(exp not in (None, r) for exp, r in zip(spec_outputs, returned)):
        return Verdict(Status.FAIL, f"outputs {returned} do not match the signature's outputs {spec_outputs}")
    for s in sig.input_specs:
        if s.kind in (InputKind.PARAMETER, InputKind.BUFFER) and s.target not in ep.state_dict and s.target not in ep.constants:
            return Verdict(Status.FAIL, f"{s.kind.name.lower()} {s.target!r} is in the signature but not in the program")
        if s.kind == InputKind.CONSTANT_TENSOR and s.target not in ep.constants:
            return Verdict(Status.FAIL, f"constant {s.target!r} is in the signature but not in the program")
    return PASS


def dialect_verifier(ep) -> Verdict:
    verifiers = _verifiers_for(ep)
    try:
        for verifier in verifiers:
            verifier().check(ep)
    except Exception as exc:  # noqa: BLE001 - SpecViolationError and friends
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Verdict(Status.FAIL, f"{type(exc).__name__}: {first}", {"verifiers": [v.__name__ for v in verifiers]})
    return PASS


def dialect_verdict(res, entry_program=None, replica: Optional[tuple] = None) -> Verdict:
    """The ``verifier`` check of a pass's result.

    ``replica``: the memo key (case, stage, exact fingerprint) when the result is an exact replica of the
    program the pass was handed: that program's verdict, judged once per case and shared by every pass that
    changed nothing (most passes on most cases; the verifier was a fifth of the check time). Sound on the
    premise ``input_unchanged`` trusts: equal exact fingerprints (names, targets, arguments, metadata, state,
    signature) are equal programs, for a verifier as for a rerun.

    ``entry_program``: what an entry run after prerequisites was handed; a violation that program already has
    (same message) is theirs (e.g. the aten.linear AddmmToLinearTransform makes), judged under their own
    entries: ``skip`` here. A violation of its own still fails the entry."""
    if replica is not None and entry_program is None:
        if replica not in MEMOS.handed_verdicts:
            MEMOS.handed_verdicts[replica] = dialect_verifier(res)
        v = MEMOS.handed_verdicts[replica]
        return Verdict(v.status, v.message, dict(v.details))
    verdict = dialect_verifier(res)
    if verdict.status is not Status.FAIL or entry_program is None:
        return verdict
    before = dialect_verifier(entry_program)
    if before.status is Status.FAIL and before.message == verdict.message:
        return Verdict(Status.SKIP, f"the program its prerequisites handed it already fails: {verdict.message}")
    return verdict


def _verifiers_for(ep) -> list:
    """The verifiers ``ep``'s result answers to: its own, except a core-ATen program holding edge ops.

    ``to_edge`` runs its ATen-to-edge passes (``OpReplacePass``, ...) on a
    core-ATen program and then verifies the result with the edge dialect
    verifier it swaps in; the ATen verifier the program still carries rejects
    every edge op by design. So does passgate, for a result of a core-ATen
    case (the joint training program) that holds edge ops. A training-IR
    program keeps its own verifier: ``to_edge`` would decompose it first.
    """
    verifiers = list(ep.verifiers)
    if not any(getattr(v, "dialect", "") == "ATEN" for v in verifiers) or not _holds_edge_ops(ep):
        return verifiers
    from harness.graphs.cases import edge_verifier

    return [edge_verifier(True, ())]  # to_edge's default config: IR validity checked, no op preserved


def _holds_edge_ops(ep) -> bool:
    from executorch.exir.dialects.edge._ops import EdgeOpOverload

    return any(isinstance(n.target, EdgeOpOverload) for n in ep.graph.nodes if n.op == "call_function")


# A broad check that fails for a reason a specific check already reports is a
# consequence, not a second finding: (broad check, specific check, pattern of
# the broad check's message). One root cause, one failing check id.
CONSEQUENCES: tuple[tuple[str, str, str], ...] = (
    ("verifier", "no_call_module", r"call_module"),
    ("verifier", "meta_val", r"missing val|has no val|meta\[.val.\]"),
)


def attribute_consequences(results: list) -> None:
    """Turn failures explained by a more specific failing check into skips naming it."""
    import re

    failing = {r.check for r in results if r.status is Status.FAIL}
    for r in results:
        if r.status is not Status.FAIL:
            continue
        for broad, specific, pattern in CONSEQUENCES:
            if r.check == broad and specific in failing and re.search(pattern, r.message):
                r.details = {**r.details, "explained_by": specific, "original_status": "fail"}
                r.message = f"explained by {specific}: {r.message}"
                r.status = Status.SKIP
                break


def runnable(execution: Execution) -> Verdict:
    if execution.ok:
        return PASS
    first = str(execution.error).strip().splitlines()[0] if str(execution.error).strip() else ""
    return Verdict(
        Status.FAIL,
        f"running the program on the sample inputs raised {type(execution.error).__name__}: {first}",
        {"traceback": execution.traceback},
    )
