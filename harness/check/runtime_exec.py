"""Running a ``.pte`` in the ExecuTorch runtime (the Python bindings), in a forked child.

The runtime is native code: a kernel that aborts or crashes takes the
process with it. Every runtime execution of the runtime checks therefore
happens in a forked child of the judging process (itself a forked worker
under ``passgate run`` and ``passgate check``), so an abort is a
``runtime_runs`` verdict instead of a dead run, with the last lines the
runtime wrote before it died. The child loads the program
from its bytes, runs ``forward`` ``calls`` times on one loaded module (a
mutated buffer lives in the module between calls, as on a device), and
sends back each call's outputs, or, when a kernel fails a call, the
instruction and operator the runtime logs for it; asked for them, it also
sends back every instruction's intermediate outputs, read from an ETDump
with the devtools' own parser (one ETDump run per call: the Inspector
merges runs and asserts they are equal, which a stateful program's runs are
not).

The check layer cannot import ``harness.run.forking`` (it sits above): this
is the one small fork of the check layer, with the same plain-pickle
messages and the same wording of how a child died.
"""

from __future__ import annotations

import os
import pickle
import re
import signal
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

__all__ = ["RuntimeRun", "InstructionOutput", "run_pte", "missing_kernels", "ChildDied", "in_child"]

DEBUG_BUFFER_BYTES = 64 << 20
# what the runtime logs (never raises) when a kernel fails a call: chain, instruction, operator
_FAILED_AT = re.compile(r"KernelCall failed at instruction (\d+):(\d+) in operator (\S+?): 0x")


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
    failed_at: Optional[tuple] = None  # (chain, instruction, operator) of the kernel that failed, as the runtime logs

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
    except ChildDied as exc:
        return RuntimeRun(error=f"the runtime's process {exc}", stage="child")


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
            with _runtime_log() as log:
                out = module.run_method("forward", args)
        except Exception as exc:  # noqa: BLE001
            run.error, run.stage = f"call {i + 1}: {type(exc).__name__}: {exc}", "execute"
            found = _FAILED_AT.search(log.text)
            run.failed_at = (int(found[1]), int(found[2]), found[3]) if found else None
            break
        run.outputs.append([x.clone() if hasattr(x, "clone") else x for x in out])
    if etdump:
        run.intermediates = _intermediates(module)
    return run


@dataclass
class _Log:
    text: str = ""


@contextmanager
def _runtime_log() -> Iterator[_Log]:
    """What the runtime logs while the block runs. Used in :func:`in_child`'s child, whose fd 2 and
    ``sys.stderr`` (where the bindings hand ET_LOG's lines) are the file the parent reads once the child is
    over: the log is read back from there, so what the runtime wrote before an abort reaches the parent too."""
    sys.stderr.flush()
    start, log = os.lseek(2, 0, os.SEEK_END), _Log()
    try:
        yield log
    finally:
        sys.stderr.flush()
        log.text = os.pread(2, os.lseek(2, 0, os.SEEK_END) - start, start).decode(errors="replace")


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


class ChildDied(Exception):
    """The child died (a signal, an exit in native code) or ran out of time; the message says which."""


def in_child(fn: Callable[[], Any], timeout: float) -> Any:
    """``fn()`` in a forked child; raises ChildDied when it dies or runs out of time.

    The child's fd 2 is a file this process reads when the child is over, dead or not: a runtime that
    aborts says why on its way out (an ``ET_CHECK``'s message), and that goes into ChildDied's message
    instead of being lost with the child; what it wrote is passed on to this process's stderr as before.
    ``os.fork`` rather than :mod:`multiprocessing`: the isolation pool's workers are daemonic processes, which
    multiprocessing forbids to have children."""
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    with tempfile.TemporaryFile() as said:
        pid = os.fork()
        if pid == 0:  # the child
            os.close(read_fd)
            _child_main(write_fd, fn, parent, said.fileno())
        os.close(write_fd)
        try:
            chunks, status = _collect(pid, read_fd, timeout)
        finally:
            said.seek(0)
            text = said.read().decode(errors="replace")
            if text:
                sys.stderr.write(text)
    if not chunks:
        raise ChildDied(f"died: {_describe(os.waitstatus_to_exitcode(status))}{_last_words(text)}")
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "raised":
        raise value
    return value


def _collect(pid: int, read_fd: int, timeout: float) -> tuple[list, int]:
    """What the child sent through ``read_fd`` and its wait status; the child is killed past ``timeout``."""
    import select
    import time

    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_fd], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                raise ChildDied(f"did not finish within {timeout:g} s")
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        _, status = os.waitpid(pid, 0)
    return chunks, status


def _last_words(text: str, limit: int = 400) -> str:
    """The last line a dead child wrote to stderr, for its message ("" when it wrote nothing): an aborting
    runtime's reason is the last thing it logs, after start-up lines (cpuinfo's) that say nothing of it."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return f"; it last wrote: {lines[-1][:limit]}" if lines else ""


def _describe(exitcode: Optional[int]) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"killed by {name} ({signal.strsignal(-exitcode) or name})"
    return f"exited with status {exitcode}"


def _child_main(write_fd: int, fn: Callable[[], Any], parent_pid: int, said_fd: int) -> None:
    code = 0
    try:
        import faulthandler

        # the parent says how the child died; a Python stack dumped to the terminal (pytest enables faulthandler
        # on a copy of stderr) would only show _run_here
        faulthandler.disable()
        sys.stderr.flush()
        os.dup2(said_fd, 2)
        sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")  # not a runner's capture
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # die with the parent (Linux)
        except Exception:  # noqa: BLE001
            pass
        if os.getppid() != parent_pid:
            os._exit(1)
        import torch

        torch.set_num_threads(1)  # GNU OpenMP is not fork-safe
        try:
            payload = ("ok", fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the parent
            payload = ("raised", exc)
        try:
            data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001
            data = pickle.dumps(("raised", RuntimeError(f"result not picklable: {exc}")))
        with os.fdopen(write_fd, "wb") as f:
            f.write(data)
    except BaseException:  # noqa: BLE001 - nothing may unwind into the parent's code in a forked child
        code = 1
    finally:
        os._exit(code)
