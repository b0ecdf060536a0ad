"""A PT2E-quantized conv followed by F.pad whose result is not quantized again, lowered with the XNNPACK
partitioner, executorch 1.5.1: the program emits, then the delegate fails to initialize (error 0x1).

The XNNPACK quantizer annotates the conv but not the pad after it (nothing consumes the pad in a quantized
op), so the pad reads a dequantized tensor and gives a float one. The partitioner still takes the pad into the
delegate, and XNNPACK refuses the node it becomes: the runtime logs "Failed to create StaticConstantPad node
... with code: xnn_status_invalid_parameter", then "XNNCompiler::compileModel failed: 0x1", and load_method
raises. Symmetric and one-sided paddings fail the same way; the conv alone loads and matches eager. Found by
passgate's `runtime_runs` of the XNNPACK partitioner's lowered program on `targeted_quant_pad_dyn`.
Expected: the lowered program loads and runs (or the partitioner leaves such a pad to the portable kernels).
Standalone: torch, torchao and executorch only. Exit status 1 while it reproduces.
"""
import sys

import torch
import torch.nn.functional as F
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


class ConvPad(torch.nn.Module):
    def __init__(self, pad: bool):
        super().__init__()
        self.conv, self.pad = torch.nn.Conv2d(3, 4, 3, padding=1), pad

    def forward(self, x):
        y = self.conv(x)
        return F.pad(y, (1, 1, 2, 0)) if self.pad else y


def lowered_and_run(pad: bool):
    torch.manual_seed(0)
    model, x = ConvPad(pad).eval(), torch.randn(1, 3, 6, 6)
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(torch.export.export(model, (x,), strict=False).module(), quantizer)
    prepared(x)
    program = torch.export.export(convert_pt2e(prepared), (x,), strict=False)
    pte = to_edge_transform_and_lower(program, partitioner=[XnnpackPartitioner()]).to_executorch()
    try:
        got = Runtime.get().load_program(pte.buffer).load_method("forward").execute([x])[0]
    except RuntimeError as exc:
        return f"FAILS: {exc}"
    return f"runs, max abs err against the quantized model {float((got - program.module()(x)).abs().max()):.2e}"


conv_alone, conv_then_pad = lowered_and_run(pad=False), lowered_and_run(pad=True)
print(f"quantized conv:           {conv_alone}")
print(f"quantized conv then pad:  {conv_then_pad}")
if conv_then_pad.startswith("FAILS") and not conv_alone.startswith("FAILS"):
    print("REPRODUCED: the XNNPACK delegate holding a pad of a dequantized conv output fails to initialize")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
