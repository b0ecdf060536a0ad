"""Executors: something that runs a fused or lowered program on inputs and returns its outputs.

An executor gets a :class:`Subject` (the Q/DQ edge program, the fused
program the fusion under test produced, and the case) and one input tuple,
and returns the flat list of output tensors. Built in:

- ``reference``: runs the *fused* program on CPU, where every ``et_vk`` op
  dispatches to its CompositeExplicitAutograd implementation in
  ``executorch.backends.vulkan.custom_ops_lib``. It is how the fusion is
  exercised without a GPU, and it is *not* the truth: those implementations
  can be wrong, and checks compare against the Q/DQ program and the float
  model instead.
- ``executorch-vulkan``: lowers the *Q/DQ* program with the
  ``VulkanPartitioner`` to a ``.pte`` (the backend runs its own fusion in
  preprocess), and runs it with the ExecuTorch runtime. Available only when
  the installed runtime registers ``VulkanBackend``; executorch 1.5.1's
  pip wheel registers XnnpackBackend, QnnBackend and OpenvinoBackend only, so
  here its checks are skipped with that reason.

``--executor module:Name`` / ``file.py:Name`` plugs in a vendor's: a class
(instantiated with no arguments) or instance with ``name``, ``run(subject,
inputs) -> list[Tensor]`` and optionally ``available() -> (bool, reason)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol

import torch

__all__ = ["Subject", "Executor", "ExecutorError", "ReferenceExecutor", "registered_backends",
           "ExecutorchVulkanExecutor", "BUILTIN", "load_executor"]

@dataclass
class Subject:
    case: Any  # vulkan.cases.recipes.VulkanCase
    qdq: Any  # the un-fused Q/DQ edge ExportedProgram
    fused: Any  # what the fusion under test returned (None if it raised)
    fusion: str  # the fusion's name


class Executor(Protocol):
    name: str

    def available(self) -> tuple[bool, str]: ...

    def run(self, subject: Subject, inputs: tuple) -> list: ...


class ExecutorError(Exception):
    """The executor could not produce outputs (the message says why)."""


class ReferenceExecutor:
    name = "reference"
    is_device = False

    def available(self) -> tuple[bool, str]:
        return True, ""

    def run(self, subject: Subject, inputs: tuple) -> list:
        import executorch.backends.vulkan.custom_ops_lib  # noqa: F401 - the et_vk CPU implementations

        from harness.check.execution import execute

        if subject.fused is None:
            raise ExecutorError("there is no fused program (the fusion raised)")
        ex = execute(subject.fused, inputs)
        if not ex.ok:
            raise ExecutorError(f"{type(ex.error).__name__}: {str(ex.error).strip().splitlines()[0] if str(ex.error).strip() else ''}")
        return ex.outputs


def registered_backends() -> list[str]:
    try:
        from executorch.extension.pybindings import portable_lib

        return sorted(portable_lib._get_registered_backend_names())
    except Exception:  # noqa: BLE001 - no runtime at all: nothing is registered
        return []


class ExecutorchVulkanExecutor:
    """Lower the Q/DQ program with the VulkanPartitioner to a .pte and run it on the installed runtime."""

    name = "executorch-vulkan"
    is_device = True

    def __init__(self):
        self._modules: dict = {}

    def available(self) -> tuple[bool, str]:
        backends = registered_backends()
        if "VulkanBackend" in backends:
            return True, ""
        have = ", ".join(backends) or "none"
        return False, (f"the installed ExecuTorch runtime has no VulkanBackend registered "
                       f"(registered: {have}); build the pybindings with EXECUTORCH_BUILD_VULKAN=ON to run on a GPU")

    def _load(self, subject: Subject):
        key = subject.case.spec.key
        if key not in self._modules:
            import copy

            from executorch.backends.vulkan.partitioner.vulkan_partitioner import VulkanPartitioner
            from executorch.exir import EdgeProgramManager
            from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer

            edge = EdgeProgramManager({"forward": copy.deepcopy(subject.qdq)}, compile_config=None)
            pte = edge.to_backend(VulkanPartitioner()).to_executorch().buffer
            self._modules[key] = _load_for_executorch_from_buffer(pte)
        return self._modules[key]

    def run(self, subject: Subject, inputs: tuple) -> list:
        ok, why = self.available()
        if not ok:
            raise ExecutorError(why)
        module = self._load(subject)
        return [x.clone() if isinstance(x, torch.Tensor) else x for x in module.forward(tuple(inputs))]


BUILTIN = {"reference": ReferenceExecutor, "executorch-vulkan": ExecutorchVulkanExecutor}


def load_executor(spec: Optional[str]) -> Any:
    """``reference`` (default), ``executorch-vulkan``, or a vendor's ``module:Name`` / ``file.py:Name``."""
    from harness.core.errors import UsageError

    if not spec or spec in BUILTIN:
        return BUILTIN[spec or "reference"]()
    import inspect

    from harness.check.loading import resolve_spec  # same module/file resolution as --pass

    obj = resolve_spec(spec, "executor", "reference, executorch-vulkan, package.module:Name or path/to/file.py:Name")
    attr = spec.rpartition(":")[2]
    obj = obj() if inspect.isclass(obj) else obj
    if not callable(getattr(obj, "run", None)):
        raise UsageError(f"executor {spec} has no run(subject, inputs) method")
    if not hasattr(obj, "name"):
        obj.name = attr
    if not hasattr(obj, "available"):
        obj.available = lambda: (True, "")
    if not hasattr(obj, "is_device"):
        obj.is_device = True
    return obj
