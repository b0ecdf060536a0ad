"""QuantizeFusedConvBnBiasAtenPass (executorch.backends.transforms.quantize_fused_convbn_bias_pass), executorch 1.5.1.

After PT2E quantization of conv2d(bias=False) -> batch_norm, batch-norm folding gives the conv a float
bias. Saved and loaded with ExecuTorch's own serde (executorch.exir.serde, what passgate's case cache and
every tool that stores an ExportedProgram that way do), the call reads aten.conv2d(x, w, bias=b,
stride=...): the bias is a *keyword* argument, a valid FX node. _quantize_fused_conv_bias reads the bias
only from node.args[2]:
1. default construction: the float bias is never seen, so it stays float (the pass's whole purpose, an
   int32 bias with a dequantize, is skipped) and the pass reports the program unchanged;
2. default_zero_bias=True: the conv counts as bias-less, so the pass appends a zero bias to node.args
   while bias= is still in node.kwargs: aten.conv2d then gets its bias twice and the program no longer
   runs (RuntimeError "!argument.default_value() INTERNAL ASSERT FAILED").
Standalone: torch, torchao + executorch only. Exit status 1 while it reproduces.
"""
import copy
import sys

import torch
from executorch.backends.transforms.quantize_fused_convbn_bias_pass import QuantizeFusedConvBnBiasAtenPass
from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)
from executorch.exir.serde.serialize import deserialize, serialize
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


class ConvBN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(8)

    def forward(self, x):
        return self.bn(self.conv(x))


torch.manual_seed(0)
model = ConvBN().eval()
model.bn.running_mean.uniform_(-0.5, 0.5)
model.bn.running_var.uniform_(0.5, 1.5)
x = torch.randn(1, 3, 8, 8)


class PTQXNNPACKQuantizer(XNNPACKQuantizer):
    """XNNPACKQuantizer without its QAT-only conv+bn patterns (the graph PTQ gives is the same; faster)."""

    SUPPORTED_PATTERNS = [p for p in XNNPACKQuantizer.SUPPORTED_PATTERNS if not p.is_qat]


quantizer = PTQXNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
prepared = prepare_pt2e(torch.export.export(model, (x,), strict=False).module(), quantizer)
with torch.no_grad():
    prepared(x)
    ep = torch.export.export(convert_pt2e(prepared), (x,), strict=False)
ep = deserialize(serialize(ep))  # ExecuTorch's serde round trip: the same program, arguments by keyword
conv = next(n for n in ep.graph.nodes if n.target == torch.ops.aten.conv2d.default)
print("conv node:", conv.format_node())
problems = []
if "bias" not in conv.kwargs:
    print("(the bias is positional here: nothing to reproduce)")

plain = copy.deepcopy(ep)
result = QuantizeFusedConvBnBiasAtenPass(plain)(plain.graph_module)
bias = next(n for n in plain.graph.nodes if n.target == torch.ops.aten.conv2d.default).kwargs.get("bias")
if bias is not None and bias.op == "placeholder":
    problems.append(f"default construction: the fused float bias {bias.name} is left unquantized "
                    f"(modified={result.modified})")

zero = copy.deepcopy(ep)
QuantizeFusedConvBnBiasAtenPass(zero, default_zero_bias=True)(zero.graph_module)
conv = next(n for n in zero.graph.nodes if n.target == torch.ops.aten.conv2d.default)
print("default_zero_bias=True:", conv.format_node())
try:
    zero.module()(x)
except RuntimeError as exc:
    problems.append(f"default_zero_bias=True: the conv gets a bias twice and the program fails: "
                    f"{str(exc).splitlines()[0]}")
for p in problems:
    print("REPRODUCED:", p)
sys.exit(1 if problems else 0)
