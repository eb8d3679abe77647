"""Optimizer-geometry figures (ftip-00B3, 00B4, 00BF, 00BN, 00BR, 00BZ).

Each helper draws numbers computed elsewhere (by :mod:`ftipbook.optim`) on a given ``Axes``
(or a new figure) and returns it; nothing here computes the mathematics it draws.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from ftipbook.optim.flows import ReparameterizationCheck, Theta
from ftipbook.optim.gauge import GaugeReport
from ftipbook.viz.charts import arrow, box, canvas
from ftipbook.viz.style import ACCENT, BLANK, BLUE, FILL, INK, LOG_FLOOR, MUTED, as_array, axes_or_new


def plot_gauge_reports(reports: Mapping[str, GaugeReport], *, ax: Axes | None = None,
                       tol: float | None = 1e-10, title: str | None = None) -> Axes:
    """Relative represented distance ``||W~_t - W_t|| / ||W_t||`` against step, one line per optimizer (ftip-00B3).

    Equivariant rules stay at round-off; the others separate at the first step. ``tol`` draws
    the pass threshold, labelled in the right margin where no line runs.
    """
    if not reports:
        raise ValueError("reports is empty; pass {name: GaugeReport}")
    ax = axes_or_new(ax, (6.4, 3.8))
    for i, (name, report) in enumerate(reports.items()):
        d = np.maximum(as_array(report.represented), LOG_FLOOR)
        ax.semilogy(np.arange(len(d)), d, marker="o", markersize=2.5, linewidth=1.2,
                    linestyle="-" if report.equivariant(tol or 1e-10) else "--", label=name,
                    color=plt.get_cmap("tab20")(i % 20))
    if tol is not None:
        ax.axhline(tol, color=MUTED, linewidth=1, linestyle=":")
        ax.annotate(f"tolerance\n{tol:g}", (1, tol), xycoords=ax.get_yaxis_transform(), textcoords="offset points",
                    xytext=(4, 0), ha="left", va="center", color=MUTED, fontsize=8, annotation_clip=False)
    ax.set_xlabel("step $t$")
    ax.set_ylabel(r"$\|\widetilde W_t - W_t\|_F \,/\, \|W_t\|_F$")
    # An opaque legend, so that the tolerance line does not run through its entries.
    ax.legend(fontsize=7, ncol=2, loc="center right", facecolor="white", edgecolor="none", framealpha=0.9)
    if title:
        ax.set_title(title)
    return ax


# This module's diagram node: :func:`ftipbook.viz.charts.box` of 0.34 x 0.14 with 11-point text.
_node = partial(box, w=0.34, h=0.14, boxstyle="round,pad=0.02", linewidth=1, fontsize=11)


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], label: str, offset: tuple[float, float],
           color: str = INK) -> None:
    arrow(ax, start, end, colour=color, width=1.3, head=14, shrink=2.0)
    mid = ((start[0] + end[0]) / 2 + offset[0], (start[1] + end[1]) / 2 + offset[1])
    ax.text(*mid, label, ha="center", va="center", fontsize=10, color=color)


def draw_commuting_square(*, gap: float | None = None, step: str = "one update $\\mathcal{A}$",
                          ax: Axes | None = None, title: str | None = None) -> Axes:
    """The square of ftip-00B4: steps along the rows, ``\\cdot Q`` down the columns.

    ``gap`` (a measured ``||(U~_1, V~_1) - (U_1 Q, V_1 Q)||``) is printed in the bottom-right
    corner: round-off for an equivariant rule, a visible number otherwise.
    """
    ax = axes_or_new(ax, (5.6, 3.6))
    tl, tr, bl, br = (0.2, 0.78), (0.8, 0.78), (0.2, 0.22), (0.8, 0.22)
    _node(ax, *tl, "$(U_0, V_0)$")
    _node(ax, *tr, "$(U_1, V_1)$")
    _node(ax, *bl, "$(U_0Q, V_0Q)$")
    _node(ax, *br, r"$(\widetilde U_1, \widetilde V_1)$",
          fc=FILL if gap is None or gap < 1e-10 else "#fde2d3")
    _arrow(ax, (tl[0] + 0.18, tl[1]), (tr[0] - 0.18, tr[1]), step, (0, 0.07))
    _arrow(ax, (bl[0] + 0.18, bl[1]), (br[0] - 0.18, br[1]), step, (0, -0.07))
    _arrow(ax, (tl[0], tl[1] - 0.08), (bl[0], bl[1] + 0.08), r"$\cdot\, Q$", (-0.06, 0))
    _arrow(ax, (tr[0], tr[1] - 0.08), (br[0], br[1] + 0.08), r"$\cdot\, Q\ ?$", (0.07, 0), color=ACCENT)
    if gap is not None:
        ax.text(0.5, 0.04, rf"gap $\|(\widetilde U_1,\widetilde V_1) - (U_1Q, V_1Q)\|$ = {gap:.2e}", ha="center",
                fontsize=9, color=ACCENT if gap >= 1e-10 else INK)
    canvas(ax)
    if title:
        ax.set_title(title)
    return ax


def plot_witness_products(lrs: Sequence[float], w1: Sequence[float], w1_rotated: Sequence[float], *,
                          certified: float, crossing: float, ax: Axes | None = None,
                          title: str | None = None) -> Axes:
    """The two ftip-00BF products against the learning rate, with the note's range shaded.

    ``certified`` is the upper end ``2^{-1/2} + eps`` of the stated range; ``crossing`` the
    learning rate where the curves meet again (marked), outside that range.
    """
    x, a, b = as_array(lrs), as_array(w1), as_array(w1_rotated)
    if not (x.shape == a.shape == b.shape and x.ndim == 1):
        raise ValueError(f"lrs, w1 and w1_rotated must be 1-D of one length, got {x.shape}, {a.shape}, {b.shape}")
    ax = axes_or_new(ax, (6.0, 3.8))
    ax.axvspan(0, certified, color=FILL, alpha=0.8, label=r"stated range $0<\eta<2^{-1/2}+\varepsilon$")
    ax.plot(x, a, color=INK, label=r"$W_1=(1-\eta/(1+\varepsilon))^2$")
    ax.plot(x, b, color=ACCENT, label=r"$\widetilde W_1=(1-\eta/(2^{-1/2}+\varepsilon))^2$")
    ax.axvline(crossing, color=MUTED, linestyle="--", linewidth=1)
    # The label hangs beside the dashed marker at mid-height, away from both curves' minima.
    ax.annotate(rf"meet again at $\eta\approx{crossing:.4f}$", (crossing, 0.5), xycoords=ax.get_xaxis_transform(),
                textcoords="offset points", xytext=(-4, 0), ha="right", va="center", fontsize=9, color=INK)
    ax.set_xlabel(r"learning rate $\eta$")
    ax.set_ylabel("represented product after one Adam step")
    # Top centre: between the curves' start at eta = 0 and the rise of the rotated twin's curve.
    ax.legend(fontsize=8, loc="upper center", facecolor="white", edgecolor="none", framealpha=0.9)
    if title:
        ax.set_title(title)
    return ax


def plot_reparameterization(check: ReparameterizationCheck, summary: Callable[[Theta], float], *,
                            label: str = "summary", axes: Sequence[Axes] | None = None) -> Figure:
    """Theorem ftip-00BN in two panels: ``summary(theta)`` against ``t`` and against the clock ``tau``.

    Against ``t`` the common-scalar flow lags gradient flow; against ``tau`` the curves coincide.
    """
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.2), layout="constrained")
    else:
        fig = axes[0].figure
    csf, gf = check.scalar_flow, check.gradient_flow
    s_csf = [summary(th) for th in csf.theta]
    s_gf = [summary(th) for th in gf.theta]
    axes[0].plot(csf.t, s_csf, marker="o", color=ACCENT, label="common-scalar flow")
    axes[0].plot(gf.t, s_gf, marker="x", linestyle="--", color=INK, label="gradient flow")
    axes[0].set_xlabel("physical time $t$")
    axes[1].plot(csf.clock, s_csf, marker="o", color=ACCENT, label=r"common-scalar flow at $\tau(t)$")
    axes[1].plot(gf.t, s_gf, marker="x", linestyle="--", color=INK, label=r"gradient flow at time $\tau$")
    axes[1].set_xlabel(r"effective clock $\tau$")
    for a in axes:
        a.set_ylabel(label)
        a.legend(fontsize=8, frameon=False)
    return fig


def draw_quadrant(entries: Sequence[tuple[str, bool, bool, str]], *, ax: Axes | None = None,
                  title: str | None = None) -> Axes:
    """The 2 x 2 diagram of ftip-00BR: gauge-equivariant or not, against recovers the target or not.

    ``entries`` are ``(label, equivariant, recovers, origin)``; ``origin`` is ``"source"`` (a
    reported placement) or anything else (an ftipbook measurement), drawn with different markers.
    """
    ax = axes_or_new(ax, (6.0, 4.6))
    for x in (0, 1):
        for y in (0, 1):
            ax.add_patch(plt.Rectangle((x, y), 1, 1, facecolor=FILL if x == y else BLANK, edgecolor=INK))
    counts: dict[tuple[bool, bool], int] = {}
    for label, equivariant, recovers, origin in entries:
        cell = (bool(equivariant), bool(recovers))
        n = counts[cell] = counts.get(cell, 0) + 1
        x, y = (1.5 if equivariant else 0.5), (1.85 if recovers else 0.85) - 0.17 * n
        source = origin == "source"
        ax.plot(x - 0.42, y, marker="s" if source else "o", color=INK if source else ACCENT, markersize=6)
        ax.text(x - 0.36, y, f"{label} ({origin})", va="center", fontsize=8, color=INK)
    ax.set_xticks([0.5, 1.5], ["not equivariant", "gauge-equivariant"])
    ax.set_yticks([0.5, 1.5], ["no recovery", "recovers target"])
    ax.set_xlim(0, 2)
    ax.set_ylim(0, 2)
    ax.tick_params(length=0)
    if title:
        ax.set_title(title)
    return ax


def draw_loss_quotient(trajectories: Mapping[str, Sequence[float]], *, w0: float, l0: float,
                       axes: Sequence[Axes] | None = None) -> Figure:
    """ftip-00BZ: two orbit points collapse to one loss-only description, then split under an optimizer.

    Left: the two gauge-related starts feeding one box ``(W_0, L_0)``. Right: the represented
    trajectories ``W_t`` of ``trajectories`` (name -> values), e.g. Adam from each start.
    """
    if not trajectories:
        raise ValueError("trajectories is empty; pass {name: [W_0, W_1, ...]}")
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.4), layout="constrained",
                                 gridspec_kw={"width_ratios": [1.1, 1]})
    else:
        fig = axes[0].figure
    left, right = axes
    _node(left, 0.2, 0.75, "$(U_0, V_0)$")
    _node(left, 0.2, 0.25, "$(U_0Q, V_0Q)$")
    left.add_patch(FancyBboxPatch((0.58, 0.32), 0.36, 0.36, boxstyle="round,pad=0.02", facecolor=BLANK,
                                  edgecolor=INK))
    left.text(0.76, 0.5, f"loss-only view\n$W_0 = {w0:g}$\n$L_0 = {l0:g}$", ha="center", va="center", fontsize=10)
    for y in (0.75, 0.25):
        arrow(left, (0.38, y), (0.58, 0.5), width=1.0, shrink=2.0)
    canvas(left)
    for i, (name, values) in enumerate(trajectories.items()):
        w = as_array(values)
        right.plot(np.arange(len(w)), w, marker="o", markersize=3, label=name,
                   color=[INK, ACCENT, MUTED, BLUE][i % 4], linestyle=["-", "--", ":", "-."][i % 4])
    right.set_xlabel("step $t$")
    right.set_ylabel("represented $W_t$")
    right.legend(fontsize=8, frameon=False)
    return fig


__all__ = ["plot_gauge_reports", "draw_commuting_square", "plot_witness_products", "plot_reparameterization",
           "draw_quadrant", "draw_loss_quotient", "LOG_FLOOR"]
