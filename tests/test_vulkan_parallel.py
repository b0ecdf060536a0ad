"""``passgate vulkan`` over workers, shards and the fusion cache: the same verdicts however the work is cut.

Each test that fuses writes its own copy of a vendor fusion (a correct
FusePatternsPass wrapper from ``tests/data/vulkan_vendor_passes.py``) with a
unique comment, so its source hash, and so its cache entries, are its own:
the first run misses, whatever ran before on this machine.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from harness.run import fork_each
from vulkan.entry import work

VENDOR = Path(__file__).parent / "data" / "vulkan_vendor_passes.py"
OPS = ["q8ta_relu", "q8ta_add"]


@pytest.fixture()
def main():
    from harness.cli.main import main as cli

    return cli


def _vendor_copy(folder: Path, label: str) -> str:
    """A vendor fusion file of its own (a fresh source hash): ``path:FixedAlphaFusion``."""
    path = folder / f"fusion_{label}.py"
    path.write_text(VENDOR.read_text() + f"\n# {label} {uuid.uuid4().hex}\n")
    return f"{path}:FixedAlphaFusion"


def _verdicts(report: Path) -> list:
    doc = json.loads((report / "results.json").read_text())
    return [(r["pass_name"], r["graph"], r["check"], r["status"], r["message"]) for r in doc["results"]]


def _records(report: Path) -> list:
    doc = json.loads((report / "results.json").read_text())
    return doc["vulkan"]["records"]


def _run(main, spec: str, report: Path, *extra: str) -> int:
    return main(["vulkan", "--pass", spec, "--ops", *OPS, "--count", "1", "--quiet", "--report", str(report),
                 *extra])


def test_two_workers_give_the_verdicts_and_rows_of_one(main, tmp_path):
    one, two = tmp_path / "j1", tmp_path / "j2"
    s1 = _run(main, _vendor_copy(tmp_path, "a"), one, "-j", "1")
    s2 = _run(main, _vendor_copy(tmp_path, "b"), two, "-j", "2")
    assert s1 == s2
    assert _verdicts(one) == _verdicts(two) and len(_verdicts(one)) > 10
    drop = ("timings",)
    rows = [[{k: v for k, v in r.items() if k not in drop} for r in _records(d)] for d in (one, two)]
    assert rows[0] == rows[1]
    assert not any(r["timings"]["fusion_from_cache"] for r in _records(two))  # -j 2 really fused
    tables = [[{k: v for k, v in row.items() if k != "fusion_seconds"}
               for row in json.loads((d / "results.json").read_text())["vulkan"]["table"]] for d in (one, two)]
    assert tables[0] == tables[1]


def test_search_with_two_workers_draws_and_judges_as_one(main, tmp_path):
    out = {}
    for j in ("1", "2"):
        report = tmp_path / f"s{j}"
        main(["vulkan", "--pass", _vendor_copy(tmp_path, f"s{j}"), "--ops", *OPS, "--examples", "2", "--quiet",
              "--report", str(report), "-j", j])
        doc = json.loads((report / "results.json").read_text())
        tables = doc["vulkan"]["search"]["tables"]["FixedAlphaFusion"]
        out[j] = (_verdicts(report), [{k: v for k, v in r.items() if k != "seconds"} for r in tables])
    assert out["1"] == out["2"] and out["1"][0]


def test_shards_are_disjoint_cover_the_run_and_keep_its_order():
    from harness.core.shards import Shard
    from vulkan.backend import fusion
    from vulkan.cases import catalog
    from vulkan.cases.recipes import MODES
    from vulkan.search import spaces

    fusions = [fusion.builtin(m) for m in MODES]
    for everything in (work.case_items(fusions, catalog.select(), 1, 0), work.search_items(fusions, spaces.select())):
        parts = [work.shard_items(everything, Shard(i, 3)) for i in (1, 2, 3)]
        ids = [id(it) for part in parts for it in part]
        assert len(ids) == len(set(ids)) == len(everything)
        for part in parts:
            assert part == [it for it in everything if it in part]  # a part keeps the run's order
        # A case's (an op's) fusions are on one shard: it is quantized once.
        owner = {}
        for k, part in enumerate(parts):
            for it in part:
                assert owner.setdefault(it.name, k) == k


def test_shard_parts_join_into_the_whole_run(main, tmp_path):
    spec = _vendor_copy(tmp_path, "shards")
    _run(main, spec, tmp_path / "all", "-j", "1")
    parts = []
    for i in (1, 2):
        _run(main, spec, tmp_path / f"p{i}", "--shard", f"{i}/2")
        parts.append(_verdicts(tmp_path / f"p{i}"))
    assert parts[0] and parts[1] and not set(parts[0]) & set(parts[1])
    assert sorted(parts[0] + parts[1]) == sorted(_verdicts(tmp_path / "all"))
    assert main(["report", "merge", str(tmp_path / "p1"), str(tmp_path / "p2"), "--out", str(tmp_path / "m")]) in (0, 1)
    assert _verdicts(tmp_path / "m") == _verdicts(tmp_path / "all")


def test_rerun_hits_the_fusion_cache_and_an_edited_pass_misses(main, tmp_path):
    spec = _vendor_copy(tmp_path, "cache")
    _run(main, spec, tmp_path / "cold", "-j", "2")
    _run(main, spec, tmp_path / "warm", "-j", "2")
    assert not any(r["timings"]["fusion_from_cache"] for r in _records(tmp_path / "cold"))
    assert all(r["timings"]["fusion_from_cache"] for r in _records(tmp_path / "warm"))
    assert _verdicts(tmp_path / "cold") == _verdicts(tmp_path / "warm")
    path = Path(spec.rpartition(":")[0])
    path.write_text(path.read_text() + "# an edit\n")
    _run(main, spec, tmp_path / "edited", "-j", "2")
    assert not any(r["timings"]["fusion_from_cache"] for r in _records(tmp_path / "edited"))


def test_a_corrupt_fusion_entry_is_a_miss(main, tmp_path):
    from harness.check.loading import load_pass
    from harness.graphs.cache import default_cache
    from vulkan.backend import fusion
    from vulkan.cases import catalog, lowering

    spec = _vendor_copy(tmp_path, "corrupt")
    _run(main, spec, tmp_path / "first")
    f = fusion.UserFusion(load_pass(spec))
    items = work.case_items([f], catalog.select(OPS), 1, 0)
    cache = default_cache()
    fspecs = [lowering.fused_spec(it.subject.spec, f.cache_key) for it in items]
    assert all(lowering.load_fused(it.subject.spec, f.cache_key) is not None for it in items)
    (cache.path_for(fspecs[0]).parent / (cache.path_for(fspecs[0]).name + ".json")).write_text("{not json")
    victim = cache.path_for(fspecs[1])
    victim.write_bytes(victim.read_bytes()[:-50] + b"x" * 50)  # the checksum no longer holds
    for bad in ({"key": "x"}, [], {"key": fspecs[2].key, "outcome": "ok"}):  # wrong key, not a dict, no seconds
        (cache.path_for(fspecs[2]).parent / (cache.path_for(fspecs[2]).name + ".json")).write_text(json.dumps(bad))
        assert lowering.load_fused(items[2].subject.spec, f.cache_key) is None
    _run(main, spec, tmp_path / "again")
    cached = [r["timings"]["fusion_from_cache"] for r in _records(tmp_path / "again")]
    assert cached == [False, False, False]
    assert _verdicts(tmp_path / "again") == _verdicts(tmp_path / "first")


# --- the pool itself: no torch work, forks of this process ------------------------------------------------------


def test_an_interrupt_kills_the_running_workers_and_keeps_what_was_delivered():
    import multiprocessing

    got = {}

    def prepare(i):
        return ((lambda: "first") if i == 0 else (lambda: time.sleep(60))), 120.0

    def deliver(i, value):
        got[i] = value
        raise KeyboardInterrupt  # as Ctrl-C arriving once the first item is in

    written = []
    started = time.monotonic()
    status = work.guarded(lambda: fork_each.run(3, prepare, deliver, jobs=2) or 0, lambda: written.append(dict(got)))
    assert status == 130 and written == [{0: "first"}] and time.monotonic() - started < 30
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("passgate-vulkan")]


def test_sigterm_writes_the_partial_report_and_exits_1():
    written = []

    def body():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        return 0

    assert work.guarded(body, lambda: written.append(True)) == 1 and written == [True]


def test_source_digest_follows_the_pass_and_its_helpers_not_other_files(tmp_path):
    from harness.check.loading import import_file
    from vulkan.backend.fusion import source_digest

    (tmp_path / "vk_helper_mod.py").write_text("SCALE = 1\n")
    (tmp_path / "unrelated.py").write_text("X = 1\n")
    (tmp_path / "vk_pass_mod.py").write_text("import vk_helper_mod\n\ndef fuse(gm):\n    return gm\n")
    fn = import_file(str(tmp_path / "vk_pass_mod.py")).fuse
    before = source_digest(fn)
    (tmp_path / "unrelated.py").write_text("X = 2\n")
    os.utime(tmp_path / "vk_pass_mod.py")
    assert source_digest(fn) == before  # an edit elsewhere, a touch: the same source
    (tmp_path / "vk_helper_mod.py").write_text("SCALE = 2\n")
    assert source_digest(fn) != before  # a helper the pass imports is part of it
    assert source_digest(len) is None  # no source file: never cached


def test_budget_shares_are_the_sequential_rule_and_account_for_running_items():
    items = [work.Item(0, None, None)] * 3
    seq = work.Shares(items, 30.0, 1, items)
    assert seq.take(0) == 10.0
    seq.done(0, 4.0)
    assert seq.take(1) == 13.0  # what the first op left goes to the next ones
    par = work.Shares(items, 30.0, 1, items)
    assert par.take(0) == 10.0 and par.take(1) == 10.0  # the first one's share is committed while it runs
    par.done(0, 4.0)
    assert par.take(2) == 16.0
    half = work.Shares(items[:1], 30.0, 1, items)  # a shard of one item of three gets its third of the pool
    assert half.take(0) == 10.0
