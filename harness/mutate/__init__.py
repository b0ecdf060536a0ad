"""Mutation testing of the passes the suite certifies: how much of a broken pass would its graphs catch?

Branch coverage says which lines of a pass the graphs execute; it does not
say whether a check would notice those lines doing the wrong thing. The
standard measure of that is the mutation score (PIT, mutmut, cosmic-ray):
break the code under test in small ways and count the breaks the tests
notice. Here the code under test is a catalog entry's own source, the tests
are the suite's graphs and checks, and "notice" means the gate fails with
the unmutated run as its baseline.

- :mod:`~harness.mutate.operators`: mutants found in a source file's AST;
- :mod:`~harness.mutate.overlay`: a mutant swapped in as a code object, in memory;
- :mod:`~harness.mutate.sampling`: which mutants are an entry's own, the seeded draws, what reaches them;
- :mod:`~harness.mutate.campaign`: references (per-case lines and verdicts), judging one mutant, scores;
- :mod:`~harness.mutate.driver`: a whole campaign over forked children;
- :mod:`~harness.mutate.report`: ``mutation.json`` and ``mutation.md``.
"""

__all__: list[str] = []
