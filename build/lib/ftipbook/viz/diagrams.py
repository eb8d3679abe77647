"""Decoder figures: block diagrams, routing, dataflow, and the plain plots beside them (ftip-000X … ftip-0013).

Diagrams (:func:`draw_placement`, :func:`draw_routing`, :func:`draw_dataflow`) draw boxes and
arrows from the numbers and labels they are given; plots (:func:`plot_profiles`,
:func:`plot_matrix`, :func:`plot_grouped_bars`) show measurements a chapter made. Every helper
draws on a given ``Axes`` (or makes a figure) and returns the ``Axes``. Nothing here computes
the mathematics it draws: chapters compute with ``ftipbook.model`` and pass the results in.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Circle, FancyBboxPatch

from ftipbook.viz.charts import arrow, box, canvas, cell_values, grouped_bars, outline, series_arrays, status_patches
from ftipbook.viz.style import ACCENT, BLANK, FILL, HIGHLIGHT, INK, MUTED, PALETTE, as_array, axes_or_new

#: Fill of a box that the chapter marks as not identified by its source.
UNKNOWN = BLANK
#: Fill of an overlay box by the status of what it states (see :class:`Stage`).
STATUS_FILL = {"given": FILL, "derived": HIGHLIGHT, "not identified": UNKNOWN}
#: Legend text of each status.
STATUS_LABEL = {"given": "stated by the source", "derived": "derived from stated fields", "not identified": "not identified"}


# --- plots -------------------------------------------------------------------------------------
def plot_profiles(
    x: Sequence[float],
    series: Mapping[str, Sequence[float]],
    *,
    xlabel: str,
    ylabel: str,
    logx: bool = False,
    logy: bool = False,
    scatter: Sequence[str] = (),
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """One line per entry of ``series`` against the shared ``x`` (e.g. a gradient norm by depth).

    Series named in ``scatter`` are drawn as points only (measurements beside a formula curve).
    """
    xs = as_array(x)
    if xs.ndim != 1 or not len(xs):
        raise ValueError(f"x must be a non-empty 1-D sequence, got shape {xs.shape}")
    if not series:
        raise ValueError("series must name at least one curve")
    unknown = sorted(set(scatter) - set(series))
    if unknown:
        raise ValueError(f"scatter names {unknown}, which are not series; series are {sorted(series)}")
    ax = axes_or_new(ax, (5.0, 3.4))
    for i, (label, values) in enumerate(series.items()):
        ys = as_array(values)
        if ys.shape != xs.shape:
            raise ValueError(f"series {label!r} has shape {ys.shape}, x has {xs.shape}")
        colour = PALETTE[i % len(PALETTE)]
        if label in scatter:
            ax.scatter(xs, ys, color=colour, s=28, zorder=3, label=label)
        else:
            ax.plot(xs, ys, color=colour, marker="o", markersize=3.5, linewidth=1.6, label=label)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=9)
    if title:
        ax.set_title(title)
    return ax


def plot_matrix(
    matrix,
    *,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    fmt: str = "{:.2f}",
    cmap: str = "Oranges",
    colorbar: str | None = None,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Annotated heatmap of a small matrix (a routing table, a pairwise-difference table)."""
    m = as_array(matrix)
    if m.ndim != 2:
        raise ValueError(f"plot_matrix needs a 2-D matrix, got shape {m.shape}")
    if len(row_labels) != m.shape[0] or len(col_labels) != m.shape[1]:
        raise ValueError(
            f"{len(row_labels)} row labels and {len(col_labels)} column labels for a matrix of shape {m.shape}"
        )
    ax = axes_or_new(ax, (0.75 * m.shape[1] + 2.0, 0.55 * m.shape[0] + 1.2))
    top = float(np.nanmax(np.abs(m))) or 1.0
    image = ax.imshow(m, cmap=cmap, vmin=0.0, vmax=top, aspect="auto")
    cell_values(ax, m, fmt, top)
    ax.set_xticks(range(m.shape[1]), list(col_labels))
    ax.set_yticks(range(m.shape[0]), list(row_labels))
    ax.tick_params(length=0)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, shrink=0.8, label=colorbar)
    if title:
        ax.set_title(title)
    return ax


