"""Write docs/checks/: one page per check id of ``harness.core.results.CHECKS``, and their index.

Each page says what the check holds (the registry's line, then more), shows a real failure as the terminal
shows it (a capture made by ``check_examples.py``, included at build time), and says how to fix the pass.
The registry gives the ids, levels and groups; the text below gives the rest. Run it after adding a check
id (``python docs/scripts/check_pages.py``; it imports only ``harness.core``, no torch) and commit the
pages; the project's tests fail when a registry id has no page.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from harness.core.results import CHECKS  # noqa: E402  (after the checkout is on the path)

__all__ = ["PAGES", "page", "index", "main"]

OUT = ROOT / "docs" / "checks"

_META = ("Nodes the input program had keep the key; a node the pass creates gets it (copy the metadata of "
         "the node it replaces: `new.meta = dict(old.meta)`, or build nodes through `ExportPass`, whose "
         "retrace carries metadata). Which node lost it, and whether it is new, is in the message.")
_META_FIX = ("Copy the replaced node's metadata onto the new node (`new.meta.update(old.meta)`), or write "
             "the pass as an `ExportPass` whose `call_operator` builds the new node: the retrace gives it the "
             "metadata of the node being visited.")
_VK = ("Run by `passgate vulkan` and by the standard profile's Vulkan cases ([Vulkan fusion search]"
       "(../guides/vulkan.md)).")

# id -> (more on what it checks, capture name or None, how to fix the pass)
PAGES = {
    "runs": ("The pass is called on a private copy of the case, in a forked worker with a deadline "
             "(`--timeout`). An exception, a timeout, a segfault, `os.abort()`, `sys.exit()` or native code "
             "spinning with the GIL held all fail `runs`, with the traceback, the signal name or the Python "
             "stack at the moment of death; the run goes on with the next pair. Every other check of the pair "
             "is then skipped (see runs).",
             "runs",
             "Read the traceback in the message (or `details.traceback` in results.json). A pass that only "
             "applies to some graphs should say so in its `requires` hook (the case becomes `not_applicable`) "
             "or return the graph unchanged, not raise. Use `--no-isolation` to run it under a debugger."),
    "no_call_module": ("ExecuTorch programs reach other code only through `call_function`; a "
                       "`call_module` node (what `fuse_partitions` or `split_module` make) cannot be "
                       "serialized or run by the runtime.",
                       "no_call_module",
                       "Inline the submodule's nodes into the graph instead of calling it; a partitioner should "
                       "tag nodes (`delegation_tag`) and let `to_backend` lower them into delegate calls."),
    "meta_val": ("Every value-producing node carries `meta['val']` (a FakeTensor, or a tuple of them) that "
                 "later passes, the verifier and memory planning read.",
                 "meta",
                 "Create nodes through `ExportPass` (`call_operator` runs the op on fake tensors and sets "
                 "`meta['val']`), or set it yourself by running the op on the inputs' `meta['val']` under "
                 "their fake mode."),
    "val_matches_execution": ("The program is run for real on the sample inputs and each node's actual "
                              "dtype and shape are compared with what its `meta['val']` claims.",
                              "val_matches_execution",
                              "When the pass changes what a node computes (a dtype cast, a new shape), update "
                              "`meta['val']` from the new computation, not by editing the old FakeTensor."),
    "meta_stack_trace": (_META, "meta", _META_FIX),
    "meta_nn_module_stack": (_META, "meta", _META_FIX),
    "meta_debug_handle": (_META + " `debug_handle` is what ties runtime profiles back to source.", "meta",
                          _META_FIX),
    "graph_lint": ("`torch.fx.Graph.lint()`: nodes in topological order, every argument a node of this "
                   "graph, unique names, targets that exist.",
                   "graph_lint",
                   "Insert new nodes with `graph.inserting_before(user)` / `inserting_after(producer)`, never "
                   "move a node after one of its users, and erase a node only after "
                   "`replace_all_uses_with`."),
    "signature": ("The `ExportedProgram`'s graph signature (inputs, outputs, buffers, parameters, "
                  "mutations) matches the graph's placeholders and output node, as ExecuTorch rebuilds it "
                  "after a pass.",
                  "signature",
                  "A pass that adds or removes inputs or outputs must update the graph signature with them; "
                  "a graph-only pass should leave the placeholders and the output arity alone."),
    "verifier": ("ExecuTorch's dialect verifier (edge or ATen, as the stage requires) accepts the result: "
                 "only operators of the dialect, valid dtypes, a consistent graph.",
                 "verifier",
                 "Use operators of the stage's dialect (`exir_ops.edge.aten.*` at the edge stage, not "
                 "`torch.ops.aten.*`). When another check of the same pair failed too, fix that first: the "
                 "verifier often repeats its cause."),
    "runnable": ("The transformed program runs on CPU on the case's sample inputs.",
                 "runnable",
                 "The message has the exception the program raised; check the operands each rewritten node "
                 "gets (shapes, dtypes, argument order) against the operator's schema."),
    "numerics": ("The outputs of the program after the pass match the program before it, within tolerance, "
                 "on the sample inputs and on drawn ones. Judged only for passes that preserve semantics (the "
                 "default); a pass declared `passgate_semantics = \"changing\"` skips it.",
                 "numerics",
                 "Find the rewrite that changes the meaning: the message names the output and the error; "
                 "`passgate check --graphs random` shrinks a failing random graph to the smallest one. If "
                 "the pass changes meaning on purpose (a quantization, a precision change), declare it "
                 "`passgate_semantics = \"changing\"`."),
    "ensures": ("The pass's own `ensures(graph_module)` hook (torch.fx `PassBase`) holds after it ran: the "
                "pass is judged against its own promise.",
                "ensures",
                "Either the pass misses cases its hook promises (the message says which), or the hook "
                "promises more than the pass does."),
    "input_unchanged": ("The program handed to the pass, and the shared case it was copied from, are left as "
                        "they were when the pass returns a new program. A pass that both edits its input and "
                        "returns a copy breaks callers that keep the input (verify-each, bisection, a pass "
                        "manager that falls back).",
                        "input_unchanged",
                        "Either edit the graph module in place and return it, or copy it first and edit only "
                        "the copy; never both."),
    "idempotent": ("Running the pass a second time on its own output changes nothing. A pass that is not "
                   "idempotent changes a program every time a pipeline runs it again.",
                   "idempotent",
                   "Make the rewrite recognise its own output (match only the pattern it removes, not the one "
                   "it creates)."),
    "deterministic": ("Two runs on copies of the same input give the same graph: no dependence on object "
                      "ids, set or dict iteration order, global state or time.",
                      "deterministic",
                      "Keep no state between calls, and iterate over `graph.nodes` (ordered), not over sets of "
                      "nodes."),
    "exercised": ("Pass-level (graph `*`): at least one case made the pass change the program (ops, "
                  "structure or metadata). A pass that changes no program on any case was not tested, however "
                  "green its other checks are. What any pass does whatever it matched is not a change (the node "
                  "keys an `ExportPass` retrace rewrites, dropping getitems nobody reads). Should-level in a "
                  "run, must in a certification; an `observing` pass (a printer, an analysis) is not judged. "
                  "A catalog entry no graph can make change says why in its catalog, as a known failure, and "
                  "`tox -e coverage` lists every such entry with its reason.",
                  "exercised",
                  "Run the pass on graphs that contain what it rewrites (`--graphs` with a zoo or corpus case, "
                  "or `passgate fuzz --pass` to find one); if no graph can, record why in the catalog entry."),
    "still_exercised": ("Judged by the baseline gate, not by a run alone: `passgate baseline update` records, "
                        "per pass, the graphs on which it changed the program, and a later run where the pass "
                        "leaves one of them as handed (or no longer applies to it) is a regression, listed with "
                        "the others and failing the gate (in the conformance suite, the pair's `runs` item "
                        "fails). Every IR check holds on a program left as it was: without this a pass whose "
                        "pattern stopped matching after an edit passes the gate green. The capture: the subject "
                        "pass `ReluToClamp` recorded, then edited so its guard never matches, run with "
                        "`--baseline`.",
                        "still_exercised",
                        "If the pass should still rewrite the graph, the edit broke its matching: compare the "
                        "recorded graph with what the pass now looks for. If it is meant to leave the graph "
                        "alone now (a rewrite found unsafe there), accept it with `passgate baseline update`."),
    "fusion_expected": ("For each Q/DQ recipe, the `et_vk` op the Vulkan backend should fuse it into appears, "
                        "and the quantize / dequantize nodes it absorbs are gone; for a recipe the backend must "
                        "decline, the fusion declines it without crashing. " + _VK,
                        "fusion_expected",
                        "The message names the op expected and what was found; check the fusion's pattern "
                        "against the recipe's quantization parameters."),
    "fused_vs_qdq": ("The fused program's output matches the un-fused Q/DQ program within the recipe's "
                     "tolerance (in quantization steps, LSB). " + _VK,
                     None,
                     "The search shrinks a failing case to its smallest shape and the boundary where it starts "
                     "failing (`vulkan_errors.csv`, reproducers); compare the fused op's quantization "
                     "parameters with the Q/DQ nodes it replaced."),
    "fused_vs_float": ("The fused program's output is within its SQNR bound of the float eager model. " + _VK,
                       None,
                       "A fused op can match the Q/DQ program and still lose accuracy (a wrong rounding, a "
                       "saturated accumulator); the per-op table gives the SQNR measured against the bound."),
    "device_vs_reference": ("A plugged-in device executor (`--executor`) matches the reference execution of "
                            "the same fused program. Skipped when no device executor is given. " + _VK,
                            None,
                            "The difference is in the device's kernel, not in the fusion: the reproducer runs "
                            "the same case on both."),
    "partition_supported": ("Every node of a proposed partition is one the partitioner's operator support "
                            "accepts (for a configuration-based partitioner such as XNNPACK's: an anchor a "
                            "config accepts, or a node that config pulls in with it; getitems of an accepted "
                            "node; constant inputs). Backend partitioners are judged through the real "
                            "`to_edge_transform_and_lower`, on the tagged program before lowering consumes it; "
                            "`passgate run` judges the catalog's partitioners (Vulkan, XNNPACK).",
                            "partitions",
                            "Tag only nodes the operator support accepts; a node the partitioner pulls into a "
                            "partition must be one its backend can lower."),
    "partition_convex": ("No path leaves a partition and comes back into it; otherwise the fused delegate "
                         "would depend on its own output.",
                         "partitions",
                         "Split the partition at the node outside it, or pull that node in (when the backend "
                         "supports it)."),
    "delegate_call_only": ("The lowered program reaches each delegate only as `executorch_call_delegate("
                           "get_attr lowered_module, ...)` and holds no `call_module` at all.",
                           "partitions",
                           "Lower through `to_backend` / `to_edge_transform_and_lower`, not `fuse_partitions`; "
                           "do not read a lowered module other than through the delegate call."),
    "serialize_roundtrip": ("The edge program read back from ExecuTorch's program serde computes what it did, and "
                            "the `.pte` read back holds the execution plan emitted (docs/runtime.md).", "runtime",
                            "Keep metadata and outputs the serializers support; a serde defect is upstream's."),
    "runtime_runs": ("`EdgeProgramManager.to_executorch` makes a program, the runtime has a kernel for every op "
                     "it calls, loads it and runs `forward`; `details.failing_op` names where it stopped.", "runtime",
                     "Leave ops the portable kernels accept (dim orders they agree on, out variants that exist)."),
    "runtime_numerics": ("The runtime's outputs, two calls per draw (mutated buffers carried), match the same "
                         "program run by torch; `details.first_diverging_op` names the first op that differs.",
                         "runtime", "Start from the named op: its kernel, its memory plan, its dim order."),
    "device_numerics": ("A BundledProgram that `passgate bundle` wrote (the case lowered for portable, XNNPACK or "
                        "Vulkan, its inputs and eager's expected outputs) was run by `passgate device run` on a "
                        "named device and runtime, and `passgate device ingest` finds its outputs within the "
                        "index's tolerance: per dtype for a float case, SQNR against the Q/DQ program's float "
                        "twin for a quantized one, the comparison `runtime_numerics` uses (docs/devices.md). A "
                        "file that does not have the index's SHA-256 is an integrity error (exit 2), not a verdict.",
                        "device_numerics",
                        "Run the same bundle with the bindings here (`passgate device run` without `--runner`): "
                        "if it passes, the difference is the device's kernel or its delegate; if not, the "
                        "lowering is at fault and `runtime_numerics` names the first op that diverges."),
}

_SNIPPET = "--8<-- \"docs/checks/examples/{}.{}\""


def page(cid: str) -> str:
    info = CHECKS[cid]
    more, example, fix = PAGES[cid]
    group = {"ir": "", "pass": " (pass-level)", "vulkan": " (Vulkan)", "partition": " (partitioner)"}.get(
        info.group, f" ({info.group})")
    lines = [f"# `{cid}`", "", f"**Level:** {info.level.value}{group}. **Holds when:** {info.holds_when}.", "",
             "## What it checks", "", more, "", "## An example failure", ""]
    if example == "partitions":
        lines += ["The partitioner checks, judged by passgate's own functions on a small graph:", "",
                  "```python", _SNIPPET.format(example, "py"), "```", "", "```text",
                  _SNIPPET.format(example, "txt"), "```", ""]
    elif example:
        lines += ["```text", _SNIPPET.format(example, "txt"), "```", ""]
    else:
        lines += ["No small example ships for this check: it needs a fusion that fuses and then computes "
                  "something else, or a device executor. Its failures appear in `passgate vulkan`'s "
                  "table and `vulkan_errors.csv`.", ""]
    lines += ["## How to fix the pass", "", fix, "",
              "[All check ids](index.md) · [Reading a failure](../guides/reading-a-failure.md)", ""]
    return "\n".join(lines)


def index() -> str:
    lines = ["# Check ids", "",
             "The stable vocabulary of every report: each check on a case has one of these ids, a level "
             "(`must` fails the run; `should` warns, and fails only with `--strict`) and a status "
             "([Statuses and exit codes](../reference/statuses.md)).", "",
             "| id | level | holds when |", "| --- | --- | --- |"]
    lines += [f"| [`{c.id}`]({c.id}.md) | {c.level.value} | {c.holds_when} |" for c in CHECKS.values()]
    lines += ["", "The runtime checks `serialize_roundtrip`, `runtime_runs`, `runtime_numerics` and "
              "`device_numerics` are part of the design's vocabulary; they get a page when the registry "
              "judges them.", ""]
    return "\n".join(lines)


def main() -> int:
    missing = sorted(set(CHECKS) - set(PAGES))
    if missing:
        print(f"no page text for: {', '.join(missing)}", file=sys.stderr)
        return 1
    for cid in CHECKS:
        (OUT / f"{cid}.md").write_text(page(cid))
    (OUT / "index.md").write_text(index())
    print(f"{len(CHECKS)} pages and the index in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
