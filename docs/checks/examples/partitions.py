import types

import torch

from harness.pipelines.partitioners import delegate_call_only, judge_partitions

g = torch.fx.Graph()
x = g.placeholder("x")
a = g.call_function(torch.relu, (x,))
b = g.call_function(torch.neg, (a,))        # outside the partition, between two of its nodes
c = g.call_function(torch.add, (a, b))
g.output(c)
# a partition {relu, add} proposed by a partitioner whose operator support rejects add
for r in judge_partitions({"tag0": [a, c]}, lambda n: n.target is not torch.add, "MyPartitioner", "toy"):
    print(f"{r.check}: {r.status.value}: {r.message}")

# fuse_partitions' way of lowering: a call_module where a delegate call belongs
root = torch.nn.Module()
root.fused_0 = torch.nn.ReLU()
g = torch.fx.Graph()
x = g.placeholder("x")
g.output(g.call_module("fused_0", (x,)))
r = delegate_call_only(types.SimpleNamespace(graph_module=torch.fx.GraphModule(root, g)), "MyPartitioner", "toy")
print(f"{r.check}: {r.status.value}: {r.message}")
