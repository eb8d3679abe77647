"""Figures for the clock and training-intervention chapters (ftip-00BM to 00C1).

Like :mod:`ftipbook.viz.optim`, each helper draws numbers computed elsewhere (by
:mod:`ftipbook.optim`) on a given ``Axes`` (or a new figure) and returns it; nothing here
computes the mathematics it draws.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ftipbook.viz.style import ACCENT, INK, LOG_FLOOR, MUTED, PALETTE_WIDE, as_array, axes_or_new, finish_axes

_STYLES = ("-", "--", "-.", ":")


def _style(i: int) -> dict:
    return {"color": PALETTE_WIDE[i % len(PALETTE_WIDE)], "linestyle": _STYLES[i % len(_STYLES)]}


def _pairs(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    if not curves:
        raise ValueError("curves is empty; pass {label: (x values, y values)}")
    out = {}
    for name, (x, y) in curves.items():
        x, y = as_array(x), as_array(y)
        if x.ndim != 1 or x.shape != y.shape:
            raise ValueError(f"curve {name!r}: x and y must be 1-D of one length, got {x.shape} and {y.shape}")
        out[name] = (x, y)
    return out


def plot_clocks(t: Sequence[float], clocks: Mapping[str, Sequence[float]], *,
                tau_max: Mapping[str, float] | None = None, ax: Axes | None = None,
                title: str | None = None) -> Axes:
    """Effective clocks ``tau(t)`` against physical time, one line per scalar ``a`` (ftip-00BM).

    ``tau_max`` (label -> value) draws each finite ceiling ``tau_max`` as a dotted line in the
    curve's colour; an infinite one is noted in the legend.
    """
    curves = _pairs({name: (t, tau) for name, tau in clocks.items()})
    tau_max = dict(tau_max or {})
    unknown = set(tau_max) - set(curves)
    if unknown:
        raise ValueError(f"tau_max names clocks that were not given: {sorted(unknown)}")
    ax = axes_or_new(ax, (6.0, 3.6))
    for i, (name, (x, y)) in enumerate(curves.items()):
        cap = tau_max.get(name)
        label = name if cap is None else rf"{name}  ($\tau_{{\max}}$ = {'∞' if math.isinf(cap) else f'{cap:g}'})"
        ax.plot(x, y, label=label, linewidth=1.6, **_style(i))
        if cap is not None and math.isfinite(cap):
            ax.axhline(cap, color=_style(i)["color"], linestyle=":", linewidth=1)
    ax.set_xlabel("physical time $t$")
    ax.set_ylabel(r"effective clock $\tau(t)=\int_0^t du/a(u)$")
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    if title:
        ax.set_title(title)
    return ax


def plot_hitting_times(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]], *, level: float,
                       hits: Mapping[str, float | None], ax: Axes | None = None, title: str | None = None) -> Axes:
    """Loss against physical time for flows on one path, with the level ``delta`` and hitting times (ftip-00BP).

    ``hits`` maps each label to the time the loss first reaches ``level`` or ``None`` (never).
    """
    data = _pairs(curves)
    if set(hits) != set(data):
        raise ValueError(f"hits must name exactly the curves {sorted(data)}, got {sorted(hits)}")
    if not level > 0:
        raise ValueError(f"level must be > 0 for a log axis, got {level!r}")
    ax = axes_or_new(ax, (6.4, 3.6))
    for i, (name, (x, y)) in enumerate(data.items()):
        hit = hits[name]
        label = f"{name}: never" if hit is None else f"{name}: t = {hit:.3f}"
        ax.semilogy(x, np.maximum(y, LOG_FLOOR), label=label, linewidth=1.6, **_style(i))
        if hit is not None:
            ax.plot([hit], [level], marker="o", color=_style(i)["color"], markersize=6)
    ax.axhline(level, color=MUTED, linewidth=1, linestyle=":")
    ax.annotate(rf"level $\delta$ = {level:g}", (0, level), textcoords="offset points", xytext=(2, -11),
                color=MUTED, fontsize=8)
    ax.set_xlabel("physical time $t$")
    ax.set_ylabel(r"loss $L(\theta(t))$")
    ax.legend(fontsize=8, frameon=False)
    if title:
        ax.set_title(title)
    return ax


def plot_curves(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]], *, xlabel: str, ylabel: str,
                log: bool = True, level: float | None = None, level_label: str | None = None, ax: Axes | None = None,
                title: str | None = None) -> Axes:
    """Quantities against a step or time axis, one line per label (ftip-00BQ, 00BR, 00BY).

    With ``log`` (the default) the y axis is logarithmic, negative values are refused and exact
    zeros are drawn at :data:`~ftipbook.viz.style.LOG_FLOOR`. ``level`` draws a declared threshold or reference value.
    """
    data = _pairs(curves)
    ax = axes_or_new(ax, (6.4, 3.6))
    for i, (name, (x, y)) in enumerate(data.items()):
        if log and (y < 0).any():
            raise ValueError(f"curve {name!r} has negative values; a log axis needs values >= 0")
        ax.plot(x, np.maximum(y, LOG_FLOOR) if log else y, label=name, linewidth=1.5, **_style(i))
    if log:
        ax.set_yscale("log")
    if level is not None:
        ax.axhline(level, color=MUTED, linewidth=1, linestyle=":")
        if level_label:
            ax.annotate(level_label, (ax.get_xlim()[0], level), textcoords="offset points", xytext=(4, 3),
                        color=MUTED, fontsize=8)
    return finish_axes(ax, xlabel, ylabel, title)


def plot_logit_gauge(panels: Mapping[str, torch.Tensor | np.ndarray], *, axes: Sequence[Axes] | None = None,
                     title: str | None = None) -> Figure:
    """Attention-logit heatmaps side by side on one colour scale (ftip-00BX).

    ``panels`` maps a caption (e.g. the action applied to ``(W^Q, W^K)``) to a ``T x T`` logit
    matrix; equal matrices look identical, a broken gauge shows at a glance.
    """
    if not panels:
        raise ValueError("panels is empty; pass {caption: T x T logits}")
    mats = {name: as_array(m) for name, m in panels.items()}
    for name, m in mats.items():
        if m.ndim != 2:
            raise ValueError(f"panel {name!r} must be a 2-D logit matrix, got shape {m.shape}")
    if axes is None:
        fig, axes = plt.subplots(1, len(mats), figsize=(3.0 * len(mats) + 0.6, 3.0), layout="constrained")
        axes = np.atleast_1d(axes)
    else:
        fig = axes[0].figure
    if len(axes) != len(mats):
        raise ValueError(f"got {len(axes)} axes for {len(mats)} panels")
    bound = max(float(np.abs(m).max()) for m in mats.values()) or 1.0
    image = None
    for ax, (name, m) in zip(axes, mats.items()):
        image = ax.imshow(m, cmap="RdBu_r", vmin=-bound, vmax=bound)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("key position")
        ax.set_ylabel("query position")
    fig.colorbar(image, ax=list(axes), shrink=0.8, label="logit")
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_step_size_deviation(step_sizes: Sequence[float], deviations: Sequence[float], *, ax: Axes | None = None,
                             title: str | None = None) -> Axes:
    """Distance between a discrete run and its continuous flow against the step size, log-log (ftip-00C1).

    A dotted line of slope one through the smallest step size shows first order in ``eta``.
    """
    x, y = as_array(step_sizes), as_array(deviations)
    if x.ndim != 1 or x.shape != y.shape or len(x) < 2:
        raise ValueError(f"step_sizes and deviations must be 1-D of one length >= 2, got {x.shape}, {y.shape}")
    if not ((x > 0).all() and (y > 0).all()):
        raise ValueError("step sizes and deviations must be > 0 on a log-log plot")
    ax = axes_or_new(ax, (5.2, 3.6))
    ax.loglog(x, y, marker="o", color=ACCENT, label="measured deviation")
    i = int(np.argmin(x))
    ax.loglog(x, y[i] * x / x[i], linestyle=":", color=INK, label=r"slope 1 ($\propto\eta$)")
    ax.set_xlabel(r"step size $\eta$")
    ax.set_ylabel("max distance to the flow")
    ax.legend(fontsize=8, frameon=False)
    if title:
        ax.set_title(title)
    return ax


__all__ = ["LOG_FLOOR", "plot_clocks", "plot_hitting_times", "plot_curves", "plot_logit_gauge",
           "plot_step_size_deviation"]
