"""Decoder-architecture figures (ftip-000L ... ftip-000W): shapes, embeddings, positions, heads, caches.

Each helper draws on a given ``Axes`` (or makes a figure) and returns what it drew on, so panels
can be combined. The helpers only draw: every number they show is computed by the chapter with
``ftipbook.model`` and passed in.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from ftipbook.viz.charts import arrow, box, canvas
from ftipbook.viz.style import ACCENT, FILL, HIGHLIGHT, INK, LOG_FLOOR, MUTED, VIOLET, as_array, axes_or_new

#: Colours of up to six compared variants (mixers, positional schemes, attention variants).
SERIES = ("#1d4ed8", ACCENT, "#15803d", VIOLET, "#b45309", "#0f766e")


# This module's diagram node (:func:`ftipbook.viz.charts.box`) and arrow (:func:`ftipbook.viz.charts.arrow`).
_box = partial(box, boxstyle="round,pad=0.02,rounding_size=0.04")
_arrow = partial(arrow, shrink=2.0)


def _check_labels(labels: Sequence[str], values: np.ndarray, what: str) -> None:
    if len(labels) == 0 or len(labels) != len(values):
        raise ValueError(f"{what}: need one label per value and at least one, got {len(labels)} labels "
                         f"for {len(values)} values")


# --------------------------------------------------------------------------------------------
# ftip-000L: tensor shapes through the stack
# --------------------------------------------------------------------------------------------
def draw_shape_flow(stages: Sequence[tuple[str, str]], *, repeat: tuple[int, int, str] | None = None,
                    ax: Axes | None = None, title: str | None = None) -> Axes:
    """A top-to-bottom chain of boxes ``stage name`` / ``shape`` joined by arrows (ftip-000L).

    ``stages`` lists ``(name, shape)`` pairs in the order data flows, e.g.
    ``[("token ids", "(B, T)"), ("embedding", "(B, T, d)"), ...]``. ``repeat = (first, last, label)``
    brackets the stages ``first..last`` (zero-based, inclusive) as one repeated block, e.g. a layer.
    """
    if len(stages) < 2 or any(len(s) != 2 for s in stages):
        raise ValueError("draw_shape_flow needs at least two (name, shape) pairs")
    n = len(stages)
    if repeat is not None and not 0 <= repeat[0] <= repeat[1] < n:
        raise ValueError(f"repeat=(first, last, label) needs 0 <= first <= last < {n}, got {repeat[:2]}")
    ax = axes_or_new(ax, (5.6, 0.62 * n + 0.6))
    ys = np.linspace(n - 1, 0, n)
    for i, ((name, shape), y) in enumerate(zip(stages, ys)):
        _box(ax, 0.0, y, name, w=1.5, h=0.62, fc="white")
        _box(ax, 1.55, y, shape, w=1.4, h=0.62, fc=FILL)
        if i + 1 < n:
            _arrow(ax, (0.0, y - 0.31), (0.0, ys[i + 1] + 0.31))
    if repeat is not None:
        top, bottom = ys[repeat[0]] + 0.42, ys[repeat[1]] - 0.42
        ax.add_patch(plt.Rectangle((-0.88, bottom), 3.25, top - bottom, fill=False, edgecolor=ACCENT,
                                   linestyle="--", linewidth=1.2))
        ax.text(-0.95, (top + bottom) / 2, repeat[2], rotation=90, ha="right", va="center", color=ACCENT, fontsize=10)
    canvas(ax, (-1.25, 2.45), (-0.55, n - 0.45))
    if title:
        ax.set_title(title)
    return ax


# --------------------------------------------------------------------------------------------
# ftip-000M: embedding lookup as a one-hot product
# --------------------------------------------------------------------------------------------
def plot_embedding_lookup(one_hot, table, rows, *, tokens: Sequence[int] | None = None,
                          axes: Sequence[Axes] | None = None) -> Sequence[Axes]:
    """Three heatmaps: the one-hot matrix ``[n, |V|]``, the table ``E [|V|, d]`` and ``X^tok [n, d]`` (ftip-000M).

    ``tokens`` labels the rows of the one-hot matrix and of the result.
    """
    oh, e, x = as_array(one_hot), as_array(table), as_array(rows)
    if oh.ndim != 2 or e.ndim != 2 or x.ndim != 2 or oh.shape[1] != e.shape[0] or x.shape != (oh.shape[0], e.shape[1]):
        raise ValueError(f"need one_hot [n, V], table [V, d] and rows [n, d]; got {oh.shape}, {e.shape}, {x.shape}")
    if axes is None:
        _, axes = plt.subplots(1, 3, figsize=(11, 3.4), layout="constrained",
                               gridspec_kw={"width_ratios": [oh.shape[1], e.shape[1], e.shape[1]]})
    if len(axes) != 3:
        raise ValueError(f"plot_embedding_lookup draws three panels, got {len(axes)} axes")
    lim = float(np.abs(e).max()) or 1.0
    axes[0].imshow(oh, cmap="Greys", vmin=0, vmax=1)
    axes[1].imshow(e, cmap="RdBu_r", vmin=-lim, vmax=lim)
    axes[2].imshow(x, cmap="RdBu_r", vmin=-lim, vmax=lim)
    n, v = oh.shape
    labels = ([f"$x_{{{t + 1}}}={a}$" for t, a in enumerate(tokens)] if tokens is not None
              else [f"$t={t + 1}$" for t in range(n)])
    axes[0].set_title("one-hot rows of $x_{1:n}$")
    axes[1].set_title("embedding table $E$")
    axes[2].set_title("$X^{\\mathrm{tok}}$ = one-hot $\\times\\, E$")
    axes[0].set_yticks(range(n), labels)
    axes[2].set_yticks(range(n), labels)
    axes[0].set_xticks(range(v))
    axes[0].set_xticks(np.arange(-0.5, v), minor=True)
    axes[0].set_yticks(np.arange(-0.5, n), minor=True)
    axes[0].grid(which="minor", color=MUTED, linewidth=0.5)
    axes[0].tick_params(which="minor", length=0)
    axes[0].set_xlabel("token id $a$")
    axes[1].set_yticks(range(v))
    axes[1].set_ylabel("token id $a$ (rows read are outlined)")
    for ax in axes[1:]:
        ax.set_xlabel("coordinate of $\\mathbb{R}^d$")
    read = sorted(set(tokens)) if tokens is not None else sorted(set(np.argmax(oh, axis=1).tolist()))
    for a in read:
        axes[1].add_patch(plt.Rectangle((-0.5, a - 0.5), e.shape[1], 1, fill=False, edgecolor=ACCENT, linewidth=2))
    return axes


# --------------------------------------------------------------------------------------------
# ftip-000N: positional tables and equivariance defects
# --------------------------------------------------------------------------------------------
def plot_position_table(table, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Heatmap of a ``[T, d]`` table of position vectors ``p_t`` (row ``t`` from one, ftip-000N)."""
    p = as_array(table)
    if p.ndim != 2:
        raise ValueError(f"plot_position_table needs a [T, d] table, got shape {p.shape}")
    ax = axes_or_new(ax, (5.0, 3.4))
    lim = float(np.abs(p).max()) or 1.0
    image = ax.imshow(p, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto",
                      extent=(-0.5, p.shape[1] - 0.5, p.shape[0] + 0.5, 0.5))
    ax.figure.colorbar(image, ax=ax, shrink=0.85)
    ax.set_xlabel("coordinate $i$")
    ax.set_ylabel("position $t$")
    if title:
        ax.set_title(title)
    return ax


