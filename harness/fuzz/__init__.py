"""Coverage-guided random graphs: graphs that make every pass do its work (``passgate fuzz``, ``passgate corpus``).

A check can only flag what a graph makes a pass do. ``passgate fuzz`` draws
random programs (:mod:`harness.graphs.random`), lowers each, runs the pass(es)
on it under coverage.py, and keeps the graphs that reach a branch of a pass's
own source no earlier draw reached, or make it change the program in a new
way (a new part of its change signature). Every check runs on every kept
graph, failures are shrunk to reproducers, and kept graphs are written as
plain torch programs. ``passgate corpus distill`` keeps the fewest of them
that preserve every catalog entry's coverage and change signatures, for the
gate to run (``fixtures/corpus``, the ``corpus`` graph source).

What we took from hypothesis and HypoFuzz, and why not more
------------------------------------------------------------

*HypoFuzz* (Zac-HD/hypofuzz) fuzzes ``@given`` tests: it collects them with
pytest, runs worker processes that interleave tests, keeps per test a pool of
choice sequences that each covered a new arc, mutates them, and serves a
dashboard. We use it as a design reference, not a dependency: its unit is a
``@given`` test function, ours is (graph, pass) with a lowering in between,
coverage of *one pass's* files and a dozen checks after; its state lives in
hypothesis' example database, while ours must be reproducible from a name;
and it is not a library a CI gate can depend on (AGPL-3.0 in its earlier
releases, and a non-commercial licence since 2025 that also forbids
modification). What we took from it: the pool of inputs that reached new
coverage, mutation of their *choice sequences* rather than of the graphs,
weighting parents by what they brought, and generating before mutating.

``hypothesis.target()`` hill-climbs a numeric score, within one test run's
generate and target phases, with search state internal to that run. Our
draws are not made inside a hypothesis test run: graph ``i`` of seed ``s`` is
``draw_program(s, i)``, a ``ConjectureData`` fed by ``Random("passgate:s:i")``,
so ``random_s<s>_<i>`` names the same graph in every process and report.
Coverage is a set of arcs per pass, not one score, and a kept graph must be
rebuilt by name years later, so ``target()`` does not fit.

What we use of hypothesis is what the generator already uses: the
``programs`` strategy drawn through ``ConjectureData`` with a seeded
``Random`` (and a provider without "constants from local source code", which
would make draws depend on what was imported), plus two things the generator
does not need: the choice sequence a draw recorded (``data.nodes``), and
``ConjectureData(prefix=...)`` to replay an edited sequence. Hypothesis'
misalignment rule (a choice that no longer fits where it lands becomes the
simplest one that does) keeps every mutant a valid program, and the mutant's
name (``random_s0_012_m3``) is its recipe (:mod:`harness.fuzz.draws`).

Determinism: draws are planned in generations of a fixed size from state the
previous generations left; each draw is measured in a child forked from the
same warmed-up parent; results are decided in planned order. Same seed, same
draws, same kept graphs, whatever ``-j``; the time budget only decides how
many generations run.

Modules: :mod:`~harness.fuzz.draws` (fresh draws, mutants, names),
:mod:`~harness.fuzz.targets` (the passes, their files, branch counts),
:mod:`~harness.fuzz.measure` (one draw under coverage, change atoms),
:mod:`~harness.fuzz.workers` (forked measuring), :mod:`~harness.fuzz.loop`
(the generations and keep decisions), :mod:`~harness.fuzz.campaign` (the
``passgate fuzz`` session), :mod:`~harness.fuzz.corpus` (corpus folders),
:mod:`~harness.fuzz.distill` (greedy set cover). The layer sits between
``run`` (sessions, the scheduler, forking) and ``serve``/``cli``.
"""
