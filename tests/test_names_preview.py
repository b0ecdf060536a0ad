"""Node names in check messages: the same set of names gives the same message, whatever order a pass made them in."""

import itertools

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from harness.check.metadata import meta_key_message, names_preview


def test_names_come_in_natural_order_whatever_the_order_given():
    names = ["copy_default_2", "copy_default_10", "copy_default", "copy_default_1", "add", "copy_default_3",
             "mul_1", "mul"]
    previews = {names_preview(list(order)) for order in itertools.islice(itertools.permutations(names), 200)}
    assert previews == {"add, copy_default, copy_default_1, copy_default_2, copy_default_3, copy_default_10 (+2 more)"}
    assert names_preview(["b", "a"]) == "a, b"
    assert names_preview([]) == ""


def test_a_pass_that_inserts_nodes_in_another_order_gets_the_same_message():
    """Two graphs whose new nodes lack stack_trace, inserted in opposite orders (as a pass iterating a set in
    two processes would): the meta_stack_trace message is the same."""

    def messages(order):
        gm = make_fx(lambda x: x + 1)(torch.ones(2))
        for n in gm.graph.nodes:
            if n.op == "call_function":
                n.meta["stack_trace"] = "here"
        anchor = next(n for n in gm.graph.nodes if n.op == "output")
        with gm.graph.inserting_before(anchor):
            for name in order:
                gm.graph.call_function(torch.ops.aten.relu.default, (next(iter(gm.graph.nodes)),), name=name)
        new = [n.name for n in gm.graph.nodes if n.op == "call_function" and "stack_trace" not in n.meta]
        return meta_key_message("stack_trace", [], new)

    a = messages(["cast_2", "cast", "cast_1"])
    b = messages(["cast_1", "cast_2", "cast"])
    assert a == b == "3 new node(s) lack stack_trace: cast, cast_1, cast_2"
