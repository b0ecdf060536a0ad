"""quantize_per_channel with float32 scales through to_edge -> to_executorch -> the ExecuTorch runtime,
executorch 1.5.1: the runtime's process aborts (SIGABRT) instead of computing it or failing the call.

`quantized_decomposed.quantize_per_channel(x, scales, zero_points, 1, -128, 127, torch.int8)` with `scales` a
float32 tensor (what `torch.rand` and the per-channel observers give). torch's reference kernel computes it;
to_edge's verifier and to_executorch accept the program (the out variant comes from executorch.kernels.quantized,
whose kernels the runtime's Python bindings register). The runtime's quantize_per_channel.out kernel
(kernels/quantized/cpu/op_quantize.cpp) then checks `scale.scalar_type() == ScalarType::Double` with
ET_CHECK_MSG, which aborts the process: "In function quantize_per_channel_out(), assert failed
(scale.scalar_type() == ScalarType::Double): scale.scalar_type() 6 is not double type". Its sibling
dequantize_per_channel.out takes the same float32 scales and computes torch's result, and the same program with
float64 scales runs: only the dtype of the scales differs. A kernel's argument check that kills the process
(rather than failing the call with InvalidArgument, as ET_KERNEL_CHECK does) takes the application with it.
Found by passgate's runtime checks: runtime_runs of the standard profile's targeted_vulkan_qdq3 case (a linear
weight quantized per channel in the program) fails with "killed by SIGABRT".
Expected: the runtime's result equals torch's (the kernel reads float32 scales as dequantize_per_channel.out
does, or the flow casts them at to_executorch); short of that, the call fails with an error, not an abort.
Standalone: torch + executorch only. Exit status 1 while it reproduces, 0 when fixed, 2 when the control (float64
scales) does not run either (the runtime runs in a forked child).
"""
import os
import pickle
import signal
import sys

import executorch.kernels.quantized  # noqa: F401 - the quantized ops' out variants and the runtime's kernels
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401 - registers torch.ops.quantized_decomposed
from executorch.exir import to_edge
from executorch.runtime import Runtime


class QuantizePerChannel(torch.nn.Module):
    def __init__(self, scale_dtype):
        super().__init__()
        self.register_buffer("scales", torch.tensor([0.02, 0.05, 0.1], dtype=scale_dtype))
        self.register_buffer("zero_points", torch.zeros(3, dtype=torch.int64))

    def forward(self, x):
        return torch.ops.quantized_decomposed.quantize_per_channel.default(
            x, self.scales, self.zero_points, 1, -128, 127, torch.int8)


def run_in_child(buffer: bytes, x: torch.Tensor):
    """("ok", output) or ("raised", message) from a forked child, or ("died", signal name)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            out = Runtime.get().load_program(buffer).load_method("forward").execute([x])[0]
            payload = ("ok", out.clone())
        except Exception as exc:  # noqa: BLE001
            payload = ("raised", f"{type(exc).__name__}: {exc}")
        with os.fdopen(write_fd, "wb") as f:
            f.write(pickle.dumps(payload))
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return "died", signal.Signals(os.WTERMSIG(status)).name
    return pickle.loads(data)


x = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0))
verdicts = {}
for scale_dtype in (torch.float64, torch.float32):
    module = QuantizePerChannel(scale_dtype)
    expected = module(x)
    program = to_edge(torch.export.export(module, (x,), strict=False)).to_executorch()
    kind, value = run_in_child(program.buffer, x)
    ok = kind == "ok" and torch.equal(value, expected)
    print(f"scales {scale_dtype}: {kind} {'(equals torch)' if ok else value if kind != 'ok' else '(differs)'}")
    verdicts[scale_dtype] = ok
if not verdicts[torch.float64]:
    print("the control (float64 scales) does not run either: not this defect")
    sys.exit(2)
if not verdicts[torch.float32]:
    print("REPRODUCED: quantize_per_channel with float32 scales, accepted by to_executorch, does not run "
          "(the runtime's kernel aborts the process)")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
