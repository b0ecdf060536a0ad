"""executorch.exir.to_edge (_generate_edge_program in exir/program/_program.py), executorch 1.5.1.

A constant stored with a dim order that is neither contiguous nor channels-last (a transposed
or permuted buffer or parameter) that reaches a cast or a clone makes to_edge fail with
"AssertionError: Failed to map a given dim_order: [1, 0] to a torch.memory_format".
_generate_edge_program runs MemoryFormatOpsPass (after OpReplacePass, in its first loop over
`passes`, lines 822-837 of _program.py) on a graph whose placeholder meta still holds the
strided constant: for a _to_copy/clone without memory_format (preserve_format) the pass takes
the input's dim_order ([1, 0]) as the dim_order of _to_dim_order_copy/_clone_dim_order, whose
implementation (dim_order_ops_registry._op_impl -> dim_order_utils.get_memory_format) cannot map
it back to a memory format when the pass retraces the node. convert_constant_dim_order_pass,
which makes such constants contiguous, only runs later in _generate_edge_program (lines
861-864: after lift_constant_tensor_pass, before the post_op_replace_passes). Applying it to the
exported program before to_edge makes the buffer cases go through; the parameter still fails,
because that pass only normalizes ep.constants and persistent buffers, never parameters. (A
transposed example *input* fails the same way; no constant pass can help there.) Upstream's
tests call the pass directly on a model computing x + constant (no cast or clone of the
constant, no parameter), never through to_edge.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys
import traceback

import torch
from executorch.exir import to_edge
from executorch.exir.passes.convert_constant_dim_order_pass import convert_constant_dim_order_pass


class BufferCast(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.randn(4, 3).t())

    def forward(self, x):
        return x + self.b.to(torch.float16)


class BufferClone(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.randn(4, 3).t())

    def forward(self, x):
        return x + self.b.clone()


class ParamCast(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.p = torch.nn.Parameter(torch.randn(2, 3, 4).permute(2, 0, 1))

    def forward(self, x):
        return x + self.p.to(torch.float16)


def first_line(exc):
    return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"


def failing_node(exc):
    for line in str(exc).splitlines():
        if line.startswith("While executing"):
            return line.split("= call_function[target=")[1].split("]")[0].split("_ops.")[-1]
    return "?"


def raising_pass(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    names = [f"{f.filename.split('executorch/')[-1]}:{f.name}" for f in frames if "/exir/" in f.filename]
    passes = [n for n in names if "/passes/" in n or "_program.py" in n]
    return " -> ".join(dict.fromkeys(passes))


problems = []
cases = [
    (BufferCast, torch.randn(3, 4, dtype=torch.float16)),
    (BufferClone, torch.randn(3, 4)),
    (ParamCast, torch.randn(4, 2, 3, dtype=torch.float16)),
]
for model_cls, x in cases:
    model = model_cls()
    const = next(iter((dict(model.named_parameters()) | dict(model.named_buffers())).values()))
    print(f"{model_cls.__name__}: constant strides {const.stride()}, dim_order {list(const.dim_order())}")
    try:
        out = to_edge(torch.export.export(model, (x,))).exported_program().module()(x)
        print("  to_edge: ok, matches eager:", torch.allclose(out, model(x)))
    except Exception as exc:
        print(f"  to_edge: {first_line(exc)}\n    while executing {failing_node(exc)}, in {raising_pass(exc)}")
        problems.append(f"{model_cls.__name__}: to_edge raises {first_line(exc)}")
    try:
        to_edge(convert_constant_dim_order_pass(torch.export.export(model, (x,))))
        print("  convert_constant_dim_order_pass first, then to_edge: ok")
    except Exception as exc:
        print(f"  convert_constant_dim_order_pass first, then to_edge: {first_line(exc)}")
for p in problems:
    print("REPRODUCED:", p)
sys.exit(1 if problems else 0)
