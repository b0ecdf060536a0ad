"""What a pass changed: op counts, and the forms a result is compared to.

``runs`` records whether and how a pass changed the program (``details.changed``:
ops, structure, metadata only), which the pass-level ``exercised`` check and the
fuzzer read. A result is compared to forms of what the pass was handed, taken
before it ran (a pass may edit its input in place); the result's own forms are
taken at most once and shared with the rerun checks that compare the same forms.
"""

from __future__ import annotations

import copy
import functools
from collections import Counter
from dataclasses import dataclass
from typing import Optional

from harness.check import fingerprint
from harness.check.exercised import meta_form
from harness.check.metadata import snapshot
from harness.graphs.forms import unused_getitems

__all__ = ["HandedForms", "handed_forms", "ResultForms", "changed", "op_counts", "op_diff",
           "changes_text"]


@dataclass(frozen=True)
class HandedForms:
    """What ``changed`` compares a result to, taken from a program before a pass runs on it.

    Forms, not a copy: a deep copy of an ExportedProgram shares its nodes'
    metadata values (torch.fx copies each ``node.meta`` shallowly), so a pass
    that edits a ``TensorSpec`` in place would edit the "copy" too.
    """

    ops: Counter
    canonical: tuple
    meta: tuple
    meta_keys: dict  # metadata.snapshot: which META_CHECKS keys each call node carries (the meta_* checks' "before")
    # the same program without its getitems nobody reads (None: it has none), see ``changed``
    live: Optional["HandedForms"] = None


def handed_forms(ep) -> HandedForms:
    """The forms of ``ep`` as it is now: of a case's fresh input (memoized by the runner), and of the program a
    ``PassSequence`` hands its entry's own step."""
    forms = HandedForms(op_counts(ep.graph_module), fingerprint.canonical(ep), meta_form(ep),
                        snapshot(ep.graph_module))
    if not unused_getitems(ep.graph_module):
        return forms
    live = copy.deepcopy(ep)
    for node in unused_getitems(live.graph_module):
        live.graph_module.graph.erase_node(node)
    live.graph_module.recompile()
    return HandedForms(forms.ops, forms.canonical, forms.meta, forms.meta_keys, handed_forms(live))


class ResultForms:
    """The pass's result, and its two fingerprints computed at most once each.

    ``changed`` and the rerun checks (``idempotent``, ``deterministic``)
    compare the same forms of the same result; digesting every state tensor
    twice would double the cost of a check on a large model.
    """

    def __init__(self, program):
        self.program = program

    @functools.cached_property
    def canonical(self) -> tuple:
        return fingerprint.canonical(self.program)

    @functools.cached_property
    def exact(self) -> str:
        return fingerprint.exact(self.program.graph_module, self.program)


def changed(changes: dict, forms: ResultForms, handed: HandedForms) -> dict:
    """Did the pass change the program, and how: op counts, structure (names ignored), metadata only.

    Different op counts are a different structure, so the canonical forms are
    compared only when the counts are equal, and the metadata only when the
    structure is. Metadata is compared name-blind and without the keys every
    ExportPass retrace rewrites (:func:`harness.check.exercised.meta_form`):
    a pass that only re-traced the program did nothing a check could flag.
    For the same reason a result that is the handed program less the getitems
    nobody reads counts as unchanged (``ops_changed`` still lists them,
    ``changed`` says no): ExecuTorch's deserializer gives every output of a
    multi-output op one (``<node>_unused_N``), ``to_edge``'s program has none
    (:mod:`harness.graphs.forms`), and the dead-code elimination many passes
    end with (19 QNN passes) drops them whether or not the pass did its work.
    """
    what = _changed(bool(changes), forms, handed)
    if handed.live is not None and any(what.values()):
        live = _changed(bool(op_diff(handed.live.ops, op_counts(forms.program.graph_module))), forms, handed.live)
        if not any(live.values()):
            return live
    return what


def _changed(ops: bool, forms: ResultForms, handed: HandedForms) -> dict:
    try:
        structure = ops or forms.canonical != handed.canonical
        metadata = not structure and meta_form(forms.program) != handed.meta
    except Exception:  # noqa: BLE001 - an unreadable result: runnable, verifier and the reruns say why
        structure, metadata = ops, False
    return {"ops": ops, "structure": structure, "metadata": metadata}


def op_counts(gm) -> Counter:
    return Counter(_op_name(n.target) for n in gm.graph.nodes if n.op == "call_function")


def _op_name(target) -> str:
    name = str(getattr(target, "__name__", target))
    return name.split("::")[-1]


def op_diff(before: Counter, after: Counter) -> dict:
    """Ops the pass removed (negative) or added (positive), by count."""
    return {op: after[op] - before[op] for op in sorted(set(before) | set(after)) if after[op] != before[op]}


def changes_text(changes: dict) -> str:
    if not changes:
        return "no op changed"
    return " ".join(f"{'+' if d > 0 else '-'}{abs(d)} {op}" for op, d in sorted(changes.items(), key=lambda kv: kv[1]))
