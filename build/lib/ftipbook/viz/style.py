"""Shared look of the book's figures: colours, series palettes, the log-axis floor, the two helpers
every plotting module uses and the common finish of labelled plots (shared drawing pieces are in
:mod:`ftipbook.viz.charts`)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes

INK = "#1f2937"
ACCENT = "#c2410c"
MUTED = "#9ca3af"
FILL = "#dbeafe"
BLUE = "#2563eb"
GREEN = "#059669"
VIOLET = "#7c3aed"
#: Fill of a highlighted box (light orange), e.g. a selected expert, a derived value or the second segment.
HIGHLIGHT = "#fed7aa"
#: Fill of something absent or not identified (light grey), e.g. padding, an undisclosed field or a missing cell.
BLANK = "#f3f4f6"
#: Series colours, in order, for plots with several lines or bar groups.
PALETTE = (INK, ACCENT, BLUE, GREEN, MUTED)
#: :data:`PALETTE` with a sixth colour, for plots with up to six series.
PALETTE_WIDE = PALETTE + (VIOLET,)
#: Values below this are drawn at this floor, so exact zeros stay visible on a log axis.
LOG_FLOOR = 1e-18


def axes_or_new(ax: Axes | None, size: tuple[float, float]) -> Axes:
    """``ax`` itself, or the axes of a new constrained-layout figure of ``size`` inches."""
    if ax is not None:
        return ax
    _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


def as_array(x: torch.Tensor | np.ndarray | Sequence) -> np.ndarray:
    """``x`` as a float64 NumPy array (tensors are detached and moved to the CPU)."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().double().numpy()
    return np.asarray(x, dtype=float)


def finish_axes(ax: Axes, xlabel: str, ylabel: str, title: str | None, *, grid: bool = False) -> Axes:
    """Label both axes, draw the legend (small, unframed), add the title if any; returns ``ax``."""
    ax.set(xlabel=xlabel, ylabel=ylabel)
    if grid:
        ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def glue(name: str, obj: Any, display: bool = True) -> None:
    """Store ``obj`` under ``name`` for a ``{glue:figure}`` of the book (myst-nb's ``glue``).

    The book build has myst-nb; a reader who installed only the package (Colab, a plain
    ``pip install``) has no ``{glue:figure}`` to show the figure, so it is displayed in place.
    """
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        from IPython.display import display as show
        show(obj)
        return
    myst_glue(name, obj, display=display)
