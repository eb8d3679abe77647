"""Figures of the chapters on tokens, text and probability (section ftip-0009).

* :func:`plot_laws`: several laws over the same outcomes as grouped bars, an event shaded
  (ftip-000B conditioning, ftip-000H laws of two parameter tuples);
* :func:`draw_segmentations`: one text cut into tokens by several tokenizers (ftip-000D, 000E);
* :func:`draw_roundtrip`: the four-stage round trip of ftip-000F (its lost figure);
* :func:`draw_generations`: generated rows stopped by ``eos`` or by a length cap (ftip-000G);
* :func:`plot_stop_mass`: the mass of the stopped continuations by length and stop reason (ftip-000I);
* :func:`draw_prefix_tree`: a prefix tree with one branch's factors written on it (ftip-000J, its
  lost figure).

Each helper draws on a given ``Axes`` (or makes a figure) and returns it. Nothing here computes
what it draws: chapters compute with :mod:`ftipbook.prob` and :mod:`ftipbook.tokenizer` and pass
the results in.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from ftipbook.model.generate import StopReason
from ftipbook.prob import PrefixTree
from ftipbook.viz.charts import arrow, box, canvas, cell_values, grouped_bars, series_arrays
from ftipbook.viz.style import ACCENT, FILL, HIGHLIGHT, INK, MUTED, PALETTE, as_array, axes_or_new

#: Alternating fills of adjacent tokens in :func:`draw_segmentations`.
TOKEN_FILLS = (FILL, HIGHLIGHT)
#: How a space is shown inside a token box (an open box, as in ftip-000F's underscores).
SPACE = "\u2423"


# --- laws ----------------------------------------------------------------------------------------
def plot_laws(
    outcomes: Sequence[str],
    laws: Mapping[str, Sequence[float]],
    *,
    event: Collection[str] = (),
    event_label: str = "event A",
    ylabel: str = "probability",
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Grouped bars: one colour per law in ``laws``, one group per outcome (ftip-000B, ftip-000H).

    Outcomes in ``event`` get a shaded background labelled ``event_label`` (e.g. the event a law
    is conditioned on). Every law must give one number per outcome.
    """
    if not outcomes or not laws:
        raise ValueError("plot_laws needs at least one outcome and one law")
    unknown = sorted(set(event) - set(outcomes))
    if unknown:
        raise ValueError(f"event names {unknown}, which are not outcomes; outcomes are {list(outcomes)}")
    arrays = series_arrays(laws, len(outcomes), kind="law", of="outcomes")
    ax = axes_or_new(ax, (min(0.9 * len(outcomes) + 2.5, 10.0), 3.4))
    centres = np.arange(len(outcomes))
    for j, name in enumerate(outcomes):
        if name in event:
            ax.axvspan(j - 0.5, j + 0.5, color=FILL, alpha=0.6, lw=0,
                       label=event_label if j == min(outcomes.index(e) for e in event) else None)
    grouped_bars(ax, centres, arrays)
    ax.set_xticks(centres, list(outcomes))
    ax.set_xlim(-0.5, len(outcomes) - 0.5)
    ax.set_ylabel(ylabel)
    ax.margins(y=0.1)
    ax.legend(frameon=False, fontsize=9)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def plot_joint_tables(
    tables: Mapping[str, Sequence[Sequence[float]]],
    *,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    fmt: str = "{:g}",
    xlabel: str = "",
    ylabel: str = "",
    axes: Sequence[Axes] | None = None,
) -> Sequence[Axes]:
    """Joint tables side by side on one colour scale, each with its row and column sums (ftip-000A).

    ``tables[title]`` is a matrix (e.g. ``72 p(i, j)``); the sums are written in an extra column
    on the right and an extra row at the bottom, so tables with equal marginals show equal edges.
    """
    if not tables:
        raise ValueError("plot_joint_tables needs at least one table")
    mats = {name: as_array(t) for name, t in tables.items()}
    for name, m in mats.items():
        if m.shape != (len(row_labels), len(col_labels)):
            raise ValueError(f"table {name!r} has shape {m.shape}; the labels need "
                             f"({len(row_labels)}, {len(col_labels)})")
    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(1, len(mats), figsize=(4.8 * len(mats), 4.4), layout="constrained", squeeze=False)
        axes = list(axes[0])
    if len(axes) != len(mats):
        raise ValueError(f"{len(axes)} axes for {len(mats)} tables")
    top = max(float(np.abs(m).max()) for m in mats.values()) or 1.0
    n_rows, n_cols = len(row_labels), len(col_labels)
    for ax, (name, m) in zip(axes, mats.items()):
        ax.imshow(m, cmap="Oranges", vmin=0.0, vmax=top, aspect="auto", extent=(-0.5, n_cols - 0.5, n_rows - 0.5, -0.5))
        cell_values(ax, m, fmt, top)
        for i in range(n_rows):
            ax.text(n_cols - 0.05, i, fmt.format(m[i].sum()), ha="left", va="center", fontsize=9, color=ACCENT)
        for j in range(n_cols):
            ax.text(j, n_rows - 0.05, fmt.format(m[:, j].sum()), ha="center", va="top", fontsize=9, color=ACCENT)
        ax.text(n_cols - 0.05, n_rows - 0.05, "sums", ha="left", va="top", fontsize=8, color=ACCENT)
        ax.set_xlim(-0.5, n_cols + 0.6)
        ax.set_ylim(n_rows + 0.45, -0.5)
        ax.set_xticks(range(n_cols), list(col_labels))
        ax.set_yticks(range(n_rows), list(row_labels))
        ax.tick_params(length=0)
        for side in ("right", "bottom", "top"):
            ax.spines[side].set_visible(False)
        ax.set(xlabel=xlabel, ylabel=ylabel)
        ax.set_title(name, fontsize=10)
    return axes


