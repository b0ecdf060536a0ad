"""`passgate serve`: a real server process; `passgate check` through it behaves as without it.

One server for the module (start-up is the cost: torch imports, a warm-up
check, the built-in cases memoized), on the shared test cache and a private
$XDG_RUNTIME_DIR, so no other test or developer server is touched. The
teardown stops it and kills it by pid if --stop failed: no server survives.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

EXE = [sys.executable, "-m", "harness.cli.main"]
GOOD = """\
from executorch.exir.pass_base import ExportPass


class P(ExportPass):
    pass
"""
BAD = """\
from torch.fx.passes.infra.pass_base import PassBase, PassResult


class P(PassBase):
    def call(self, gm):
        for n in gm.graph.nodes:
            if n.op == "call_function":
                n.meta.pop("val", None)
        return PassResult(gm, True)
"""


def _run(args, env, cwd=None, timeout=120):
    return subprocess.run([*EXE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _status(env) -> dict:
    r = _run(["serve", "--status"], env)
    return json.loads(r.stdout) if r.returncode == 0 else {}


@pytest.fixture(scope="module")
def served(passgate_cache, tmp_path_factory):
    runtime = tmp_path_factory.mktemp("xdg")
    os.chmod(runtime, 0o700)
    env = {**os.environ, "PASSGATE_CACHE_DIR": str(passgate_cache), "XDG_RUNTIME_DIR": str(runtime)}
    env.pop("PASSGATE_NO_SERVER", None)
    r = _run(["serve", "--preload", "builtin", "--idle-timeout", "300"], env, timeout=300)
    assert r.returncode == 0, r.stderr
    pid = _status(env)["pid"]
    try:
        yield env, pid
    finally:
        _run(["serve", "--stop"], env)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            pass
        else:  # --stop failed: never leave a server behind
            os.kill(pid, signal.SIGKILL)
            pytest.fail("passgate serve --stop left the server running")


def _norm_err(text: str) -> str:
    return re.sub(r"\d+\.\d+s", "Xs", text)


def test_check_through_server_matches_a_local_run(served, tmp_path):
    env, _ = served
    pass_file = tmp_path / "bad_pass.py"
    pass_file.write_text(BAD)
    args = ["check", "--pass", f"{pass_file}:P", "--graphs", "mlp", "--report", str(tmp_path / "r")]
    before = _status(env)["requests"]
    remote = _run(args, env)
    assert _status(env)["requests"] == before + 1  # it did go through the server
    local = _run([*args, "--no-server"], env)
    assert remote.returncode == local.returncode == 1  # meta_val violated
    assert remote.stdout == local.stdout and "meta_val" in remote.stdout
    assert _norm_err(remote.stderr) == _norm_err(local.stderr)
    assert _status(env)["requests"] == before + 1  # --no-server did not ask it


def test_opt_outs(monkeypatch):
    from harness.serve import client

    monkeypatch.delenv("PASSGATE_NO_SERVER", raising=False)
    assert client.wanted(["check", "--pass", "x:y"])
    assert not client.wanted(["check", "--pass", "x:y", "--no-server"])
    monkeypatch.setenv("PASSGATE_NO_SERVER", "1")
    assert not client.wanted(["check", "--pass", "x:y"])


def test_edited_pass_file_is_picked_up(served, tmp_path):
    env, _ = served
    pass_file = tmp_path / "my_pass.py"
    args = ["check", "--pass", f"{pass_file}:P", "--graphs", "mlp", "--report", str(tmp_path / "r"), "-q"]
    pass_file.write_text(GOOD)
    assert _run(args, env).returncode == 0
    pass_file.write_text(BAD)
    assert _run(args, env).returncode == 1
    pass_file.write_text(GOOD)
    started = time.monotonic()
    assert _run(args, env).returncode == 0
    assert time.monotonic() - started < 30


def test_socket_is_private(served):
    env, _ = served
    path = Path(_status(env)["socket"])
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and stat.S_ISSOCK(os.stat(path).st_mode)
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert os.stat(path).st_uid == os.getuid()


def test_stale_socket_falls_back_silently(passgate_cache, tmp_path, tmp_path_factory):
    from harness.serve import protocol

    runtime = tmp_path_factory.mktemp("xdg")  # short: a socket path must fit in 108 bytes
    runtime.chmod(0o700)
    env = {**os.environ, "PASSGATE_CACHE_DIR": str(passgate_cache), "XDG_RUNTIME_DIR": str(runtime)}
    env.pop("PASSGATE_NO_SERVER", None)
    old = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    try:
        path = protocol.socket_path(protocol.resolve_cache_root(str(passgate_cache)))
        assert protocol.secure_dir(path.parent, create=True)
    finally:
        if old is None:
            del os.environ["XDG_RUNTIME_DIR"]
        else:
            os.environ["XDG_RUNTIME_DIR"] = old
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))  # a socket file nobody listens on: what a killed server leaves
    dead.close()
    pass_file = tmp_path / "p.py"
    pass_file.write_text(GOOD)
    r = _run(["check", "--pass", f"{pass_file}:P", "--graphs", "mlp", "--report", str(tmp_path / "r")], env)
    assert r.returncode == 0, r.stderr
    assert "server" not in r.stderr
    assert _run(["serve", "--status"], env).returncode == 1


def test_spares_are_handed_out_once_each_and_only_while_the_shared_case_is_unchanged(builtin_cases):
    from dataclasses import replace

    from harness.check import spares
    from harness.check.fingerprint import exact

    memoized = builtin_cases["mlp"]
    case = replace(memoized, edge=memoized.program("edge"))  # a shared program of its own to edit
    assert spares.stock(case, "edge", 2) == 2 and spares.stock(case, "edge", 2) == 0  # a top-up makes none
    made = [spares.take(case, "edge"), spares.take(case, "edge")]
    assert spares.take(case, "edge") is None and spares.count(case, "edge") == 0
    fp = lambda ep: exact(ep.graph_module, ep)  # noqa: E731
    fresh = spares.fresh(case, "edge")
    assert all(fresh is not p for p in made) and made[0] is not made[1]  # each spare once, then copies made now
    assert fp(made[0]) == fp(made[1]) == fp(fresh) == fp(case.program("edge"))  # what a copy made now is
    assert spares.take(case, "export") is None  # no spares at that stage

    assert spares.stock(case, "edge", 2) == 2  # topped up
    kept = [spares.take(case, "edge")]  # held here, so no new object can be given a dropped spare's id
    shared = case.shared("edge")
    node = next(n for n in shared.graph_module.graph.nodes if n.op == "call_function")
    node.meta["stack_trace"] = "changed by a pass that was never handed it"
    changed = spares.fresh(case, "edge")
    assert changed is not kept[0] and spares.count(case, "edge") == 0  # the stale spare is dropped
    assert fp(changed) == fp(shared) and fp(changed) != fp(made[0])  # a copy of the case as it is now
    spares.drop(case)


def test_isolation_workers_take_the_spares_their_parent_made_before_forking(builtin_cases, tmp_path, monkeypatch):
    """Pairs judged in forked workers are handed the parent's spares (copy-on-write), not copies each makes."""
    from harness.check import spares
    from harness.check.loading import load_pass
    from harness.core.config import RunConfig
    from harness.graphs.cases import GraphCase
    from harness.run.isolation import Pool
    from harness.run.tasks import PairTask

    case = builtin_cases["mlp"]
    spares.drop(case)
    log = tmp_path / "copies"
    real = GraphCase.program

    def program(self, stage):  # notes which process made each copy, in a file every fork appends to
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        return real(self, stage)

    monkeypatch.setattr(GraphCase, "program", program)
    loaded = load_pass("harness.serve.warmup:warmup_pass")
    tasks = [PairTask(loaded, case, RunConfig(), group) for group in range(3)]  # three groups: three fresh forks
    results = []
    pool = Pool(tasks)
    try:
        pool.run(lambda i, rs: results.append(rs))
    finally:
        pool.close()
    assert pool.spawned == 3 and all(r.status.value not in ("error", "fail") for rs in results for r in rs)
    assert log.read_text().split() == [str(os.getpid())] * 2  # two copies, made here before the first fork
    assert spares.count(case, "edge") == 2  # still here for the forks of the next pool
    spares.drop(case)


SLOW = """\
import time

from torch.fx.passes.infra.pass_base import PassBase, PassResult


class P(PassBase):
    def call(self, gm):
        time.sleep(60)
        return PassResult(gm, False)
"""


def test_ctrl_c_reaches_the_served_run(served, tmp_path):
    env, _ = served
    pass_file = tmp_path / "slow_pass.py"
    pass_file.write_text(SLOW)
    before = _status(env)["requests"]
    proc = subprocess.Popen([*EXE, "check", "--pass", f"{pass_file}:P", "--graphs", "mlp", "--report",
                             str(tmp_path / "r")], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _status(env).get("running", 0) == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # into the pass
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert json.loads((tmp_path / "r" / "results.json").read_text())["complete"] is False
    assert _status(env)["requests"] == before + 1


def test_stop(served):
    env, pid = served
    r = _run(["serve", "--stop"], env)
    assert r.returncode == 0 and "stopped" in r.stderr
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the server is still running after --stop")
    assert _run(["serve", "--status"], env).returncode == 1
