"""PT2E quantization flows random programs go through, as registered under ``passgate.quantizers``.

Passes for quantized graphs (Q/DQ folding and fusion, the backends' quant
annotation readers) only run on quantized cases, and without this no random
draw was one: the fuzzer could not steer them, and the distilled corpus held
float graphs only. A flow turns a random program into what a backend
receives: ``export -> prepare_pt2e(quantizer) -> calibrate -> convert_pt2e ->
export``, with a real quantizer (XNNPACK's, Vulkan's).

A flow is *source text*, not a function: the text defines
``quantize(model, inputs, dynamic_shapes) -> ExportedProgram`` and is both
what a quantized random case executes and what its printed program
(``passgate graphs --show``, reproducers, the distilled corpus) contains, so
a reader's copy quantizes exactly as passgate did and stays a plain torch
program. The quantizers are content (which backend, which config), so the
engine reads them from the entry point group, as it reads graph sources;
the group's value is a :class:`PT2EFlow` or its text.
"""

from __future__ import annotations

import contextlib
import copy
import re
from dataclasses import dataclass
from functools import lru_cache

from harness.core import plugins
from harness.core.errors import UsageError
from harness.core.stability import stable

__all__ = ["HAND", "FLOW_NAME", "PT2EFlow", "pt2e", "flows", "flow", "patterns_memoized"]

HAND = "hand"  # a program that already calls the Q/DQ ops (a quantized graph rewritten as code): no flow to run
FLOW_NAME = re.compile(r"^[a-z][a-z0-9]*$")  # part of case names (``random_s0_012_qxnnpack``): letters, digits


@stable
@dataclass(frozen=True)
class PT2EFlow:
    """One registered quantization flow."""

    #: the entry point's name: the ``_q<name>`` suffix of the case names it makes
    name: str
    #: Python source defining ``quantize(model, inputs, dynamic_shapes)``, returning the re-exported quantized
    #: ``ExportedProgram``; it may assume ``torch`` is imported and must import the rest itself
    source: str
    #: one line for listings: which quantizer, which config
    description: str = ""


_PT2E = '''
def quantize(model, inputs, dynamic_shapes):
    """{doc}: export, prepare_pt2e, calibrate on the sample inputs, convert_pt2e, export again."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

{quantizer}
    with torch.no_grad():
        exported = torch.export.export(model, tuple(inputs), dynamic_shapes=dynamic_shapes, strict=False)
        prepared = prepare_pt2e(exported.module(), quantizer)
        prepared(*inputs)
        converted = convert_pt2e(prepared)
        return torch.export.export(converted, tuple(inputs), dynamic_shapes=dynamic_shapes, strict=False)
'''


def pt2e(name: str, quantizer: str, description: str) -> PT2EFlow:
    """The standard post-training flow around ``quantizer``: lines (indented 4) that import what they need and
    bind ``quantizer``. Calibrated on the sample inputs alone: a random program's inputs may be of any dtype,
    and the sample is what the case runs on."""
    return PT2EFlow(name, _PT2E.format(doc=description, quantizer=quantizer.strip("\n")), description)


@lru_cache(maxsize=None)
def flows() -> dict[str, PT2EFlow]:
    """Every registered flow by name, in entry point order (UsageError for a broken or misnamed one)."""
    out = {}
    for ep, value in plugins.load_all(plugins.QUANTIZERS, "quantizer"):
        if not FLOW_NAME.match(ep.name) or ep.name == HAND:
            raise UsageError(f"quantizer entry point {ep.name!r}: a name is lower-case letters and digits "
                             f"(and not {HAND!r})")
        value = PT2EFlow(ep.name, value) if isinstance(value, str) else value
        if not isinstance(value, PT2EFlow) or "def quantize(" not in value.source:
            raise UsageError(f"quantizer entry point {ep.name} ({ep.value}): not a PT2EFlow or source text "
                             "defining quantize(model, inputs, dynamic_shapes)")
        out[ep.name] = PT2EFlow(ep.name, value.source, value.description)
    return out


