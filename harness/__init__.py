"""passgate's engine: graph cases, pass loading, the runner, verifiers, reports, CLI.

Kept import-light on purpose: ``passgate --help`` must not pay for importing
torch and executorch (~10 s here). Modules that need torch import it themselves.
"""

__version__ = "0.1.0"
