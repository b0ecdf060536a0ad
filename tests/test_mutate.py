"""``passgate mutate``: mutants are found, swapped in memory only, and judged by the gate on the cases that reach them."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from run_helpers import DATA, EXE

from harness.mutate.operators import OPERATORS, mutants_of
from harness.mutate.overlay import NotApplied, apply, source_of

SUBJECT = f"{DATA}/mutation_subject.py:ReluToClamp"

SNIPPET = '''\
def f(node, graph, dims):
    """A docstring is never mutated."""
    if node.op != "call_function" and not node.users:
        return None
    for d in dims:
        if d < 0:
            continue
    new = graph.call_function(node.target, (node.args[0], dims[1] + 1), kwargs={"dim": 2})
    new.meta = dict(node.meta)
    return new
'''


def _by(mutants, operator):
    return [m for m in mutants if m.site.operator == operator]


def test_every_operator_finds_its_sites_in_a_function_and_ids_are_stable():
    found = mutants_of("/x/site-packages/pkg/mod.py", SNIPPET)
    assert {m.site.operator for m in found} == set(OPERATORS)
    assert [m.id for m in found] == [m.id for m in mutants_of("/x/site-packages/pkg/mod.py", SNIPPET)]
    assert all(m.id.startswith("pkg/mod.py:") for m in found)  # the same on every machine
    assert [m.diff() for m in _by(found, "meta")] == ["L9: new.meta = dict(node.meta) -> pass"]
    assert [m.site.after for m in _by(found, "keyword")] == ["drop kwargs="]  # a dict literal's keys are not
    assert any(m.diff() == "L4: return None -> pass" for m in _by(found, "early_exit"))
    assert any(m.diff() == "L7: continue -> pass" for m in _by(found, "early_exit"))
    assert not any(m.line == 10 for m in _by(found, "early_exit"))  # the last return is not an early exit
    assert {m.site.after for m in _by(found, "guard")} >= {"if True:", "if False:"}
    assert any(m.site.before == "1" and m.site.after == "2" for m in _by(found, "number"))
    assert not any("docstring" in m.site.before for m in found)


def _import(path: Path):
    spec = importlib.util.spec_from_file_location("mutation_overlay_subject", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_mutant_is_swapped_in_memory_for_every_reference_and_undone(tmp_path):
    path = tmp_path / "subject.py"
    path.write_text("def bump(x):\n    return x + 1\n\n\nclass K:\n    def twice(self, x):\n        return bump(x) * 2\n")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    module = _import(path)
    alias = module.bump  # held elsewhere, as catalogs hold pass classes
    try:
        number = next(m for m in mutants_of(str(path), source_of(str(path))) if m.site.after == "2")
        undo = apply(number)
        assert alias(1) == 3 and module.K().twice(1) == 6
        undo()
        assert alias(1) == 2 and module.K().twice(1) == 4
        method = next(m for m in mutants_of(str(path), source_of(str(path)))
                      if m.qualname == "K.twice" and m.site.operator == "arithmetic")
        undo = apply(method)
        assert module.K().twice(4) == 2  # (4 + 1) // 2
        undo()
    finally:
        del sys.modules["mutation_overlay_subject"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # never written


def test_a_mutant_of_a_module_not_imported_is_not_applied(tmp_path):
    path = tmp_path / "never_imported.py"
    path.write_text("def f():\n    return 1\n")
    with pytest.raises(NotApplied):
        apply(mutants_of(str(path), source_of(str(path)))[0])


@pytest.fixture(scope="module")
def judged():
    """Every mutant of the subject pass judged on the built-in graphs, in process."""
    from harness.core.config import RunConfig
    from harness.fuzz.targets import for_pass
    from harness.graphs import sources
    from harness.graphs.cases import load_cases
    from harness.mutate.campaign import Settings, judge, reference

    target = for_pass(SUBJECT)
    cases = load_cases(sources.select(["builtin"]))
    ref = reference(target, cases, RunConfig(), Settings())
    by_name = {c.name: c for c in cases}
    mutants = mutants_of(target.files[0], source_of(target.files[0]))
    return ref, {m.diff(): judge(m, target, ref, by_name, RunConfig()) for m in mutants}


def test_reference_records_the_lines_each_case_reaches(judged):
    ref, _ = judged
    reached = {r.graph for r in ref.runs if 25 in next(iter(r.lines.values()), ())}
    assert reached and "conv_bn_relu" in reached  # it has a relu: the rewrite's line runs
    assert all(not [x for x in r.results if x.is_violation()] for r in ref.runs)  # the subject is correct


def test_mutants_are_killed_by_the_check_that_sees_them(judged):
    _, out = judged
    meta = out["L26: new.meta = dict(node.meta) -> pass"]
    assert meta.status == "killed" and meta.killed_by["check"].startswith("meta_"), meta
    bound = out["L25: 0 -> 1"]
    assert bound.status == "killed", bound
    flipped = out["L22: node.target != EDGE.relu.default -> node.target == EDGE.relu.default"]
    assert flipped.status == "killed", flipped


def test_a_mutant_that_stops_the_pass_is_killed_by_still_exercised_and_a_no_op_one_is_equivalent(judged):
    """Every IR check holds on a program the pass left as handed: only the gate's comparison with what the
    unmutated pass changed sees the mutant that stops it rewriting."""
    _, out = judged
    never = out["L22: node.op != \"call_function\" -> node.op == 'call_function'"]
    assert never.status == "killed" and never.killed_by["check"] == "still_exercised", never
    assert "left the program as it was handed" in never.killed_by["message"]
    assert out["L30: if changed: -> if True:"].status == "equivalent"  # recompiling an unchanged graph


def test_mutate_list_is_seeded_and_bad_input_exits_2():
    def listed(seed: int) -> str:
        proc = subprocess.run([EXE, "mutate", "--list", "--catalog", "exir", "--entries", "3", "--sample", "12",
                               "--seed", str(seed)], capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    first = listed(1)
    assert len(first.splitlines()) == 12 and first == listed(1)
    assert listed(2) != first
    bad = subprocess.run([EXE, "mutate", "--list", "--catalog", "nosuch"], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def _one_user(x):
    """neg(neg(x)) + 1"""
    import torch

    return torch.neg(torch.neg(x)) + 1


def _two_users(x):
    """the inner neg also returned"""
    import torch

    inner = torch.neg(x)
    return torch.neg(inner) + 1, inner


def _spec(name: str, fn):
    """The case spec of ``fn`` (a one-method module) on a 3 x 4 input, named ``name``."""
    import torch

    from harness.graphs.cases import CaseSpec, ModelInputs

    class Model(torch.nn.Module):
        def forward(self, x):
            return fn(x)

    return CaseSpec(name, "test", lambda: ModelInputs(Model(), (torch.randn(3, 4, generator=torch.Generator().manual_seed(0)),)),
                    f"{name}:{fn.__doc__}")


def _fold_target_and_guard():
    from harness.fuzz.targets import for_pass

    target = for_pass(f"{DATA}/mutation_subject.py:FoldDoubleNeg")
    guard = next(m for m in mutants_of(target.files[0], source_of(target.files[0]))
                 if m.qualname == "FoldDoubleNeg.call" and m.site.operator == "early_exit" and m.line == 47)
    return target, guard


def test_a_graph_that_puts_the_rewrite_in_another_context_kills_a_survivor():
    """The guard for a second user of the inner neg is reached only where it has one: a graph that gives it two
    kills the mutant that drops the guard, a graph like the old ones does not."""
    from harness.fuzz.measure import lower_fresh
    from harness.mutate.hunt import Hunt

    target, guard = _fold_target_and_guard()
    hunt = Hunt({target.name: [guard]}, isolate=False)
    assert hunt.kills(target, lower_fresh(_spec("mut_one_user", _one_user))) == []
    assert hunt.kills(target, lower_fresh(_spec("mut_two_users", _two_users))) == [guard.id]


def test_extending_a_campaign_with_a_graph_judges_only_its_undetected_mutants_there():
    from harness.core.config import RunConfig
    from harness.mutate.campaign import Settings
    from harness.mutate.driver import extend_campaign, run_campaign
    from harness.mutate.report import document

    target, guard = _fold_target_and_guard()
    settings = Settings(sample=500, entries=1)
    before = run_campaign([target], [_spec("mut_one_user", _one_user)], settings, RunConfig(), isolate=False)
    old = document(before)
    status = {m["id"]: m["status"] for m in old["mutants"]}
    assert status[guard.id] == "not_reached" and "killed" in status.values()
    after = extend_campaign(old, [target], [_spec("mut_two_users", _two_users)], RunConfig(), isolate=False)
    new = document(after)
    now = {m["id"]: m for m in new["mutants"]}
    assert now[guard.id]["status"] == "killed" and now[guard.id]["killed_by"]["graph"] == "mut_two_users"
    assert all(now[i]["status"] in ("killed", "timed_out") for i, s in status.items() if s in ("killed", "timed_out"))
    assert new["score"]["score"] > old["score"]["score"]
    assert new["sample"]["cases"] == ["mut_one_user", "mut_two_users"]


def _generated(name: str, fn):
    """``fn``'s case as a generated corpus graph would be (source ``corpus``, not a ``targeted_`` name)."""
    from dataclasses import replace

    return replace(_spec(name, fn), source="corpus")


