"""Figures of the paired-measurement chapters: targets, repetitions, intervals, frontiers, checks.

Items ftip-00KX, 00L0, 00L2, 00LA, 00LB, 00LC, 00LE and 00LG. Each helper draws on a given
``Axes`` (or makes a figure) and returns it. Nothing here computes what it draws: chapters
compute with :mod:`ftipbook.compare` and :mod:`ftipbook.eval` and pass the results in.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import FancyBboxPatch

from ftipbook.compare.frontier import NotReached, ScoredCostMeasurement
from ftipbook.compare.reports import MeasuredContrast
from ftipbook.eval.stats import Interval, Measurements
from ftipbook.viz.charts import CellLook, canvas, flag_grid, outline, status_patches
from ftipbook.viz.style import ACCENT, BLANK, FILL, HIGHLIGHT, INK, MUTED, PALETTE, axes_or_new, finish_axes

#: Fill and legend text of each evidence status in :func:`draw_evidence_chain`.
EVIDENCE_FILL = {"reported": FILL, "derived": HIGHLIGHT, "assumed": BLANK}
EVIDENCE_LABEL = {"reported": "reported by the source", "derived": "derived by a stated model",
                  "assumed": "assumed (not measured)"}


def plot_scored_costs(
    series: Mapping[str, Sequence[ScoredCostMeasurement]],
    target: float,
    marks: Mapping[str, ScoredCostMeasurement | NotReached],
    *,
    logx: bool = False,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Measured (cost, score) points per system, the target ``q``, and each system's smallest cost reaching it (ftip-00KX).

    ``marks`` holds what :func:`~ftipbook.compare.frontier.smallest_cost_reaching` returned per
    system: a circled point, or "not reached" written in the legend.
    """
    if not series:
        raise ValueError("series must name at least one system")
    ax = axes_or_new(ax, (5.4, 3.6))
    for i, (name, points) in enumerate(series.items()):
        pts = sorted(points, key=lambda p: p.cost)
        colour = PALETTE[i % len(PALETTE)]
        mark = marks.get(name)
        label = name if not isinstance(mark, NotReached) else f"{name} (q not reached)"
        ax.plot([p.cost for p in pts], [p.score for p in pts], "o-", color=colour, ms=4, lw=1.2, label=label)
        if isinstance(mark, ScoredCostMeasurement):
            ax.plot([mark.cost], [mark.score], "o", ms=12, mfc="none", mec=colour, mew=2)
            ax.axvline(mark.cost, color=colour, lw=0.8, ls=":")
    ax.axhline(target, color=MUTED, lw=1, ls="--", label=f"target q = {target:g}")
    if logx:
        ax.set_xscale("log")
    unit = next(iter(series.values()))[0].cost_unit
    ax.set_xlabel(f"measured cost ({unit})")
    ax.set_ylabel("score")
    ax.legend(frameon=False, fontsize=9, loc="lower right")
    if title:
        ax.set_title(title)
    return ax


def plot_repetitions(runs: Mapping[str, Measurements], *, ax: Axes | None = None, title: str | None = None,
                     scale: float = 1.0, unit: str | None = None) -> Axes:
    """Every recorded repetition per system, with its mean (solid), median (dashed) and minimum (triangle) (ftip-00LA).

    Values are multiplied by ``scale`` (e.g. ``1e3`` to show milliseconds) and labelled with ``unit``.
    """
    if not runs:
        raise ValueError("runs must name at least one system")
    ax = axes_or_new(ax, (5.4, 0.9 * len(runs) + 1.6))
    for i, (name, m) in enumerate(runs.items()):
        values = np.asarray(m.values) * scale
        jitter = np.linspace(-0.15, 0.15, len(values))
        ax.scatter(values, i + jitter, s=14, color=PALETTE[i % len(PALETTE)], alpha=0.7, zorder=2)
        ax.plot([m.mean * scale] * 2, [i - 0.3, i + 0.3], color=INK, lw=2, label="mean" if i == 0 else None)
        ax.plot([m.median * scale] * 2, [i - 0.3, i + 0.3], color=ACCENT, lw=2, ls="--", label="median" if i == 0 else None)
        ax.plot([m.min * scale], [i + 0.38], "v", color=MUTED, ms=8, label="single fastest run" if i == 0 else None)
    ax.set_yticks(range(len(runs)), list(runs))
    ax.set_ylim(-0.6, len(runs) - 0.4)
    ax.set_xlabel(f"measured value ({unit or next(iter(runs.values())).rule.unit})")
    ax.legend(frameon=False, fontsize=8, loc="best")
    if title:
        ax.set_title(title)
    return ax


def plot_intervals(rows: Mapping[str, tuple[float, Interval]], *, reference: float | None = None,
                   predicted: Mapping[str, float] | None = None, xlabel: str = "value",
                   ax: Axes | None = None, title: str | None = None) -> Axes:
    """Forest plot: one point estimate and interval per row (ftip-00LB, 00LE).

    ``reference`` draws a vertical line (e.g. 0 or the true value); ``predicted`` marks a
    predicted value per row with a diamond, filled when it lies in the row's interval.
    """
    if not rows:
        raise ValueError("rows must name at least one interval")
    ax = axes_or_new(ax, (5.6, 0.6 * len(rows) + 1.4))
    names = list(rows)
    for i, name in enumerate(names):
        estimate, ci = rows[name]
        ax.plot([ci.low, ci.high], [i, i], color=INK, lw=2)
        ax.plot([estimate], [i], "o", color=INK, ms=5)
        if predicted and name in predicted:
            inside = ci.contains(predicted[name])
            ax.plot([predicted[name]], [i], "D", ms=8, mec=ACCENT, mfc=ACCENT if inside else "white",
                    label=("predicted (in interval: filled)" if i == 0 else None))
    if reference is not None:
        ax.axvline(reference, color=MUTED, lw=1, ls="--")
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    if predicted:
        ax.legend(frameon=False, fontsize=8, loc="best")
    if title:
        ax.set_title(title)
    return ax


