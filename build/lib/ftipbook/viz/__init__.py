"""Matplotlib helpers for the book's figures; a chapter calls one function per figure.

One module per subject (``viz.attention``, ...), all sharing ``viz.style``. The attention
helpers and the colours are re-exported here, so ``viz.plot_mask`` and ``viz.ACCENT`` work.
"""
from ftipbook.viz.attention import (
    draw_weighted_average,
    plot_attention,
    plot_convex_combination,
    plot_mask,
)
from ftipbook.viz.style import ACCENT, FILL, INK, MUTED, as_array, axes_or_new, glue

__all__ = [
    "ACCENT", "FILL", "INK", "MUTED", "as_array", "axes_or_new", "glue",
    "plot_mask", "plot_attention", "draw_weighted_average", "plot_convex_combination",
]
