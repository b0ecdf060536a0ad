"""What a Vulkan run leaves for people: per-op tables, the error CSV, reproducers, plots, BundledPrograms.

Reads verdicts and searches, never makes them; report.html's Vulkan section
(:func:`~vulkan.reports.plots.report_section`) is registered under the
``passgate.report_sections`` entry point group.
"""
