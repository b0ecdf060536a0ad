"""QuantizedEmbeddingMatch (executorch.backends.vulkan.patterns.quantized_embedding), executorch 1.5.1.

The Vulkan quantized_embedding pattern detector checks that a quantized_decomposed.embedding_4bit's weight zero
points are all zero by evaluating ``torch.all(zp_val == 0)`` on the zero-point node's meta['val'], the fake tensor
of a buffer placeholder. Converting that fake boolean to a Python bool is a data-dependent guard, so the detector
raises GuardOnDataDependentSymNode instead of matching (all-zero points) or declining (non-zero points): any
embedding_4bit given a zero-point tensor crashes FusePatternsPass, and the Vulkan partitioner's pattern detection
(get_all_fusable_subgraphs) with it. (The torchao branch of the same module avoids exactly this: its comment says
"checking the fake meta tensor here would trigger a data-dependent guard error" and checks the real tensor in the
replacement instead.)
Found while writing the hand-written fixtures/corpus/targeted_vulkan_patterns.py graph (the region was left out
of it: the crash would stop the `vulkan` pipeline on the whole graph).
This script lowers an embedding_4bit lookup with all-zero zero points (a packed 4-bit table, per-group scales)
and runs the detectors on the edge graph.
Expected: the match is found (zero points all zero), or declined; no exception.
Standalone: torch + executorch only. Exit status 1 while it reproduces.
"""
import sys

import executorch.backends.vulkan.patterns as vk_patterns
import executorch.exir.passes._quant_patterns_and_replacements  # noqa: F401  (registers embedding_4bit)
import torch
from executorch.exir import to_edge


class QuantizedEmbedding(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.register_buffer("weight", torch.randint(0, 256, (16, 32), dtype=torch.uint8, generator=g))  # 64 dims
        self.register_buffer("scales", torch.rand((16, 2), generator=g) * 0.1)
        self.register_buffer("zero_points", torch.zeros((16, 2)))

    def forward(self, ids):
        return torch.ops.quantized_decomposed.embedding_4bit.dtype(
            self.weight, self.scales, self.zero_points, -8, 7, ids, dtype=torch.float32)


ep = to_edge(torch.export.export(QuantizedEmbedding(), (torch.tensor([[1, 2]]),), strict=False)).exported_program()
try:
    matches = vk_patterns.get_all_fusable_subgraphs(ep.graph_module)
except Exception as exc:  # noqa: BLE001
    print(f"get_all_fusable_subgraphs raised {type(exc).__name__}: {str(exc).splitlines()[0]}")
    print("REPRODUCED: QuantizedEmbeddingMatch guards on the fake zero-point tensor of embedding_4bit")
    sys.exit(1)
print("matches:", [type(m).__name__ for m in matches])
print("not reproduced")
sys.exit(0)
