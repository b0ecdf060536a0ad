"""fixtures/corpus/targeted_vulkan_patterns2.py: the hand-written LLM decode step for the Vulkan pattern registry's
SDPA and quantized-embedding patterns. It builds, exports, lowers and computes what eager does; FusePatternsPass,
handed the program as VulkanBackend.preprocess hands it (after unsafe_remove_auto_functionalized_pass), fuses its
KV-cache attention and its symmetric torchao embedding and declines the near misses; on the plain to_edge program
(how the catalog entry runs it) the SDPA pattern's replacement asserts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.fuzz.corpus import load_dir
from harness.graphs.cases import load_case

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
NAME = "targeted_vulkan_patterns2"
ENTRY = "vulkan.FusePatternsPass"


@pytest.fixture(scope="module")
def spec():
    return next(s for s in load_dir(CORPUS) if s.name == NAME)


def _targets(ep) -> list[str]:
    return [n.target.name() if hasattr(n.target, "name") else str(n.target)
            for n in ep.graph.nodes if n.op == "call_function"]


def _entry():
    from harness.catalog.registry import load_catalogs

    return next(e for e in load_catalogs()["vulkan"].entries if e.name == ENTRY).loaded()


def _as_preprocess_hands_it(case):
    """The case's edge program after unsafe_remove_auto_functionalized_pass (VulkanBackend.preprocess's first
    step, the `vulkan` pipeline's too): llama.update_cache in place on the cache buffers again."""
    from torch.export._remove_auto_functionalized_pass import unsafe_remove_auto_functionalized_pass

    from harness.pipelines.pipeline import derived_case

    program = unsafe_remove_auto_functionalized_pass(case.program("edge"))
    return derived_case(case, "edge", program, "after unsafe_remove_auto_functionalized_pass")


def test_is_a_hand_written_quantized_as_lowered_corpus_case(spec):
    assert spec.source == "corpus" and "hand-written" in spec.description
    assert {"quantized", "as_lowered"} <= spec.tags
    assert _entry().name == ENTRY


def test_the_lowered_program_holds_the_ops_its_patterns_match(spec):
    """What it lowers to (it computes what eager does: tests/test_targeted_graphs.py): both KV-cache attentions,
    the embedding_4bit region and the seven torchao dequantize_affine regions."""
    ops = _targets(load_case(spec).edge)
    assert ops.count("llama::custom_sdpa") == 2 and ops.count("auto_functionalized_v2") == 4
    assert ops.count("quantized_decomposed::embedding_4bit.dtype") == 1
    assert ops.count("torchao::dequantize_affine") == 7


def test_fuse_patterns_entry_fuses_the_program_preprocess_hands_it(spec):
    """Both attention layers become llama.sdpa_with_kv_cache (their update_cache calls folded in), t_nozp becomes
    et_vk.embedding_q4gsw, and the result computes what the program did; the six torchao near misses and the
    embedding_4bit on computed tables stay."""
    import executorch.backends.vulkan.custom_ops_lib  # noqa: F401 - et_vk ops

    from harness.check.runner import check_pass_on_case

    case = _as_preprocess_hands_it(load_case(spec))
    before = _targets(case.edge)
    assert before.count("llama::update_cache") == 4 and "auto_functionalized_v2" not in before
    got = {r.check: r for r in check_pass_on_case(_entry(), case)}
    assert got["runs"].status.value == "pass", got["runs"].message
    assert any(got["runs"].details["changed"].values()), got["runs"].message
    assert got["numerics"].status.value == "pass", got["numerics"].message  # sdpa_with_kv_cache and q4gsw run on CPU

    from executorch.backends.vulkan._passes.fuse_patterns import FusePatternsPass

    ep = case.program("edge")
    fuse = FusePatternsPass()
    fuse._exported_program = ep
    after = _targets(fuse(ep.graph_module).graph_module)
    assert after.count("llama::sdpa_with_kv_cache") == 2
    assert "llama::custom_sdpa" not in after and "llama::update_cache" not in after
    assert after.count("et_vk::embedding_q4gsw") == 1
    assert after.count("torchao::dequantize_affine") == 6
    assert after.count("quantized_decomposed::embedding_4bit.dtype") == 1


def test_fuse_patterns_entry_on_the_to_edge_program_asserts_in_the_sdpa_replacement(spec):
    """The catalog entry hands FusePatternsPass the to_edge program, where update_cache is wrapped in
    auto_functionalized_v2: CausalSDPAMatch matches custom_sdpa without finding its update_cache and
    replace_custom_sdpa_with_causal_sdpa asserts (the violation this graph brings to the vulkan catalog)."""
    from harness.check.runner import check_pass_on_case

    got = {r.check: r for r in check_pass_on_case(_entry(), load_case(spec))}
    assert got["runs"].status.value == "fail"
    assert "AssertionError" in got["runs"].message or "sdpa" in str(got["runs"].details.get("traceback", ""))


def test_a_fresh_process_reads_the_case_back_with_the_real_llama_ops(spec):
    """Its OP_LIBRARIES are imported when the corpus is listed, before the case is read back from the cache:
    a process that never ran build() gets llama.custom_sdpa itself, not a fake operator."""
    load_case(spec)  # in the cache now
    code = (f"from pathlib import Path\nfrom harness.fuzz.corpus import load_dir\nfrom harness.graphs.cases import load_case\n"
            f"s = next(x for x in load_dir(Path({str(CORPUS)!r})) if x.name == {NAME!r})\n"
            "c = load_case(s)\n"
            "ops = [n.target for n in c.edge.graph.nodes if 'custom_sdpa' in str(n.target)]\n"
            "print(c.from_cache, len(ops), all(type(op).__name__ == 'EdgeOpOverload' for op in ops))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.split()[-3:] == ["True", "2", "True"], out.stderr[-2000:]
