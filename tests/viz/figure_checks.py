"""Read back what a figure drew, for the tests of ftipbook.viz."""
from __future__ import annotations

from matplotlib.axes import Axes


def ax_texts(ax: Axes) -> list[str]:
    """The strings of every text artist on ``ax``, in drawing order."""
    return [t.get_text() for t in ax.texts]


def legend_texts(ax: Axes) -> list[str]:
    """The entries of ``ax``'s legend, in order."""
    return [t.get_text() for t in ax.get_legend().get_texts()]
