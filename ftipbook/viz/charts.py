"""Drawing pieces the figure modules share: grouped bars, and the boxes, arrows and canvas of diagrams.

Each piece draws on a given ``Axes`` and computes nothing about the mathematics; the figure
modules (``viz.diagrams``, ``viz.pretraining_figs``, ...) validate their own inputs, call these,
and add their titles and labels. The colours are those of :mod:`ftipbook.viz.style`.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.container import BarContainer
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ftipbook.viz.style import FILL, INK, PALETTE, as_array


# --- grouped bars --------------------------------------------------------------------------------
def series_arrays(series: Mapping[str, Sequence[float]], n: int, *, kind: str = "series", unit: str = "values",
                  of: str = "categories") -> dict[str, np.ndarray]:
    """Each entry of ``series`` as a float array of ``n`` values; otherwise a ``ValueError`` such as
    ``"series 'a' has (2,) values for 3 categories"`` (``kind``, ``unit`` and ``of`` name the parts)."""
    arrays = {}
    for label, values in series.items():
        ys = as_array(values)
        if ys.shape != (n,):
            raise ValueError(f"{kind} {label!r} has {ys.shape} {unit} for {n} {of}")
        arrays[label] = ys
    return arrays


def grouped_bars(ax: Axes, positions: Sequence[float], series: Mapping[str, np.ndarray], *,
                 fmt: Callable[[float], str] | None = None, fontsize: float = 8, padding: float = 2,
                 errors: Mapping[str, np.ndarray] | None = None, alpha: float = 0.85) -> list[BarContainer]:
    """One bar per position for each entry of ``series``, side by side within 0.8 of a unit.

    Series take the colours of :data:`~ftipbook.viz.style.PALETTE` in order and are labelled for
    the legend. With ``fmt`` each bar's height is written on top (``fmt(height)``, ``fontsize``,
    ``padding`` points above); ``errors[label]`` (half-widths) adds error bars to that series.
    Returns the bar containers, one per series.
    """
    centres = np.asarray(positions, dtype=float)
    width = 0.8 / len(series)
    containers = []
    for i, (label, ys) in enumerate(series.items()):
        extra = {} if errors is None else {"yerr": errors.get(label), "capsize": 3,
                                            "error_kw": {"elinewidth": 1, "ecolor": INK}}
        bars = ax.bar(centres + (i - (len(series) - 1) / 2) * width, ys, width, label=label,
                      color=PALETTE[i % len(PALETTE)], alpha=alpha, **extra)
        if fmt is not None:
            ax.bar_label(bars, labels=[fmt(y) for y in ys], fontsize=fontsize, padding=padding)
        containers.append(bars)
    return containers


def bar_centres(bars: BarContainer) -> list[float]:
    """The horizontal centre of each bar of ``bars`` (to put markers on grouped bars)."""
    return [b.get_x() + b.get_width() / 2 for b in bars]


# --- diagrams ------------------------------------------------------------------------------------
def box(ax: Axes, x: float, y: float, text: str, *, w: float, h: float, fc: str = FILL, ec: str = INK,
        fontsize: float = 10, linestyle: str = "-", linewidth: float = 1.2, boxstyle: str = "round,pad=0.01",
        family: str | None = None) -> None:
    """A rounded ``w`` by ``h`` box centred on ``(x, y)`` with ``text`` in its middle (a diagram node).

    ``boxstyle`` is Matplotlib's (each figure module keeps its own padding and rounding);
    ``family`` sets the font family of the text (e.g. ``"monospace"``).
    """
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle=boxstyle, fc=fc, ec=ec, linewidth=linewidth,
                                linestyle=linestyle))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, color=INK, family=family)


def arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], *, colour: str = INK, width: float = 1.2,
          rad: float = 0.0, linestyle: str = "-", head: float = 12.0, shrink: float = 0.0) -> None:
    """A filled-head arrow from ``start`` to ``end`` in data coordinates.

    ``rad`` bends it along an arc (``0``: straight), ``head`` sizes the head, and ``shrink``
    stops it that many points short of both ends.
    """
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=head, color=colour, linewidth=width,
                                 connectionstyle=f"arc3,rad={rad}", linestyle=linestyle, shrinkA=shrink,
                                 shrinkB=shrink))


def canvas(ax: Axes, xlim: tuple[float, float] = (0.0, 1.0), ylim: tuple[float, float] = (0.0, 1.0)) -> None:
    """Fix ``ax``'s limits to ``xlim`` and ``ylim`` and hide its axes: the blank canvas of a diagram."""
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.axis("off")


__all__ = ["series_arrays", "grouped_bars", "bar_centres", "box", "arrow", "canvas"]
