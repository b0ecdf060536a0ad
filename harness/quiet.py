"""Keep third-party import chatter out of passgate's output.

Importing torchao logs a warning per optional CUDA kernel library it cannot
load, torch warns about pytree enum registration, and deep-copying exported
programs raises a FutureWarning per copy. None of it is about the passes
under test, and it buries the progress lines, so the CLI silences exactly
those sources. Warnings raised by a pass under test are left alone.
"""

from __future__ import annotations

import logging
import warnings


def silence_third_party() -> None:
    for name in ("torchao", "torch.utils._pytree", "torch._export", "torch.export", "executorch"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"copyreg|torch\..*|executorch\..*")
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\..*|torchao\..*|executorch\..*")
    warnings.filterwarnings("ignore", category=UserWarning, module=r"torch\..*|torchao\..*|executorch\..*")
