"""The fault layer of harness/core/io.py and the campaign's judging (benchmarks/chaos*.py), without torch.

A fault must strike the write it names and only that one, leave the old
file in place (ENOSPC, EIO, a SIGKILL mid-write), and the campaign's checks
must see a torn file, a changed verdict and a wrong cache hit when there is
one: a judge that cannot fail proves nothing.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from benchmarks import chaos, chaos_check
from benchmarks.chaos_trials import FAULTS
from harness.core import io


@pytest.fixture(autouse=True)
def _fresh_counts(monkeypatch):
    io._seen.clear()
    monkeypatch.delenv(io.FAULTS_ENV, raising=False)
    monkeypatch.delenv(io.FAULTS_LOG_ENV, raising=False)


def test_parse_fault_reads_the_spec_and_names_what_is_wrong():
    assert io.parse_fault("7:enospc@*/results.json#2") == io.Fault(7, "enospc", "*/results.json", 2)
    assert io.parse_fault("0:kill@*.case").nth == 1
    assert io.parse_fault("0:erofs@/c/*#*").nth is None
    for bad in ("enospc@x", "1:melt@x", "1:eio@", "1:eio@x#two", "x:eio@y"):
        with pytest.raises(ValueError, match="SEED:KIND@GLOB"):
            io.parse_fault(bad)


def test_enospc_strikes_the_nth_matching_write_and_keeps_the_old_file(tmp_path, monkeypatch):
    target, other = tmp_path / "results.json", tmp_path / "summary.md"
    target.write_bytes(b"old")
    monkeypatch.setenv(io.FAULTS_ENV, f"3:enospc@{tmp_path}/results.json#2")
    monkeypatch.setenv(io.FAULTS_LOG_ENV, str(tmp_path / "struck.log"))
    io.atomic_write_bytes(other, b"not matched")
    io.atomic_write_bytes(target, b"first")  # the first matching write goes through
    with pytest.raises(OSError) as exc:
        io.atomic_write_bytes(target, b"second" * 1000)
    assert exc.value.errno == 28 and exc.value.filename == str(target)
    assert target.read_bytes() == b"first" and other.read_bytes() == b"not matched"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json", "struck.log", "summary.md"]  # no .tmp
    assert (tmp_path / "struck.log").read_text() == f"enospc {target}\n"
    io.atomic_write_bytes(target, b"third")  # only the second one
    assert target.read_bytes() == b"third"


def test_every_write_fails_with_hash_star(tmp_path, monkeypatch):
    monkeypatch.setenv(io.FAULTS_ENV, f"0:erofs@{tmp_path}/cache/*#*")
    for name in ("a.case", "verdicts/units/b.json"):
        with pytest.raises(OSError, match="Read-only file system"):
            io.atomic_write_bytes(tmp_path / "cache" / name, b"x")
    io.atomic_write_bytes(tmp_path / "report.html", b"elsewhere")
    assert (tmp_path / "report.html").read_bytes() == b"elsewhere"


def test_kill_mid_write_leaves_the_old_file_whole(tmp_path):
    """A SIGKILL to the writer's process group after part of the data: the old file stays, the part is a .tmp."""
    target = tmp_path / "baseline.json"
    target.write_bytes(b'{"old": true}')
    new = json.dumps({"new": list(range(1000))}).encode()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.environ[io.FAULTS_ENV] = f"5:kill@{target}"
        try:
            io.atomic_write_bytes(target, new)
        finally:
            os._exit(3)  # not reached when the fault strikes
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == -signal.SIGKILL
    assert json.loads(target.read_bytes()) == {"old": True}
    left = chaos_check.debris(tmp_path)
    assert len(left) == 1 and os.path.getsize(left[0]) < len(new)  # cut short, never the whole new file
    assert chaos_check.corrupt_files(tmp_path) == []  # the campaign does not mistake the .tmp for the file


def test_unset_layer_writes_normally(tmp_path):
    io.atomic_write_bytes(tmp_path / "a" / "b.json", b"{}")
    assert (tmp_path / "a" / "b.json").read_bytes() == b"{}" and io._seen == {}


