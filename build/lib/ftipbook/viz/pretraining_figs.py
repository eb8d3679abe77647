"""Figures of the chapters on the pretraining objective, optimizer and artifact (ftip-001B … ftip-001L).

* :func:`plot_document_mask`: a block-causal mask over a packed row, with the pairs it removes
  from the causal mask marked (ftip-001D, its lost figure);
* :func:`plot_token_losses`: per-position token losses of one packed row under several masks,
  segments shaded (ftip-001B);
* :func:`plot_running_ratio`: running estimates against the values they should approach
  (ftip-001C);
* :func:`plot_loss_grid`: token losses of a few records as a grid with record means and the
  token average (ftip-001F, its lost figure);
* :func:`plot_token_weights`: the weight each token receives under several normalizations
  (ftip-006L);
* :func:`plot_estimator_cloud`: enumerated minibatch gradients in a plane, their mean and the
  full gradient (ftip-001G);
* :func:`plot_paths`: parameter paths in a plane that share a point and split there (ftip-001H);
* :func:`plot_run_spread`: one outcome of many runs, grouped by what was varied (ftip-001J);
* :func:`draw_artifact_manifest`: the runtime part and the provenance part of an artifact
  manifest, with undisclosed fields marked (ftip-001K, ftip-001L, its lost figure).

Each helper draws on a given ``Axes`` (or makes a figure) and returns it. Nothing here computes
what it draws: chapters compute with :mod:`ftipbook.data`, :mod:`ftipbook.optim`,
:mod:`ftipbook.train` and :mod:`ftipbook.artifact` and pass the results in.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import FancyBboxPatch, Rectangle

from ftipbook.viz.attention import plot_mask
from ftipbook.viz.charts import canvas, grouped_bars, series_arrays
from ftipbook.viz.style import (ACCENT, BLANK, FILL, HIGHLIGHT, INK, MUTED, PALETTE, VIOLET, as_array, axes_or_new,
                                finish_axes)

#: Background fills of segments ``1, 2, ...`` (cycled) in :func:`plot_token_losses`.
SEGMENT_FILLS = (FILL, HIGHLIGHT, "#d1fae5", "#ede9fe")
#: Fill of something absent, such as a manifest field the source does not disclose or a token cell a record lacks.
MISSING_FILL = BLANK
#: Marker shapes of :func:`plot_estimator_cloud`'s marks after the first (the first is a ring), in order.
MARKS = ("X", "P", "D", "s")
#: Colours of those marks, and of :func:`plot_paths`' marks, in order.
MARK_COLOURS = (ACCENT, INK, VIOLET)
#: Line styles of :func:`plot_paths`' paths, in order (cycled).
PATH_STYLES = ("-", "-", "--", ":")
#: Markers of :func:`plot_paths`' paths, in order (cycled).
PATH_MARKERS = ("o", "s", "^", "D")


def _runs(labels: Sequence[str]) -> list[tuple[int, int, str]]:
    """Maximal runs ``(start, stop, label)`` of equal consecutive labels."""
    runs, start = [], 0
    for i in range(1, len(labels) + 1):
        if i == len(labels) or labels[i] != labels[start]:
            runs.append((start, i, labels[start]))
            start = i
    return runs


# --- masks and token losses -------------------------------------------------------------------
def plot_document_mask(mask, docs: Sequence[str], *, removed=None, token_labels: Sequence[str] | None = None,
                       ax: Axes | None = None, title: str | None = None) -> Axes:
    """A block-causal mask over a packed row: ``0`` / ``−∞`` cells, one outlined block per document (ftip-001D).

    ``docs[t]`` names the document of position ``t`` (consecutive equal names form one block);
    ``removed`` (boolean, same shape) marks cells to hatch, e.g. the pairs a causal mask would
    admit and the document mask removes. ``token_labels`` replace the position numbers on the
    axes.
    """
    m = as_array(mask)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"plot_document_mask needs a square 2-D mask, got shape {m.shape}")
    t = m.shape[0]
    if len(docs) != t:
        raise ValueError(f"docs names {len(docs)} positions, the mask has {t}")
    if token_labels is not None and len(token_labels) != t:
        raise ValueError(f"token_labels has {len(token_labels)} entries, the mask has {t} positions")
    ax = plot_mask(m, ax=ax)
    cell_labels = ax.texts[-t * t:]  # plot_mask writes one label per cell, row by row
    if removed is not None:
        r = np.asarray(removed, dtype=bool)
        if r.shape != m.shape:
            raise ValueError(f"removed has shape {r.shape}, the mask has {m.shape}")
        for i, j in zip(*np.nonzero(r)):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", edgecolor=ACCENT,
                                   linewidth=0.0))
        ax.add_patch(Rectangle((0, 0), 0, 0, fill=False, hatch="///", edgecolor=ACCENT, linewidth=0.0,
                               label="cross-document pair\n(kept by the causal mask)"))
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, fontsize=8)
        # A hatched cell's label sits on a patch of the cell's own colour, above the hatching.
        for label, hatched in zip(cell_labels, r.ravel()):
            if hatched:
                label.set_bbox(dict(facecolor=BLANK, edgecolor="none", pad=1.0))
                label.set_zorder(3)
    for start, stop, name in _runs(list(docs)):
        ax.add_patch(Rectangle((start - 0.5, start - 0.5), stop - start, stop - start, fill=False, edgecolor=INK,
                               linewidth=2.0))
        ax.text(stop - 0.5 + 0.1, start - 0.5 + 0.1, name, ha="left", va="top", fontsize=11, color=ACCENT,
                fontweight="bold")
    if token_labels is not None:
        ax.set_xticks(range(t), list(token_labels))
        ax.set_yticks(range(t), list(token_labels))
    if title:
        ax.set_title(title, pad=28)
    return ax


def plot_token_losses(losses: Mapping[str, Sequence[float]], seg_ids: Sequence[int], *,
                      predicted: Sequence[bool] | None = None, token_labels: Sequence[str] | None = None,
                      ylabel: str = r"token loss $\ell_t$", ax: Axes | None = None, title: str | None = None) -> Axes:
    """Per-position token losses of one packed row, one bar series per entry of ``losses`` (ftip-001B).

    Positions are shaded by segment id (``0`` = padding, left white); positions where
    ``predicted`` is false are marked with a grey ``×`` on the axis (their loss is zero by
    definition). ``token_labels`` label the positions.
    """
    if not losses:
        raise ValueError("plot_token_losses needs at least one series of losses")
    seg = [int(s) for s in seg_ids]
    t = len(seg)
    if predicted is not None and len(predicted) != t:
        raise ValueError(f"predicted has {len(predicted)} entries for {t} positions")
    if token_labels is not None and len(token_labels) != t:
        raise ValueError(f"token_labels has {len(token_labels)} entries for {t} positions")
    arrays = series_arrays(losses, t, of="positions")
    ax = axes_or_new(ax, (min(0.32 * t + 2.5, 11.0), 3.4))
    for start, stop, s in _runs(seg):
        if s:
            ax.axvspan(start - 0.5, stop - 0.5, color=SEGMENT_FILLS[(s - 1) % len(SEGMENT_FILLS)], alpha=0.6, lw=0)
            ax.text((start + stop - 1) / 2, 1.0, f"segment {s}", transform=ax.get_xaxis_transform(), ha="center",
                    va="bottom", fontsize=8, color=INK)
    xs = np.arange(t)
    grouped_bars(ax, xs, arrays, alpha=0.9)
    if predicted is not None:
        skip = [j for j in range(t) if not predicted[j]]
        ax.plot(skip, [0.0] * len(skip), linestyle="none", marker="x", color=MUTED, markersize=6,
                label="not predicted ($m_t=0$)")
    if token_labels is not None:
        ax.set_xticks(xs, list(token_labels), fontsize=8)
    ax.set_xlim(-0.6, t - 0.4)
    ax.set_ylabel(ylabel)
    ax.legend(frameon=False, fontsize=8, loc="upper left")
    if title:
        ax.set_title(title, pad=16)
    return ax


# --- estimates and token grids -----------------------------------------------------------------
def plot_running_ratio(n: Sequence[int], series: Mapping[str, Sequence[float]], targets: Mapping[str, float], *,
                       xlabel: str = "records drawn $N$", ylabel: str = "estimate", ax: Axes | None = None,
                       title: str | None = None) -> Axes:
    """Running estimates against the number of draws (log axis), each with its limit as a dashed line (ftip-001C).

    ``series`` and ``targets`` are paired by position: the ``i``-th target is drawn in the
    colour of the ``i``-th series, so an estimate and the value it should approach match.
    """
    xs = as_array(n)
    if xs.ndim != 1 or not len(xs) or (xs <= 0).any():
        raise ValueError(f"n must be a non-empty 1-D sequence of positive counts, got shape {xs.shape}")
    if not series or len(targets) != len(series):
        raise ValueError(f"give one target per series: {len(series)} series, {len(targets)} targets")
    ax = axes_or_new(ax, (6.0, 3.4))
    for i, ((label, values), (target_label, target)) in enumerate(zip(series.items(), targets.items())):
        ys = as_array(values)
        if ys.shape != xs.shape:
            raise ValueError(f"series {label!r} has shape {ys.shape}, n has {xs.shape}")
        colour = PALETTE[i % len(PALETTE)]
        ax.plot(xs, ys, color=colour, linewidth=1.4, label=label)
        ax.axhline(float(target), color=colour, linestyle="--", linewidth=1.1, label=target_label)
    ax.set_xscale("log")
    return finish_axes(ax, xlabel, ylabel, title, grid=True)


def plot_token_weights(records: Sequence[str], weights: Mapping[str, Sequence[float]], *, fmt: str = "{:.3g}",
                       ylabel: str = "weight of one predicted token", logy: bool = True, ax: Axes | None = None,
                       title: str | None = None) -> Axes:
    """Grouped bars: the weight one predicted token of each record carries under each normalization (ftip-006L).

    ``weights[name][i]`` is that weight for record ``records[i]``; bars are annotated with
    ``fmt``. A log axis (default) keeps weights of different scales readable.
    """
    if not records or not weights:
        raise ValueError("plot_token_weights needs at least one record and one normalization")
    arrays = series_arrays(weights, len(records), kind="normalization", unit="weights", of="records")
    for label, ys in arrays.items():
        if logy and (ys <= 0).any():
            raise ValueError(f"normalization {label!r} has a non-positive weight; use logy=False")
    ax = axes_or_new(ax, (min(1.5 * len(records) + 2.5, 9.5), 3.6))
    centres = np.arange(len(records))
    grouped_bars(ax, centres, arrays, fmt=fmt.format, fontsize=7, padding=1)
    ax.set_xticks(centres, list(records))
    if logy:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.margins(y=0.2)
    ax.legend(frameon=False, fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def plot_estimator_cloud(points: Mapping[str, Sequence[Sequence[float]]], marks: Mapping[str, Sequence[float]], *,
                         xlabel: str = "along the full gradient", ylabel: str = "orthogonal direction",
                         ax: Axes | None = None, title: str | None = None) -> Axes:
    """Estimates as small points and reference vectors as large marks in one plane (ftip-001G).

    ``points[label]`` is an ``(n, 2)`` array (e.g. every minibatch gradient of an enumeration,
    in two chosen coordinates); ``marks[label]`` one point. The first mark (the target, e.g. the
    full gradient) is drawn as a large ring, so that a later mark on the same spot (a mean that
    hits it) stays visible inside it; the others get filled shapes.
    """
    if not points and not marks:
        raise ValueError("nothing to draw: pass points or marks")
    ax = axes_or_new(ax, (4.6, 3.8))
    for i, (label, xy) in enumerate(points.items()):
        a = as_array(xy)
        if a.ndim != 2 or a.shape[1] != 2:
            raise ValueError(f"points {label!r} must be an (n, 2) array, got shape {a.shape}")
        ax.scatter(a[:, 0], a[:, 1], s=30, color=PALETTE[(i + 2) % len(PALETTE)], alpha=0.75, label=label, zorder=2)
    for i, (label, xy) in enumerate(marks.items()):
        p = as_array(xy)
        if p.shape != (2,):
            raise ValueError(f"mark {label!r} must be 2 numbers, got shape {p.shape}")
        if i == 0:
            ax.scatter([p[0]], [p[1]], s=320, marker="o", facecolor="none", edgecolor=INK, linewidth=2.0,
                       label=label, zorder=3)
        else:
            ax.scatter([p[0]], [p[1]], s=80, marker=MARKS[(i - 1) % len(MARKS)],
                       color=MARK_COLOURS[(i - 1) % len(MARK_COLOURS)], edgecolor="white", linewidth=0.8, label=label,
                       zorder=4)
    ax.axhline(0, color=MUTED, linewidth=0.6)
    return finish_axes(ax, xlabel, ylabel, title, grid=True)


def plot_loss_grid(rows: Mapping[str, Sequence[float]], row_means: Sequence[float], summary: Mapping[str, float], *,
                   fmt: str = "{:g}", first_position: int | None = None, ax: Axes | None = None,
                   title: str | None = None) -> Axes:
    """Token losses ``l_ij`` as a grid, one row per record, with each record's mean beside it (ftip-001F).

    Rows may have different lengths; missing cells are left grey. ``row_means`` (one per row)
    are written in a separate column, and each ``summary`` entry (e.g. the token average of all
    cells and the expected one-record minibatch mean) as a line under the grid. Values are
    written with ``fmt``; the chapter computes them, this function only lays them out. Columns
    are headed by the index ``j`` of the predicted position, or, given ``first_position``, by
    the token position each column's loss predicts, starting there (e.g. ``2``: a record's
    first token is never predicted).
    """
    if not rows:
        raise ValueError("plot_loss_grid needs at least one row")
    if first_position is not None and (isinstance(first_position, bool) or not isinstance(first_position, int)
                                       or first_position < 1):
        raise ValueError(f"first_position must be a positive int (a token position), got {first_position!r}")
    if len(row_means) != len(rows):
        raise ValueError(f"{len(row_means)} row means for {len(rows)} rows")
    width = max(len(v) for v in rows.values())
    if width == 0:
        raise ValueError("every row is empty")
    ax = axes_or_new(ax, (1.0 * width + 3.0, 0.7 * len(rows) + 0.6 * len(summary) + 1.0))
    values = [as_array(v) for v in rows.values()]
    top = max(float(np.max(np.abs(v))) for v in values if len(v)) or 1.0
    for i, v in enumerate(values):
        for j in range(width):
            inside = j < len(v)
            colour = FILL if inside else MISSING_FILL
            ax.add_patch(Rectangle((j, -i - 1), 1, 1, facecolor=colour, edgecolor="white", linewidth=2,
                                   alpha=0.35 + 0.65 * abs(v[j]) / top if inside else 1.0))
            ax.text(j + 0.5, -i - 0.5, fmt.format(v[j]) if inside else "–", ha="center", va="center", fontsize=11,
                    color=INK if inside else MUTED)
        ax.add_patch(Rectangle((width + 0.3, -i - 1), 1.4, 1, facecolor=HIGHLIGHT, edgecolor="white", linewidth=2))
        ax.text(width + 1.0, -i - 0.5, fmt.format(float(row_means[i])), ha="center", va="center", fontsize=11,
                color=INK, fontweight="bold")
    ax.text(width + 1.0, 0.15, "record mean", ha="center", va="bottom", fontsize=9, color=INK)
    for j in range(width):
        header = f"$j={j + 1}$" if first_position is None else f"position {first_position + j}"
        ax.text(j + 0.5, 0.15, header, ha="center", va="bottom", fontsize=9, color=INK)
    ax.set_yticks([-i - 0.5 for i in range(len(rows))], list(rows))
    for k, (label, value) in enumerate(summary.items()):
        ax.text(0, -len(rows) - 0.55 - 0.6 * k, f"{label} = {fmt.format(float(value))}", ha="left", va="center",
                fontsize=10, color=ACCENT if k == 0 else INK)
    ax.set_xlim(-0.1, width + 1.8)
    ax.set_ylim(-len(rows) - 0.6 * len(summary) - 0.3, 0.7)
    ax.set_xticks([])
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)
    if title:
        ax.set_title(title)
    return ax


# --- optimizer paths and repeated runs ---------------------------------------------------------------
def plot_paths(paths: Mapping[str, Sequence[Sequence[float]]], *, marks: Mapping[str, Sequence[float]] | None = None,
               contours: tuple | None = None, xlabel: str = r"$\theta_1$", ylabel: str = r"$\theta_2$",
               ax: Axes | None = None, title: str | None = None) -> Axes:
    """Parameter paths in a plane, one line with dots per entry of ``paths`` (ftip-001H).

    ``paths[label]`` is an ``(n, 2)`` array of iterates; ``marks`` label single points (e.g. the
    checkpoint where several paths start); ``contours`` is ``(X, Y, Z)`` of a loss on a grid,
    drawn as thin level lines under the paths. Each path has its own line style and marker, and
    each is drawn thinner and with smaller markers than the one before it, so that two paths
    lying on top of each other both stay visible.
    """
    if not paths:
        raise ValueError("plot_paths needs at least one path")
    ax = axes_or_new(ax, (5.0, 4.2))
    if contours is not None:
        if len(contours) != 3:
            raise ValueError("contours must be a triple (X, Y, Z) of equal-shape grids")
        gx, gy, gz = (as_array(a) for a in contours)
        if not (gx.shape == gy.shape == gz.shape and gz.ndim == 2):
            raise ValueError(f"contour grids must be 2-D of one shape, got {gx.shape}, {gy.shape}, {gz.shape}")
        ax.contour(gx, gy, gz, levels=12, colors=MUTED, linewidths=0.6, alpha=0.7)
    for i, (label, xy) in enumerate(paths.items()):
        a = as_array(xy)
        if a.ndim != 2 or a.shape[1] != 2 or not len(a):
            raise ValueError(f"path {label!r} must be a non-empty (n, 2) array, got shape {a.shape}")
        later = i / max(len(paths) - 1, 1)  # 0 for the first path, 1 for the last
        ax.plot(a[:, 0], a[:, 1], color=PALETTE[i % len(PALETTE)], linestyle=PATH_STYLES[i % len(PATH_STYLES)],
                marker=PATH_MARKERS[i % len(PATH_MARKERS)], markersize=5.5 - 2.5 * later, linewidth=2.2 - 1.2 * later,
                label=label, zorder=2 + i)
    for i, (label, xy) in enumerate((marks or {}).items()):
        p = as_array(xy)
        if p.shape != (2,):
            raise ValueError(f"mark {label!r} must be 2 numbers, got shape {p.shape}")
        ax.scatter([p[0]], [p[1]], s=220, marker="o", facecolor="none",
                   edgecolor=MARK_COLOURS[i % len(MARK_COLOURS)], linewidth=2.0, label=label, zorder=10)
    return finish_axes(ax, xlabel, ylabel, title)


def plot_run_spread(groups: Mapping[str, Sequence[float]], *, reference: float | None = None,
                    reference_label: str = "reference run", ylabel: str = "final loss", ax: Axes | None = None,
                    title: str | None = None) -> Axes:
    """One outcome of many runs as dots, one column per group of runs (ftip-001J).

    ``groups[label]`` holds the outcomes of the runs that varied one thing (e.g. only the
    initialization seed); ``reference`` draws the outcome of the run they all vary from as a
    dashed line labelled ``reference_label``. Dots within a column are spread sideways
    deterministically so that equal values stay visible.
    """
    if not groups:
        raise ValueError("plot_run_spread needs at least one group of runs")
    ax = axes_or_new(ax, (min(1.6 * len(groups) + 2.0, 9.0), 3.6))
    for i, (label, values) in enumerate(groups.items()):
        ys = as_array(values)
        if ys.ndim != 1 or not len(ys):
            raise ValueError(f"group {label!r} must be a non-empty 1-D sequence, got shape {ys.shape}")
        xs = i + (np.arange(len(ys)) - (len(ys) - 1) / 2) * min(0.12, 0.6 / max(len(ys), 1))
        ax.scatter(xs, ys, s=36, color=PALETTE[i % len(PALETTE)], zorder=3)
    if reference is not None:
        ax.axhline(float(reference), color=MUTED, linestyle="--", linewidth=1.1)
        ax.text(-0.55, float(reference), reference_label, ha="left", va="bottom", fontsize=8, color=MUTED)
    ax.set_xticks(range(len(groups)), list(groups), fontsize=8)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    if title:
        ax.set_title(title)
    return ax


# --- artifacts -------------------------------------------------------------------------------------
def _field_box(ax: Axes, x: float, y: float, w: float, h: float, label: str, value: str, *, hidden: bool,
               fill: str) -> None:
    ax.add_patch(FancyBboxPatch((x, y - h), w, h, boxstyle="round,pad=0.02,rounding_size=0.08",
                                facecolor=MISSING_FILL if hidden else fill, edgecolor=MUTED if hidden else INK,
                                linewidth=1.1, linestyle="--" if hidden else "-"))
    ax.text(x + 0.12, y - 0.12, label, ha="left", va="top", fontsize=8.5, fontweight="bold",
            color=MUTED if hidden else INK)
    ax.text(x + 0.12, y - 0.42, "UNDISCLOSED" if hidden and not value else value, ha="left", va="top", fontsize=7.5,
            color=ACCENT if hidden else INK, family="monospace", linespacing=1.25)


def draw_artifact_manifest(runtime: Mapping[str, str], provenance: Mapping[str, str], *,
                           undisclosed: Sequence[str] = (), law_label: str = r"next-token law $\pi_{\theta_K}$",
                           runtime_title: str = "runtime: determines the law",
                           provenance_title: str = "provenance: evidence, not an input",
                           ax: Axes | None = None, title: str | None = None) -> Axes:
    """An artifact manifest: runtime fields feeding the next-token law, provenance beside them (ftip-001K, 001L).

    ``runtime`` and ``provenance`` map a field name to the text shown for it (a few short
    lines). Runtime fields are filled blue, provenance fields white. Fields of either column
    named in ``undisclosed`` (not disclosed by the source, or not in the record the chapter
    cites) are drawn grey and dashed; an empty text for such a field is shown as
    ``UNDISCLOSED``. Names in ``undisclosed`` that are not fields raise ``ValueError``.
    """
    if not runtime:
        raise ValueError("an artifact manifest needs at least one runtime field")
    unknown = sorted(set(undisclosed) - set(provenance) - set(runtime))
    if unknown:
        raise ValueError(f"undisclosed names {unknown}, which are not fields; fields are "
                         f"{list(runtime) + list(provenance)}")
    lines = lambda v: str(v).count("\n") + 1
    height = lambda v: 0.55 + 0.2 * lines(v)
    gap, col_w = 0.18, 4.6
    total = max(sum(height(v) + gap for v in runtime.values()) + 1.3,
                sum(height(v) + gap for v in provenance.values()) if provenance else 0.0)
    ax = axes_or_new(ax, (8.6, 0.62 * total + 1.0))
    top = total
    for x, heading, fields, fill in ((0.0, runtime_title, runtime, FILL), (5.3, provenance_title, provenance, "white")):
        ax.text(x + col_w / 2, top + 0.25, heading, ha="center", va="bottom", fontsize=9.5, color=INK)
        y = top
        for name, value in fields.items():
            h = height(value)
            _field_box(ax, x, y, col_w, h, name, str(value), hidden=name in undisclosed, fill=fill)
            y -= h + gap
        if fields is runtime:
            ax.annotate("", xy=(col_w / 2, y - 0.55), xytext=(col_w / 2, y + gap),
                        arrowprops=dict(arrowstyle="-|>", color=INK, lw=1.3))
            ax.add_patch(FancyBboxPatch((0.25, y - 1.1), col_w - 0.5, 0.55, boxstyle="round,pad=0.02",
                                        facecolor=HIGHLIGHT, edgecolor=INK, linewidth=1.2))
            ax.text(col_w / 2, y - 0.82, law_label, ha="center", va="center", fontsize=9.5, color=INK)
    ax.plot([4.95, 4.95], [0.0, top + 0.2], color=MUTED, linestyle=":", linewidth=1.0)
    canvas(ax, (-0.1, 10.0), (-0.1, top + 0.8))
    if title:
        ax.set_title(title)
    return ax
