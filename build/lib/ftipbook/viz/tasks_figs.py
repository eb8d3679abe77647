"""Figures of the chapters on tasks and evaluation interfaces (section ftip-001M).

* :func:`plot_running_means`: running means of evaluator draws, one line per evaluator, with an
  optional band per line (ftip-001T: a bounded judge settles, a Cauchy evaluator does not);
* :func:`draw_horizon_partition`: the lost figure of ftip-001U, trajectories of one policy by
  length and class (finish within the short horizon, need more tokens, fail) with the two
  horizons marked, beside the score each protocol counts.

Each helper draws what a chapter measured and returns the ``Axes``; nothing here computes it.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from ftipbook.viz.style import ACCENT, BLUE, GREEN, INK, MUTED, PALETTE, axes_or_new, finish_axes

#: The three classes of ftip-001U in drawing order, with their colours.
HORIZON_CLASSES = {"finish short": GREEN, "need more tokens": BLUE, "fail": MUTED}


def plot_running_means(series: Mapping[str, Sequence[float]], *, bands: Mapping[str, Sequence[float]] | None = None,
                       target: Mapping[str, float] | None = None, ax: Axes | None = None,
                       title: str | None = None) -> Axes:
    """Running means ``(1/n) sum_{i<=n} z_i`` of each named series against ``n`` (log axis).

    ``bands`` gives a half-width per ``n`` for a series (e.g. ``4 sigma / sqrt(n)`` around its
    ``target``); ``target`` draws a dashed line at a series' expected value.
    """
    if not series:
        raise ValueError("series is empty; pass {name: draws}")
    ax = axes_or_new(ax, (7.0, 3.6))
    for (name, draws), colour in zip(series.items(), PALETTE):
        z = np.asarray(draws, dtype=float)
        if z.ndim != 1 or len(z) == 0:
            raise ValueError(f"series {name!r} must be a nonempty 1-D sequence")
        n = np.arange(1, len(z) + 1)
        mean = np.cumsum(z) / n
        ax.plot(n, mean, color=colour, lw=1.2, label=name)
        if target and name in target:
            ax.axhline(target[name], color=colour, lw=0.8, ls="--")
            if bands and name in bands:
                half = np.asarray(bands[name], dtype=float)
                ax.fill_between(n, target[name] - half, target[name] + half, color=colour, alpha=0.15, lw=0)
    ax.set_xscale("log")
    ax.legend(frameon=False, fontsize=8)
    return finish_axes(ax, "number of evaluator draws n", "running mean", title)


def draw_horizon_partition(lengths: Mapping[str, Sequence[int]], short: int, long: int,
                           scores: Mapping[str, Mapping[str, int]], *, title: str | None = None) -> plt.Figure:
    """The ftip-001U figure: trajectory lengths by class with the horizons, and each protocol's count.

    ``lengths`` maps each class of :data:`HORIZON_CLASSES` to the new-token counts of its
    trajectories (a trajectory that never stopped is given length ``long + 1``); ``scores`` maps a
    protocol name to ``{class: number counted as success}``.
    """
    if set(lengths) != set(HORIZON_CLASSES):
        raise ValueError(f"lengths must have the classes {list(HORIZON_CLASSES)}, got {sorted(lengths)}")
    if not 1 <= short < long:
        raise ValueError(f"horizons must satisfy 1 <= short < long, got short={short}, long={long}")
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.6), gridspec_kw={"width_ratios": [3, 2]})
    bins = np.arange(1, long + 3) - 0.5
    stack = [np.asarray(lengths[c], dtype=int) for c in HORIZON_CLASSES]
    left.hist(stack, bins=bins, stacked=True, color=list(HORIZON_CLASSES.values()), label=list(HORIZON_CLASSES),
              edgecolor="white")
    for h, name in ((short, "short horizon"), (long, "long horizon")):
        left.axvline(h + 0.5, color=ACCENT if h == short else INK, ls="--", lw=1.2)
        left.text(h + 0.55, left.get_ylim()[1] * 0.92, name, fontsize=8, color=INK)
    left.set_xticks(range(1, long + 2), [str(i) for i in range(1, long + 1)] + ["cut"])
    left.legend(frameon=False, fontsize=8, loc="upper left")
    finish_axes(left, "new tokens until eos", "trajectories", "one policy, its trajectories")
    bottom = np.zeros(len(scores))
    for c, colour in HORIZON_CLASSES.items():
        counts = np.array([scores[p].get(c, 0) for p in scores], dtype=float)
        right.bar(list(scores), counts, bottom=bottom, color=colour, edgecolor="white")
        bottom += counts
    for i, total in enumerate(bottom):
        right.text(i, total, f"{int(total)}", ha="center", va="bottom", fontsize=9, color=INK)
    right.set_ylim(0, 1.12 * max(bottom.max(), 1))
    right.set(xlabel="protocol", ylabel="counted as success", title="what each horizon counts")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
