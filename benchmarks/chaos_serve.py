"""The serve soak of issue 36: ``passgate serve`` under concurrent clients, some killed mid-request, and the
server itself killed and restarted.

Clients are real ``passgate check`` processes (the client side of
:mod:`harness.serve.client`), each request one of a few pass x graph checks
whose answer was computed once beforehand with ``--no-server`` (in the
client's own process). Every answer a client finishes is compared with it
(verdict by verdict, and the exit status); a client killed mid-request gives
no answer to compare, but the server must go on. The server's resident
memory (its own, and with its request children) is sampled every second.
At the end the server is stopped and its socket folder and temporary folder
must be empty. TMPDIR points into the soak's folder, so the socket and every
temporary file the server or a client makes are where the soak looks.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks import chaos_check as check
from benchmarks.chaos_proc import children

__all__ = ["REQUESTS", "RSS_BOUND_MIB", "soak"]

ROOT = Path(__file__).resolve().parent.parent
PASSGATE = [sys.executable, "-m", "harness.cli.main"]
REQUESTS = (
    ("passes.reference:RemoveDetachPass", "mlp"),
    ("passes.reference:RemoveDetachPass", "inplace_views"),
    (str(ROOT / "tests" / "broken_passes.py") + ":RetargetAddToSub", "residual_block"),
)
RSS_BOUND_MIB = 256  # the server's RSS may grow at most this much over its warm size during the soak
CLIENT_KILL_P = 0.15


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _argv(i: int, report: Path, cache: Path) -> list:
    spec, graph = REQUESTS[i]
    return [*PASSGATE, "check", "--pass", spec, "--graphs", graph, "--report", str(report), "--cache-dir",
            str(cache), "-q"]


class _Soak:
    def __init__(self, folder: Path, cache: Path, env: dict, seed: int, log):
        self.folder, self.cache, self.env, self.log = folder, cache, env, log
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.refs: dict = {}
        self.stats = {"requests": 0, "answers": 0, "identical": 0, "different": 0, "clients_killed": 0,
                      "tracebacks": 0, "server_kills": 0, "fallbacks": 0}
        self.server = None
        self.rss = {"warm_mib": 0.0, "peak_mib": 0.0, "peak_with_children_mib": 0.0, "samples": 0}
        self.stop = threading.Event()
        self.up = threading.Event()  # clients start new requests only while a server is up (in-flight ones fall back)
        self.seq = 0

    def say(self, text: str) -> None:
        print(f"chaos serve: {text}", file=self.log, flush=True)

    def start_server(self) -> None:
        log = open(self.folder / "server.log", "ab")
        self.server = subprocess.Popen([*PASSGATE, "serve", "--foreground", "--cache-dir", str(self.cache),
                                        "--preload", "builtin", "--idle-timeout", "0"], env=self.env,
                                       stdout=log, stderr=log, start_new_session=True)
        while self.status() is None:
            if self.server.poll() is not None:
                raise RuntimeError(f"passgate serve exited with {self.server.returncode}")
            time.sleep(0.5)
        self.rss["warm_mib"] = self.rss["warm_mib"] or _rss_mib(self.server.pid)

    def status(self):
        """The server's answer to ``status`` on the soak's socket (the campaign's own TMPDIR is elsewhere)."""
        from harness.serve.protocol import PROTOCOL, connect, recv_msg, send_msg

        sock = connect(self.sock, 2.0)
        if sock is None:
            return None
        try:
            send_msg(sock, {"v": PROTOCOL, "op": "status"})
            return recv_msg(sock)[0]
        except (OSError, EOFError, ValueError):
            return None
        finally:
            sock.close()

    def reference(self) -> None:
        for i in range(len(REQUESTS)):
            report = self.folder / f"ref{i}"
            p = subprocess.run([*_argv(i, report, self.cache), "--no-server"], env=self.env, capture_output=True,
                               text=True)
            self.refs[i] = (p.returncode, check.load(report / "results.json"))

    def client(self, worker: int) -> None:
        while not self.stop.is_set():
            if not self.up.wait(1.0):
                continue
            with self.lock:
                self.seq += 1
                n, i, kill = self.seq, self.rng.randrange(len(REQUESTS)), self.rng.random() < CLIENT_KILL_P
                at = self.rng.uniform(0.2, 3.0)
            report = self.folder / "answers" / f"{n:05d}"
            p = subprocess.Popen(_argv(i, report, self.cache), env=self.env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
            if kill:
                try:
                    p.wait(at)
                except subprocess.TimeoutExpired:
                    p.kill()
            _, err = p.communicate()
            self._judge(i, p.returncode, report, err, killed=p.returncode == -signal.SIGKILL)
            shutil.rmtree(report, ignore_errors=True)

    def _judge(self, i: int, status: int, report: Path, err: str, killed: bool) -> None:
        with self.lock:
            self.stats["requests"] += 1
            self.stats["tracebacks"] += check.has_traceback(err)
            self.stats["fallbacks"] += "running without the server" in err
            if killed:
                self.stats["clients_killed"] += 1
                return
            self.stats["answers"] += 1
            ref_status, ref_doc = self.refs[i]
            same = check.compare(ref_doc, check.load(report / "results.json")).identical and status == ref_status
            self.stats["identical" if same else "different"] += 1
            if not same:
                self.say(f"request {REQUESTS[i]}: status {status} (reference {ref_status}): {err.strip()[-300:]}")

    def sample(self) -> None:
        while not self.stop.wait(1.0):
            s = self.server
            if s is None or s.poll() is not None:
                continue
            own = _rss_mib(s.pid)
            total = own + sum(_rss_mib(c) for c in children(s.pid))
            self.rss["peak_mib"] = max(self.rss["peak_mib"], own)
            self.rss["peak_with_children_mib"] = max(self.rss["peak_with_children_mib"], total)
            self.rss["samples"] += 1


def soak(seconds: float, clients: int, seed: int, shared_cache: Path, folder: Path, log) -> dict:
    """Run the soak for ``seconds`` with ``clients`` concurrent clients; its figures."""
    folder.mkdir(parents=True, exist_ok=True)
    cache, tmp = folder / "cache", folder / "tmp"
    cache.mkdir()
    tmp.mkdir()
    for entry in shared_cache.glob("*.case"):
        shutil.copy2(entry, cache / entry.name)
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "PASSGATE_FAULTS")}
    env.update(TMPDIR=str(tmp), PASSGATE_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    from harness.serve.protocol import socket_path

    s = _Soak(folder, cache, env, seed, log)
    s.clients = clients
    s.sock = tmp / f"passgate-{os.getuid()}" / socket_path(cache).name  # where the server's TMPDIR puts it
    started = time.monotonic()
    s.reference()
    s.say(f"references in {time.monotonic() - started:.0f} s; starting the server")
    s.start_server()
    s.up.set()
    s.say(f"server {s.server.pid} warm at {s.rss['warm_mib']:.0f} MiB; {clients} clients for {seconds:.0f} s")
    threads = [threading.Thread(target=s.client, args=(k,), daemon=True) for k in range(clients)]
    threads.append(threading.Thread(target=s.sample, daemon=True))
    t0 = time.monotonic()
    for t in threads:
        t.start()
    # the server is killed (SIGKILL: no clean-up of its own) halfway, and restarted at once
    s.stop.wait(seconds / 2)
    s.up.clear()
    os.killpg(s.server.pid, signal.SIGKILL)
    s.server.wait()
    s.stats["server_kills"] += 1
    s.say("server killed; restarting")
    s.start_server()
    s.up.set()
    s.stop.wait(seconds / 2)  # the second half with the restarted server (clients waited while it warmed up)
    s.stop.set()
    for t in threads:
        t.join(600)
    return _finish(s, tmp, time.monotonic() - t0)


def _finish(s: _Soak, tmp: Path, spent: float) -> dict:
    """Stop the server; what it and the clients left behind; the figures."""
    leftover_children = children(s.server.pid)
    subprocess.run([*PASSGATE, "serve", "--stop", "--cache-dir", str(s.cache)], env=s.env, capture_output=True)
    try:
        s.server.wait(60)
    except subprocess.TimeoutExpired:
        s.server.kill()
    sock = s.sock
    left = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file() or p.is_socket())
    debris = check.debris(s.cache)
    growth = s.rss["peak_mib"] - s.rss["warm_mib"]
    out = {**s.stats, "seconds": round(spent, 1), "clients": s.clients, "rss": s.rss,
           "rss_bound": f"server RSS <= warm RSS + {RSS_BOUND_MIB} MiB", "rss_growth_mib": round(growth, 1),
           "socket_left": sock.exists(), "temp_files_left": left, "cache_debris": debris,
           "children_left_at_stop": leftover_children}
    out["ok"] = (s.stats["different"] == 0 and s.stats["tracebacks"] == 0 and growth <= RSS_BOUND_MIB
                 and not out["socket_left"] and not left and not debris)
    return out
