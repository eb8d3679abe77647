"""Figures of the finite-grid chapters: observed points, envelopes, bands and crossings (ftip-00LI to 00LP).

Each helper draws on a given ``Axes`` (or makes a figure) and returns it. Nothing here computes
what it draws: chapters compute with :mod:`ftipbook.compare.grid` and pass the results in. Points
are drawn only at grid points; the thin lines joining them guide the eye and are not values.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes

from ftipbook.compare.grid import Band, CostGrid, Crossing
from ftipbook.viz.style import FILL, MUTED, PALETTE, axes_or_new, finish_axes


def _grid_axis(ax: Axes, grid: CostGrid, logx: bool, grid_ticks: bool = True) -> None:
    if logx:
        ax.set_xscale("log")
    if grid_ticks:
        ax.set_xticks(grid.points, [f"{c:.3g}" for c in grid.points])
        ax.minorticks_off()


def plot_envelopes(grid: CostGrid | Mapping[str, CostGrid], scores: Mapping[str, Sequence[float]],
                   envelopes: Mapping[str, Sequence[float]], *, logx: bool = True, ylabel: str = "score",
                   ax: Axes | None = None, title: str | None = None) -> Axes:
    """Observed scores (dots) and their upper envelopes (open squares on a dashed guide) per series (ftip-00LJ).

    ``grid`` is one grid for every series, or a mapping from series name to its own grid (all of
    one cost and unit); the x ticks mark the grid points when there is one grid.
    """
    grids = dict(grid) if isinstance(grid, Mapping) else {name: grid for name in scores}
    if not scores or set(grids) != set(scores) or set(envelopes) != set(scores):
        raise ValueError(f"scores, envelopes and grids must name the same series, got {sorted(scores)}, "
                         f"{sorted(envelopes)} and {sorted(grids)}")
    first = next(iter(grids.values()))
    ax = axes_or_new(ax, (5.4, 3.6))
    for i, (name, values) in enumerate(scores.items()):
        colour = PALETTE[i % len(PALETTE)]
        points = grids[name].points
        ax.plot(points, values, "o-", color=colour, lw=0.8, ms=5, label=f"{name}: observed")
        ax.plot(points, envelopes[name], "s--", color=colour, lw=1.2, ms=9, mfc="none",
                label=f"{name}: upper envelope")
    _grid_axis(ax, first, logx, all(g == first for g in grids.values()))
    return finish_axes(ax, f"{first.cost} ({first.unit})", ylabel, title)


def plot_bands(bands: Mapping[str, Band], *, target: float | None = None, logx: bool = True,
               ylabel: str = "score", ax: Axes | None = None, title: str | None = None) -> Axes:
    """Point estimates with their intervals at every grid point, one series per band (ftip-00LK).

    The bands' grids must declare the same cost and unit; series are shifted sideways a little so
    the bars do not overlap, and the x ticks mark the grid points when all bands share one grid.
    """
    if not bands:
        raise ValueError("bands must hold at least one Band")
    grid = next(iter(bands.values())).grid
    ax = axes_or_new(ax, (5.4, 3.6))
    shifts = np.linspace(-0.04, 0.04, len(bands)) if len(bands) > 1 else [0.0]
    for i, ((name, band), shift) in enumerate(zip(bands.items(), shifts)):
        if (band.grid.cost, band.grid.unit) != (grid.cost, grid.unit):
            raise ValueError(f"band {name!r} is on a grid of another cost or unit")
        xs = np.asarray(band.grid.points) * (10 ** shift if logx else 1.0)
        est = np.asarray(band.estimates)
        err = np.vstack([est - np.asarray(band.lows), np.asarray(band.highs) - est])
        ax.errorbar(xs, est, yerr=err, fmt="o-", color=PALETTE[i % len(PALETTE)], lw=1, ms=4, capsize=3,
                    label=name)
    if target is not None:
        ax.axhline(target, color=MUTED, lw=1, ls="--", label=f"target q = {target:g}")
    _grid_axis(ax, grid, logx, all(band.grid == grid for band in bands.values()))
    return finish_axes(ax, f"{grid.cost} ({grid.unit})", ylabel, title)


def plot_crossings(grid: CostGrid, curves: Mapping[str, Sequence[float]], crossings: Sequence[Crossing], *,
                   logx: bool = True, ylabel: str = "score", ax: Axes | None = None,
                   title: str | None = None) -> Axes:
    """Two or more observed curves, and the grid interval ``(before, after]`` of each crossing shaded (ftip-00LP)."""
    ax = axes_or_new(ax, (5.4, 3.6))
    for i, (name, values) in enumerate(curves.items()):
        ax.plot(grid.points, values, "o-", color=PALETTE[i % len(PALETTE)], lw=1.2, ms=5, label=name)
    for k, c in enumerate(crossings):
        ax.axvspan(c.before, c.after, color=FILL, alpha=0.7, zorder=0,
                   label="order changes in here" if k == 0 else None)
    _grid_axis(ax, grid, logx)
    return finish_axes(ax, f"{grid.cost} ({grid.unit})", ylabel, title)