def test_the_generated_graphs_score_is_kept_apart_and_judged_first():
    """The generated cases are judged first: what they alone detect is each outcome's ``alone``, and the report's
    ``generated_alone`` score; a mutant only a hand-written graph kills is detected by the suite, not by them."""
    from harness.core.config import RunConfig
    from harness.mutate.campaign import Settings
    from harness.mutate.driver import run_campaign
    from harness.mutate.report import document, render

    target, guard = _fold_target_and_guard()
    specs = [_spec("mut_two_users", _two_users), _generated("corpus_one_user", _one_user)]
    doc = document(run_campaign([target], specs, Settings(sample=500, entries=1), RunConfig(), isolate=False))
    by_id = {m["id"]: m for m in doc["mutants"]}
    assert by_id[guard.id]["status"] == "killed" and by_id[guard.id]["alone"] == "not_reached"
    killed = [m for m in doc["mutants"] if m["status"] == "killed"]
    assert killed and {m["alone"] for m in killed} >= {"killed", "not_reached"}
    assert all(m["killed_by"]["graph"] == "corpus_one_user" for m in killed if m["alone"] == "killed")
    alone, whole = doc["generated_alone"], doc["score"]
    assert alone["killed"] == sum(m["alone"] == "killed" for m in doc["mutants"]) and alone["score"] < whole["score"]
    assert "The generated graphs alone" in render(doc)


