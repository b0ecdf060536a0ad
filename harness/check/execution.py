"""Running an ExportedProgram's graph for real, on CPU.

Several checks need a real execution: ``runnable`` (does it run),
``val_matches_execution`` (does every node produce what ``meta['val']``
claims) and ``numerics`` (does it compute what it did before the pass). They
share one recorded run on the sample inputs instead of running the graph once
each; further numeric draws run the compiled ``GraphModule`` directly.

The graph of an ExportedProgram takes its lifted parameters, buffers and
constants as leading placeholders; :func:`flat_args` rebuilds that argument
list from the program's signature, cloning state so that an in-place op in
the graph can never write into the shared case.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Optional

import torch
import torch.fx
from torch.export.graph_signature import InputKind
from torch.utils import _pytree as pytree

__all__ = ["flat_args", "describe", "RecordingInterpreter", "Execution", "execute", "input_draws"]


def flat_args(ep, user_inputs: tuple) -> list:
    """The graph module's positional arguments for ``user_inputs``."""
    leaves = list(pytree.tree_leaves(user_inputs))
    args = []
    user = iter(leaves)
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            try:
                value = next(user)
            except StopIteration:
                raise ValueError("the program takes more user inputs than the case provides") from None
            args.append(value.clone() if isinstance(value, torch.Tensor) else value)
            continue
        target = spec.target
        if target in ep.state_dict:
            value = ep.state_dict[target]
        elif target in ep.constants:
            value = ep.constants[target]
        else:
            raise KeyError(f"input {spec.arg.name} refers to {target!r}, which the program does not hold")
        args.append(value.detach().clone() if isinstance(value, torch.Tensor) else value)
    return args


def describe(value: Any) -> Any:
    """Shape/dtype of a value (recursively), recorded before later in-place ops change it."""
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), value.dtype)
    if isinstance(value, (list, tuple)):
        return tuple(describe(v) for v in value)
    if isinstance(value, (torch.SymInt, int, float, bool)) or value is None:
        return ("scalar", type(value).__name__)
    return ("other", type(value).__name__)


class RecordingInterpreter(torch.fx.Interpreter):
    """An fx Interpreter that notes what every node really produced."""

    def __init__(self, gm: torch.fx.GraphModule):
        super().__init__(gm, garbage_collect_values=True)
        self.produced: dict[str, Any] = {}

    def run_node(self, n: torch.fx.Node) -> Any:
        out = super().run_node(n)
        if n.op not in ("output",):
            self.produced[n.name] = describe(out)
        return out


@dataclass
class Execution:
    """One run of a graph: outputs (detached clones) and, when recorded, per-node values."""

    outputs: Optional[list] = None
    produced: dict = field(default_factory=dict)
    error: Optional[BaseException] = None
    traceback: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


def _clone_outputs(out: Any) -> list:
    leaves = pytree.tree_leaves(out)
    return [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in leaves]


def _shape_envs(ep) -> list:
    """The ShapeEnvs a program's symbolic sizes live in, read off its placeholders' ``meta['val']``.

    Placeholders are enough, and cheaper than every node (this runs once per execution): a symbol enters a
    program through an input's size, and a SymInt a pass left in an argument was read off a ``meta['val']``
    of the same fake mode.
    """
    envs: dict[int, Any] = {}
    for node in ep.graph_module.graph.find_nodes(op="placeholder"):
        env = getattr(getattr(node.meta.get("val"), "fake_mode", None), "shape_env", None)
        if env is not None:
            envs[id(env)] = env
    return list(envs.values())


def _guards_suppressed(ep) -> contextlib.ExitStack:
    """Run with the guards of ``ep``'s ShapeEnvs suppressed.

    A pass may leave a SymInt in a node's arguments (a size read off
    ``meta['val']``). Running that graph for real turns the SymInt into an int,
    which guards, and the guard specializes the symbol in the ShapeEnv that
    every deep copy of the case shares (a FakeTensor deep-copies into its own
    fake mode). Passgate's execution would then change the shared case and
    every later program built on it, which ``input_unchanged`` would blame on
    the pass. Suppressed, the SymInt still evaluates to its hint.
    """
    stack = contextlib.ExitStack()
    for env in _shape_envs(ep):
        stack.enter_context(env.suppress_guards())
    return stack


def execute(ep, user_inputs: tuple, record: bool = False) -> Execution:
    """Run ``ep``'s graph on ``user_inputs``; never raises, the error is in the result."""
    import traceback

    try:
        args = flat_args(ep, user_inputs)
        with torch.no_grad(), _guards_suppressed(ep):
            if record:
                interp = RecordingInterpreter(ep.graph_module)
                out = interp.run(*args)
                return Execution(_clone_outputs(out), interp.produced)
            return Execution(_clone_outputs(ep.graph_module(*args)))
    except Exception as exc:  # noqa: BLE001 - a graph that does not run is a verdict
        return Execution(error=exc, traceback=traceback.format_exc(limit=8))


# Inputs for numerics: the recorded sample, random draws, and edge values.
_EDGE_VALUES = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-3, 7.0, -0.25, 3.0])


def input_draws(sample: tuple, count: int, seed: int) -> list[tuple[str, tuple]]:
    """``count`` named input tuples shaped like ``sample``, deterministic in ``seed``.

    Draw 0 is the sample itself. Then random normals, zeros, and a pattern of
    edge values (signed zeros, +-1, small and larger magnitudes) kept small
    enough that exp/softmax stay finite. Integer inputs are drawn within the
    sample's own range (they are often indices); bools are random bits.
    """
    draws = [("sample", sample)]
    kinds = ["random", "zeros", "edge", "random"]
    for i in range(1, count):
        kind = kinds[(i - 1) % len(kinds)]
        gen = torch.Generator().manual_seed(seed * 1000 + i)
        draws.append((f"{kind}{i}", pytree.tree_map(lambda x, kind=kind, gen=gen: _draw_like(x, kind, gen), sample)))
    return draws


def _draw_like(x: Any, kind: str, gen: torch.Generator) -> Any:
    if not isinstance(x, torch.Tensor):
        return x
    if x.dtype == torch.bool:
        return torch.randint(0, 2, x.shape, generator=gen).bool()
    if not x.dtype.is_floating_point and not x.dtype.is_complex:
        if kind == "zeros":
            return torch.zeros_like(x)
        lo, hi = (int(x.min()), int(x.max())) if x.numel() else (0, 1)
        return torch.randint(lo, hi + 1, x.shape, generator=gen, dtype=x.dtype)
    if kind == "zeros":
        return torch.zeros_like(x)
    if kind == "edge":
        n = x.numel()
        reps = _EDGE_VALUES.repeat(n // len(_EDGE_VALUES) + 1)[:n]
        perm = torch.randperm(n, generator=gen)
        return reps[perm].reshape(x.shape).to(x.dtype)
    return torch.randn(x.shape, generator=gen).to(x.dtype)
