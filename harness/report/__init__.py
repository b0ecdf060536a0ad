"""The report layer: what a run leaves behind, and what is done with it afterwards.

- writers of the four report files: ``results.json`` (:mod:`.results_json`),
  ``junit.xml`` (:mod:`.junit_xml`), ``summary.md`` (:mod:`.summary_md`) and
  ``report.html`` (:mod:`.report_html`), all rendering the one read-only model
  of a results document (:mod:`.view`); :mod:`.writers` is the only module
  that knows every renderer; report.html's parts are modules of their own:
  its summary per pass and per check (:mod:`.html_summary`), matrix
  (:mod:`.html_matrix`), per-pass failure details (:mod:`.html_passes`),
  timing, case and op-coverage tables (:mod:`.html_tables`), and its inline
  stylesheet and script (:mod:`.html_assets`);
- the entries whose numerics no case could judge, because ``runs`` or
  ``runnable`` blocked them (:mod:`.blind`; its section in summary.md,
  report.html and results.json: :mod:`.blind_sections`; ``blind.json``);
- the one headline every format states (:mod:`.headline`: gate verdict, new,
  worsened, known, fixed, stale, warnings) and what a run prints when it ends
  (:mod:`.terminal`: reasons of each failure, counts, headline, report files);
- work on results after the run: diff of two runs (:mod:`.diff`), the
  shard parts of one run merged (:mod:`.merge`), the baseline gate (:mod:`.baseline`; what a known
  violation looked like when recorded, so one that got worse fails it: :mod:`.violation_fingerprint`) and
  certification bundles (:mod:`.certify`).

Imports: ``harness.core``, ``harness.graphs`` (atomic writes), and
``harness.check`` (only :func:`.certify.backend_fingerprint`, to load the pass
under test, and :mod:`.merge`, which judges the torch-free pass-level
``exercised`` check over joined shards), and the standard library; never ``harness.run``, ``harness.serve``
or ``harness.cli``, and never content (``passes``, ``vulkan``, ``fixtures``):
content adds report.html sections through the ``passgate.report_sections``
entry-point group.
"""
