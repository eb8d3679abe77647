"""Drawing pieces the figure modules share: grouped bars; the boxes, arrows, canvas and status legends
of diagrams; annotated and true/false tables.

Each piece draws on a given ``Axes`` and computes nothing about the mathematics; the figure
modules (``viz.diagrams``, ``viz.pretraining_figs``, ...) validate their own inputs, call these,
and add their titles and labels. The colours are those of :mod:`ftipbook.viz.style`.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.container import BarContainer
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

from ftipbook.viz.style import FILL, INK, MUTED, PALETTE, as_array, axes_or_new


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
          rad: float = 0.0, linestyle: str = "-", head: float = 12.0, shrink: float = 0.0,
          zorder: float | None = None) -> None:
    """A filled-head arrow from ``start`` to ``end`` in data coordinates.

    ``rad`` bends it along an arc (``0``: straight), ``head`` sizes the head, and ``shrink``
    stops it that many points short of both ends. ``zorder`` draws it above (or below) other
    artists; ``None`` keeps Matplotlib's default for patches.
    """
    patch = FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=head, color=colour, linewidth=width,
                            connectionstyle=f"arc3,rad={rad}", linestyle=linestyle, shrinkA=shrink, shrinkB=shrink)
    if zorder is not None:
        patch.set_zorder(zorder)
    ax.add_patch(patch)


def canvas(ax: Axes, xlim: tuple[float, float] = (0.0, 1.0), ylim: tuple[float, float] = (0.0, 1.0)) -> None:
    """Fix ``ax``'s limits to ``xlim`` and ``ylim`` and hide its axes: the blank canvas of a diagram."""
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.axis("off")


def outline(dashed: bool) -> dict[str, Any]:
    """Edge colour and line style of a box or legend patch: muted and dashed for something not
    established (not identified, assumed), ink and solid otherwise."""
    return {"ec": MUTED if dashed else INK, "linestyle": "--" if dashed else "-"}


def status_patches(fills: Mapping[str, str], labels: Mapping[str, str], present: Collection[str], *,
                   dashed: str) -> list[Patch]:
    """Legend handles for the statuses in ``present``, in the order of ``fills``.

    Status ``st`` is a patch filled ``fills[st]`` and labelled ``labels[st]``; the ``dashed``
    status gets the :func:`outline` its boxes are drawn with.
    """
    return [Patch(fc=fills[st], label=labels[st], **outline(st == dashed)) for st in fills if st in present]


# --- tables ---------------------------------------------------------------------------------------
def cell_values(ax: Axes, m: np.ndarray, fmt: str, top: float, *, fontsize: float = 9) -> None:
    """Write ``fmt.format(m[i, j])`` on cell ``(i, j)`` of an image of the 2-D array ``m``: white on
    cells above ``0.6 top`` (dark in a sequential colour map), ink elsewhere."""
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            ax.text(j, i, fmt.format(m[i, j]), ha="center", va="center", fontsize=fontsize,
                    color="white" if m[i, j] > 0.6 * top else INK)


@dataclass(frozen=True)
class CellLook:
    """How one kind of cell of :func:`flag_grid` looks: its fill, its word, the word's colour and weight."""

    fill: str
    text: str
    colour: str
    bold: bool = False


def flag_grid(flags: Mapping[str, Mapping[str, bool]], *, yes: CellLook, no: CellLook, name: str,
              cell: tuple[float, float], ax: Axes | None = None) -> Axes:
    """A table of booleans as a grid: rows are the keys of ``flags``, columns the keys of each row.

    True cells look like ``yes``, false ones like ``no``; column names sit on top. Every row must
    name the same nonempty columns in the same order (else ``ValueError``, naming the table
    ``name``). A new figure gets ``cell = (width, height)`` inches per cell plus room for labels.
    """
    rows = list(flags)
    if not rows:
        raise ValueError(f"{name} must name at least one row")
    cols = list(flags[rows[0]])
    if not cols or any(list(flags[r]) != cols for r in rows):
        raise ValueError(f"every row of {name} must name the same nonempty columns, in the same order")
    ax = axes_or_new(ax, (cell[0] * len(cols) + 2.8, cell[1] * len(rows) + 1.2))
    grid = np.array([[1.0 if flags[r][c] else 0.0 for c in cols] for r in rows])
    ax.imshow(grid, cmap=ListedColormap([no.fill, yes.fill]), vmin=0, vmax=1, aspect="auto")
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            look = yes if flags[r][c] else no
            ax.text(j, i, look.text, ha="center", va="center", fontsize=9, color=look.colour,
                    fontweight="bold" if look.bold else "normal")
    ax.set_xticks(range(len(cols)), cols)
    ax.set_yticks(range(len(rows)), rows)
    ax.tick_params(length=0)
    ax.xaxis.tick_top()
    return ax


__all__ = ["series_arrays", "grouped_bars", "bar_centres", "box", "arrow", "canvas", "outline", "status_patches",
           "cell_values", "CellLook", "flag_grid"]
