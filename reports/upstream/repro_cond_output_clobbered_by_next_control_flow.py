"""A torch.cond result is overwritten by the next control-flow op's branch (executorch 1.5.1, to_executorch).

Memory planning (exir/memory_planning.py, the greedy default) plans every control-flow submodule on its own, from
offset 0 of mem_id 1, while the top-level graph's tensors start above the largest submodule. The emitter
(exir/emit/_emitter.py, _Emitter.output) ends each branch with a MoveCall from the branch's output EValue to the
cond's output EValue: the cond result then *is* the branch's tensor, living at offset 0. The next cond (or map /
scan) runs its own branch in the same offsets, so the first result is overwritten while the program still
returns it. Here two conds in a row: the first output comes back as the second branch's values.
Standalone: torch + executorch (its Python runtime). Exit status 1 while it reproduces.
"""

import sys

import torch
from executorch.exir import to_edge
from executorch.runtime import Runtime


class TwoConds(torch.nn.Module):
    def forward(self, z, w):
        a = torch.cond(z.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (z,))
        b = torch.cond(w.sum() > 0, lambda t: t.exp(), lambda t: t.neg(), (w,))
        return a, b


def main() -> int:
    inputs = (torch.randn(2, 3), torch.randn(2, 3))
    want = TwoConds()(*inputs)
    with torch.no_grad():
        program = to_edge(torch.export.export(TwoConds(), inputs)).to_executorch()
    gm = program.exported_program().graph_module
    for name in ("submodule_0", "submodule_2"):
        out = [n for n in getattr(gm, name).graph.nodes if n.op == "output"][0]
        spec = out.meta["spec"][0]
        print(f"{name} output: mem_id {spec.mem_id}, offset {spec.mem_offset}")
    got = Runtime.get().load_program(program.buffer).load_method("forward").execute(list(inputs))
    ok = [torch.allclose(g, e) for g, e in zip(got, want)]
    print("outputs match eager:", ok)
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
