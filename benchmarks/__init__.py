"""passgate's benchmarks: ``python -m benchmarks`` (``tox -e bench``). Never timed assertions inside tests."""
