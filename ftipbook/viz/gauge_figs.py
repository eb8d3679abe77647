"""Figures of the gauge-symmetry chapters (section ftip-00AV: ftip-00AY … ftip-00B5).

:func:`plot_against_condition` plots measured quantities against the condition number of the
group element that produced them (round-off in ftip-00AY, the GD defect of ftip-00B5);
:func:`plot_plane` draws points, curves and arrows in a coordinate plane with equal axes (the
image of the unit circle in ftip-00B0, gradient arrows in ftip-00B1, a state collision in
ftip-00B2, orbit and fibre invariants in ftip-00AZ); :func:`draw_commuting_squares` lays out
the commuting square of ftip-00B4 for several update rules side by side; :func:`plot_along` plots
quantities against a step count or a path parameter with dashed reference levels (singular values
of ``W_t`` in ftip-00AW, the loss along a gauge path in ftip-00AY). Nothing here computes
the mathematics it draws: chapters compute with :mod:`ftipbook.optim` and pass the numbers in.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ftipbook.viz.charts import arrow
from ftipbook.viz.optim import draw_commuting_square
from ftipbook.viz.style import LOG_FLOOR, MUTED, PALETTE_WIDE, as_array, axes_or_new

#: Series colours, in order (:data:`~ftipbook.viz.style.PALETTE_WIDE`).
PALETTE = PALETTE_WIDE
#: The line styles an arrow or curve may ask for.
LINESTYLES = ("-", "--", ":", "-.")
#: One arrow of :func:`plot_plane`: ``(label, start, end, linestyle)``.
PlaneArrow = tuple[str, Sequence[float], Sequence[float], str]


def plot_against_condition(conds: Sequence[float], series: Mapping[str, Sequence[float]], *, ylabel: str,
                           reference: tuple[str, Sequence[float]] | None = None, ax: Axes | None = None,
                           title: str | None = None) -> Axes:
    """Each series (name -> values, one per group element) against ``cond(A)`` on log-log axes.

    Zeros are drawn at :data:`~ftipbook.viz.style.LOG_FLOOR` so they stay visible. ``reference``
    is an optional ``(label, values)`` line, e.g. a round-off bound ``c * eps * cond(A)``.
    """
    x = as_array(conds)
    if x.ndim != 1 or not len(x):
        raise ValueError(f"conds must be a non-empty 1-D sequence, got shape {x.shape}")
    if not series:
        raise ValueError("series is empty; pass {name: values}")
    if not (x >= 1).all():
        raise ValueError("condition numbers are >= 1; got a smaller value")
    ax = axes_or_new(ax, (6.0, 3.8))
    order = np.argsort(x)
    for i, (name, values) in enumerate(series.items()):
        y = as_array(values)
        if y.shape != x.shape:
            raise ValueError(f"series {name!r} has shape {y.shape}, conds has {x.shape}")
        ax.loglog(x, np.maximum(y, LOG_FLOOR), linestyle="none", marker="o", markersize=2.5, alpha=0.6,
                  color=PALETTE[i % len(PALETTE)], label=name)
    if reference is not None:
        label, values = reference
        r = as_array(values)
        if r.shape != x.shape:
            raise ValueError(f"reference has shape {r.shape}, conds has {x.shape}")
        ax.loglog(x[order], r[order], color=MUTED, linestyle="--", linewidth=1.2, label=label)
    ax.set_xlabel(r"condition number $\kappa(A)$")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, frameon=False)
    if title:
        ax.set_title(title)
    return ax


def plot_plane(*, points: Mapping[str, Sequence[Sequence[float]]] | None = None,
               curves: Mapping[str, Sequence[Sequence[float]]] | None = None,
               arrows: Sequence[PlaneArrow] = (), ax: Axes | None = None, title: str | None = None,
               xlabel: str = "first coordinate", ylabel: str = "second coordinate",
               equal: bool = True) -> Axes:
    """Points, closed or open curves and labelled arrows in a plane.

    ``points`` and ``curves`` map a label to an ``(n, 2)`` array of coordinates; ``arrows`` are
    ``(label, start, end, linestyle)`` with ``linestyle`` one of :data:`LINESTYLES`. Each entry
    gets its own colour and a legend line. ``equal`` keeps one unit the same length on both axes,
    so circles look round and orthogonal arrows look orthogonal. Arrows are drawn above curves and
    points, and dashed or dotted arrows above solid ones, so that an arrow lying along another
    stays visible: they are also drawn twice as thick, so that where one covers a solid arrow its
    dashes stand out from the line showing through the gaps. The coordinate axes are drawn
    beneath everything.
    """
    if not (points or curves or arrows):
        raise ValueError("nothing to draw: pass points, curves or arrows")
    ax = axes_or_new(ax, (4.6, 4.2))
    colour = 0
    for kind, entries in (("curve", curves or {}), ("points", points or {})):
        for label, xy in entries.items():
            a = as_array(xy)
            if a.ndim != 2 or a.shape[1] != 2:
                raise ValueError(f"{kind} {label!r} must be an (n, 2) array, got shape {a.shape}")
            style = dict(linestyle="-", linewidth=1.5) if kind == "curve" else dict(linestyle="none", marker="o",
                                                                                     markersize=4, alpha=0.8)
            ax.plot(a[:, 0], a[:, 1], color=PALETTE[colour % len(PALETTE)], label=label, **style)
            colour += 1
    for label, start, end, linestyle in arrows:
        s, e = as_array(start), as_array(end)
        if s.shape != (2,) or e.shape != (2,):
            raise ValueError(f"arrow {label!r}: start and end must be 2 numbers each, got {s.shape} and {e.shape}")
        if linestyle not in LINESTYLES:
            raise ValueError(f"arrow {label!r}: linestyle must be one of {LINESTYLES}, got {linestyle!r}")
        c = PALETTE[colour % len(PALETTE)]
        solid = linestyle == "-"
        width = 1.4 if solid else 2.8
        arrow(ax, tuple(s), tuple(e), colour=c, width=width, linestyle=linestyle, head=13,
              zorder=3 if solid else 4)
        ax.plot([], [], color=c, linestyle=linestyle, linewidth=width, label=label)  # legend entry
        ax.update_datalim([tuple(s), tuple(e)])
        colour += 1
    ax.autoscale_view()
    ax.legend(fontsize=8, loc="best", facecolor="white", edgecolor="none", framealpha=0.9)
    ax.axhline(0, color=MUTED, linewidth=0.6, zorder=0.5)
    ax.axvline(0, color=MUTED, linewidth=0.6, zorder=0.5)
    if equal:
        ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return ax


def plot_along(x: Sequence[float], series: Mapping[str, Sequence[float]], *, xlabel: str, ylabel: str,
               levels: Mapping[str, float] | None = None, yscale: str = "linear", ax: Axes | None = None,
               title: str | None = None) -> Axes:
    """Each series (name -> values at ``x``) as a line against ``x``, with dashed horizontal ``levels``.

    ``levels`` maps a label to a reference value (a singular value of the target, a conserved
    quantity); each is drawn dashed in the muted colour and labelled at the right end of the axis.
    ``yscale`` is ``"linear"`` or ``"log"`` (values then floored at
    :data:`~ftipbook.viz.style.LOG_FLOOR`, negative values refused).
    """
    xs = as_array(x)
    if xs.ndim != 1 or not len(xs):
        raise ValueError(f"x must be a non-empty 1-D sequence, got shape {xs.shape}")
    if not series:
        raise ValueError("series is empty; pass {name: values}")
    if yscale not in ("linear", "log"):
        raise ValueError(f"yscale must be 'linear' or 'log', got {yscale!r}")
    ax = axes_or_new(ax, (6.0, 3.6))
    for i, (name, values) in enumerate(series.items()):
        y = as_array(values)
        if y.shape != xs.shape:
            raise ValueError(f"series {name!r} has shape {y.shape}, x has {xs.shape}")
        if yscale == "log":
            if (y < 0).any():
                raise ValueError(f"series {name!r} has negative values; a log axis needs values >= 0")
            y = np.maximum(y, LOG_FLOOR)
        ax.plot(xs, y, color=PALETTE[i % len(PALETTE)], linestyle=LINESTYLES[(i // len(PALETTE)) % len(LINESTYLES)],
                linewidth=1.6, label=name)
    for label, value in (levels or {}).items():
        if not np.isfinite(value):
            raise ValueError(f"level {label!r} must be finite, got {value!r}")
        ax.axhline(value, color=MUTED, linestyle="--", linewidth=1.0)
        ax.annotate(label, (1.0, value), xycoords=("axes fraction", "data"), xytext=(-4, 3),
                    textcoords="offset points", ha="right", va="bottom", color=MUTED, fontsize=8)
    ax.set_yscale(yscale)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, frameon=False)
    if title:
        ax.set_title(title)
    return ax


def draw_commuting_squares(gaps: Mapping[str, float], *, title: str | None = None) -> Figure:
    """The square of ftip-00B4 once per update rule (name -> measured gap), side by side.

    Each panel is :func:`ftipbook.viz.optim.draw_commuting_square` with that rule's name on the
    horizontal arrows and its gap ``||(U~_1, V~_1) - (U_1 Q, V_1 Q)||`` printed underneath.
    """
    if not gaps:
        raise ValueError("gaps is empty; pass {rule name: measured gap}")
    for name, gap in gaps.items():
        if not np.isfinite(gap) or gap < 0:
            raise ValueError(f"gap of {name!r} must be a finite number >= 0, got {gap!r}")
    fig, axes = plt.subplots(1, len(gaps), figsize=(4.6 * len(gaps), 3.2), layout="constrained", squeeze=False)
    for ax, (name, gap) in zip(axes[0], gaps.items()):
        draw_commuting_square(gap=float(gap), step=name, ax=ax, title=name)
    if title:
        fig.suptitle(title)
    return fig


__all__ = ["plot_against_condition", "plot_plane", "plot_along", "draw_commuting_squares", "PALETTE", "LINESTYLES", "PlaneArrow"]
