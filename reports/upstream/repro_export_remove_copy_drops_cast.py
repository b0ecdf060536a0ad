"""_remove_unnecessary_copy_op_pass (torch/export/exported_program.py, called at the end of
_decompose_and_get_gm_with_new_signature_constants, i.e. by ExportedProgram.run_decompositions
and so by executorch.exir.to_edge), torch 2.13.0.

A model that writes a buffer in place from a tensor of another dtype or a smaller (broadcast)
shape, self.buf.copy_(x), and then reads the buffer. Functionalization turns the write into
buf_new = aten.copy(buf, x) (which casts x to buf's dtype and broadcasts it to buf's shape);
since buf_new is also the BUFFER_MUTATION output, the pass "removes the unnecessary copy" by
replacing every use of aten.copy(buf, x) with x itself, without checking that x has buf's dtype
and shape. The forward then computes on the uncast x: a bfloat16 buffer read back after
copy_(float32) gives float32 unrounded values, a (2, 4) buffer filled from a (4,) tensor gives
a (4,) result. torch.export.export itself is right (its module() matches eager); the program
after run_decompositions() -- also with an empty table, run_decompositions({}) -- and after
to_edge is wrong; with the pass replaced by a no-op, run_decompositions() keeps
aten.copy(b_buf, x) and the result is bfloat16 again. The pass was written for the copy_ that
unlifting appends for a mutated buffer (same dtype and shape by construction, pytorch#134801)
and cannot tell a user's own copy_ from it (as noted in the closed pytorch#144762; executorch#7515
reports a related symptom of the same pass); a test that mutates a buffer from a tensor of the
same dtype and shape cannot show the difference.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.exir import to_edge


class CastInto(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(4, dtype=torch.bfloat16))

    def forward(self, x):
        self.buf.copy_(x)
        return self.buf * 2


class BroadcastInto(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(2, 4))

    def forward(self, x):
        self.buf.copy_(x)
        return self.buf + 0


def describe(out):
    return f"{out.dtype} {tuple(out.shape)} {[round(v, 6) for v in out.flatten().tolist()]}"


STAGES = ("export", "run_decompositions({})", "run_decompositions()", "to_edge")


def program_after(stage, model_cls, x):
    ep = torch.export.export(model_cls(), (x,))
    if stage == "run_decompositions({})":
        return ep.run_decompositions({})
    if stage == "run_decompositions()":
        return ep.run_decompositions()
    if stage == "to_edge":
        return to_edge(ep).exported_program()
    return ep


problems = []
x = torch.tensor([1.001, 2.003, 3.0007, 0.1234567])
for model_cls in (CastInto, BroadcastInto):
    expected = model_cls()(x)
    print(f"{model_cls.__name__} eager:", describe(expected))
    for stage in STAGES:
        ep = program_after(stage, model_cls, x)
        out = ep.module()(x)
        same = out.dtype == expected.dtype and out.shape == expected.shape and torch.equal(out, expected)
        print(f"  {stage}: {describe(out)}{'' if same else '   <- differs from eager'}")
        if not same:
            problems.append(f"{model_cls.__name__} after {stage}: {out.dtype} {tuple(out.shape)} instead of "
                            f"{expected.dtype} {tuple(expected.shape)}")
        if stage == "run_decompositions({})":
            print("    graph:", " | ".join(ep.graph_module.code.strip().splitlines()[1:]).replace("    ", ""))
for p in problems:
    print("REPRODUCED:", p)
sys.exit(1 if problems else 0)
