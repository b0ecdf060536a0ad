"""One (fusion, case) judged: tolerances, the Vulkan checks, the IR checks of the fused program, diagnosis.

Everything a verdict on a single case needs, and nothing about which cases
to judge: the fixed recipe list, the search and the gate all come here
through :func:`~vulkan.judging.suite.check_case` (the search's cheaper
draw, :func:`vulkan.search.evaluate.evaluate`, uses the same checks).
"""
