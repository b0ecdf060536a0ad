"""Each pass x graph in a worker process: a pass that crashes or hangs is a verdict, not the end of the run.

passgate runs other people's code. An exception is caught in-process by
:func:`harness.check.invoke.run_pass`, and a Python-level hang by its SIGALRM
deadline, but nothing in-process survives ``os.abort()``, a segfault in a
native extension, ``os._exit`` or a loop in C that holds the GIL and never
lets the alarm handler run. So the pairs run in worker processes and the
parent only waits:

- workers are **forked** from the parent, which has already lowered every
  case: they start in milliseconds with the cases in memory (copy-on-write)
  instead of paying ~10 s of torch imports, and nothing is pickled on the
  way in (a task is an index into the work list both sides hold). The child
  sets ``torch.set_num_threads(1)``: GNU OpenMP is not fork-safe, and a
  forked child that enters a parallel region after the parent used the
  OpenMP pool hangs (measured here; one thread never enters one);
- a worker reports ``start`` / ``end`` around every pass call (the
  :func:`harness.check.invoke.set_watch` hook), so the parent knows when the pass
  itself is running and kills it ``timeout + grace`` seconds in: the
  in-process deadline had its chance first and gives the same message as
  without isolation;
- a worker that dies (signal or exit status) or is killed is replaced; its
  pair gets ``runs`` = fail saying what happened, with the Python stack at
  the moment of death that :mod:`faulthandler` wrote into a pipe, and every
  other check ``skip``;
- results come back as pickled :class:`CheckResult` lists and are handed on
  in the order an in-process run produces them, so reports do not depend on
  which worker finished first;
- a pair is handed copies of its case made here once, before any worker
  forked (:mod:`harness.check.spares`), not copies each worker makes for
  each pair: what every fork needs is made in the parent, like the cases;
- the work is a list of tasks (:mod:`harness.run.tasks`): pass x graph pairs,
  or for ``passgate run -j N`` whole units; a worker serves the tasks of one
  group only (one catalog entry's graphs; one unit), then a fresh fork
  takes the next group, as a ``-j 1`` run starts each group afresh.

Ctrl-C and SIGTERM are the parent's business: workers ignore SIGINT (a
terminal sends it to the whole process group) and die with the parent
(``PR_SET_PDEATHSIG``), and the parent kills them on its way out.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import select
import signal
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Optional

from harness.check import invoke
from harness.core.results import Status
from harness.graphs.memos import MEMOS
from harness.run import deps
from harness.run.forking import HARNESS_LIMIT_S, describe_exit, die_with_parent, send
from harness.run.tasks import PairTask, pair_failed

__all__ = ["grace_seconds", "pair_failed", "Pool", "run_isolated"]

_DUMP_WAIT_S = 0.5  # how long a hung worker gets to write its stack before SIGKILL

# A worker sends back the per-case memos it computed (harness.graphs.memos: reference
# outputs, shared-case fingerprints) and the parent keeps them, so the next worker
# forked (after a crash, or for the next check_all call of a catalog run) inherits
# them instead of recomputing. Keys hold id(case), which a fork preserves; the
# values were computed under the workers' thread count.

_PHASES = {
    "run": "while running the pass",
    "idempotent": "during its second run (idempotent check)",
    "deterministic": "during its run on a second copy (deterministic check)",
}


def grace_seconds(timeout: Optional[float]) -> float:
    """How long past its own deadline a pass may take before its worker is killed."""
    return min(10.0, 1.0 + 0.1 * (timeout or 0.0))


# ----------------------------------------------------------------------------- worker side


def _worker_main(conn, dump_fd: int, todo: list, parent_pid: int) -> None:
    """Loop in the forked child: receive an index, judge that task, send its results."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's handler raises; here, just die
    die_with_parent(parent_pid)
    os.set_blocking(dump_fd, False)  # a full pipe must never hang a dying process
    faulthandler.enable(file=dump_fd, all_threads=False)
    faulthandler.register(signal.SIGUSR1, file=dump_fd, all_threads=False)

    import torch

    torch.set_num_threads(1)
    known = MEMOS.mark()
    state = {"label": None, "calls": 0}

    def watch(event: str, label: str, timeout: Optional[float]) -> None:
        state["label"] = label if event == "start" else None
        state["calls"] += event == "start"
        send(conn, (event, label, timeout))

    while True:
        try:
            seq = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if seq is None:
            return
        task = todo[seq]
        invoke.set_watch(watch if task.watched else None)
        state.update(label=None, calls=0)
        rec = deps.Recorder().start() if task.config.record_deps else None
        try:
            payload = task.execute()
        except BaseException as exc:  # noqa: BLE001 - SystemExit/KeyboardInterrupt from a pass, or a harness bug
            payload = task.escaped(exc, state["label"] is not None)
        files = rec.stop() if rec is not None else None  # what the task executed (harness.run.deps)
        memo = MEMOS.added_since(known) if task.keeps_memos else {}
        try:
            send(conn, ("done", seq, payload, memo, files))
        except Exception as exc:  # noqa: BLE001 - details that do not pickle must not lose the verdicts
            send(conn, ("done", seq, task.strip(payload, exc), {}, files))


