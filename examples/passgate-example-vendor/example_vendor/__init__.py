"""An example passgate plugin: the passes, catalog, partitioner check and triage table of a fictional backend.

Everything here imports from the public ``harness`` namespace only (the
names marked stable), which is what lets it keep working across passgate
releases; ``pyproject.toml`` registers the modules under passgate's
entry-point groups.
"""

__all__: list[str] = []
