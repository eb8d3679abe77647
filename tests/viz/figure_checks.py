"""Read back what a figure drew, for the tests of ftipbook.viz."""
from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.patches import Patch


def ax_texts(ax: Axes) -> list[str]:
    """The strings of every text artist on ``ax``, in drawing order."""
    return [t.get_text() for t in ax.texts]


def legend_texts(ax: Axes) -> list[str]:
    """The entries of ``ax``'s legend, in order."""
    return [t.get_text() for t in ax.get_legend().get_texts()]


def x_extent(patch: Patch) -> tuple[float, float]:
    """``(x_min, x_max)`` of a patch in data coordinates, whatever its class: ``axvspan`` draws a
    ``Polygon`` before matplotlib 3.9 and a ``Rectangle`` from 3.9 on."""
    xs = patch.get_patch_transform().transform(patch.get_path().vertices)[:, 0]
    return float(xs.min()), float(xs.max())