def test_corrupt_files_sees_torn_json_xml_html_and_case(tmp_path):
    (tmp_path / "results.json").write_text('{"results": [')
    (tmp_path / "junit.xml").write_text("<testsuites><testsuite>")
    (tmp_path / "report.html").write_text("<html><body>")
    payload = b"payload"
    import hashlib

    header = json.dumps({"sha256": hashlib.sha256(payload).hexdigest()}).encode()
    (tmp_path / "good.case").write_bytes(header + b"\n" + payload)
    (tmp_path / "torn.case").write_bytes(header + b"\n" + payload[:3])
    bad = {os.path.basename(p) for p in chaos_check.corrupt_files(tmp_path)}
    assert bad == {"results.json", "junit.xml", "report.html", "torn.case"}


def _doc(statuses: dict, reused: frozenset = frozenset()) -> dict:
    return {"complete": True, "results": [
        {"pass_name": p, "graph": g, "check": c, "status": s, "level": "must",
         "details": {"reused": {"run": "x"}} if (p, g, c) in reused else {}}
        for (p, g, c), s in statuses.items()]}


def test_compare_counts_lost_changed_and_wrong_cache_hits():
    ref = {("P", "mlp", "runs"): "pass", ("P", "mlp", "numerics"): "fail", ("P", "cnn", "runs"): "pass"}
    assert chaos_check.compare(_doc(ref), _doc(ref)).identical
    flipped = {**ref, ("P", "mlp", "numerics"): "pass"}
    v = chaos_check.compare(_doc(ref), _doc(flipped, reused=frozenset({("P", "mlp", "numerics")})))
    assert not v.identical and v.changed == 1 and v.wrong_cache_hits == 1 and v.differences >= 1
    lost = dict(list(ref.items())[:2])
    v = chaos_check.compare(_doc(ref), _doc(lost))
    assert not v.identical and v.lost == 1
    assert chaos_check.compare(_doc(ref), None).lost == 3
    incomplete = {**_doc(ref), "complete": False}
    assert not chaos_check.compare(_doc(ref), incomplete).identical


def test_one_line_errors_and_tracebacks_are_told_apart():
    assert not chaos_check.bad_error(2, "passgate: error: cannot write x: No space left on device\n")
    assert chaos_check.bad_error(2, "something else\n")
    assert chaos_check.bad_error(0, "passgate: error: x\n")
    assert chaos_check.has_traceback("Traceback (most recent call last):\n  File ...")


def test_draw_covers_every_fault_kind_first_and_is_seeded():
    kinds = [k for k, _ in chaos.ALL_FAULTS]
    assert kinds[:len(FAULTS)] == [k for k, _ in FAULTS]
    assert chaos.draw(len(kinds), 1) == kinds
    a, b = chaos.draw(200, 4), chaos.draw(200, 4)
    assert a == b and a != chaos.draw(200, 5) and set(a) == set(kinds)


def test_certify_and_vulkan_faults_each_name_their_command_and_run_faults_name_none():
    from benchmarks.chaos_commands import COMMAND_FAULTS, command_of

    assert {command_of(where).name for (_kind, where), _weight in COMMAND_FAULTS} == {"certify", "vulkan"}
    assert command_of("certify manifest").name == "certify" and command_of("vulkan worker").name == "vulkan"
    assert all(command_of(where) is None for (_kind, where), _weight in FAULTS)


def test_table_counts_by_kind_and_where():
    row = {"kind": "eio", "where": "results.json", "injected": True, "completed": True, "identical": True,
           "lost": 0, "wrong_cache_hits": 0, "tracebacks": 0, "bad_errors": 0, "debris": 1, "corrupt": []}
    groups = chaos.table([row, {**row, "identical": False, "corrupt": ["x"]}, {**row, "where": "junit.xml"}])
    g = groups[0]
    assert (g["count"], g["injected"], g["identical"], g["corrupt"], g["debris"]) == (2, 2, 1, 1, 2)
    assert "total" in chaos.render(groups)
