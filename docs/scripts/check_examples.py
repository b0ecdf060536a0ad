"""Capture what ``passgate check`` prints for each check id's example broken pass (docs/checks/examples/).

Each page of docs/checks/ includes the capture of a real run: a small broken pass
(``tests/broken_passes.py`` or ``docs/examples/broken_more.py``) on one built-in graph.
Run from the checkout with passgate installed (``.tox/py/bin/python docs/scripts/check_examples.py``),
then commit the captures; ``tox -e docs`` only reads them. Each run happens in a temporary folder
holding the pass file as ``my_pass.py``, so the captures name no machine's paths; torch's own log lines
(a fake-tensor kernel's traceback on stderr) are left out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["EXAMPLES", "COMMANDS", "PYTHON", "capture", "main"]

ROOT = Path(__file__).resolve().parents[2]
# torch's own log lines (glog style, e.g. a fake-tensor kernel's traceback): noise here, and they name paths
_TORCH_LOG = re.compile(r"^[EWI]\d{4} ")
OUT = ROOT / "docs" / "checks" / "examples"
TESTS = ROOT / "tests" / "broken_passes.py"
MORE = ROOT / "docs" / "examples" / "broken_more.py"

# capture name -> (pass file, pass name, graph, extra arguments)
EXAMPLES = {
    "runs": (MORE, "ReadsMissingQuantAttrs", "conv_bn_relu", []),
    "no_call_module": (TESTS, "MoveIntoSubmodule", "conv_bn_relu", []),
    "meta": (TESTS, "RawCallFunctionNoMeta", "conv_bn_relu", []),
    "val_matches_execution": (TESTS, "ClaimFloat16", "conv_bn_relu", []),
    "graph_lint": (MORE, "MovesReluToTheEnd", "residual_block", []),
    "signature": (MORE, "ReturnsAnExtraOutput", "conv_bn_relu", []),
    "verifier": (MORE, "PutsBackAtenRelu", "conv_bn_relu", []),
    "runnable": (MORE, "CallsMmOnAnAdd", "residual_block", []),
    "numerics": (TESTS, "RetargetAddToSub", "residual_block", []),
    "ensures": (MORE, "PromisesNoRelu", "residual_block", []),
    "input_unchanged": (TESTS, "EditsInputReturnsCopy", "conv_bn_relu", []),
    "idempotent": (TESTS, "NeverFixedPoint", "conv_bn_relu", ["--strict"]),
    "deterministic": (MORE, "RewritesEveryOtherCall", "conv_bn_relu", ["--strict"]),
    "exercised": (MORE, "LooksForHardtanh", "conv_bn_relu", ["--strict"]),
}

# capture name -> a whole command line (checks another command judges)
COMMANDS = {
    # a fusion the recipe expects, on a case where the built-in fusion must decline and crashes instead
    "fusion_expected": ["vulkan", "--ops", "decline:conv2d_dw", "--count", "1", "--mode", "fuse-patterns", "-j", "1"],
}

# capture name -> a Python file of docs/checks/examples run with passgate's own functions: checks no small
# `passgate check` reaches (a partitioner's proposal is judged inside `passgate run`, on the catalog's backend
# partitioners). The file is the page's code and what runs: one text, not a copy here.
PYTHON = {"partitions": OUT / "partitions.py"}


def _capture_python(name: str) -> str:
    proc = subprocess.run([sys.executable, str(PYTHON[name])], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    shown = proc.stdout.rstrip().splitlines()  # stderr: torch's and torchao's loading noise
    return "\n".join([f"$ python {name}.py", *shown]) + "\n"


def capture(name: str, passgate: str) -> str:
    """Run one example in a temporary folder; the command, its output and its exit status as one text."""
    if name in PYTHON:
        return _capture_python(name)
    with tempfile.TemporaryDirectory() as tmp:
        if name in COMMANDS:
            argv = list(COMMANDS[name])
        else:
            source, cls, graph, extra = EXAMPLES[name]
            shutil.copy(source, Path(tmp) / "my_pass.py")
            argv = ["check", "--pass", f"my_pass.py:{cls}", "--graphs", graph, "--no-server", *extra]
        env = dict(os.environ, COLUMNS="110", NO_COLOR="1")
        proc = subprocess.run([passgate, *argv, "--report", "report"], cwd=tmp, env=env, capture_output=True,
                              text=True, timeout=600)
        text = (proc.stderr + proc.stdout).replace(os.path.realpath(tmp) + "/", "").replace(tmp + "/", "")
    shown = [line for line in text.rstrip().splitlines() if not _TORCH_LOG.match(line)]
    lines = [f"$ passgate {' '.join(argv)}", *shown, "$ echo $?", str(proc.returncode)]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    passgate = shutil.which("passgate") or str(Path(sys.executable).with_name("passgate"))
    OUT.mkdir(parents=True, exist_ok=True)
    for name in argv or [*EXAMPLES, *COMMANDS, *PYTHON]:
        (OUT / f"{name}.txt").write_text(capture(name, passgate))
        print(f"{name}: {OUT / (name + '.txt')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