def plot_defects(labels: Sequence[str], values, *, tolerance: float | None = None, ax: Axes | None = None,
                 title: str | None = None, xlabel: str = "defect") -> Axes:
    """Horizontal bars of nonnegative defects on a log axis; exact zeros drawn at the axis floor.

    ``tolerance`` draws a dashed line separating "holds" from "fails" (ftip-000N, ftip-000O).
    """
    v = as_array(values)
    _check_labels(labels, v, "plot_defects")
    if v.ndim != 1 or (v < 0).any() or not np.isfinite(v).all():
        raise ValueError("plot_defects needs a 1-D array of finite nonnegative values")
    ax = axes_or_new(ax, (6.0, 0.45 * len(v) + 1.2))
    smallest = min([*v[v > 0], *([tolerance] if tolerance else [])], default=None)
    floor = 10.0 ** (np.floor(np.log10(smallest)) - 2) if smallest else LOG_FLOOR
    shown = np.where(v > 0, v, floor)
    y = np.arange(len(v))[::-1]
    colors = [MUTED if (tolerance is not None and x <= tolerance) else ACCENT for x in v]
    ax.barh(y, shown, left=floor, color=colors, height=0.6)
    for yi, x in zip(y, v):
        ax.text(max(x, floor) * 1.4, yi, "0 (exact)" if x == 0 else f"{x:.1e}", va="center", fontsize=9, color=INK)
    if tolerance is not None:
        ax.axvline(tolerance, color=INK, linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlim(floor, max(shown.max(), tolerance or 0) * 1e3)
    ax.set_yticks(y, labels)
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    return ax


# --------------------------------------------------------------------------------------------
# ftip-000O: where positional information enters
# --------------------------------------------------------------------------------------------
#: Stages of one attention layer in data-flow order, as recorded by ``ModelConfig.position_stage``.
POSITION_STAGES = ("embedding", "qk", "scores")
_STAGE_TEXT = {
    "embedding": "token embedding\n$X^{(0)}_t = r_t(E_{x_t})$",
    "qk": "queries and keys\n$q_t = X_t W^Q$,  $k_s = X_s W^K$",
    "scores": "scores\n$q_t \\cdot k_s / \\sqrt{d_h} + M_{ts}$",
}


def draw_position_stages(stage_of: Mapping[str, str], *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """The embedding -> q, k -> scores -> softmax pipeline with each scheme tagged where it acts (ftip-000O).

    ``stage_of`` maps a scheme name to ``"embedding"``, ``"qk"``, ``"scores"`` or ``"none"``
    (the ``POSITION_STAGE`` record of :mod:`ftipbook.model.config`).
    """
    unknown = {s for s in stage_of.values() if s not in POSITION_STAGES + ("none",)}
    if not stage_of or unknown:
        raise ValueError(f"stage_of must map schemes to {POSITION_STAGES + ('none',)}; got {dict(stage_of)}")
    ax = axes_or_new(ax, (9.5, 3.6))
    xs = {stage: 1.9 * i for i, stage in enumerate(POSITION_STAGES)}
    softmax_x = xs["scores"] + 1.95
    for i, stage in enumerate(POSITION_STAGES):
        _box(ax, xs[stage], 0.0, _STAGE_TEXT[stage], w=1.6, h=0.8)
        next_left = xs[POSITION_STAGES[i + 1]] - 0.8 if i + 1 < len(POSITION_STAGES) else softmax_x - 0.4
        _arrow(ax, (xs[stage] + 0.8, 0.0), (next_left, 0.0))
    _box(ax, softmax_x, 0.0, "softmax,\nvalues", w=0.8, h=0.5, fc="white")
    by_stage: dict[str, list[str]] = {}
    for scheme, stage in stage_of.items():
        by_stage.setdefault(stage, []).append(scheme)
    for stage, schemes in by_stage.items():
        if stage == "none":
            ax.text(xs["embedding"] - 0.8, -1.05, "acts nowhere: " + ", ".join(schemes), fontsize=10, color=MUTED)
            continue
        for j, scheme in enumerate(schemes):
            y = 1.05 + 0.42 * j
            _box(ax, xs[stage], y, scheme, w=1.3, h=0.34, fc=HIGHLIGHT, ec=ACCENT)
        _arrow(ax, (xs[stage], 0.88), (xs[stage], 0.42), colour=ACCENT)
    tallest = max(len(v) for v in by_stage.values())
    canvas(ax, (xs["embedding"] - 0.95, xs["scores"] + 2.45), (-1.25, 1.25 + 0.42 * tallest))
    if title:
        ax.set_title(title)
    return ax


def plot_score_matrix(scores, *, ax: Axes | None = None, title: str | None = None,
                      label: str = "score") -> Axes:
    """Diverging heatmap of a ``[T_q, T_k]`` matrix of scores or score biases (positions from one)."""
    s = as_array(scores)
    if s.ndim != 2:
        raise ValueError(f"plot_score_matrix needs a 2-D matrix, got shape {s.shape}")
    ax = axes_or_new(ax, (3.8, 3.4))
    finite = s[np.isfinite(s)]
    lim = float(np.abs(finite).max()) if finite.size else 1.0
    image = ax.imshow(np.where(np.isfinite(s), s, np.nan), cmap="RdBu_r", vmin=-lim, vmax=lim,
                      extent=(0.5, s.shape[1] + 0.5, s.shape[0] + 0.5, 0.5))
    ax.figure.colorbar(image, ax=ax, shrink=0.8, label=label)
    ax.set_xlabel("key position $s$")
    ax.set_ylabel("query position $t$")
    if title:
        ax.set_title(title)
    return ax


# --------------------------------------------------------------------------------------------
# ftip-000P: the fused projection and its per-head blocks
# --------------------------------------------------------------------------------------------
def plot_fused_projection(weight, blocks: Sequence[tuple[str, int]], *, ax: Axes | None = None,
                          title: str | None = None) -> Axes:
    """Heatmap of a fused projection ``[d, sum of widths]`` cut into labelled column blocks (ftip-000P).

    ``blocks`` lists ``(label, width)`` from left to right, e.g. ``[("$W^Q_1$", 4), ...]``; the
    widths must add up to the number of columns.
    """
    w = as_array(weight)
    if w.ndim != 2:
        raise ValueError(f"plot_fused_projection needs a 2-D weight, got shape {w.shape}")
    widths = [int(b[1]) for b in blocks]
    if not blocks or min(widths) < 1 or sum(widths) != w.shape[1]:
        raise ValueError(f"block widths {widths} must be positive and add up to the {w.shape[1]} columns")
    ax = axes_or_new(ax, (0.16 * w.shape[1] + 2.0, 0.16 * w.shape[0] + 1.6))
    lim = float(np.abs(w).max()) or 1.0
    ax.imshow(w, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
    edge = -0.5
    for label, width in blocks:
        ax.axvline(edge, color=INK, linewidth=1.0)
        ax.text(edge + width / 2, -1.2, label, ha="center", va="bottom", fontsize=9, color=INK)
        edge += width
    ax.axvline(edge, color=INK, linewidth=1.0)
    ax.set_ylim(w.shape[0] - 0.5, -2.5)
    ax.set_yticks([])
    ax.set_xticks([])
    ax.set_ylabel("input coordinate ($d$ rows)")
    if title:
        ax.set_title(title)
    return ax


# --------------------------------------------------------------------------------------------
# ftip-000S: changing the future changes nothing
# --------------------------------------------------------------------------------------------
def plot_future_invariance(changes: Mapping[str, Sequence[float]], first_changed: int, *, ax: Axes | None = None,
                           title: str | None = None) -> Axes:
    """Largest logit change at each position after the tokens from ``first_changed`` on were replaced (ftip-000S).

    ``changes`` maps a model name to ``T`` nonnegative changes (positions from one); exact zeros
    are drawn on a floor line labelled "0 (exact)".
    """
    if not changes:
        raise ValueError("plot_future_invariance needs at least one series")
    arrays = {name: as_array(c) for name, c in changes.items()}
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) != 1 or len(next(iter(shapes))) != 1:
        raise ValueError(f"every series must be 1-D of one common length, got shapes {sorted(shapes)}")
    t = next(iter(arrays.values())).shape[0]
    if not 1 <= first_changed <= t:
        raise ValueError(f"first_changed must be a position in 1..{t}, got {first_changed}")
    if any((a < 0).any() or not np.isfinite(a).all() for a in arrays.values()):
        raise ValueError("changes must be finite and nonnegative")
    ax = axes_or_new(ax, (6.5, 3.4))
    positive = np.concatenate([a[a > 0] for a in arrays.values()])
    floor = 10.0 ** (np.floor(np.log10(positive.min())) - 2) if positive.size else 1e-12
    pos = np.arange(1, t + 1)
    for i, (name, a) in enumerate(arrays.items()):
        offset = (i - (len(arrays) - 1) / 2) * 0.08
        ax.plot(pos + offset, np.where(a > 0, a, floor), marker="o", color=SERIES[i % len(SERIES)], label=name,
                linewidth=1.2, markersize=4)
    ax.axvspan(first_changed - 0.5, t + 0.5, color=FILL, alpha=0.6, zorder=0)
    ax.text(first_changed - 0.4, floor * 3, "tokens replaced from here on", fontsize=9, color=INK)
    ax.set_yscale("log")
    ax.set_yticks([floor] + [10.0 ** e for e in range(int(np.log10(floor)) + 2, 2, 3)],
                  ["0 (exact)"] + [f"$10^{{{e}}}$" for e in range(int(np.log10(floor)) + 2, 2, 3)])
    ax.set_xlim(0.5, t + 0.5)
    ax.set_xticks(pos)
    ax.set_xlabel("position $t$")
    ax.set_ylabel("max $|\\Delta$ logit$|$ at $t$")
    ax.legend(fontsize=8, frameon=False, loc="center left")
    if title:
        ax.set_title(title)
    return ax


# --------------------------------------------------------------------------------------------
# ftip-000U: one weight matrix per head
# --------------------------------------------------------------------------------------------
def plot_head_weights(weights, *, axes: Sequence[Axes] | None = None, title: str | None = None) -> Sequence[Axes]:
    """One heatmap per head of a ``[H, T_q, T_k]`` stack of attention weights (ftip-000U)."""
    w = as_array(weights)
    if w.ndim != 3 or w.shape[0] < 1:
        raise ValueError(f"plot_head_weights needs [H, T_q, T_k] weights, got shape {w.shape}")
    h = w.shape[0]
    if axes is None:
        fig, axes = plt.subplots(1, h, figsize=(2.3 * h + 0.6, 2.6), layout="constrained", squeeze=False)
        axes = list(axes[0])
        if title:
            fig.suptitle(title)
    if len(axes) != h:
        raise ValueError(f"plot_head_weights needs one axes per head ({h}), got {len(axes)}")
    for i, ax in enumerate(axes):
        ax.imshow(w[i], cmap="Blues", vmin=0.0, vmax=1.0, extent=(0.5, w.shape[2] + 0.5, w.shape[1] + 0.5, 0.5))
        ax.set_title(f"head {i + 1}", fontsize=10)
        ax.set_xlabel("key $s$", fontsize=9)
        ax.tick_params(labelsize=8)
    axes[0].set_ylabel("query $t$", fontsize=9)
    return axes


# --------------------------------------------------------------------------------------------
# ftip-000V: cache bytes of the attention variants
# --------------------------------------------------------------------------------------------
def plot_cache_bytes(labels: Sequence[str], bytes_per_token, *, params: Sequence[int] | None = None,
                     ax: Axes | None = None, title: str | None = None) -> Axes:
    """Bars of cache bytes per token per layer for attention variants, optional parameter counts (ftip-000V)."""
    b = as_array(bytes_per_token)
    _check_labels(labels, b, "plot_cache_bytes")
    if b.ndim != 1 or (b <= 0).any():
        raise ValueError("bytes_per_token must be a 1-D array of positive values")
    if params is not None and len(params) != len(b):
        raise ValueError(f"params needs one count per variant ({len(b)}), got {len(params)}")
    ax = axes_or_new(ax, (1.5 * len(b) + 1.4, 3.6))
    x = np.arange(len(b))
    ax.bar(x, b, color=[SERIES[i % len(SERIES)] for i in range(len(b))], width=0.6)
    for xi, bi in zip(x, b):
        ax.text(xi, bi, f"{bi:g} B", ha="center", va="bottom", fontsize=9, color=INK)
    ticks = list(labels) if params is None else [f"{lab}\n{p:,} params" for lab, p in zip(labels, params)]
    ax.set_xticks(x, ticks, fontsize=9)
    ax.set_ylabel("cache bytes / token / layer")
    ax.set_ylim(0, b.max() * 1.18)
    if title:
        ax.set_title(title)
    return ax


# --------------------------------------------------------------------------------------------
# ftip-000W: the coordinatewise nonlinearities
# --------------------------------------------------------------------------------------------
def plot_activations(x, curves: Mapping[str, Sequence[float]], *, ax: Axes | None = None,
                     title: str | None = None) -> Axes:
    """Curves ``phi(x)`` of the coordinatewise nonlinearities of a feed-forward sublayer (ftip-000W)."""
    xs = as_array(x)
    if xs.ndim != 1 or not curves:
        raise ValueError("plot_activations needs a 1-D grid x and at least one curve")
    ax = axes_or_new(ax, (4.6, 3.2))
    for i, (name, y) in enumerate(curves.items()):
        ys = as_array(y)
        if ys.shape != xs.shape:
            raise ValueError(f"curve {name!r} has shape {ys.shape}, the grid has {xs.shape}")
        ax.plot(xs, ys, color=SERIES[i % len(SERIES)], label=name, linewidth=1.6)
    ax.axhline(0, color=MUTED, linewidth=0.8)
    ax.axvline(0, color=MUTED, linewidth=0.8)
    ax.set_xlabel("pre-activation $u$")
    ax.set_ylabel("$\\phi(u)$")
    ax.legend(fontsize=9, frameon=False)
    if title:
        ax.set_title(title)
    return ax


def plot_growth(scales, norms: Mapping[str, Sequence[float]], *, ax: Axes | None = None,
                title: str | None = None) -> Axes:
    """Log-log curves of ``|F(c z)|`` against ``c > 0`` for several sublayers, with slope-1 and slope-2 guides.

    A positively homogeneous map (bias-free ReLU sublayer) follows slope 1; a gated product such
    as SwiGLU approaches slope 2 (ftip-000W).
    """
    c = as_array(scales)
    if c.ndim != 1 or (c <= 0).any() or not norms:
        raise ValueError("plot_growth needs a 1-D grid of positive scales and at least one curve")
    ax = axes_or_new(ax, (4.6, 3.2))
    for i, (name, y) in enumerate(norms.items()):
        ys = as_array(y)
        if ys.shape != c.shape or (ys <= 0).any():
            raise ValueError(f"curve {name!r} must hold one positive norm per scale, got shape {ys.shape}")
        ax.plot(c, ys, color=SERIES[i % len(SERIES)], label=name, linewidth=1.6)
    first = min(as_array(y)[0] for y in norms.values())
    for slope, style in ((1, ":"), (2, "--")):
        ax.plot(c, first * (c / c[0]) ** slope, color=MUTED, linestyle=style, linewidth=1, label=f"slope {slope}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("scale $c$")
    ax.set_ylabel("$|F(cz)|$")
    ax.legend(fontsize=9, frameon=False)
    if title:
        ax.set_title(title)
    return ax
