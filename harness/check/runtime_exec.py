"""Running a ``.pte`` in the ExecuTorch runtime (the Python bindings), in a forked child.

The runtime is native code: a kernel that aborts or crashes takes the
process with it. Every runtime execution of the runtime checks therefore
happens in a forked child of the judging process (itself a forked worker
under ``passgate run`` and ``passgate check``), so an abort is a
``runtime_runs`` verdict instead of a dead run. The child loads the program
from its bytes, runs ``forward`` ``calls`` times on one loaded module (a
mutated buffer lives in the module between calls, as on a device), and
sends back each call's outputs; asked for them, it also sends back every
instruction's intermediate outputs, read from an ETDump with the devtools'
own parser (one ETDump run per call: the Inspector merges runs and asserts
they are equal, which a stateful program's runs are not).

The check layer cannot import ``harness.run.forking`` (it sits above): this
is the one small fork of the check layer, with the same plain-pickle
messages and the same wording of how a child died.
"""

from __future__ import annotations

import os
import pickle
import signal
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

__all__ = ["RuntimeRun", "InstructionOutput", "run_pte", "missing_kernels", "in_child"]

DEBUG_BUFFER_BYTES = 64 << 20


@dataclass
class InstructionOutput:
    """One instruction's outputs in one call, as the ETDump logged them."""

    instruction: int
    name: str
    outputs: list


@dataclass
class RuntimeRun:
    """What the runtime did with a program: per-call outputs, or where it stopped."""

    outputs: list = field(default_factory=list)  # per call: the flat list of the method's outputs
    error: str = ""  # empty: every call returned
    stage: str = ""  # load | execute | child: where it failed
    intermediates: list = field(default_factory=list)  # per call: list of InstructionOutput

    @property
    def ok(self) -> bool:
        return not self.error


def missing_kernels(operators: list[str]) -> list[str]:
    """The operators (``aten::add.out``) a program calls that this runtime registers no kernel for."""
    from executorch.extension.pybindings import portable_lib

    registered = set(portable_lib._get_operator_names())
    return sorted({op for op in operators if op not in registered})


def run_pte(buffer: bytes, inputs: tuple, calls: int = 2, etdump: bool = False, timeout: float = 120.0) -> RuntimeRun:
    """Load ``buffer`` and run ``forward`` ``calls`` times on ``inputs``, in a forked child."""
    try:
        return in_child(lambda: _run_here(buffer, inputs, calls, etdump), timeout)
    except _ChildDied as exc:
        return RuntimeRun(error=str(exc), stage="child")


def _run_here(buffer: bytes, inputs: tuple, calls: int, etdump: bool) -> RuntimeRun:
    from executorch.extension.pybindings import portable_lib

    try:
        module = portable_lib._load_for_executorch_from_buffer(
            buffer, enable_etdump=etdump, debug_buffer_size=DEBUG_BUFFER_BYTES if etdump else 0)
    except Exception as exc:  # noqa: BLE001 - a program the runtime refuses is a verdict
        return RuntimeRun(error=f"{type(exc).__name__}: {exc}", stage="load")
    run = RuntimeRun()
    for i in range(calls):
        args = tuple(x.clone() if hasattr(x, "clone") else x for x in inputs)
        try:
            out = module.run_method("forward", args)
        except Exception as exc:  # noqa: BLE001
            run.error, run.stage = f"call {i + 1}: {type(exc).__name__}: {exc}", "execute"
            break
        run.outputs.append([x.clone() if hasattr(x, "clone") else x for x in out])
    if etdump:
        run.intermediates = _intermediates(module)
    return run


def _intermediates(module) -> list:
    """Per run of the module, the intermediate outputs of each instruction, in execution order."""
    from executorch.devtools.etdump.schema_flatcc import ETDumpFlatCC
    from executorch.devtools.inspector._inspector import EventBlock
    from executorch.devtools.inspector._inspector_utils import gen_etdump_object

    with tempfile.TemporaryDirectory(prefix="passgate-etdump-") as tmp:
        dump, debug = os.path.join(tmp, "run.etdp"), os.path.join(tmp, "debug.bin")
        module.write_etdump_result_to_file(dump, debug)
        etdump = gen_etdump_object(etdump_path=dump)
        with open(debug, "rb") as f:
            output_buffer = f.read()
    per_call = []
    for run_data in etdump.run_data:
        if not run_data.events or not any(e.debug_event for e in run_data.events):
            continue  # the load's block: no instruction ran
        blocks = EventBlock._gen_from_etdump(ETDumpFlatCC(etdump.version, [run_data]), output_buffer=output_buffer)
        seen: dict[int, InstructionOutput] = {}
        for block in blocks:
            for ev in block.events:
                if ev.debug_data and ev._instruction_id is not None and ev._instruction_id not in seen:
                    outs = [x.clone() if hasattr(x, "clone") else x for x in ev.debug_data]
                    seen[ev._instruction_id] = InstructionOutput(ev._instruction_id, ev.name, outs)
        per_call.append([seen[k] for k in sorted(seen)])
    return per_call


class _ChildDied(Exception):
    pass


def in_child(fn: Callable[[], Any], timeout: float) -> Any:
    """``fn()`` in a forked child; raises _ChildDied when it dies or runs out of time."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    parent_conn, child_conn = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, name="passgate-runtime", args=(child_conn, fn, os.getpid()))
    proc.start()
    child_conn.close()
    try:
        if not parent_conn.poll(timeout):
            proc.kill()
            raise _ChildDied(f"the runtime did not finish within {timeout:g} s")
        try:
            kind, value = pickle.loads(parent_conn.recv_bytes())
        except EOFError:
            proc.join()
            raise _ChildDied(f"the runtime's process died: {_describe(proc.exitcode)}") from None
    finally:
        parent_conn.close()
        proc.join()
    if kind == "raised":
        raise value
    return value


def _describe(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name} ({signal.strsignal(-exitcode) or name})"
    return f"exited with status {exitcode}"


def _child_main(conn, fn: Callable[[], Any], parent_pid: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # die with the parent (Linux)
    except Exception:  # noqa: BLE001
        pass
    if os.getppid() != parent_pid:
        os._exit(1)
    import torch

    torch.set_num_threads(1)
    try:
        payload = ("ok", fn())
    except BaseException as exc:  # noqa: BLE001 - handed to the parent
        payload = ("raised", exc)
    try:
        conn.send_bytes(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception as exc:  # noqa: BLE001
        conn.send_bytes(pickle.dumps(("raised", RuntimeError(f"result not picklable: {exc}"))))
    conn.close()
    os._exit(0)
