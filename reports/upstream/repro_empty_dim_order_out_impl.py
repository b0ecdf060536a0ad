"""dim_order_ops._empty_dim_order.out cannot run in Python (executorch 1.5.1).

exir/passes/dim_order_ops_registry.py implements every dim-order op through _op_impl, which turns dim_order into
memory_format= and calls the ATen op. For _empty_dim_order.out that op is aten.empty.out, which rejects
memory_format together with out= ("'memory_format' argument is incompatible with 'out' tensor argument"). So a
program holding torch.empty(...) stops running in Python once ToOutVarPass made it out variants (the runtime
has its own C++ kernel). _clone_dim_order.out and _to_dim_order_copy.out, through clone.out / _to_copy.out,
accept memory_format and run.
Standalone: torch + executorch. Exit status 1 while it reproduces.
"""

import sys

import executorch.exir.passes.dim_order_ops_registry  # noqa: F401  (registers the dim_order_ops library)
import torch


def main() -> int:
    x = torch.randn(2, 4)
    torch.ops.dim_order_ops._clone_dim_order.out(x, dim_order=[0, 1], out=torch.empty(2, 4))  # runs
    try:
        torch.ops.dim_order_ops._empty_dim_order.out([2, 4], dim_order=[0, 1], out=torch.empty(2, 4))
    except RuntimeError as exc:
        print("_empty_dim_order.out raised:", exc)
        return 1
    print("_empty_dim_order.out ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