def plot_grouped_bars(
    categories: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    ylabel: str,
    logy: bool = False,
    annotate: bool = True,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Bars grouped by category, one colour per entry of ``series``, heights written on top."""
    if not categories or not series:
        raise ValueError("plot_grouped_bars needs at least one category and one series")
    arrays = series_arrays(series, len(categories))
    ax = axes_or_new(ax, (min(1.6 * len(categories) + 2.0, 9.5), 3.6))
    centres = np.arange(len(categories))
    grouped_bars(ax, centres, arrays, fmt=(lambda y: f"{y:,.0f}") if annotate else None)
    ax.set_xticks(centres, list(categories))
    if logy:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.margins(y=0.15)
    ax.legend(frameon=False, fontsize=9)
    if title:
        ax.set_title(title)
    return ax


# This module's diagram node: :func:`ftipbook.viz.charts.box`, 0.34 x 0.075 by default, tightly padded.
_box = partial(box, w=0.34, h=0.075, boxstyle="round,pad=0.008")


# --- diagrams ----------------------------------------------------------------------------------
def draw_placement(placement: str, *, norm: str = "N", sublayer: str = "F", ax: Axes | None = None) -> Axes:
    """One residual branch with its norm before the sublayer (``"pre"``) or after the sum (``"post"``) (ftip-006E).

    Data flow from bottom to top: ``X + F(N(X))`` for pre, ``N(X + F(X))`` for post; the skip
    path is drawn in the accent colour.
    """
    if placement not in ("pre", "post"):
        raise ValueError(f"placement={placement!r} must be 'pre' or 'post'")
    ax = axes_or_new(ax, (2.6, 4.2))
    main, skip = 0.45, 0.85
    _box(ax, main, 0.06, "$X$", fc="white", w=0.22)
    if placement == "pre":
        stages = [(0.30, f"${norm}$", FILL), (0.52, f"${sublayer}$", FILL), (0.74, "$+$", HIGHLIGHT)]
        out = f"$X+{sublayer}({norm}(X))$"
    else:
        stages = [(0.30, f"${sublayer}$", FILL), (0.52, "$+$", HIGHLIGHT), (0.74, f"${norm}$", FILL)]
        out = f"${norm}(X+{sublayer}(X))$"
    previous = 0.06
    for y, text, fc in stages:
        arrow(ax, (main, previous + 0.04), (main, y - 0.04))
        _box(ax, main, y, text, fc=fc, w=0.3 if text != "$+$" else 0.14)
        previous = y
    plus_y = next(y for y, text, _ in stages if text == "$+$")
    ax.plot([main + 0.11, skip, skip], [0.06, 0.06, plus_y], color=ACCENT, linewidth=1.6)
    arrow(ax, (skip, plus_y), (main + 0.075, plus_y), colour=ACCENT, width=1.6)
    ax.text(skip + 0.02, (0.06 + plus_y) / 2, "skip", rotation=90, va="center", fontsize=9, color=ACCENT)
    arrow(ax, (main, previous + 0.04), (main, 0.9))
    ax.text(main, 0.94, out, ha="center", va="center", fontsize=10, color=INK)
    ax.text(0.5, 1.0, f"{placement}-normalization", ha="center", va="center", fontsize=11, color=INK)
    canvas(ax, ylim=(0.0, 1.03))
    return ax


def draw_routing(
    scores,
    experts: Sequence[int],
    weights: Sequence[float],
    *,
    n_shared: int = 0,
    score_note: str | None = None,
    axes: tuple[Axes, Axes] | None = None,
) -> tuple[Axes, Axes]:
    """Top-k routing of one token (ftip-000X, the lost figure of ftip-000Z), in two panels.

    Left: the ``J`` router scores ``g_j(z)`` as bars, the selected ``experts`` (zero-based
    indices, best first) highlighted and labelled with their weights ``alpha_j``. Right: the
    token's path, through the selected experts only, to a weighted sum that ``n_shared`` shared
    experts join unconditionally; the ``J - k`` other experts are drawn as one box that is not
    evaluated. ``score_note`` titles the score panel (e.g. to mark scores as illustrative).
    """
    g = as_array(scores)
    w = as_array(weights)
    chosen = [int(j) for j in experts]
    if g.ndim != 1 or not len(g):
        raise ValueError(f"scores must be a non-empty 1-D vector of J router scores, got shape {g.shape}")
    n_experts, k = len(g), len(chosen)
    if not 1 <= k <= n_experts or len(set(chosen)) != k or not all(0 <= j < n_experts for j in chosen):
        raise ValueError(f"experts must be 1..J distinct indices in [0, {n_experts}), got {chosen}")
    if w.shape != (k,):
        raise ValueError(f"weights must have one entry per selected expert ({k}), got shape {w.shape}")
    if n_shared < 0:
        raise ValueError(f"n_shared={n_shared} must be >= 0")
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11.5, 4.2), layout="constrained", gridspec_kw={"width_ratios": [1.2, 1]})
    bars_ax, flow_ax = axes

    colours = [MUTED] * n_experts
    for j in chosen:
        colours[j] = ACCENT
    positions = np.arange(1, n_experts + 1)
    bars_ax.bar(positions, g, color=colours, width=0.8 if n_experts <= 32 else 1.0)
    bars_ax.axhline(g[chosen[-1]], color=INK, linestyle=":", linewidth=1)
    bars_ax.axhline(0, color=INK, linewidth=0.6)
    for j, a in zip(chosen, w if n_experts <= 16 else []):
        bars_ax.annotate(f"$\\alpha={a:.2f}$", (j + 1, g[j]), textcoords="offset points",
                         xytext=(0, 4 if g[j] >= 0 else -12), ha="center", fontsize=9, color=ACCENT)
    if n_experts <= 16:
        bars_ax.set_xticks(positions)
    bars_ax.margins(y=0.12)
    bars_ax.set(xlabel="routed expert $j$", ylabel="router score $g_j(z)$")
    bars_ax.set_title(score_note or f"router scores, top {k} of {n_experts} selected", fontsize=10)

    canvas(flow_ax)
    rows = k + 1 + (1 if n_shared else 0)
    ys = np.linspace(0.9, 0.1, rows) if rows > 1 else np.array([0.5])
    z_xy, sum_xy = (0.07, 0.5), (0.74, 0.5)
    _box(flow_ax, *z_xy, "$z$", fc="white", w=0.1, h=0.09)
    flow_ax.add_patch(Circle(sum_xy, 0.045, fc="white", ec=INK, linewidth=1.2))
    flow_ax.text(*sum_xy, "$\\Sigma$", ha="center", va="center", fontsize=12, color=INK)
    box_h = min(0.09, 0.6 * (ys[0] - ys[1])) if rows > 1 else 0.09
    for y, j, a in zip(ys, chosen, w):
        # The weight sits inside the expert's box, clear of the arrows that fan into the sum.
        _box(flow_ax, 0.41, y, "", fc=HIGHLIGHT, w=0.28, h=box_h)
        flow_ax.text(0.345, y, f"$F_{{{j + 1}}}(z)$", ha="center", va="center", fontsize=9, color=INK)
        flow_ax.text(0.535, y, f"$\\alpha={a:.2f}$", ha="right", va="center", fontsize=8, color=ACCENT)
        arrow(flow_ax, (z_xy[0] + 0.05, z_xy[1]), (0.27, y))
        arrow(flow_ax, (0.55, y), (sum_xy[0] - 0.045, sum_xy[1]), colour=ACCENT)
    skipped = n_experts - k
    _box(flow_ax, 0.42, ys[k], f"{skipped} other{'s' if skipped != 1 else ''}: not evaluated", fc=UNKNOWN,
         ec=MUTED, w=0.3, h=box_h, fontsize=8, linestyle="--")
    if n_shared:
        label = "shared" if n_shared == 1 else f"{n_shared} shared"
        _box(flow_ax, 0.42, ys[-1], f"{label}: every token", fc=FILL, w=0.3, h=box_h, fontsize=8)
        arrow(flow_ax, (z_xy[0] + 0.05, z_xy[1]), (0.27, ys[-1]), colour=INK)
        arrow(flow_ax, (0.57, ys[-1]), (sum_xy[0] - 0.03, sum_xy[1] - 0.03), colour=INK, width=1.6)
    arrow(flow_ax, (sum_xy[0] + 0.045, sum_xy[1]), (0.9, sum_xy[1]))
    flow_ax.text(0.95, sum_xy[1], "out", ha="center", va="center", fontsize=10, color=INK)
    flow_ax.set_title("only the selected experts run" + ("; the shared path always does" if n_shared else ""),
                      fontsize=10)
    return bars_ax, flow_ax



@dataclass(frozen=True)
class Stage:
    """One stage of a dataflow diagram (ftip-0013).

    ``name`` labels the stage's box; ``detail`` is written to its left (e.g. the tensor shape a
    small model produces there); ``record`` is an overlay box to its right (e.g. what a
    published configuration states about the stage), filled by ``status``: ``"given"`` (stated by
    the source), ``"derived"`` (computed from given fields) or ``"not identified"``.
    """

    name: str
    detail: str = ""
    record: str = ""
    status: str = "given"

    def __post_init__(self) -> None:
        if self.status not in STATUS_FILL:
            raise ValueError(f"status={self.status!r} must be one of {sorted(STATUS_FILL)}")


def draw_dataflow(
    stages: Sequence[Stage],
    *,
    repeat: tuple[int, int] | None = None,
    repeat_label: str = "",
    skips: Sequence[tuple[int, int]] = (),
    detail_title: str = "",
    record_title: str = "",
    ax: Axes | None = None,
) -> Axes:
    """A top-to-bottom pipeline of stages with a detail column and an overlay column (ftip-0013).

    ``repeat = (first, last)`` frames the stages ``first..last`` (inclusive, zero-based) as the
    block that is applied ``repeat_label`` times; each ``(a, b)`` in ``skips`` draws a residual
    path from the input of stage ``a`` to stage ``b``.
    """
    n = len(stages)
    if not n:
        raise ValueError("draw_dataflow needs at least one stage")
    if repeat is not None and not 0 <= repeat[0] <= repeat[1] < n:
        raise ValueError(f"repeat={repeat} must be (first, last) with 0 <= first <= last < {n}")
    for a, b in skips:
        if not 0 <= a < b < n:
            raise ValueError(f"skip {(a, b)} must satisfy 0 <= a < b < {n}")
    ax = axes_or_new(ax, (10.0, 0.5 * n + 1.2))
    ys = 1 - (np.arange(n) + 0.5) / n
    gap = 1 / n
    h = 0.62 * gap
    centre, record_x, detail_x = 0.47, 0.84, 0.28
    for i, (stage, y) in enumerate(zip(stages, ys)):
        _box(ax, centre, y, stage.name, w=0.24, h=h, fontsize=9,
             fc=HIGHLIGHT if stage.name.startswith("+") else FILL)
        if i + 1 < n:
            arrow(ax, (centre, y - h / 2 - 0.004), (centre, ys[i + 1] + h / 2 + 0.004))
        if stage.detail:
            ax.text(detail_x, y, stage.detail, ha="right", va="center", fontsize=8.5, color=INK, family="monospace")
        if stage.record:
            _box(ax, record_x, y, stage.record, w=0.3, h=h, fontsize=8, fc=STATUS_FILL[stage.status],
                 **outline(stage.status == "not identified"))
            ax.plot([centre + 0.125, record_x - 0.155], [y, y], color=MUTED, linewidth=0.8, linestyle=":")
    for a, b in skips:
        x, start = centre - 0.14, ys[a] + gap / 2
        ax.plot([centre, x, x], [start, start, ys[b]], color=ACCENT, linewidth=1.3)
        arrow(ax, (x, ys[b]), (centre - 0.125, ys[b]), colour=ACCENT, width=1.3)
    if repeat is not None:
        top, bottom = ys[repeat[0]] + 0.5 * gap + 0.1 * gap, ys[repeat[1]] - 0.4 * gap
        ax.add_patch(FancyBboxPatch((centre - 0.165, bottom), 0.33, top - bottom, boxstyle="round,pad=0.004",
                                    fc="none", ec=ACCENT, linewidth=1.4, linestyle="--"))
        ax.text(centre + 0.18, (top + bottom) / 2, repeat_label, rotation=90, ha="left", va="center", fontsize=10,
                color=ACCENT)
    statuses = status_patches(STATUS_FILL, STATUS_LABEL, {stage.status for stage in stages if stage.record},
                              dashed="not identified")
    if statuses:
        ax.legend(handles=statuses, loc="lower right", fontsize=8, frameon=False)
    if detail_title:
        ax.text(detail_x, 1.02, detail_title, ha="right", va="bottom", fontsize=9.5, color=INK, weight="bold")
    if record_title:
        ax.text(record_x, 1.02, record_title, ha="center", va="bottom", fontsize=9.5, color=INK, weight="bold")
    canvas(ax, xlim=(0.06, 1.0), ylim=(0.0, 1.06))
    return ax
