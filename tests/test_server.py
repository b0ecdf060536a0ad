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


def test_warm_case_hands_out_each_spare_copy_once_and_only_while_the_shared_case_is_unchanged(builtin_cases):
    from dataclasses import replace

    from harness.check.fingerprint import exact
    from harness.graphs.cases import GraphCase
    from harness.serve.warmup import WarmCase

    memoized = builtin_cases["mlp"]
    case = WarmCase.of(replace(memoized, edge=memoized.program("edge")))  # a shared program of its own to edit
    case.make_spares("edge", 2)
    spares = {id(p) for p in case.spares["edge"]}
    fp = lambda ep: exact(ep.graph_module, ep)  # noqa: E731
    a, b, c = case.program("edge"), case.program("edge"), case.program("edge")
    assert {id(a), id(b)} == spares and id(c) not in spares  # each spare once, then deep copies
    assert fp(a) == fp(b) == fp(c) == fp(GraphCase.program(case, "edge"))  # what a deep copy made now is
    assert case.program("export") is not case.program("export")  # no spares at that stage: deep copies

    case.make_spares("edge", 2)
    kept = list(case.spares["edge"])  # held here, so no new object can be given a dropped spare's id
    shared = case.shared("edge")
    node = next(n for n in shared.graph_module.graph.nodes if n.op == "call_function")
    node.meta["stack_trace"] = "changed by a pass that was never handed it"
    changed = case.program("edge")
    assert all(changed is not spare for spare in kept) and not case.spares["edge"]  # the spares are dropped
    assert fp(changed) == fp(shared) and fp(changed) != fp(a)  # a copy of the case as it is now


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