def plot_limits(
    widths: Sequence[float],
    estimates: Mapping[str, Sequence[float]],
    limits: Mapping[str, float],
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Estimates along a shrinking family of events, each beside its limit in the same colour (ftip-000C).

    ``estimates[name][k]`` is the value at ``widths[k]``; ``limits[name]`` is drawn as a
    horizontal line. Both mappings must name the same families.
    """
    if not estimates or set(estimates) != set(limits):
        raise ValueError(f"estimates and limits must name the same nonempty families, got {sorted(estimates)} "
                         f"and {sorted(limits)}")
    xs = as_array(widths)
    ax = axes_or_new(ax, (5.4, 3.4))
    for i, (name, values) in enumerate(estimates.items()):
        ys = as_array(values)
        if ys.shape != xs.shape:
            raise ValueError(f"family {name!r} has {ys.shape} estimates for {xs.shape} widths")
        colour = PALETTE[i % len(PALETTE)]
        ax.scatter(xs, ys, color=colour, s=30, zorder=3, label=f"{name}: estimates")
        ax.axhline(limits[name], color=colour, lw=1.2, ls="--", label=f"{name}: limit {limits[name]:.4f}")
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.grid(alpha=0.3)
    ax.margins(x=0.08, y=0.2)
    ax.legend(frameon=False, fontsize=8.5)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


# --- tokenizers ----------------------------------------------------------------------------------
def draw_segmentations(rows: Mapping[str, Sequence[str]], *, title: str | None = None, ax: Axes | None = None) -> Axes:
    """One text cut into tokens in several ways, one row per entry of ``rows`` (ftip-000D, 000E).

    ``rows[label]`` lists the text of each token in order (spaces are drawn as ``␣``); a box's
    width is proportional to its number of characters, so rows that spell the same text have
    the same length. The token count is written at the right end of each row.
    """
    if not rows:
        raise ValueError("draw_segmentations needs at least one row")
    for label, pieces in rows.items():
        if not pieces or not all(isinstance(p, str) and p for p in pieces):
            raise ValueError(f"row {label!r} must be a nonempty list of nonempty token strings")
    longest = max(sum(len(p) for p in pieces) for pieces in rows.values())
    ax = axes_or_new(ax, (min(0.16 * longest + 3.2, 12.0), 0.62 * len(rows) + 0.7))
    for r, (label, pieces) in enumerate(rows.items()):
        y = -r
        x = 0.0
        for k, piece in enumerate(pieces):
            w = len(piece)
            ax.add_patch(Rectangle((x, y - 0.32), w, 0.64, fc=TOKEN_FILLS[k % 2], ec=INK, lw=0.8))
            ax.text(x + w / 2, y, piece.replace(" ", SPACE), ha="center", va="center", fontsize=8.5,
                    family="monospace", color=INK)
            x += w
        ax.text(-0.6, y, label, ha="right", va="center", fontsize=9, color=INK)
        ax.text(x + 0.6, y, f"{len(pieces)} tokens", ha="left", va="center", fontsize=9, color=ACCENT)
    canvas(ax, (-0.3 * longest - 1, longest * 1.18 + 2), (-len(rows) + 0.4, 0.6))
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def draw_roundtrip(text: str, normalized: str, tokens: Sequence[str], detokenized: str,
                   retokenized: Sequence[str], *, space: str = "_", ax: Axes | None = None) -> Axes:
    """The four-stage round trip of ftip-000F (its lost figure), spaces shown as ``space``.

    Boxes ``s -> N(s) -> T(N(s)) -> D(T(N(s)))`` left to right; under them, the detokenized text
    is compared with ``s`` (``=`` or a red ``≠``) and a loop ``T∘N`` goes from the last box back
    to the token box, labelled with ``retokenized`` and whether it equals ``tokens``.
    """
    for name, value in (("text", text), ("normalized", normalized), ("detokenized", detokenized)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not isinstance(space, str) or len(space) != 1:
        raise ValueError(f"space must be one character, got {space!r}")
    ax = axes_or_new(ax, (10.0, 3.4))
    show = lambda s: s.replace(" ", space)  # noqa: E731
    tup = lambda t: "(" + ", ".join(show(x) for x in t) + ")"  # noqa: E731
    xs, y, w, h = (0.1, 0.36, 0.62, 0.88), 0.62, 0.17, 0.16
    boxes = [(f"$s$\n{show(text)}", "white"), (f"$N(s)$\n{show(normalized)}", FILL),
             (f"$T(N(s))$\n{tup(tokens)}", HIGHLIGHT), (f"$D(T(N(s)))$\n{show(detokenized)}", FILL)]
    for x, (label, fc) in zip(xs, boxes):
        box(ax, x, y, label, w=w, h=h, fc=fc, family="monospace")
    for (a, b), name in zip(zip(xs, xs[1:]), ("$N$", "$T$", "$D$")):
        arrow(ax, (a + w / 2 + 0.01, y), (b - w / 2 - 0.01, y))
        ax.text((a + b) / 2, y + 0.05, name, ha="center", va="bottom", fontsize=11, color=INK)
    same_text = detokenized == text
    ax.plot([xs[0], xs[0], xs[3], xs[3]], [y - h / 2 - 0.02, 0.28, 0.28, y - h / 2 - 0.02],
            color=INK if same_text else ACCENT, lw=1.2, ls="--")
    ax.text((xs[0] + xs[3]) / 2, 0.25, ("=" if same_text else "\u2260") + " : the original text"
            + (" is recovered" if same_text else " is not recovered"), ha="center", va="top", fontsize=10,
            color=INK if same_text else ACCENT)
    stable = tuple(retokenized) == tuple(tokens)
    arrow(ax, (xs[3], y + h / 2 + 0.01), (xs[2], y + h / 2 + 0.01), rad=0.55, colour=INK if stable else ACCENT)
    ax.text((xs[2] + xs[3]) / 2, 0.93, f"$T\\circ N$ gives {tup(retokenized)}: "
            + ("stable" if stable else "not stable"), ha="center", va="bottom", fontsize=10,
            color=INK if stable else ACCENT)
    canvas(ax, ylim=(0.1, 1.0))
    return ax


# --- sequences and continuations -----------------------------------------------------------------
def draw_generations(rows: Sequence[Sequence[str]], reasons: Sequence[str], *, eos: str, cap: int,
                     title: str | None = None, ax: Axes | None = None) -> Axes:
    """Generated continuations as rows of cells at positions ``1..cap`` (ftip-000G).

    The ``eos`` token is filled in the accent colour, a dashed line marks the length cap, and
    each row's stop reason (``reasons[i]``, e.g. ``"eos"`` or ``"max_len"``) is written at its end.
    """
    if len(rows) != len(reasons) or not rows:
        raise ValueError(f"need one stop reason per row and at least one row, got {len(rows)} rows and "
                         f"{len(reasons)} reasons")
    if not isinstance(cap, int) or cap < 1:
        raise ValueError(f"cap must be an int >= 1, got {cap!r}")
    for i, row in enumerate(rows):
        if not 1 <= len(row) <= cap:
            raise ValueError(f"row {i} has {len(row)} tokens; rows must have 1..cap={cap} tokens")
    ax = axes_or_new(ax, (0.55 * cap + 2.6, 0.42 * len(rows) + 1.0))
    for r, (row, reason) in enumerate(zip(rows, reasons)):
        y = -r
        for t, token in enumerate(row):
            ax.add_patch(Rectangle((t + 0.05, y - 0.4), 0.9, 0.8, fc=ACCENT if token == eos else FILL,
                                   ec=INK, lw=0.6))
            ax.text(t + 0.5, y, token, ha="center", va="center", fontsize=8,
                    color="white" if token == eos else INK)
        ax.text(cap + 0.35, y, str(reason), ha="left", va="center", fontsize=8.5,
                color=ACCENT if reason == StopReason.EOS.value else INK)
    ax.axvline(cap + 0.02, color=INK, ls="--", lw=1)
    ax.set_xticks(np.arange(cap) + 0.5, [str(t + 1) for t in range(cap)])
    ax.set_xlabel("position $t$ of the continuation (one-based)")
    ax.set_xlim(-0.1, cap + 2.2)
    ax.set_ylim(-len(rows) + 0.4, 0.6)
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def plot_stop_mass(eos_mass: Sequence[float], cap_mass: float, *, title: str | None = None,
                   ax: Axes | None = None) -> Axes:
    """Probability of stopping on ``eos`` at each length ``1..m``, beside the mass cut by the cap (ftip-000I).

    ``eos_mass[k]`` is the probability that generation stops with ``eos`` as token ``k + 1``;
    ``cap_mass`` is the probability of reaching the cap ``m = len(eos_mass)`` without ``eos``.
    """
    masses = as_array(eos_mass)
    if masses.ndim != 1 or not len(masses):
        raise ValueError("eos_mass must be a nonempty 1-D sequence (one entry per length 1..m)")
    if (masses < 0).any() or cap_mass < 0:
        raise ValueError("masses must be >= 0")
    ax = axes_or_new(ax, (5.2, 3.2))
    lengths = np.arange(1, len(masses) + 1)
    ax.bar(lengths - 0.2, masses, 0.4, color=FILL, ec=INK, label="stopped by eos")
    ax.bar([len(masses) + 0.2], [cap_mass], 0.4, color=ACCENT, label="stopped by the length cap")
    for x, v in list(zip(lengths - 0.2, masses)) + [(len(masses) + 0.2, cap_mass)]:
        ax.text(x, v, f"{v:.3f}", ha="center", va="bottom", fontsize=8, color=INK)
    ax.set_xticks(lengths)
    ax.set(xlabel="length of the stopped continuation", ylabel="probability")
    ax.set_ylim(0, 1.35 * max(float(masses.max()), cap_mass, 1e-12))
    ax.legend(frameon=False, fontsize=9, loc="upper left")
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def draw_prefix_tree(
    tree: PrefixTree,
    vocab: Sequence[str],
    *,
    prompt: str,
    highlight: Sequence[int] = (),
    highlight_labels: Sequence[str] = (),
    ax: Axes | None = None,
) -> Axes:
    """The tree of every stopped continuation, depth left to right (ftip-000J, its lost figure).

    Nodes are continuation prefixes of ``tree`` (token ids named by ``vocab``); each edge carries
    its probability ``pi(token | prompt, prefix)``. The path ``highlight`` (a continuation, ids)
    is drawn in the accent colour, its edges labelled by ``highlight_labels`` (e.g. ``p_1``).
    Leaves stopped by ``eos`` are squares; leaves stopped by the length cap are open circles.
    """
    if len(vocab) <= max((t for kids in tree.edges.values() for t in kids), default=0):
        raise ValueError(f"vocab names {len(vocab)} tokens, fewer than the tree uses")
    if highlight_labels and len(highlight_labels) != len(highlight):
        raise ValueError(f"{len(highlight_labels)} labels for a highlighted path of {len(highlight)} edges")
    path = [tuple(int(t) for t in highlight[:k]) for k in range(len(highlight) + 1)]
    if highlight and tree.path_prob(highlight) == 0:
        raise ValueError(f"the highlighted continuation {list(highlight)} is not a path of the tree")
    reasons = {c.tokens: c.stop_reason for c in tree.leaves}
    order = [c.tokens for c in tree.leaves]
    ax = axes_or_new(ax, (2.3 * tree.max_len + 2.5, 0.38 * len(order) + 1.2))
    ys: dict[tuple[int, ...], float] = {leaf: -float(i) for i, leaf in enumerate(order)}

    def place(node: tuple[int, ...]) -> float:
        if node not in ys:
            ys[node] = float(np.mean([place(node + (t,)) for t in tree.edges[node]]))
        return ys[node]

    place(())
    for node, kids in tree.edges.items():
        for token, p in kids.items():
            child = node + (token,)
            on_path = node in path and child in path
            x0, x1 = len(node), len(child)
            ax.plot([x0, x1], [ys[node], ys[child]], color=ACCENT if on_path else MUTED, lw=2.4 if on_path else 0.9,
                    zorder=1)
            xm, ym = 0.62 * x1 + 0.38 * x0, 0.62 * ys[child] + 0.38 * ys[node]
            text = f"{vocab[token]}: {float(p):.2f}"
            if on_path and highlight_labels:
                text = f"{vocab[token]}: {highlight_labels[len(node)]}={float(p):g}"
            ax.text(xm, ym + 0.12, text, ha="center", va="bottom", fontsize=8.5 if on_path else 7.5,
                    color=ACCENT if on_path else INK, weight="bold" if on_path else "normal", zorder=3,
                    bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 0.4})
    for node, y in ys.items():
        leaf = reasons.get(node)
        colour = ACCENT if node in path else INK
        if leaf is StopReason.EOS:
            ax.scatter([len(node)], [y], marker="s", s=36, color=colour, zorder=2)
        elif leaf is StopReason.MAX_LEN:
            ax.scatter([len(node)], [y], marker="o", s=36, facecolors="white", edgecolors=colour, zorder=2)
        else:
            ax.scatter([len(node)], [y], marker="o", s=22, color=colour, zorder=2)
    ax.text(-0.08, ys[()], prompt, ha="right", va="center", fontsize=10, color=INK)
    ax.set_xticks(range(tree.max_len + 1), ["prompt"] + [f"step {t}" for t in range(1, tree.max_len + 1)])
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_xlim(-0.6, tree.max_len + 0.3)
    ax.legend(handles=[Line2D([], [], marker="s", color=INK, ls="", label="stopped by eos"),
                       Line2D([], [], marker="o", mfc="white", mec=INK, ls="", label="stopped by the length cap")],
              loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, frameon=False, fontsize=8.5)
    return ax
