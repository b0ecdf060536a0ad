"""The top floor: what the engine calls through entry points, calling only down.

``passgate vulkan`` (:mod:`~vulkan.entry.command`, registered under
``passgate.commands``) parses and hands over to one of its two runs, the
fixed recipe list (:mod:`~vulkan.entry.cases_run`) or the search
(:mod:`~vulkan.entry.search_run`), which cut the work into items
(:mod:`~vulkan.entry.work`); ``passgate run`` plans the gate's fusion
cases through :mod:`~vulkan.entry.unit` (``passgate.units``).
"""
