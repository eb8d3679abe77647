"""Figures of the equivariance chapters (section ftip-00B6: ftip-00B7 … ftip-00BJ).

:func:`plot_defect_bars` compares the worst measured defect of several update maps against a
pass tolerance (the commuting equation of ftip-00B7, its failures in ftip-00BC, the
Gram-dependence test of ftip-00BH); :func:`plot_curves` draws measured quantities against one
variable, with optional marker series and power-law guide lines (the ratio ``phi(x)/x`` of
ftip-00BB, Adam's defect against ``eps`` and ``eta`` in ftip-00BD and 00BE, the jump of
``msign`` at a rank drop in ftip-00BJ). Vectors in a plane (ftip-00BF, 00BG) are drawn with
:func:`ftipbook.viz.gauge_figs.plot_plane`. Nothing here computes the mathematics it draws.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes

from ftipbook.viz.gauge_figs import LINESTYLES, PALETTE
from ftipbook.viz.style import ACCENT, INK, LOG_FLOOR, MUTED, as_array, axes_or_new, finish_axes

#: Axis scales :func:`plot_curves` accepts.
SCALES = ("linear", "log")
#: One guide line of :func:`plot_curves`: ``(label, slope, (x0, y0))``, i.e. ``y = y0 (x / x0)^slope``.
Guide = tuple[str, float, tuple[float, float]]


def plot_defect_bars(defects: Mapping[str, float], *, tol: float, ax: Axes | None = None,
                     title: str | None = None, xlabel: str = "worst relative defect") -> Axes:
    """One horizontal bar per map (name -> worst relative defect) on a log axis, with the tolerance.

    Bars at or below ``tol`` (the map passed) are drawn in ink, the others in the accent colour;
    exact zeros are drawn at :data:`~ftipbook.viz.style.LOG_FLOOR` so they stay visible.
    """
    if not defects:
        raise ValueError("defects is empty; pass {map name: worst defect}")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    values = as_array(list(defects.values()))
    if not (np.isfinite(values).all() and (values >= 0).all()):
        raise ValueError(f"defects must be finite numbers >= 0, got {dict(defects)!r}")
    ax = axes_or_new(ax, (6.4, 1.2 + 0.32 * len(defects)))
    y = np.arange(len(values))[::-1]
    colours = [INK if v <= tol else ACCENT for v in values]
    ax.barh(y, np.maximum(values, LOG_FLOOR), color=colours, height=0.6)
    ax.set_yticks(y, list(defects))
    ax.set_xscale("log")
    ax.set_xlim(LOG_FLOOR / 10, max(10.0, float(values.max()) * 10))
    ax.set_ylim(-0.6, len(values) + 0.2)  # room above the top bar for the tolerance label
    ax.axvline(tol, color=MUTED, linestyle=":", linewidth=1.2)
    ax.text(tol, len(values) - 0.15, f" tolerance {tol:g}", fontsize=8, color=MUTED, va="center")
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    return ax


def plot_curves(x: Sequence[float], series: Mapping[str, Sequence[float]], *, xlabel: str, ylabel: str,
                points: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
                guides: Sequence[Guide] = (), xscale: str = "linear", yscale: str = "linear",
                ax: Axes | None = None, title: str | None = None) -> Axes:
    """Lines ``series`` (name -> values at ``x``), marker series ``points`` (name -> ``(xs, ys)``) and guides.

    A guide ``(label, slope, (x0, y0))`` is the power law ``y0 (x / x0)^slope`` over the range
    of ``x``, drawn dashed: a straight line of that slope on log-log axes; it does not widen the
    ``y`` range set by the data. On a log ``y`` axis values are floored at
    :data:`~ftipbook.viz.style.LOG_FLOOR`.
    """
    xs = as_array(x)
    if xs.ndim != 1 or not len(xs):
        raise ValueError(f"x must be a non-empty 1-D sequence, got shape {xs.shape}")
    if not series and not points:
        raise ValueError("nothing to draw: pass series or points")
    for name, scale in (("xscale", xscale), ("yscale", yscale)):
        if scale not in SCALES:
            raise ValueError(f"{name} must be one of {SCALES}, got {scale!r}")
    if guides and not (xscale == yscale == "log"):
        raise ValueError("guides are power laws; they need xscale='log' and yscale='log'")
    floor = (lambda v: np.maximum(v, LOG_FLOOR)) if yscale == "log" else (lambda v: v)
    ax = axes_or_new(ax, (6.0, 3.6))
    colour = 0
    for name, values in series.items():
        y = as_array(values)
        if y.shape != xs.shape:
            raise ValueError(f"series {name!r} has shape {y.shape}, x has {xs.shape}")
        ax.plot(xs, floor(y), color=PALETTE[colour % len(PALETTE)], linewidth=1.5, label=name,
                linestyle=LINESTYLES[(colour // len(PALETTE)) % len(LINESTYLES)])  # new style once colours repeat
        colour += 1
    for name, (px, py) in (points or {}).items():
        px, py = as_array(px), as_array(py)
        if px.shape != py.shape or px.ndim != 1:
            raise ValueError(f"points {name!r}: xs and ys must be 1-D of one length, got {px.shape}, {py.shape}")
        ax.plot(px, floor(py), linestyle="none", marker="o", markersize=5, markerfacecolor="none",
                color=PALETTE[colour % len(PALETTE)], label=name)
        colour += 1
    ax.set_xscale(xscale)
    ax.set_yscale(yscale)
    data_ylim = ax.get_ylim()
    lo, hi = float(xs.min()), float(xs.max())
    for label, slope, (x0, y0) in guides:
        if not (x0 > 0 and y0 > 0 and lo > 0):
            raise ValueError(f"guide {label!r}: the anchor and the x range must be positive, got ({x0}, {y0})")
        gx = np.array([lo, hi])
        ax.plot(gx, y0 * (gx / x0) ** slope, color=MUTED, linestyle="--", linewidth=1.0, label=label)
    ax.set_ylim(data_ylim)  # guides do not stretch the axes
    return finish_axes(ax, xlabel, ylabel, title)


__all__ = ["plot_defect_bars", "plot_curves", "SCALES", "Guide"]
