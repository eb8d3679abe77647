"""Figures of the comparison chapters: attempt throughput, discovery, cache ratio, published speedups
and operating points.

Items ftip-00KV, 00KW, 00KY, 00L3, 00LD, 00LF. Each helper draws on a given ``Axes`` (or makes a
figure) and returns it. The curves are evaluated with :mod:`ftipbook.compare.throughput` and
:mod:`ftipbook.compare.cache_model`, so a figure always shows the library's numbers.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ftipbook.compare import cache_model, throughput
from ftipbook.viz.style import ACCENT, BLUE, FILL, INK, MUTED, axes_or_new

_F_GRID = np.linspace(0.0, 1.0, 201)


def plot_throughput_curve(
    s: float,
    *,
    marks: Sequence[float] = (),
    s_band: tuple[float, float] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """``S(f) = 1 / (1 - f + f / s)`` over the generation share ``f`` (ftip-00L3, 00LF).

    ``marks`` are shares whose ``S`` is drawn and labelled to 3 decimals (the ftip-00LF table);
    ``s_band = (s_lo, s_hi)`` shades the sensitivity band between the two curves (ftip-00LD).
    """
    ax = axes_or_new(ax, (5.2, 3.6))
    if s_band is not None:
        lo = [throughput.sensitivity_range(f, *s_band).lo for f in _F_GRID]
        hi = [throughput.sensitivity_range(f, *s_band).hi for f in _F_GRID]
        ax.fill_between(_F_GRID, lo, hi, color=FILL, label=f"$s\\in[{s_band[0]:g}, {s_band[1]:g}]$")
    ax.plot(_F_GRID, [throughput.throughput_factor(f, s) for f in _F_GRID], color=INK, label=f"$s={s:g}$")
    for f in marks:
        value = throughput.throughput_factor(f, s)
        ax.plot([f], [value], "o", color=ACCENT)
        ax.annotate(f"{value:.3f}", (f, value), textcoords="offset points", xytext=(-6, 8), ha="right", color=ACCENT)
    ax.axhline(1.0, color=MUTED, linewidth=0.8, linestyle=":")
    ax.set_xlabel("generation share $f$ of a baseline attempt")
    ax.set_ylabel("attempt-throughput factor $S$")
    ax.set_xlim(0, 1)
    ax.legend(loc="upper left", frameon=False)
    if title:
        ax.set_title(title)
    return ax


def plot_discovery_steps(
    *, f: float, s: float, p_m: float, p_k: float, budget_max: int, budget: float | None = None,
    ax: Axes | None = None, title: str | None = None,
) -> Axes:
    """Discovery probability against the budget ``B / c`` for the baseline and the hybrid (ftip-00L3).

    The curves are step functions: only whole attempts count (``N = floor(B / cost)``).
    ``budget`` marks one budget with both arms' values.
    """
    if budget_max < 1:
        raise ValueError(f"budget_max={budget_max!r} must be >= 1")
    ax = axes_or_new(ax, (5.2, 3.6))
    grid = np.linspace(0, budget_max, 40 * budget_max + 1)
    runs = [throughput.compare_attempts(f=f, s=s, p_m=p_m, p_k=p_k, budget=float(b)) for b in grid]
    ax.plot(grid, [r.discovery_m for r in runs], color=MUTED, drawstyle="steps-post", label=f"baseline, $p_M={p_m:g}$")
    ax.plot(grid, [r.discovery_k for r in runs], color=ACCENT, drawstyle="steps-post", label=f"hybrid, $p_K={p_k:g}$")
    if budget is not None:
        r = throughput.compare_attempts(f=f, s=s, p_m=p_m, p_k=p_k, budget=budget)
        ax.axvline(budget, color=INK, linewidth=0.8, linestyle=":")
        for value, n, color in ((r.discovery_m, r.n_m, MUTED), (r.discovery_k, r.n_k, ACCENT)):
            ax.plot([budget], [value], "o", color=color)
            ax.annotate(f"N={n}: {value:.3f}", (budget, value), textcoords="offset points", xytext=(8, -14), color=color,
                        bbox=dict(facecolor="white", edgecolor="none", alpha=0.85, pad=1))
    ax.set_xlabel("budget $B/c$ (baseline attempts' worth)")
    ax.set_ylabel("P(at least one verified success)")
    ax.set_ylim(0, 1)
    ax.set_xlim(0, budget_max)
    ax.legend(loc="lower right", frameon=False)
    if title:
        ax.set_title(title)
    return ax


def plot_correlated_discovery(
    p: float, n_max: int, rhos: Sequence[float], *, ax: Axes | None = None, title: str | None = None
) -> Axes:
    """Discovery probability against the number of attempts for several correlations ``rho`` (ftip-00L3).

    ``rho = 0`` is the independent formula; every curve has the same per-attempt probability ``p``.
    """
    if n_max < 1:
        raise ValueError(f"n_max={n_max!r} must be >= 1")
    ax = axes_or_new(ax, (5.2, 3.6))
    ns = np.arange(0, n_max + 1)
    for i, rho in enumerate(rhos):
        values = [throughput.discovery_probability_correlated(p, int(n), rho) for n in ns]
        color = INK if rho == 0 else (ACCENT if i == len(rhos) - 1 else MUTED)
        ax.plot(ns, values, marker=".", color=color, label=f"$\\rho={rho:g}$" + (" (independent)" if rho == 0 else ""))
    ax.set_xlabel("attempts $N$")
    ax.set_ylabel("P(at least one success)")
    ax.set_ylim(0, 1)
    ax.legend(loc="lower right", frameon=False)
    if title:
        ax.set_title(title)
    return ax


def plot_cache_ratio(
    kappa: float, sigma: float, *, t_max: int = 2**16,
    measured: Sequence[tuple[int, float]] = (), ax: Axes | None = None, title: str | None = None,
) -> Axes:
    """``M_hybrid / M_MLA`` against the context length ``T`` (log scale), for given bytes (ftip-00KY).

    Marks the crossover ``T = sigma / kappa`` (equal memory), the ``1/4`` limit, and optional
    measured ``(T, ratio)`` points from live caches.
    """
    if t_max < 2:
        raise ValueError(f"t_max={t_max!r} must be >= 2")
    ax = axes_or_new(ax, (5.6, 3.6))
    ts = np.unique(np.round(np.geomspace(1, t_max, 300)).astype(int))
    ax.plot(ts, [cache_model.cache_ratio(int(t), kappa, sigma) for t in ts], color=INK, label="model $1/4+3\\sigma/(4\\kappa T)$")
    if measured:
        t, r = zip(*measured)
        ax.plot(t, r, "o", color=ACCENT, label="measured live caches")
    cross = cache_model.crossover_length(kappa, sigma)
    ax.axhline(1.0, color=MUTED, linewidth=0.8, linestyle=":")
    ax.axhline(cache_model.RATIO_LIMIT, color=MUTED, linewidth=0.8, linestyle="--", label="limit $1/4$")
    ax.axvline(cross, color=ACCENT, linewidth=0.8, linestyle=":")
    ax.annotate(f"$T=\\sigma/\\kappa={cross:g}$", (cross, 1.0), textcoords="offset points", xytext=(4, 6), color=ACCENT)
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 2)
    ax.set_xlabel("context length $T$ (tokens)")
    ax.set_ylabel("$M_{\\rm hybrid}/M_{\\rm MLA}$")
    ax.legend(loc="upper right", frameon=False)
    if title:
        ax.set_title(title)
    return ax


def plot_speedups(
    entries: Sequence[tuple[str, float, str]], *, ax: Axes | None = None, title: str | None = None
) -> Axes:
    """Horizontal bars of reported speedups ``(label, value, regime)``, grouped by regime (ftip-00KW).

    Bars of one regime share a colour; the values are printed at the bar ends.
    """
    if not entries:
        raise ValueError("plot_speedups needs at least one (label, value, regime) entry")
    ax = axes_or_new(ax, (8.4, 0.45 * len(entries) + 1.2))
    regimes = list(dict.fromkeys(regime for _, _, regime in entries))
    palette = [INK, ACCENT, MUTED, BLUE]
    for i, (label, value, regime) in enumerate(entries):
        color = palette[regimes.index(regime) % len(palette)]
        ax.barh(i, value, color=color, label=regime if regime not in ax.get_legend_handles_labels()[1] else None)
        ax.text(value, i, f" {value:g}x", va="center", color=color)
    ax.set_yticks(range(len(entries)), [label for label, _, _ in entries])
    ax.invert_yaxis()
    ax.axvline(1.0, color=MUTED, linewidth=0.8, linestyle=":")
    ax.set_xlabel("speedup over MLA (x)")
    ax.set_xlim(0, max(v for _, v, _ in entries) * 1.2)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, title="regime")
    if title:
        ax.set_title(title)
    return ax


def operating_points_figure(
    panels: Mapping[str, Mapping[str, float]], *, title: str | None = None
) -> Figure:
    """One panel of horizontal bars per quantity, three panels a row, one bar per published model (ftip-00KV).

    ``panels`` maps a quantity with its unit (``"pretraining tokens (trillions)"``) to the
    models that report it and their values. A model keeps its colour across panels, and values
    are printed at the bar ends, so two models that share a value read as equal.
    """
    if not panels or not all(panels.values()):
        raise ValueError("operating_points_figure needs at least one panel, each with one model or more")
    models = list(dict.fromkeys(name for values in panels.values() for name in values))
    palette = [INK, ACCENT, BLUE, MUTED]
    colour = {name: palette[i % len(palette)] for i, name in enumerate(models)}
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    height = rows * (0.35 * max(len(v) for v in panels.values()) + 0.9)
    fig, axes = plt.subplots(rows, cols, figsize=(9.0, height), layout="constrained", squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (quantity, values) in zip(axes.flat, panels.items()):
        for i, (name, value) in enumerate(values.items()):
            ax.barh(i, float(value), color=colour[name])
            ax.text(float(value), i, f" {float(value):g}", va="center", color=colour[name])
        ax.set_yticks(range(len(values)), list(values))
        ax.invert_yaxis()
        ax.set_xlim(0, max(map(float, values.values())) * 1.35)
        ax.set_title(quantity, fontsize=10)
    if title:
        fig.suptitle(title)
    return fig


def attempt_throughput_figure(*, f: float, s: float, budget: float, p_m: float, p_k: float, budget_max: int = 30) -> Figure:
    """The static twin of the attempt-throughput widget: ``S(f)`` and discovery vs budget (ftip-00L3, 00LF)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.4, 3.6), layout="constrained")
    plot_throughput_curve(s, marks=[f], ax=left, title="attempts per unit cost, hybrid / baseline")
    plot_discovery_steps(f=f, s=s, p_m=p_m, p_k=p_k, budget_max=budget_max, budget=budget, ax=right,
                         title="discovery under a budget (whole attempts only)")
    return fig


def cache_ratio_figure(*, kappa: float, sigma: float, length: int, t_max: int = 2**20,
                       measured: Sequence[tuple[int, float]] = ()) -> Figure:
    """The static twin of the cache-ratio widget: the ratio curve with the chosen ``T`` marked (ftip-00KY)."""
    ax = plot_cache_ratio(kappa, sigma, t_max=t_max, measured=measured, title="active state, hybrid / full MLA")
    value = cache_model.cache_ratio(length, kappa, sigma)
    ax.plot([length], [min(value, 2.0)], "s", color=INK)
    ax.annotate(f"T={length}: {value:.3f}", (length, min(value, 2.0)), textcoords="offset points", xytext=(6, 6), color=INK)
    return ax.figure