def test_extending_with_a_generated_graph_judges_again_what_only_hand_written_ones_detected():
    from harness.core.config import RunConfig
    from harness.mutate.campaign import Settings
    from harness.mutate.driver import extend_campaign, run_campaign
    from harness.mutate.report import document

    target, guard = _fold_target_and_guard()
    old = document(run_campaign([target], [_spec("mut_one_user", _one_user)], Settings(sample=500, entries=1),
                                RunConfig(), isolate=False))
    assert old["generated_alone"]["killed"] == 0 and old["score"]["killed"] > 0
    new = document(extend_campaign(old, [target], [_generated("corpus_two_users", _two_users)], RunConfig(),
                                   isolate=False))
    for was, m in zip(old["mutants"], new["mutants"], strict=True):  # in sample order (ids may repeat on a line)
        if was["status"] == "killed":  # the suite's verdict stays, with the graph that gave it
            assert m["status"] == "killed" and m["killed_by"] == was["killed_by"]
    assert {m["id"]: m for m in new["mutants"]}[guard.id]["alone"] == "killed"
    assert new["generated_alone"]["killed"] > 0


def test_fuzz_contexts_keeps_a_graph_that_kills_a_surviving_mutant(tmp_path):
    """``passgate fuzz --contexts --mutants``: a campaign on the built-in graphs never reaches the per-user branch of
    a relu rewrite (no relu there has two users), so an off-by-one bound in it survives; the context search draws
    a relu with a second reader and keeps that graph because it kills the mutant."""
    from harness.core.config import RunConfig
    from harness.fuzz.targets import for_pass
    from harness.graphs import sources
    from harness.mutate.campaign import Settings
    from harness.mutate.driver import run_campaign
    from harness.mutate.report import write

    spec = f"{Path(__file__).resolve().parent / 'context_broken_passes.py'}:ReluToClampFixed"
    target = for_pass(spec)
    camp = run_campaign([target], list(sources.select(["builtin"])), Settings(sample=400, entries=1,
                        operators=("number",)), RunConfig(), isolate=False)
    write(camp, tmp_path / "mutation")
    bound = [o for o in camp.judged() if o.mutant.qualname == "ReluToClamp.call" and o.mutant.site.before == "0"
             and o.status == "not_reached"]
    assert bound, [o.to_json() for o in camp.judged()]
    proc = subprocess.run([EXE, "fuzz", "--contexts", "--pass", spec, "--mutants", str(tmp_path / "mutation" /
                           "mutation.json"), "--draws", "12", "--no-shrink", "--report", str(tmp_path / "fuzz")],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode in (0, 1), proc.stderr
    assert "surviving mutant" in proc.stderr, proc.stderr[-3000:]


def test_an_entry_is_mutated_in_its_own_code_not_in_a_sibling_pass_of_its_module():
    """mutation_subject.py holds two passes: ReluToClamp's sample has none of FoldDoubleNeg's methods."""
    from harness.fuzz.targets import for_pass
    from harness.mutate.sampling import sample_mutants

    target = for_pass(SUBJECT)
    drawn = {m.qualname for _, m in sample_mutants([target], 10_000, 0)}
    every = {m.qualname for m in mutants_of(target.files[0], source_of(target.files[0]))}
    assert "FoldDoubleNeg.call" in every and drawn == {"ReluToClamp.call"}


def test_corpus_adopt_copies_only_the_graphs_that_killed_and_a_distilled_cover_keeps_them(tmp_path):
    """A candidate that detected a mutant (for the suite, or for the generated graphs alone) is copied unchanged
    with its kills; one that killed nothing is not; rewriting the corpus as a cover of arcs keeps the adopted one;
    an unreadable report is a one-line error, exit 2."""
    import json

    from harness.fuzz.corpus import INDEX, Entry, write

    candidates, corpus = tmp_path / "cand", tmp_path / "corpus"
    candidates.mkdir()
    for name in ("corpus_aaaa0001", "corpus_bbbb0002", "corpus_cccc0003"):
        (candidates / f"{name}.py").write_text(f"# {name}\ndef build():\n    pass\n")
    doc = {"schema": "passgate-mutation", "mutants": [
        {"entry": "e.One", "status": "killed", "killed_by": {"graph": "corpus_aaaa0001"}, "alone": "killed",
         "alone_by": "corpus_aaaa0001"},
        {"entry": "e.Two", "status": "killed", "killed_by": {"graph": "targeted_x"}, "alone": "killed",
         "alone_by": "corpus_cccc0003"},
        {"entry": "e.Two", "status": "survived", "killed_by": {}, "alone": "survived", "alone_by": ""}]}
    report = tmp_path / "mutation.json"
    report.write_text(json.dumps(doc))
    proc = subprocess.run([EXE, "corpus", "adopt", "--from", str(candidates), "--mutation", str(report),
                           "--out", str(corpus)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "adopted 2 graph(s)" in proc.stdout
    assert sorted(p.name for p in corpus.glob("*.py")) == ["corpus_aaaa0001.py", "corpus_cccc0003.py"]
    assert (corpus / "corpus_aaaa0001.py").read_text() == (candidates / "corpus_aaaa0001.py").read_text()
    rows = {g["name"]: g for g in json.loads((corpus / INDEX).read_text())["graphs"]}
    assert rows["corpus_aaaa0001"]["kills"] == {"e.One": 1} and rows["corpus_cccc0003"]["kills"] == {"e.Two": 1}
    write(corpus, [Entry("corpus_dddd0004", "def build():\n    pass\n", "random_s0_1", {})], "kind",
          replace_all=True)
    assert {p.stem for p in corpus.glob("*.py")} == {"corpus_aaaa0001", "corpus_cccc0003", "corpus_dddd0004"}
    assert {g["name"] for g in json.loads((corpus / INDEX).read_text())["graphs"]} == {
        "corpus_aaaa0001", "corpus_cccc0003", "corpus_dddd0004"}
    bad = subprocess.run([EXE, "corpus", "adopt", "--from", str(candidates), "--mutation", str(tmp_path / "no.json")],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_an_entry_owns_its_code_and_what_it_names_not_a_sibling_entrys():
    """``external_constants_pass.py`` holds three passes, each its own catalog entry: the mutants of
    ``external_mutable_weights_pass`` are its own lines and its helper's (``_is_mutable_weight``), never those of
    ``delegate_external_constants_pass_unlifted``, which no graph can make it run."""
    from harness.fuzz.targets import for_catalogs
    from harness.mutate.sampling import owned

    targets, _ = for_catalogs(["exir"], ["exir.external_mutable_weights_pass"])
    (target,) = targets
    mine = owned(target)
    functions = {m.qualname for f in target.files for m in mutants_of(f, source_of(f)) if mine(m)}
    assert functions == {"external_mutable_weights_pass", "_is_mutable_weight"}


def test_a_mutant_of_a_statement_whose_own_line_has_no_bytecode_is_reached_by_its_condition(tmp_path):
    """``if (`` alone on its line compiles to the condition's lines only: coverage never records the ``if`` line,
    so a mutant of the whole statement (``if ...: -> if False:``) is judged on the cases that run its condition."""
    from harness.mutate.campaign import CaseRun, Reference
    from harness.mutate.sampling import probe_line

    src = tmp_path / "subject.py"
    # the form of FuseBatchNormWithConvPass.call's guards (comparisons: a bare `a or b` gets a line-2 instruction)
    src.write_text("def f(a, b):\n    if (\n        a.x != 1\n        or len(b) != 1\n    ):\n        return 1\n"
                   "    return 2\n")
    (mutant,) = [m for m in mutants_of(str(src), src.read_text()) if m.diff().endswith("-> if False:")]
    assert mutant.line == 2
    assert probe_line(str(src), 2) == 3 and probe_line(str(src), 6) == 6  # a line with bytecode is its own probe
    ran, skipped = CaseRun("ran", {str(src): frozenset({1, 3, 4, 7})}, [], ""), CaseRun("skipped", {}, [], "")
    assert [r.graph for r in Reference("e", [ran, skipped]).reaching(mutant)] == ["ran"]


def test_a_mutant_in_a_declared_unreachable_region_is_left_out_of_the_score_and_listed():
    """MergeToDimPass raises at line 46 wherever its guard holds: its catalog entry declares lines 47-81
    unreachable, so their mutants no case reaches are ``unreachable`` (out of the score, with the reason), while
    the same outcome counted as not reached is stated beside the score."""
    from harness.core.config import RunConfig
    from harness.fuzz.targets import for_catalogs
    from harness.graphs import sources
    from harness.mutate.campaign import Settings, score
    from harness.mutate.driver import run_campaign
    from harness.mutate.report import document, render

    targets, _ = for_catalogs(["misc"], ["misc.MergeToDimPass"])
    specs = [s for s in sources.select(["builtin"]) if s.name in ("mlp", "conv_bn_relu")]
    doc = document(run_campaign(targets, specs, Settings(sample=60, entries=1), RunConfig(), isolate=False))
    gone = [m for m in doc["mutants"] if m["status"] == "unreachable"]
    assert gone and all(47 <= m["line"] <= 81 and "raises" in m["note"] for m in gone)
    assert not [m for m in doc["mutants"] if m["status"] == "not_reached" and 47 <= m["line"] <= 81]
    s = doc["score"]
    assert s["unreachable"] == len(gone)
    judged = s["mutants"] - s["equivalent"] - s["not_applied"] - s["unreachable"]
    assert s["score"] == round(100.0 * (s["killed"] + s["timed_out"]) / judged, 1)
    text = render(doc)
    assert "## Declared unreachable" in text and "counted as not reached instead, the score would be" in text
    assert score([]) == {**{k: 0 for k in s if k not in ("score",)}, "score": None}
