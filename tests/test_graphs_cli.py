"""``passgate graphs``: the overview of every source, ``--graphs`` beside ``--source``, and ``--show``
programs that run.

``--show NAME`` promises a plain torch program a reader can save and run:
it builds the model, exports it and runs it on its example inputs. The
programs of built-in, zoo and quantized cases are written out from fixture
code (:mod:`fixtures.programs`), so for one small case of each source the
program is run as a script (exit 0, nothing of passgate imported), and its
``build()`` is checked to give the very weights, inputs and outputs the
case's own builder gives: a fixture edit the copying cannot follow fails
here instead of printing a program that drifts from what passgate checks.
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys

import pytest

from harness.cli import main as cli

# One small case per source; two for the zoo, whose builders are closures of two kinds (a lambda over
# the image shape, nested defs that import an ExecuTorch example).
SHOWN = {
    "mlp": "builtin",
    "edsr": "zoo",
    "et_resnet8": "zoo",
    "mobilenet_v2_q8": "quantized",
    "corpus_9ad618be": "corpus",
    "random_s0_000": "random",
}


def _show(name: str, capsys) -> str:
    assert cli.main(["graphs", "--show", name]) == 0
    return capsys.readouterr().out


def _spec(name: str):
    from harness.graphs import sources
    from harness.graphs.random.generate import draw_program, spec_of

    if name.startswith("random_s"):
        _, seed, index = name.split("_")
        return spec_of(draw_program(int(seed[1:]), int(index)))
    return sources.source_of(name)[1]


def _run(model, inputs):
    import torch

    if isinstance(model, torch.export.ExportedProgram):
        model = model.module()
    with torch.no_grad():
        return model(*inputs)


def _weights(model) -> dict:
    """Parameters and buffers of a module, or of an ExportedProgram (where ``state_dict`` is a dict)."""
    state = model.state_dict
    return dict(state() if callable(state) else state)


def _assert_same(a, b) -> None:
    import torch
    from torch.utils import _pytree as pytree

    leaves_a, leaves_b = pytree.tree_leaves(a), pytree.tree_leaves(b)
    assert len(leaves_a) == len(leaves_b)
    for x, y in zip(leaves_a, leaves_b):
        if isinstance(x, torch.Tensor):
            assert x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y)
        else:
            assert x == y


@pytest.mark.parametrize("name", sorted(SHOWN), ids=lambda n: f"{SHOWN[n]}-{n}")
def test_show_prints_a_program_that_runs(name, tmp_path, capsys):
    text = _show(name, capsys)
    assert "harness" not in text.replace("passgate graphs --show", "") and "fixtures" not in text
    assert "CaseSpec" not in text and "_spec(" not in text
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    env = {**os.environ, "PYTHONPATH": ""}  # only torch and its ecosystem: nothing of this checkout
    done = subprocess.run([sys.executable, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith(f"{name}: exported ("), done.stdout


@pytest.mark.parametrize("name", ["mlp", "edsr", "et_resnet8", "mobilenet_v2_q8", "corpus_9ad618be"])
def test_show_builds_what_the_case_builds(name, tmp_path, capsys):
    """The program's build() and the case's own builder: same weights, same inputs, same outputs."""
    path = tmp_path / f"{name}.py"
    path.write_text(_show(name, capsys))
    model, inputs, dynamic_shapes = runpy.run_path(str(path), run_name="shown")["build"]()
    built = _spec(name).build()
    _assert_same(tuple(inputs), tuple(built.inputs))
    assert (dynamic_shapes is None) == (built.dynamic_shapes is None)
    _assert_same(_weights(model), _weights(built.model))
    _assert_same(_run(model, inputs), _run(built.model, built.inputs))


def test_show_of_random_appends_the_epilogue_to_the_drawn_program(capsys):
    from harness.graphs.random.generate import draw_program

    text = _show("random_s0_004", capsys)
    assert text.startswith(draw_program(0, 4).code().rstrip("\n"))
    assert "torch.export.export(" in text and 'if __name__ == "__main__":' in text


def test_graphs_with_no_source_lists_every_source(capsys):
    from harness.graphs import sources

    assert cli.main(["graphs"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()[1:-1]]
    listed = {row[1] for row in rows if len(row) > 1} | {row[2] for row in rows if len(row) > 2}
    for source in sources.static_sources():
        assert source in listed, f"{source} missing from:\n{out}"
        for spec in sources.static_specs(source):
            assert any(row[0] == spec.name for row in rows), spec.name
    assert "random_s0_000 .. random_s0_024" in out


@pytest.mark.parametrize("flag", ["--source", "--graphs"])
def test_graphs_and_source_take_sources_and_case_names(flag, capsys):
    assert cli.main(["graphs", flag, "mlp", "random_s0_000", "-q"]) == 0
    out = capsys.readouterr().out
    assert "mlp" in out and "random_s0_000" in out and "named: 2 cases, 2 lower" in out
    assert cli.main(["graphs", flag, "builtin", "-q"]) == 0
    assert "builtin: 6 cases, 6 lower" in capsys.readouterr().out


def test_graphs_unknown_name_is_one_line_exit_2(capsys):
    assert cli.main(["graphs", "--graphs", "builtin", "nowhere"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown graph source 'nowhere'" in err and len(err.splitlines()) == 1
