"""Evaluation tools: success metrics over repeated attempts and the statistics of repeated measurements.

Each module is imported by name (``from ftipbook.eval import metrics, stats``); this package file
re-exports nothing, so new modules can be added without editing it.
"""
