"""The ``passgate`` command line.

Subcommands live in their own modules (``harness/cli/<command>.py``, and
content's, e.g. ``vulkan/entry/command.py`` through the ``passgate.commands`` entry
point group) and are listed by :func:`commands`; each module exposes
``add_parser(subparsers)`` and ``run(args) -> int`` and imports torch only
inside ``run``, so ``passgate --help`` answers without the ~10 s import of
torch and executorch.

Exit status, for every command (DESIGN.md): 0 everything checked holds,
1 a violation or regression, 2 bad usage or input (one line on stderr, no
traceback).
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
from typing import Optional, Sequence

from harness.core.errors import UsageError
from harness.core.kinds import ExitCode
from harness.core.version import __version__

__all__ = ["COMMANDS", "DESCRIPTION", "build_parser", "commands", "console", "main"]

# subcommand -> module exposing add_parser(subparsers) and run(args): the engine's own, in this order
# (:func:`commands` appends the ones content registers)
COMMANDS: dict[str, str] = {
    "check": "harness.cli.check",
    "report": "harness.cli.report",
    "certify": "harness.cli.certify",
    "verify": "harness.cli.certify",
    "passes": "harness.cli.passes",
    "run": "harness.cli.run",
    "baseline": "harness.cli.baseline",
    "bisect": "harness.cli.bisect",
    "graphs": "harness.cli.graphs",
    "serve": "harness.cli.serve",
    "fuzz": "harness.cli.fuzz",
    "corpus": "harness.cli.corpus",
    "mutate": "harness.cli.mutate",
    "bundle": "harness.cli.device",
    "device": "harness.cli.device",
}


def commands() -> dict[str, str]:
    """Every subcommand: the engine's own (:data:`COMMANDS`), then by name the modules content registers under
    the ``passgate.commands`` entry point group (``vulkan = "vulkan.entry.command"``); a registered name cannot replace an
    engine command. Reading the group imports none of them.

    Read when a parser is built, not at import: ``passgate check`` through a warm server never builds one, and
    reading the entry points (``importlib.metadata``) is a third of its client's start-up.
    """
    from harness.core import plugins

    registered = {ep.name: ep.module for ep in plugins.points(plugins.COMMANDS)}
    return {**COMMANDS, **{name: module for name, module in registered.items() if name not in COMMANDS}}

DESCRIPTION = """\
passgate: a pass-test and conformance harness for PyTorch / ExecuTorch graph passes.

It lowers graphs once (random, model zoo, built-in), runs each pass on a copy
under IR-spec verification (metadata, call_module, dialect verifier, real
execution, numerics against the pre-pass program) and writes reports.
Exit status: 0 all checks hold, 1 a violation or regression, 2 bad usage.
"""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="passgate", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"passgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in commands().values():
        importlib.import_module(module).add_parser(sub)
    return parser


def _torch_writes_into_our_cache(args) -> None:
    """Point torch's inductor cache folder into passgate's cache folder, unless the user chose one.

    Importing ``executorch.exir`` imports ``torch._dynamo``, which creates
    ``$TMPDIR/torchinductor_$USER`` at once; passgate writes only to its report
    and cache folders (DESIGN.md), so torch's folder goes inside the latter.
    """
    if os.environ.get("TORCHINDUCTOR_CACHE_DIR") or getattr(args, "no_cache", False):
        return
    from harness.graphs.cache import default_cache_root

    root = getattr(args, "cache_dir", None) or default_cache_root()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(os.path.abspath(root), "torchinductor")


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["check"]:  # a warm `passgate serve` runs it when one is up (harness/serve/server.py)
        from harness.serve.client import run_via_server

        served = run_via_server(argv)
        if served is not None:
            return served
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return ExitCode.USAGE
        from harness.core.quiet import silence_third_party

        silence_third_party()
        _torch_writes_into_our_cache(args)
        return int(args.run(args))
    except UsageError as exc:
        print(f"passgate: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except KeyboardInterrupt:
        print("passgate: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        raise  # the reader of stdout went away: console() says nothing and exits 1
    except OSError as exc:  # a full disk, an I/O error, a read-only folder: the environment's, told in one line
        where = f": {exc.filename}" if exc.filename else ""
        print(f"passgate: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return ExitCode.USAGE


def console() -> None:
    """The ``passgate`` executable: :func:`main`, then out without tearing the interpreter down.

    Why: a warm gate holds ~230,000 results beside torch, and freeing them
    object by object at exit takes 3-4 s of a ~20 s run, to hand back memory
    the OS reclaims at once. The exit handlers still run (multiprocessing
    joins its children, tempfile removes its folders, logging flushes) and
    the standard streams are flushed; then ``os._exit``. An exception from
    :func:`main` exits the usual way, with its traceback;
    ``PASSGATE_FULL_EXIT=1`` (or a Python without ``atexit._run_exitfuncs``)
    always does.
    """
    try:
        status = main()
    except BrokenPipeError:
        # the reader went away (`passgate run | head`): the reports are written, the rest of the text has no
        # reader; no traceback about it (Python's documented recipe: stdout to devnull, exit 1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        status = ExitCode.VIOLATION
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None or os.environ.get("PASSGATE_FULL_EXIT"):
        sys.exit(status)
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`passgate ... | head`): nothing more can be said
            pass
    os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    console()