def flow(name: str) -> PT2EFlow:
    """The flow called ``name`` (UsageError naming the registered ones when there is none)."""
    known = flows()
    if name not in known:
        raise UsageError(f"unknown quantization flow {name!r}: registered: {', '.join(known) or 'none'}")
    return known[name]


# The pattern graphs PT2E exports, memoized for the life of the process (this module owns the table): pattern graph
# key (see _pattern_key) -> GraphModule. A fuzz run warms it in its parent, so the forked children inherit it.
_PATTERNS: dict = {}
# Where PT2E looks the exporter up: torchao's definition (export_utils imports it from there on every call), the
# conv-bn folds of convert_pt2e (qat_utils), XNNPACK's annotators (module attribute, function name).
_PATTERN_USERS = ("torchao.quantization.pt2e.utils", "torchao.quantization.pt2e.qat_utils",
                  "executorch.backends.xnnpack.quantizer.xnnpack_quantizer_utils")
_EXPORTER = "_get_aten_graph_module_for_pattern"


def _pattern_key(pattern, example_inputs, is_cuda, kwargs) -> tuple:
    """What a pattern graph depends on: the pattern's code and closure, the tensor arguments' shapes and dtypes
    (positional and keyword), the other arguments' values."""
    import torch

    pattern = getattr(pattern, "fn", pattern)  # torchao's WrapperModule(fn), made afresh per call
    if not hasattr(pattern, "__code__"):
        raise TypeError("not a plain function")
    cells = tuple(c.cell_contents.__code__ if callable(c.cell_contents) and hasattr(c.cell_contents, "__code__")
                  else repr(c.cell_contents) for c in (pattern.__closure__ or ()))
    def typed(x):  # a tensor argument is a placeholder of the pattern: its type counts, not its (random) values
        return (tuple(x.shape), str(x.dtype)) if isinstance(x, torch.Tensor) else repr(x)

    return (pattern.__code__, cells, tuple(map(typed, example_inputs)), bool(is_cuda),
            tuple((k, typed(v)) for k, v in sorted(kwargs.items())))


@contextlib.contextmanager
def patterns_memoized():
    """Within the block, PT2E exports each of its pattern graphs once per process, not on every call.

    ``prepare_pt2e`` with XNNPACK's quantizer and ``convert_pt2e`` on any
    program holding a batch norm (its conv-bn folds) build their patterns with
    ``_get_aten_graph_module_for_pattern``: a strict ``torch.export`` per
    pattern per call, 96 of them in one ``convert_pt2e`` (15-40 s on this
    machine) for a program whose batch norm follows no conv. The graph is a
    pure function of the pattern's code and closure and of the example inputs'
    shapes and dtypes, which key the memo; each caller gets a private copy, so
    the quantizers' logic, and the Q/DQ programs, are unchanged
    (``tests/test_vulkan_search.py`` and ``tests/test_random_quantized.py``
    compare them).
    """
    import importlib

    modules = []
    for name in _PATTERN_USERS:  # all imported before any is patched: one imported later would bind the patch
        try:
            modules.append(importlib.import_module(name))
        except ImportError:  # a backend this environment lacks: nothing of it to patch
            continue
    patched = []
    for module in modules:
        original = getattr(module, _EXPORTER, None)
        if original is None or getattr(original, "_passgate_memo", False):
            continue  # not there, or an outer block patched it already
        setattr(module, _EXPORTER, _memoized(original))
        patched.append((module, original))
    try:
        yield
    finally:
        for module, original in reversed(patched):
            setattr(module, _EXPORTER, original)


def _memoized(original):
    def memoized(pattern, example_inputs, is_cuda=False, **kwargs):
        try:
            key = _pattern_key(pattern, example_inputs, is_cuda, kwargs)
        except Exception:  # noqa: BLE001 - an unkeyable pattern is simply exported
            return original(pattern, example_inputs, is_cuda, **kwargs)
        if key not in _PATTERNS:
            _PATTERNS[key] = original(pattern, example_inputs, is_cuda, **kwargs)
        return copy.deepcopy(_PATTERNS[key])

    memoized.__wrapped__ = original
    memoized._passgate_memo = True
    return memoized