def plot_frontier_steps(budgets: Sequence[float], curves: Mapping[str, Sequence[float]], *,
                        points: Mapping[str, tuple[float, float]] | None = None, xlabel: str = "budget C",
                        ylabel: str = "frontier value V(C)", logx: bool = False, ax: Axes | None = None,
                        title: str | None = None) -> Axes:
    """Frontier values ``V(C)`` as step curves over a budget grid (ftip-00L2); ``points`` marks
    single demonstrated (cost, score) points."""
    xs = np.asarray(budgets, dtype=float)
    ax = axes_or_new(ax, (5.4, 3.6))
    for i, (name, values) in enumerate(curves.items()):
        ys = np.asarray(values, dtype=float)
        if ys.shape != xs.shape:
            raise ValueError(f"curve {name!r} has {ys.shape} values for {xs.shape} budgets")
        shown = np.where(np.isfinite(ys), ys, np.nan)
        ax.step(xs, shown, where="post", color=PALETTE[i % len(PALETTE)], lw=1.6, label=name)
    for j, (name, (cost, score)) in enumerate((points or {}).items()):
        ax.plot([cost], [score], "*", ms=13, color=PALETTE[(j + 1) % len(PALETTE)], mec=INK, label=name)
    if logx:
        ax.set_xscale("log")
    return finish_axes(ax, xlabel, ylabel, title)


def plot_contrasts(contrasts: Sequence[MeasuredContrast], *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """One row per contrast: both systems' values joined by a line, the difference ``a - b`` written
    beside it (ftip-00LC). Rows may have different units; each row is labelled with its quantity."""
    if not contrasts:
        raise ValueError("contrasts must hold at least one MeasuredContrast")
    ax = axes_or_new(ax, (5.6, 0.7 * len(contrasts) + 1.4))
    first = contrasts[0]
    for i, c in enumerate(contrasts):
        ax.plot([c.value_a, c.value_b], [i, i], color=MUTED, lw=2, zorder=1)
        ax.plot([c.value_a], [i], "o", color=ACCENT, ms=8, label=first.system_a if i == 0 else None, zorder=2)
        ax.plot([c.value_b], [i], "s", color=INK, ms=7, label=first.system_b if i == 0 else None, zorder=2)
        ax.annotate(f"{c.difference:+g}", (max(c.value_a, c.value_b), i), textcoords="offset points",
                    xytext=(8, -3), fontsize=9, color=INK)
    ax.set_yticks(range(len(contrasts)), [f"{c.quantity} ({c.unit})" for c in contrasts])
    ax.set_ylim(-0.6, len(contrasts) - 0.4)
    ax.invert_yaxis()
    ax.margins(x=0.15)
    ax.set_xlabel("reported value")
    ax.legend(frameon=False, fontsize=9, loc="best")
    if title:
        ax.set_title(title)
    return ax


def plot_check_matrix(verdicts: Mapping[str, Mapping[str, bool]], *, ax: Axes | None = None,
                      title: str | None = None) -> Axes:
    """Rows are simulated worlds, columns declared checks; a cell says whether the prediction
    agreed (light, "agree") or not (dark, "DISAGREE") (ftip-00LG)."""
    ax = flag_grid(verdicts, yes=CellLook(FILL, "agree", INK), no=CellLook(ACCENT, "DISAGREE", "white", bold=True),
                   name="verdicts", cell=(1.5, 0.6), ax=ax)
    if title:
        ax.set_title(title, pad=24)
    return ax


def draw_evidence_chain(links: Sequence[tuple[str, str, str]], *, ax: Axes | None = None,
                        title: str | None = None) -> Axes:
    """A top-to-bottom chain of ``(claim, value, status)`` links, each box filled by its status:
    ``"reported"``, ``"derived"`` or ``"assumed"`` (dashed) (ftip-00KZ)."""
    if not links:
        raise ValueError("links must hold at least one (claim, value, status)")
    for claim, _, status in links:
        if status not in EVIDENCE_FILL:
            raise ValueError(f"link {claim!r}: status={status!r} must be one of {sorted(EVIDENCE_FILL)}")
    n = len(links)
    ax = axes_or_new(ax, (8.6, 0.62 * n + 0.9))
    ys = 1 - (np.arange(n) + 0.5) / n
    h = 0.66 / n
    for i, ((claim, value, status), y) in enumerate(zip(links, ys)):
        ax.add_patch(FancyBboxPatch((0.02, y - h / 2), 0.56, h, boxstyle="round,pad=0.004", fc=EVIDENCE_FILL[status],
                                    linewidth=1.1, **outline(status == "assumed")))
        ax.text(0.03, y, claim, ha="left", va="center", fontsize=9, color=INK)
        ax.text(0.62, y, value, ha="left", va="center", fontsize=9, color=INK, family="monospace")
        if i + 1 < n:
            ax.annotate("", xy=(0.3, ys[i + 1] + h / 2), xytext=(0.3, y - h / 2),
                        arrowprops=dict(arrowstyle="-|>", color=INK, lw=1.0))
    used = status_patches(EVIDENCE_FILL, EVIDENCE_LABEL, {link[2] for link in links}, dashed="assumed")
    ax.legend(handles=used, loc="upper right", bbox_to_anchor=(1.0, -0.01), ncol=len(used), fontsize=8, frameon=False)
    canvas(ax)
    if title:
        ax.set_title(title)
    return ax
