"""Comparison tools: published results as data, cost and throughput models, records and reports.

Each module is imported by name (``from ftipbook.compare import published``); this package
file re-exports nothing, so new modules can be added without editing it.
"""
