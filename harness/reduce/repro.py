"""Standalone reproducers: ``repro_<id>.py`` beside the report, as MLIR and llvm-reduce leave them.

The script holds the minimal graph as plain torch code (the shrunk
program), loads the pass by its ``--pass`` SPEC (a file path made absolute,
a module looked up from the folder passgate ran in) and judges the one
failing check with passgate's own runner. It needs nothing but passgate and
its dependencies (torch, executorch), prints the graph the pass was handed
and the verdict, and exits 1 while the failure reproduces, 0 once the pass
is fixed, 2 when the pass cannot be loaded.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional

from harness.check.loading import is_file_location
from harness.core.io import atomic_write_bytes
from harness.core.results import CHECKS

__all__ = ["TEMPLATE", "loadable_spec", "repro_name", "write_repro"]

TEMPLATE = '''\
#!/usr/bin/env python3
"""Reproducer written by `passgate check`.

Pass:    {spec} (stage {stage}, semantics {semantics})
Check:   {check} ({level}: {holds})
Graph:   shrunk from random case {graph}: {before} -> {after} statements, {nodes} call_function node(s)
         at the {stage} stage
Failure: {message}

Run it on its own: python {name}
Exit status 1 while the failure reproduces, 0 once the pass is fixed, 2 if the pass cannot be loaded.
It needs only passgate and its dependencies (torch, executorch).
"""
# ---------------------------------------------------------------- the minimal graph (plain torch)
{program}

# ---------------------------------------------------------------- the pass and the check
PASS_SPEC = {spec_abs!r}
PASS_FOLDER = {folder!r}  # where `passgate check` ran: module SPECs are imported from there
CHECK = {check!r}
STAGE = {stage!r}
SEMANTICS = {semantics!r}
CHECK_SEED = {seed!r}
TIMEOUT = {timeout!r}


def main() -> int:
    import sys

    sys.path.insert(0, PASS_FOLDER)
    from harness.graphs.cache import roundtrip
    from harness.graphs.cases import CaseSpec, GraphCase, ModelInputs, export_and_lower
    from harness.core.errors import UsageError
    from harness.check.loading import load_pass
    from harness.core.quiet import silence_third_party
    from harness.core.results import Status
    from harness.check.runner import check_pass_on_case
    from harness.core.config import RunConfig

    silence_third_party()
    try:
        loaded = load_pass(PASS_SPEC, semantics=SEMANTICS, stage=STAGE)
    except UsageError as exc:
        print(f"cannot load the pass: {{exc}}", file=sys.stderr)
        return 2
    spec = CaseSpec("repro", "repro", lambda: ModelInputs(*build()), definition=__doc__ or "")
    inputs, exported, edge = export_and_lower(spec)
    case = GraphCase(spec, inputs, roundtrip(exported), roundtrip(edge))
    print(f"graph the pass is handed ({{STAGE}} stage):")
    print(case.shared(STAGE).graph_module.code.strip())
    config = RunConfig(stage=STAGE, semantics=SEMANTICS, seed=CHECK_SEED, timeout=TIMEOUT,
                       checks=frozenset({{CHECK, "runs"}}))
    results = check_pass_on_case(loaded, case, config)
    for r in results:
        print(f"{{r.check}}: {{r.status.value}} {{r.message}}".rstrip())
    failed = [r for r in results if r.check == CHECK and r.status in (Status.FAIL, Status.ERROR)]
    if failed:
        print(f"REPRODUCED: {{PASS_SPEC}} fails {{CHECK}}: {{failed[0].message}}")
        return 1
    print(f"not reproduced: {{CHECK}} holds for {{PASS_SPEC}}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
'''


def loadable_spec(spec: str) -> Optional[str]:
    """The SPEC made independent of the working folder (file paths absolute); None if it is no SPEC."""
    location, sep, attr = spec.rpartition(":")
    if not sep or not location or not attr:
        return None
    if is_file_location(location):
        return f"{os.path.abspath(location)}:{attr}"
    return spec


def repro_name(pass_name: str, check: str, graph: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9]+", "_", f"{pass_name}_{check}_{graph}").strip("_")[:100]
    return f"repro_{safe}.py"


def write_repro(folder: Path, loaded, check: str, graph: str, shrunk, config) -> Optional[Path]:
    """Write the reproducer of ``shrunk`` (a :class:`harness.reduce.shrink.Shrunk`); None when the pass has no SPEC."""

    spec_abs = loadable_spec(loaded.spec)
    if spec_abs is None:
        return None
    path = Path(folder) / repro_name(loaded.name, check, graph)
    info = CHECKS.get(check)
    message = " ".join(shrunk.result.message.split())[:300]
    text = TEMPLATE.format(
        spec=loaded.spec, spec_abs=spec_abs, folder=os.getcwd(), stage=config.stage or loaded.stage,
        semantics=config.semantics or loaded.semantics, check=check,
        level=info.level.value if info else "must", holds=info.holds_when if info else "",
        graph=graph, before=shrunk.statements_before, after=shrunk.program.size, nodes=shrunk.nodes,
        message=message.replace('"""', "'''").replace("\\", "/"), name=path.name,
        program=shrunk.program.code().strip(), seed=config.seed, timeout=config.timeout,
    )
    atomic_write_bytes(path, text.encode())
    return path
