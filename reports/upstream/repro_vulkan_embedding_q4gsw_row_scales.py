"""et_vk.embedding_q4gsw (executorch.backends.vulkan.custom_ops_lib) fed by the quantized_embedding pattern,
executorch 1.5.1.

ExecuTorch llama's EmbeddingQuantHandler with group_size 0 (one group per row, export_llama's `-E 4,0`) stores the
4-bit table's scales as a 1-D tensor [vocab] (QuantizedGroupEmbedding squeezes them). The Vulkan quantized_embedding
pattern accepts the lookup and replaces it with et_vk.embedding_q4gsw(weight, scales, group_size=embed_dim, ...),
counting 1-D scales as one group per row. The op's implementation (the CPU reference, also what fake-tensor
propagation runs) reshapes 1-D scales with ``weight_scales.reshape(1, 1, 1)``, as if there were one scale for the
whole table: with more than one row it raises, so FusePatternsPass fails when it re-traces the fused graph
(ExportPass) and the `vulkan` pipeline stops there.
Found while writing the hand-written fixtures/corpus/targeted_vulkan_patterns.py graph (the region was left out
of it: the crash would stop the `vulkan` pipeline on the whole graph).
This script quantizes an nn.Embedding(16, 64) with EmbeddingQuantHandler(bitwidth=4, group_size=0, packed=True),
lowers it with to_edge and runs FusePatternsPass.
Expected: the fused program runs and matches the quantized lookup (scales reshaped to (vocab, 1, 1)).
Standalone: torch + executorch (+ torchao, which the handler uses). Exit status 1 while it reproduces.
"""
import sys

import torch
from executorch.backends.vulkan._passes.fuse_patterns import FusePatternsPass
from executorch.examples.models.llama.source_transformation.quantize import EmbeddingQuantHandler
from executorch.exir import to_edge

torch.manual_seed(0)
holder = torch.nn.Module()
holder.emb = torch.nn.Embedding(16, 64)
EmbeddingQuantHandler(holder, bitwidth=4, group_size=0, packed=True).quantized_model()
model = holder.emb.eval()
print("scales shape:", tuple(model.scales.shape))
ids = torch.tensor([[1, 5, 9]])
expected = model(ids)
ep = to_edge(torch.export.export(model, (ids,), strict=False)).exported_program()
fuse = FusePatternsPass()
fuse._exported_program = ep
try:
    gm = fuse(ep.graph_module).graph_module
except Exception as exc:  # noqa: BLE001
    print(f"FusePatternsPass raised {type(exc).__name__}: {str(exc).splitlines()[0]}")
    print("REPRODUCED: et_vk.embedding_q4gsw reshapes per-row (1-D) scales to (1, 1, 1)")
    sys.exit(1)
out = gm(ids)[0]
if not torch.allclose(out.float(), expected.float(), atol=1e-3):
    print("REPRODUCED: the fused lookup differs from the quantized one")
    sys.exit(1)
print("not reproduced")
sys.exit(0)
