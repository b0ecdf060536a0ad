"""Which cases to judge: each fused op's configuration space searched, failures shrunk, committed cases.

Hypothesis draws cases over an op's space (:mod:`~vulkan.search.space` and
the registry :mod:`~vulkan.search.spaces`), each judged once
(:mod:`~vulkan.search.evaluate`); a failure is shrunk and probed for its
boundary (:mod:`~vulkan.search.op_search`, :mod:`~vulkan.search.boundary`).
The cases the gate judges instead of drawing, and the shrunk failures it
replays, are in :mod:`~vulkan.search.pinned`.
"""