# ----------------------------------------------------------------------------- a lost worker's stack


def _clean_dump(text: str) -> str:
    """faulthandler's report, cut below the worker loop (the frames under it are the fork's) and its module list."""
    keep = []
    for line in text.splitlines():
        if line.startswith("Extension modules:") or " in _worker_main" in line:
            break
        keep.append(line)
    return "\n".join(keep).strip()


# ----------------------------------------------------------------------------- parent side


@dataclass
class _Worker:
    process: Any
    conn: Any
    dump_fd: int
    group: Any = None  # the group of tasks it serves (harness.run.tasks)
    seq: Optional[int] = None
    task_started: float = 0.0
    label: Optional[str] = None  # pass call in progress
    pass_started: float = 0.0
    pass_deadline: float = float("inf")
    calls: int = 0
    dump: bytes = b""

    def read_dump(self) -> None:
        while True:
            try:
                chunk = os.read(self.dump_fd, 65536)
            except (BlockingIOError, OSError):
                return
            if not chunk:
                return
            self.dump += chunk


class Pool:
    """Forked workers judging the tasks of ``todo`` (:mod:`harness.run.tasks`), handed on in index order.

    A worker serves one group of tasks: when the next task belongs to
    another group, an idle worker is retired and a fresh fork takes it.
    """

    def __init__(self, todo: list, workers: int = 1, grace: Optional[float] = None, timeout: Optional[float] = None):
        import multiprocessing

        self.todo = todo
        self.size = max(1, min(workers, len(todo) or 1))
        self.grace = grace_seconds(timeout) if grace is None else grace
        self.ctx = multiprocessing.get_context("fork")
        self.workers: list[_Worker] = []
        self.spawned = 0

    def _spawn(self, group) -> _Worker:
        self.ctx.active_children()  # reap workers retired earlier
        parent_conn, child_conn = self.ctx.Pipe(duplex=True)
        dump_r, dump_w = os.pipe()
        proc = self.ctx.Process(target=_worker_main, name="passgate-worker", daemon=True,
                                args=(child_conn, dump_w, self.todo, os.getpid()))
        proc.start()
        child_conn.close()
        os.close(dump_w)
        os.set_blocking(dump_r, False)
        w = _Worker(proc, parent_conn, dump_r, group=group)
        self.workers.append(w)
        self.spawned += 1
        return w

    def _retire(self, w: _Worker, kill: bool = False) -> None:
        """Stop ``w``. An idle worker is told to exit and not waited for (tearing down a forked
        copy of a torch process takes ~20 ms; the next spawn reaps it); a busy one is killed."""
        if w in self.workers:
            self.workers.remove(w)
        if not kill and w.process.is_alive():
            try:
                send(w.conn, None)
            except OSError:
                kill = True
        if kill and w.process.is_alive():
            w.process.kill()
            w.process.join(5.0)
        w.conn.close()
        os.close(w.dump_fd)

    def close(self) -> None:
        """Stop every worker: politely after a full run, at once when interrupted."""
        for w in list(self.workers):
            self._retire(w, kill=w.seq is not None)

    def run(self, deliver: Callable[[int, Any], None]) -> None:
        """Judge every task; ``deliver(index, results)`` in index order.

        Interrupted (Ctrl-C, SIGTERM), the tasks that finished behind one still running are handed on
        before the interruption goes on: nothing judged is lost."""
        from multiprocessing.connection import wait

        for task in self.todo:  # what every fork shares, made once here (spare copies of the cases)
            task.before_fork()
        pending = deque(range(len(self.todo)))
        finished: dict[int, Any] = {}
        next_out = 0
        try:
            while next_out < len(self.todo):
                self._fill(pending)
                busy = [w for w in self.workers if w.seq is not None]
                now = time.monotonic()
                limit = min([min(w.pass_deadline, w.task_started + HARNESS_LIMIT_S) for w in busy], default=now + 1)
                wait([x for w in busy for x in (w.conn, w.process.sentinel)], timeout=max(0.0, limit - now) + 0.01)
                for w in busy:
                    seq = w.seq
                    rs = self._poll(w)
                    if rs is not None:
                        finished[seq] = rs
                while next_out in finished:
                    deliver(next_out, finished.pop(next_out))
                    next_out += 1
        except BaseException:
            for seq in sorted(finished):
                deliver(seq, finished.pop(seq))
            raise

    def _fill(self, pending: deque) -> None:
        """Give idle workers the next task of their group (retire them otherwise); fork for the rest."""
        for w in list(self.workers):
            if w.seq is None and pending:
                if self.todo[pending[0]].group == w.group:
                    self._assign(w, pending.popleft(), pending)
                else:
                    self._retire(w)
        while pending and len(self.workers) < self.size:
            self._assign(self._spawn(self.todo[pending[0]].group), pending.popleft(), pending)

    def _assign(self, w: _Worker, seq: int, pending: deque) -> None:
        try:
            if not w.process.is_alive():
                raise OSError("worker gone")
            send(w.conn, seq)
        except OSError:  # died between pairs (OOM killer...): replace it, the pair goes first again
            pending.appendleft(seq)
            self._retire(w, kill=True)
            return
        w.seq, w.task_started, w.label, w.calls, w.pass_deadline = seq, time.monotonic(), None, 0, float("inf")

    def _poll(self, w: _Worker) -> Any:
        """The task's results once it is over (done, died, or killed); None while it runs."""
        dead = False
        try:
            while w.conn.poll():
                kind, *rest = pickle.loads(w.conn.recv_bytes())
                if kind == "start":
                    w.label, w.calls, w.pass_started = rest[0], w.calls + 1, time.monotonic()
                    w.pass_deadline = w.pass_started + rest[1] + self.grace if rest[1] else float("inf")
                elif kind == "end":
                    w.label, w.pass_deadline = None, float("inf")
                elif kind == "done":
                    w.seq = None
                    task = self.todo[rest[0]]
                    MEMOS.merge(rest[2])
                    if rest[3] is not None:
                        deps.note(task.record_key, rest[3])
                    if task.retires_worker(rest[1]):
                        self._retire(w)
                    return rest[1]
        except (EOFError, OSError):
            dead = True
        except Exception as exc:  # noqa: BLE001 - a message that does not unpickle: passgate's failure
            text = f"passgate could not read the worker's results: {type(exc).__name__}: {exc}"
            return self._lost(w, Status.ERROR, text, {"outcome": "harness_error"}, text, kill=True)
        if dead or not w.process.is_alive():
            w.process.join(5.0)
            how, details = describe_exit(w.process.exitcode)
            return self._lost(w, None, f"the interpreter died {self._phase(w)}: {how}", details,
                              f"the child process died: {how}")
        now = time.monotonic()
        if now > w.pass_deadline:
            spent = now - w.pass_started
            timeout = w.pass_deadline - w.pass_started - self.grace
            msg = (f"the pass timed out: it did not return within {timeout:g} s and did not answer the in-process "
                   f"deadline (stuck in native code or holding the GIL); passgate killed its worker after "
                   f"{spent:.1f} s {self._phase(w)}")
            return self._lost(w, Status.FAIL, msg, {"outcome": "timeout", "killed_after_s": round(spent, 1)}, msg,
                              kill=True)
        if now > w.task_started + HARNESS_LIMIT_S:
            return self._lost(w, Status.ERROR, f"passgate spent over {HARNESS_LIMIT_S:g} s checking this pair "
                              f"outside the pass {self._phase(w)}; its worker was killed", {"outcome": "harness_error"},
                              f"did not finish within {HARNESS_LIMIT_S:g} s", kill=True)
        return None

    def _phase(self, w: _Worker) -> str:
        if w.label is not None:
            return _PHASES.get(w.label, f"during pass call {w.label!r}")
        if w.calls:
            return "after the pass returned, while passgate checked its result"
        return "before the pass ran, while passgate prepared its input"

    def _lost(self, w: _Worker, status: Optional[Status], message: str, details: dict, cause: str,
              kill: bool = False) -> Any:
        """Retire a worker whose task cannot finish; results that say why."""
        if kill and w.process.is_alive():
            os.kill(w.process.pid, signal.SIGUSR1)  # faulthandler: the Python stack where it is stuck
            select.select([w.dump_fd], [], [], _DUMP_WAIT_S)
            time.sleep(0.05)
        if status is None:  # died on its own: the pass's fault unless the pass never started
            status = Status.FAIL if w.calls or w.label else Status.ERROR
            details["outcome"] = "crashed" if status is Status.FAIL else "harness_error"
        seconds = time.monotonic() - (w.pass_started if w.label else w.task_started)
        task = self.todo[w.seq]
        in_pass = w.label == "run" or (w.label is None and not w.calls)
        w.process.kill() if w.process.is_alive() else None
        w.process.join(5.0)
        w.read_dump()
        stack = _clean_dump(w.dump.decode("utf-8", "replace"))
        if stack:
            details["traceback"] = stack
        details["phase"] = w.label or ("checking" if w.calls else "preparing")
        self._retire(w, kill=True)
        skip = "the pass did not run" if in_pass else "not checked: the worker process was lost"
        return task.lost(message, details, status, skip, seconds, cause)


def run_isolated(todo: list, config, deliver: Callable[[int, list], None], workers: int = 1,
                 grace: Optional[float] = None) -> int:
    """Check each ``(loaded_pass, case)`` of ``todo`` in worker processes; returns how many were forked."""
    if not todo:
        return 0
    pool = Pool([PairTask(loaded, case, config) for loaded, case in todo], workers, grace, config.timeout)
    try:
        pool.run(deliver)
    finally:
        pool.close()
    return pool.spawned
