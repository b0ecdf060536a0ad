"""The standard profile's Vulkan cases, committed: one per catalog recipe, each recipe's smallest shape.

The gate must be fast and stable, so it judges a fixed set of cases instead
of drawing them: these are the shapes ``recipes.cases(recipe, 1, seed=0)``
drew with hypothesis 6.170.15 (each recipe's simplest example, which is
where hypothesis starts: its smallest case), pinned so that the unit names
``reports/baseline.json`` records no longer depend on hypothesis' choice
sequence. ``tests/test_vulkan_search.py`` checks they still equal the draws.

The search (``passgate vulkan``) explores the configuration spaces around
them and finds failures those smallest shapes miss (asymmetric or per-tensor
weights, an ``alpha``, output channels not a multiple of 4). Its shrunk
failures on executorch 1.5.1 (:data:`SHRUNK_FILE`, written by ``passgate
vulkan --save-shrunk``) are committed like a distilled corpus: the gate
replays each under the fusion that failed it (:func:`shrunk_cases`), so a
fix or a regression of a defect the search found shows in the gate without
the gate searching. The file is read, never re-drawn; it changes only when
someone re-runs the search and commits the result.

The case file's reader and writer (:func:`load_cases`, :func:`save_cases`)
live here, beside the committed file: ``--replay``, ``--save-shrunk`` and
the gate use one format, and the command calls down to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SEED", "SHRUNK_FILE", "STANDARD", "Shrunk", "load_cases", "save_cases", "shrunk_cases", "standard_cases"]

SEED = 0

# the search's shrunk failures on the executorch version passgate pins (pyproject.toml)
SHRUNK_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "vulkan_cases" / "executorch-1.5.1.json"

# (recipe name, shape): case seed 0, as recipes.cases(recipe, 1, 0) makes it
STANDARD: tuple = (
    ("linear_q4gsw[torchao-int4-sym]", {'G': 4, 'K': 4, 'N': 1, 'lead': [1], 'bias': False}),
    ("linear_dq8ca_q4gsw[torchao-8da4w]", {'G': 4, 'K': 4, 'N': 1, 'lead': [1], 'bias': False}),
    ("linear_qcs4w[vulkan-w4]", {'K': 2, 'N': 1, 'lead': [1], 'bias': False}),
    ("weight_int8pack_mm[vulkan-w8]", {'K': 2, 'N': 1, 'lead': [1], 'bias': False}),
    ("linear_q8ta_q8csw[vulkan-static-in]", {'K': 4, 'N': 1, 'lead': [1], 'bias': False}),
    ("linear_q8ta_q8csw[hand]", {'K': 4, 'N': 1, 'lead': [1], 'bias': False}),
    ("q8ta_linear[xnnpack]", {'K': 4, 'N': 1, 'lead': [2], 'bias': False}),
    ("q8ta_linear[vulkan-static-io]", {'K': 4, 'N': 1, 'lead': [2], 'bias': False}),
    ("q8ta_linear_gemv[xnnpack]", {'K': 4, 'N': 1, 'lead': [1], 'bias': False}),
    ("q8ta_conv2d[xnnpack]", {'C_in': 1, 'C_out': 2, 'k': 2, 'stride': 1, 'padding': 0, 'dilation': 1, 'groups': 1, 'H': 3, 'W': 3, 'bias': False}),
    ("q8ta_conv2d_pw[xnnpack]", {'C_in': 1, 'C_out': 2, 'k': 1, 'stride': 1, 'padding': 0, 'dilation': 1, 'groups': 1, 'H': 3, 'W': 3, 'bias': False}),
    ("q8ta_conv2d_dw[xnnpack]", {'C_in': 4, 'C_out': 4, 'k': 3, 'stride': 1, 'padding': 0, 'dilation': 1, 'groups': 4, 'H': 3, 'W': 3, 'bias': False}),
    ("q8ta_conv2d_transposed[xnnpack]", {'C_in': 1, 'C_out': 1, 'k': 2, 'stride': 1, 'padding': 0, 'dilation': 1, 'groups': 1, 'transposed': True, 'H': 3, 'W': 3, 'bias': False}),
    ("q8ta_add[xnnpack]", {'shape': [1, 1, 1, 1], 'relu': False}),
    ("q8ta_relu[hand]", {'shape': [1, 1, 1, 1], 's_in': 0.02, 'zp_in': 0, 's_out': 0.03, 'zp_out': 0}),
    ("q8ta_pixel_shuffle[hand]", {'shape': [1, 4, 1, 1], 'r': 2, 's_in': 0.02, 'zp_in': 0, 's_out': 0.03, 'zp_out': 0}),
    ("embedding_q4gsw[torchao-int4-sym]", {'vocab': 2, 'dim': 32, 'G': 16, 'n_idx': 1}),
    ("decline:linear_q4gsw-asymmetric[torchao-int4-asym]", {'G': 4, 'K': 4, 'N': 1, 'lead': [1], 'bias': False}),
    ("decline:linear-K%4[torchao-int4-sym]", {'K': 5, 'N': 1, 'lead': [1], 'bias': False}),
    ("decline:linear-int8-per-axis[torchao-int8]", {'K': 4, 'N': 1, 'lead': [1], 'bias': False}),
    ("decline:linear-dynamic-per-tensor[vulkan-dyn8]", {'K': 4, 'N': 1, 'lead': [1], 'bias': False}),
    ("decline:conv2d_dw-C%4[xnnpack]", {'C_in': 1, 'C_out': 1, 'k': 3, 'stride': 1, 'padding': 0, 'dilation': 1, 'groups': 1, 'H': 3, 'W': 3, 'bias': False}),
    ("decline:conv2d-groups-unaligned[xnnpack]", {'C_in': 9, 'C_out': 18, 'k': 3, 'stride': 1, 'padding': 1, 'dilation': 1, 'groups': 3, 'H': 4, 'W': 8, 'bias': False}),
    ("decline:conv2d_transposed-dilated[xnnpack]", {'C_in': 1, 'C_out': 1, 'k': 2, 'stride': 1, 'padding': 0, 'dilation': 2, 'groups': 1, 'transposed': True, 'H': 3, 'W': 3, 'bias': False}),
    ("decline:q8ta_add-relu-unclamped[hand]", {'shape': [1, 1, 1, 1], 's_in': 0.02, 'zp_in': 0, 's_out': 0.03, 'zp_out': 0, 'relu': True}),
    ("decline:embedding-dim%32[torchao-int4-sym]", {'vocab': 2, 'dim': 16, 'G': 16, 'n_idx': 1}),
    ("decline:embedding-asymmetric[torchao-int4-asym]", {'vocab': 2, 'dim': 32, 'G': 16, 'n_idx': 1}),
)


def standard_cases() -> list:
    """The pinned cases as :class:`vulkan.cases.recipes.VulkanCase` objects, in catalog order."""
    from vulkan.cases import catalog, recipes

    return [recipes.case(catalog.BY_NAME[name], shape, seed=SEED) for name, shape in STANDARD]


@dataclass(frozen=True)
class Shrunk:
    """One committed shrunk failure: the fusion and check the search saw fail, where, and the case."""

    fusion: str  # vulkan.backend.fusion's built-in fusion name (vulkan-preprocess | fuse-patterns)
    op: str
    check: str  # the check the search shrunk the case for
    boundary: str  # where it stops failing (vulkan.search.boundary), as the search wrote it
    desc: Any  # vulkan.search.space.CaseDesc


def shrunk_cases(path: Path = SHRUNK_FILE) -> list[Shrunk]:
    """The committed shrunk failures, in file order.

    The descriptions come from :func:`load_cases`, the very
    reader ``passgate vulkan --replay`` uses, so the gate and a replay judge
    the same cases; the fusion, check and boundary beside each come from the
    same entries (that reader keeps only the cases).
    """
    import json

    entries = json.loads(Path(path).read_text())["cases"]
    return [Shrunk(e["fusion"], e["op"], e["check"], e.get("boundary", ""), d)
            for e, d in zip(entries, load_cases(path))]


def load_cases(path) -> list:
    """The descriptions of a committed case file (``{"cases": [{"case": {...}, ...}, ...]}``)."""
    import json
    from pathlib import Path

    from harness.core.errors import UsageError
    from vulkan.search.space import from_json

    try:
        entries = json.loads(Path(path).read_text())["cases"]
        return [from_json(e["case"]) for e in entries]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--replay {path}: not a passgate Vulkan case file ({type(exc).__name__}: {exc})") from None


def save_cases(path, per_fusion: dict, made_by: str) -> None:
    """Write every shrunk failure of ``per_fusion`` (fusion name -> OpSearch list) in the format :func:`load_cases` reads."""
    import json
    from pathlib import Path

    from harness.core.io import atomic_write_bytes
    from harness.report.results_json import environment

    env = environment()
    cases = [{"fusion": name, "op": d.op, "check": d.check, "boundary": d.boundary, "case": d.case.to_json()}
             for name, searches in per_fusion.items() for r in searches for d in r.defects]
    doc = {"schema": "passgate-vulkan-cases", "executorch": env.get("executorch"), "torch": env.get("torch"),
           "made_by": made_by,
           "cases": cases}
    atomic_write_bytes(Path(path), (json.dumps(doc, indent=1) + "\n").encode())
