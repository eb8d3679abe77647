"""Figures of the chapters on interactive environments and policies (ftip-0026, ftip-0027, ftip-0028).

* :func:`draw_loop`: one executed stopped trajectory unrolled in time, hidden states above the
  public record, each action drawn from the history to its left and each kernel step from
  ``(s_t, a_t)`` to ``(s_{t+1}, o_{t+1})``, ending in the recorded stop cause (ftip-0026's lost figure).
* :func:`draw_interaction_tree`: the tree of every stopped trajectory of an enumerated law by
  action prefix, edges labelled with conditional probabilities and leaves marked by who stopped
  (ftip-0027's lost figure).

Nothing here computes what it draws: chapters compute with :mod:`ftipbook.env` and pass results in.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from fractions import Fraction

from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from ftipbook.env.history import StopOwner, StoppedTrajectory
from ftipbook.prob import FiniteLaw
from ftipbook.viz.charts import arrow, box, canvas
from ftipbook.viz.style import ACCENT, BLANK, BLUE, FILL, GREEN, HIGHLIGHT, INK, MUTED, axes_or_new

#: Leaf colour by the owner of the stopping decision.
OWNER_COLOURS = {StopOwner.AGENT: ACCENT, StopOwner.ENVIRONMENT: GREEN, StopOwner.BUDGET: BLUE,
                 StopOwner.HORIZON: MUTED}


def draw_loop(z: StoppedTrajectory, *, label: Callable[[Hashable], str] = str, ax: Axes | None = None) -> Axes:
    """The executed loop of ``z``: states (top, hidden), observations and actions (bottom, public)."""
    if not isinstance(z, StoppedTrajectory):
        raise TypeError(f"z must be a StoppedTrajectory, got {type(z).__name__}")
    texts = {("s", t): f"$s_{t}$ = {label(z.states[t])}" for t in range(z.n + 1)}
    texts.update({("o", t): f"$o_{t}$ = {label(z.observations[t])}" for t in range(z.n + 1)})
    texts.update({("a", t): f"$a_{t}$ = {label(z.actions[t])}" for t in range(z.n)})
    n, w = z.n, max(1.8, 0.095 * max(len(v) for v in texts.values()))
    dx = w + 0.6
    ax = axes_or_new(ax, (dx * (n + 1) + 1.2, 3.4))
    canvas(ax, (-w / 2 - 0.4, dx * n + w / 2 + 1.6), (-2.1, 1.6))
    ax.axhline(0.45, color=MUTED, linestyle=":", linewidth=1)
    ax.text(-w / 2 - 0.35, 0.6, "hidden (environment)", fontsize=8, color=MUTED, va="bottom")
    ax.text(-w / 2 - 0.35, 0.3, "public history (agent)", fontsize=8, color=MUTED, va="top")
    for t in range(n + 1):
        x = dx * t
        box(ax, x, 1.05, texts["s", t], w=w, h=0.5, fc=BLANK, fontsize=8)
        box(ax, x, -0.2, texts["o", t], w=w, h=0.5, fc=FILL, fontsize=8)
        if t < n:
            box(ax, x + dx / 2, -1.3, texts["a", t], w=w, h=0.5, fc=HIGHLIGHT, fontsize=8)
            arrow(ax, (x, -0.47), (x + dx / 2 - 0.3, -1.03), colour=INK, head=9)  # pi_t reads H_t
            arrow(ax, (x + w / 2, 1.05), (x + dx - w / 2, 1.05), colour=MUTED, head=9)  # K_t: state
            arrow(ax, (x + dx / 2 + 0.3, -1.03), (x + dx - 0.2, -0.47), colour=MUTED, head=9)  # K_t: observation
    ax.text(dx * n + w / 2 + 0.8, -0.2, f"stop: {z.cause.owner.value}\n({z.cause.rule})", fontsize=8, va="center",
            ha="center", color=OWNER_COLOURS[z.cause.owner])
    ax.legend(handles=[Line2D([], [], color=INK, label=r"$\pi_t(\cdot\mid H_t)$: action from the public history"),
                       Line2D([], [], color=MUTED, label=r"$K_t$: next state and observation")],
              loc="lower left", fontsize=7, frameon=False)
    return ax


def draw_interaction_tree(law: FiniteLaw, *, label: Callable[[Hashable], str] = str, ax: Axes | None = None) -> Axes:
    """The stopped trajectories of ``law`` as a tree of action prefixes, leaves coloured by stop owner.

    Edge labels are ``P(next action | action prefix)`` read off ``law``; a square marks a prefix at
    which trajectories stop, with their total probability. Trajectories sharing their actions (a
    stochastic environment) share a node, which may both stop and continue.
    """
    if not isinstance(law, FiniteLaw) or not all(isinstance(z, StoppedTrajectory) for z in law.outcomes):
        raise TypeError("law must be a FiniteLaw of StoppedTrajectory")
    mass: dict[tuple, Fraction | float] = {}
    leaves: dict[tuple, tuple] = {}
    for z, p in law.items():
        if p == 0:
            continue
        acts = tuple(z.actions)
        for k in range(len(acts) + 1):
            mass[acts[:k]] = mass.get(acts[:k], 0) + p
        prob, owners = leaves.get(acts, (0, set()))
        leaves[acts] = (prob + p, owners | {z.cause.owner})
    kids: dict[tuple, list[tuple]] = {node: [] for node in mass}
    for node in sorted(mass, key=lambda a: tuple(map(repr, a))):
        if node:
            kids[node[:-1]].append(node)
    order = [node for node in sorted(mass, key=lambda a: tuple(map(repr, a))) if not kids[node]]
    depth = max(len(a) for a in mass)
    ax = axes_or_new(ax, (2.2 * depth + 3.0, 0.5 * len(order) + 1.2))
    ys = {leaf: -float(i) for i, leaf in enumerate(order)}

    def place(node: tuple) -> float:
        if node not in ys:
            ys[node] = sum(place(k) for k in kids[node]) / len(kids[node])
        return ys[node]

    place(())
    canvas(ax, (-0.6, 2.2 * depth + 2.6), (-len(order) + 0.4, 0.8))
    for node in mass:
        if node:
            parent = node[:-1]
            x0, x1 = 2.2 * len(parent), 2.2 * len(node)
            ax.plot([x0, x1], [ys[parent], ys[node]], color=INK, linewidth=1)
            cond = mass[node] / mass[parent]
            ax.text((x0 + x1) / 2, (ys[parent] + ys[node]) / 2 + 0.08, f"{label(node[-1])}: {_fmt(cond)}",
                    fontsize=7, ha="center", va="bottom", color=INK)
    for node in mass:
        x, y = 2.2 * len(node), ys[node]
        if node in leaves:
            prob, owners = leaves[node]
            colour = OWNER_COLOURS[sorted(owners, key=lambda o: o.value)[0]]
            ax.plot([x], [y], marker="s", color=colour, markersize=7)
            ax.text(x + 0.2, y, f"{_fmt(prob)}  ({'/'.join(sorted(o.value for o in owners))})", fontsize=7,
                    va="center", color=colour)
        else:
            ax.plot([x], [y], marker="o", color=INK, markersize=4)
    return ax


def _fmt(p: Fraction | float) -> str:
    return str(p) if isinstance(p, (int, Fraction)) else f"{p:.3f}"
