"""Attention figures: masks, weight heatmaps, weighted averages, convex hulls (ftip-000Q, 000R, 000S, 000T).

Each helper draws on a given ``Axes`` (or makes a figure) and returns the ``Axes``, so figures
can be combined. Only matplotlib is used; nothing here computes the mathematics it draws.
"""
from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch

from ftipbook.viz.style import ACCENT, BLANK, FILL, HIGHLIGHT, INK, MUTED, as_array, axes_or_new


def plot_mask(mask, *, highlight_row: int | None = None, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Draw an additive attention mask as a grid of ``0`` / ``−∞`` cells (ftip-000S, ftip-000T).

    Rows are query positions and columns key positions, both numbered from one as in the note;
    ``highlight_row`` (one-based) outlines one query's row.
    """
    m = as_array(mask)
    if m.ndim != 2:
        raise ValueError(f"plot_mask needs a 2-D mask, got shape {m.shape}")
    t_q, t_k = m.shape
    ax = axes_or_new(ax, (0.7 * t_k + 1.2, 0.7 * t_q + 1.0))
    kept = np.isfinite(m)
    ax.imshow(kept, cmap=plt.matplotlib.colors.ListedColormap([BLANK, FILL]), vmin=0, vmax=1)
    for i in range(t_q):
        for j in range(t_k):
            text = "0" if m[i, j] == 0 else ("−∞" if not kept[i, j] else f"{m[i, j]:.2g}")
            ax.text(j, i, text, ha="center", va="center", color=INK if kept[i, j] else MUTED, fontsize=12)
    if highlight_row is not None:
        if not 1 <= highlight_row <= t_q:
            raise ValueError(f"highlight_row must be in 1..{t_q}, got {highlight_row}")
        ax.add_patch(plt.Rectangle((-0.5, highlight_row - 1.5), t_k, 1, fill=False, edgecolor=ACCENT, linewidth=2.5))
    ax.set_xticks(range(t_k), [str(j + 1) for j in range(t_k)])
    ax.set_yticks(range(t_q), [str(i + 1) for i in range(t_q)])
    ax.set_xlabel("key position $s$")
    ax.set_ylabel("query position $t$")
    ax.xaxis.set_label_position("top")
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    if title:
        ax.set_title(title, pad=28)
    return ax


def plot_attention(weights, *, ax: Axes | None = None, title: str | None = None, decimals: int = 2) -> Axes:
    """Heatmap of a ``[T_q, T_k]`` matrix of attention weights, each cell annotated (ftip-000Q)."""
    w = as_array(weights)
    if w.ndim != 2:
        raise ValueError(f"plot_attention needs a 2-D weight matrix, got shape {w.shape}")
    t_q, t_k = w.shape
    ax = axes_or_new(ax, (0.6 * t_k + 1.6, 0.6 * t_q + 1.0))
    image = ax.imshow(w, cmap="Blues", vmin=0.0, vmax=1.0)
    for i in range(t_q):
        for j in range(t_k):
            ax.text(j, i, f"{w[i, j]:.{decimals}f}", ha="center", va="center",
                    color="white" if w[i, j] > 0.6 else INK, fontsize=9)
    ax.set_xticks(range(t_k), [str(j + 1) for j in range(t_k)])
    ax.set_yticks(range(t_q), [str(i + 1) for i in range(t_q)])
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    ax.figure.colorbar(image, ax=ax, shrink=0.8, label="weight")
    if title:
        ax.set_title(title)
    return ax


def draw_weighted_average(
    values: Sequence[float],
    weights: Sequence[float],
    output: float,
    *,
    value_labels: Sequence[str] | None = None,
    weight_labels: Sequence[str] | None = None,
    output_label: str = "z",
    caption: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Value nodes feeding one output node, arrows as thick as their weights (ftip-000R).

    Draws the convex combination ``output = sum_s weights[s] * values[s]`` of one attention row.
    """
    v, w = as_array(values), as_array(weights)
    if v.shape != w.shape or v.ndim != 1:
        raise ValueError(f"values and weights must be 1-D of equal length, got {v.shape} and {w.shape}")
    n = len(v)
    ax = axes_or_new(ax, (2.2 * n + 1.5, 3.2))
    xs = np.linspace(0.0, 1.0, n) if n > 1 else np.array([0.5])
    top = (0.5, 0.85)
    value_labels = value_labels or [f"$v_{s + 1}={v[s]:g}$" for s in range(n)]
    weight_labels = weight_labels or [f"{w[s]:.3g}" for s in range(n)]
    for s in range(n):
        ax.add_patch(FancyArrowPatch((xs[s], 0.18), (top[0], top[1] - 0.08), arrowstyle="-|>", mutation_scale=18,
                                     linewidth=1.0 + 9.0 * w[s], color=ACCENT, alpha=0.35 + 0.65 * w[s]))
        mid = (0.55 * xs[s] + 0.45 * top[0], 0.5)
        ax.text(mid[0] + (0.04 if xs[s] >= top[0] else -0.04), mid[1], weight_labels[s], ha="center", va="center",
                fontsize=13, color=INK, bbox={"boxstyle": "round", "fc": "white", "ec": MUTED})
        ax.text(xs[s], 0.1, value_labels[s], ha="center", va="center", fontsize=13,
                bbox={"boxstyle": "round", "fc": FILL, "ec": INK})
    ax.text(top[0], top[1], f"${output_label}={output:g}$", ha="center", va="center", fontsize=14,
            bbox={"boxstyle": "round", "fc": HIGHLIGHT, "ec": INK})
    if caption:
        ax.text(0.5, -0.08, caption, ha="center", va="top", fontsize=10, color=INK, transform=ax.transAxes)
    ax.set_xlim(-0.25, 1.25)
    ax.set_ylim(0.0, 1.0)
    ax.axis("off")
    return ax


def _convex_hull(points: np.ndarray) -> np.ndarray:
    """Vertices of the 2-D convex hull in counter-clockwise order (Andrew's monotone chain)."""
    pts = sorted(map(tuple, points))
    if len(pts) <= 2:
        return np.array(pts)

    def turn(o, a, b) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    def half(seq):
        out: list[tuple[float, float]] = []
        for p in seq:
            while len(out) >= 2 and turn(out[-2], out[-1], p) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(reversed(pts))
    return np.array(lower[:-1] + upper[:-1])


def plot_convex_combination(values, outputs, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Value rows in the plane, their convex hull, and attention outputs inside it (ftip-000Q).

    ``values`` is ``[T_k, 2]`` and ``outputs`` is ``[T_q, 2]``: attention with value width two.
    """
    v, z = as_array(values), as_array(outputs)
    if v.ndim != 2 or v.shape[1] != 2 or z.ndim != 2 or z.shape[1] != 2:
        raise ValueError(f"values and outputs must be [n, 2] arrays, got {v.shape} and {z.shape}")
    ax = axes_or_new(ax, (4.0, 3.6))
    hull = _convex_hull(v)
    ax.fill(hull[:, 0], hull[:, 1], color=FILL, alpha=0.7, label="convex hull of value rows")
    ax.scatter(v[:, 0], v[:, 1], color=INK, zorder=3, label="value rows $V_s$")
    for s, (x, y) in enumerate(v):
        ax.annotate(f"$V_{s + 1}$", (x, y), textcoords="offset points", xytext=(5, 5), fontsize=10)
    ax.scatter(z[:, 0], z[:, 1], color=ACCENT, marker="*", s=120, zorder=4, label="outputs $z_t$")
    ax.legend(loc="best", fontsize=8, frameon=False)
    ax.set_aspect("equal", adjustable="datalim")
    if title:
        ax.set_title(title)
    return ax
