"""Keep third-party import chatter out of passgate's output.

Importing torchao logs a warning per optional CUDA kernel library it cannot
load, torch warns about pytree enum registration, and deep-copying exported
programs raises a FutureWarning per copy. None of it is about the passes
under test, and it buries the progress lines, so the CLI silences exactly
those sources. Warnings raised by a pass under test are left alone.
"""

from __future__ import annotations

import logging
import re
import warnings

__all__ = ["silence_third_party"]

_THIRD_PARTY = re.compile(r"[/\\](torch|torchao|executorch)[/\\]")


class _RootChatter(logging.Filter):
    """Drop info/debug records torch / executorch log straight to the root logger.

    ExecuTorch's partitioners call ``logging.info`` (the root logger) once per
    op they cannot convert, and some backend module configures the root
    logger at INFO level on import: thousands of lines per catalog run.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or not _THIRD_PARTY.search(record.pathname or "")


def silence_third_party() -> None:
    root = logging.getLogger()
    if not any(isinstance(f, _RootChatter) for f in root.filters):
        root.addFilter(_RootChatter())
    for name in ("torchao", "torch.utils._pytree", "torch._export", "torch.export", "executorch"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"copyreg|torch\..*|executorch\..*")
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\..*|torchao\..*|executorch\..*")
    warnings.filterwarnings("ignore", category=UserWarning, module=r"torch\..*|torchao\..*|executorch\..*")
