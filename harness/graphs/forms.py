"""The two forms of a lowered program, and which one a case is handed.

Every case comes from the case cache, and the cache stores programs with
ExecuTorch's serializer (:mod:`harness.graphs.cache`). A program that went
through a save and a load differs from the one ``to_edge`` returned in two
ways: arguments that have defaults come back as keywords (``any.dim(x, 1,
keepdim=True)`` where ``to_edge`` recorded ``any.dim(x, 1, True)``), and
every output of a multi-output op gets a ``getitem``, the unused ones too.
(A third, smaller one: the fake value of a lifted one-element constant, the
eps of an ``x + 1e-6``, no longer knows its value, ``FakeTensor.constant``.)

Both forms are real: a program loaded from a ``.pt2`` has the first, one
handed straight from ``to_edge`` to a backend has the second. Passes differ
on them (a pass reading an argument only positionally misses the keyword; a
pass asserting a batch norm has one user sees the dead getitems), so a case
may ask for the form ``to_edge`` returns by carrying the tag
:data:`AS_LOWERED`; the others keep the loaded form. Rebuilt from the loaded
program rather than kept from the lowering, so both forms come from the
cache alike, and a warm run and a cold one see the same program.
"""

from __future__ import annotations

import operator

__all__ = ["AS_LOWERED", "as_lowered", "unused_getitems"]

AS_LOWERED = "as_lowered"  # a case tag: hand its passes the program as to_edge returned it
LIFTED_PREFIX = "_lifted_tensor_constant"  # the buffers executorch's lift_constant_tensor_pass makes


def as_lowered(ep):
    """``ep`` (loaded from the cache) rewritten in place into the form ``to_edge`` returned; returns ``ep``."""
    graph = ep.graph_module.graph
    unused = set(unused_getitems(ep.graph_module))
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        if node in unused:
            graph.erase_node(node)  # the deserializer's getitem of an output nobody reads
        elif node.kwargs and hasattr(node.target, "_schema"):
            node.args, node.kwargs = _positional(node.target._schema, node.args, dict(node.kwargs))
    _restore_constant_values(ep)
    ep.graph_module.recompile()
    return ep


def unused_getitems(gm) -> list:
    """The getitems of ``gm`` nobody reads: the loaded form has one per unused output of a multi-output op."""
    return [n for n in gm.graph.nodes if n.op == "call_function" and n.target is operator.getitem and not n.users]


def _restore_constant_values(ep) -> None:
    """The fake values of lifted one-element tensor constants know their value again, as in ``to_edge``'s program
    (fake tensor mode tracks ``constant`` for the tensors a trace creates, of at most one element): a pass reading
    an eps with ``meta['val'].item()`` (Vulkan's rms_norm pattern) gets the number, not a data-dependent symbol.
    Only the constants ``lift_constant_tensor_pass`` lifted (``_lifted_tensor_constant<N>`` buffers): the
    module's own buffers (a batch norm's num_batches_tracked) never had one."""
    values = {**ep.state_dict, **ep.constants}
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    for spec in ep.graph_signature.input_specs:
        if not str(spec.target).startswith(LIFTED_PREFIX):
            continue
        node, value = placeholders.get(spec.arg.name), values.get(spec.target)
        fake = node.meta.get("val") if node is not None else None
        if (value is not None and value.numel() <= 1 and hasattr(fake, "constant") and fake.constant is None
                and tuple(fake.shape) == tuple(value.shape)):
            fake.constant = value.detach().clone()


def _positional(schema, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Keyword values of positional parameters moved into ``args`` (as far as they follow on without a gap), then
    trailing ones equal to their default dropped: the call as torch.export records one that spells out no default."""
    args = list(args)
    params = schema.arguments
    for i, param in enumerate(params):
        if param.kwarg_only or (i >= len(args) and param.name not in kwargs):
            break
        if i >= len(args):
            args.append(kwargs.pop(param.name))
    while args and _is_default(params[len(args) - 1], args[-1]):
        args.pop()
    return tuple(args), kwargs


def _is_default(param, value) -> bool:
    if not param.has_default_value():
        return False
    default = param.default_value
    if isinstance(value, (bool, int, float, str, type(None))) and type(value) is type(default):
        return value == default
    return value is None and default is None
