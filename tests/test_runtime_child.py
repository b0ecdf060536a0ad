"""The runtime's forked child: a runtime that aborts leaves its last words in the verdict, not a stack on the terminal.

A kernel's failed ``ET_CHECK`` logs why and aborts. The child's fd 2 is a
file its parent reads once it is over, so that message reaches
``runtime_runs``' text; the Python stack faulthandler would dump (pytest
enables it on a copy of stderr, ``-X faulthandler`` here does the same) is
not printed: it would only show the child's own frames.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from harness.check.runtime_exec import ChildDied, _runtime_log, in_child


def test_an_aborting_childs_last_words_are_in_its_message_and_no_stack_reaches_the_terminal():
    script = textwrap.dedent("""
        import os, sys
        from harness.check.runtime_exec import ChildDied, in_child

        def dies():
            sys.stderr.write("ET_LOG via python: kernel add.out: check failed\\n")
            os.write(2, b"native: In function execute(), assert failed (dim < 4)\\n")
            os.abort()

        try:
            in_child(dies, 60)
        except ChildDied as exc:
            print("MESSAGE", exc)
    """)
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    message = next(line for line in proc.stdout.splitlines() if line.startswith("MESSAGE"))
    assert "SIGABRT" in message
    assert message.endswith("it last wrote: native: In function execute(), assert failed (dim < 4)")
    assert "Fatal Python error" not in proc.stderr and "Current thread" not in proc.stderr
    assert "kernel add.out: check failed" in proc.stderr  # all it wrote is passed on, as a live child's is


def test_the_runtime_log_reads_python_and_native_lines_in_the_order_written():
    def logs():
        with _runtime_log() as log:
            sys.stderr.write("first, through sys.stderr\n")
            os.write(2, b"second, from native code\n")
        return log.text

    text = in_child(logs, 60)
    assert text.index("first, through sys.stderr") < text.index("second, from native code")


def test_a_child_that_ends_in_silence_says_only_how_it_died():
    with pytest.raises(ChildDied) as got:
        in_child(lambda: os._exit(3), 60)
    assert str(got.value) == "died: exited with status 3"
