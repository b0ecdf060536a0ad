"""reinplace_pass writes in place into a tensor the program returns.

exir/passes/reinplace.py (reinplace_pass) walks the graph backwards and reinplaces an op when its mutated
argument is not read by any *later call_function* node (`seen_nodes`); the output node is not a call_function,
so the values it returns are never recorded as read later. An op reading a returned tensor is then rewritten
to overwrite it: here `y = x * 2; return y, y.index_put((i,), v)` becomes index_put_(y, ...), and the first
output comes back with the put applied. The same holds for the default op set (only index_put), so
`to_executorch(ExecutorchBackendConfig(run_reinplace_pass=True))` returns the wrong first output at runtime.
Exits 1 while the bug reproduces, 0 once fixed.
"""

import sys

import torch
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.passes.reinplace import reinplace_pass


class Program(torch.nn.Module):
    def forward(self, x, i, v):
        y = x * 2.0
        return y, y.index_put((i,), v)


def main() -> int:
    inputs = (torch.randn(5, 3), torch.tensor([1, 4]), torch.ones(2, 3))
    want = Program()(*inputs)
    with torch.no_grad():
        edge = to_edge(torch.export.export(Program(), inputs))

    ep = reinplace_pass(edge.exported_program())  # default ops_to_inplace: {index_put}
    got = ep.module()(*inputs)
    wrong = not torch.equal(got[0], want[0])
    print("reinplace_pass, eager: first output", "overwritten" if wrong else "intact")

    try:
        from executorch.runtime import Runtime

        with torch.no_grad():
            edge = to_edge(torch.export.export(Program(), inputs))
        et = edge.to_executorch(ExecutorchBackendConfig(run_reinplace_pass=True))
        method = Runtime.get().load_program(et.buffer).load_method("forward")
        out = method.execute(list(inputs))
        rt_wrong = not torch.allclose(out[0], want[0])
        print("to_executorch(run_reinplace_pass=True), runtime: first output", "wrong" if rt_wrong else "right")
        wrong = wrong or rt_wrong
    except ImportError:
        pass
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
