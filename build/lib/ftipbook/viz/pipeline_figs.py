"""Figures of the chapters on pretraining data (section ftip-0014: ftip-0015 … ftip-006K).

* :func:`draw_records`: packed rows ``(x, c, m)`` as strips of token cells, coloured by segment,
  with the prediction mask under them (ftip-0015, 0019, 001A, 006K);
* :func:`plot_allowed`: which keys each query may attend to, with cross-document pairs marked
  (ftip-001A, 006K);
* :func:`plot_effect_matrix`: which objects of a run change when one input changes (ftip-0015);
* :func:`plot_shares`: shares of sources (or any categories) under several laws, with optional
  error bars (ftip-0016, 0070, 0018);
* :func:`plot_length_cdfs`: empirical distribution functions of document lengths (ftip-0070);
* :func:`draw_kept`: which member of each duplicate cluster a tie-break rule keeps (ftip-0071);
* :func:`draw_matched_spans`: a text with the spans a decontamination rule matched (ftip-0072);
* :func:`plot_order_outcomes`: corpus size after each step of a pipeline, for several orders
  (ftip-0017);
* :func:`plot_count_laws`: laws of a small integer quantity, measured and exact (ftip-0019).

Line plots of one quantity against another use
:func:`ftipbook.viz.equivariance_figs.plot_curves`. Each helper draws on a given ``Axes`` (or
makes a figure) and returns it; nothing here computes what it draws: chapters compute with
:mod:`ftipbook.data` and pass the results in.
"""
from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, Rectangle

from ftipbook.viz.charts import CellLook, bar_centres, canvas, flag_grid, grouped_bars, series_arrays
from ftipbook.viz.style import ACCENT, BLANK, FILL, HIGHLIGHT, INK, MUTED, PALETTE, VIOLET, as_array, axes_or_new

#: Colours of distinct outcomes in :func:`plot_order_outcomes` (enough for the six orders of three steps).
OUTCOME_COLOURS = PALETTE[:4] + (VIOLET, "#db2777", "#ca8a04", MUTED)
#: Fill of padding cells (segment id 0) in :func:`draw_records`, and of "same" cells in :func:`plot_effect_matrix`.
PAD_FILL = BLANK
#: Fills of segments ``1, 2, 3, ...`` (cycled) in :func:`draw_records`; padding is :data:`PAD_FILL`.
SEGMENT_FILLS = (FILL, HIGHLIGHT, "#d1fae5", "#ede9fe", "#fef3c7")
#: How a space and a newline are shown inside a token cell.
SPACE, NEWLINE = "\u2423", "\u21b5"

#: A packed row for :func:`draw_records`: token texts, segment ids (0 = padding), prediction mask.
Row = tuple[Sequence[str], Sequence[int], Sequence[bool]]


def _show(piece: str, limit: int) -> str:
    text = piece.replace(" ", SPACE).replace("\n", NEWLINE)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


# --- packed rows and attention --------------------------------------------------------------------
def draw_records(rows: Mapping[str, Row], *, title: str | None = None, max_chars: int = 4,
                 ax: Axes | None = None) -> Axes:
    """Packed rows as strips of cells, one strip per entry of ``rows`` (ftip-0015, 0019, 001A, 006K).

    ``rows[label] = (pieces, seg_ids, mask)``: the text of each token, its segment id ``c_t``
    (``0`` = padding, drawn grey) and its prediction mask ``m_t``. Cells are coloured by segment,
    a thick line separates segments, and ``m_t`` is written under each cell (``1`` in ink,
    ``0`` muted). Token texts longer than ``max_chars`` are shortened with an ellipsis.
    """
    if not rows:
        raise ValueError("draw_records needs at least one row")
    if not isinstance(max_chars, int) or max_chars < 1:
        raise ValueError(f"max_chars must be an int >= 1, got {max_chars!r}")
    for label, row in rows.items():
        if len(row) != 3:
            raise ValueError(f"row {label!r} must be (pieces, seg_ids, mask)")
        pieces, seg, mask = row
        if not len(pieces) or not len(pieces) == len(seg) == len(mask):
            raise ValueError(f"row {label!r}: pieces, seg_ids and mask must be nonempty and of one length, "
                             f"got {len(pieces)}, {len(seg)}, {len(mask)}")
        if min(int(c) for c in seg) < 0:
            raise ValueError(f"row {label!r}: segment ids must be >= 0 (0 = padding)")
    width = max(len(row[0]) for row in rows.values())
    ax = axes_or_new(ax, (min(0.5 * width + 2.2, 13.0), 1.05 * len(rows) + 0.5))
    for r, (label, (pieces, seg, mask)) in enumerate(rows.items()):
        y = -1.6 * r
        seg = [int(c) for c in seg]
        for t, (piece, c, m) in enumerate(zip(pieces, seg, mask)):
            fc = PAD_FILL if c == 0 else SEGMENT_FILLS[(c - 1) % len(SEGMENT_FILLS)]
            ax.add_patch(Rectangle((t, y), 1, 0.8, fc=fc, ec=MUTED if c == 0 else INK, lw=0.6))
            ax.text(t + 0.5, y + 0.4, "pad" if c == 0 else _show(piece, max_chars), ha="center", va="center",
                    fontsize=7, family="monospace", color=MUTED if c == 0 else INK)
            ax.text(t + 0.5, y - 0.25, "1" if m else "0", ha="center", va="center", fontsize=7,
                    color=INK if m else MUTED, fontweight="bold" if m else "normal")
            if t and seg[t - 1] != c:
                ax.plot([t, t], [y - 0.05, y + 0.85], color=INK, lw=2.2)
        ax.text(-0.4, y + 0.4, label, ha="right", va="center", fontsize=9, color=INK)
        ax.text(-0.4, y - 0.25, "$m_t$", ha="right", va="center", fontsize=8, color=MUTED)
    canvas(ax, (-0.13 * max(len(label) for label in rows) - 1.2, width + 0.2), (-1.6 * (len(rows) - 1) - 0.6, 1.0))
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def plot_allowed(panels: Mapping[str, tuple[object, Sequence[int]]], *, axes: Sequence[Axes] | None = None,
                 title: str | None = None) -> Sequence[Axes]:
    """Attention patterns side by side: which key ``s`` each query ``t`` may attend to (ftip-001A, 006K).

    ``panels[name] = (allowed, doc_of)``: ``allowed`` is a boolean ``[T, T]`` matrix (query
    rows, key columns) and ``doc_of[t]`` the document token ``t`` came from (``-1`` for
    padding). An allowed pair within one document is light, an allowed pair across documents
    is drawn in the accent colour, a removed pair is blank.
    """
    if not panels:
        raise ValueError("plot_allowed needs at least one panel")
    grids = {}
    for name, (allowed, doc_of) in panels.items():
        a = as_array(allowed) != 0
        doc = np.asarray(doc_of)
        if a.ndim != 2 or a.shape[0] != a.shape[1] or doc.shape != (a.shape[0],):
            raise ValueError(f"panel {name!r}: allowed must be [T, T] and doc_of of length T, "
                             f"got {a.shape} and {doc.shape}")
        same = doc[:, None] == doc[None, :]
        grids[name] = np.where(a, np.where(same, 1, 2), 0)
    if axes is None:
        _, axes = plt.subplots(1, len(grids), figsize=(3.3 * len(grids), 3.5), layout="constrained", squeeze=False)
        axes = list(axes[0])
    if len(axes) != len(grids):
        raise ValueError(f"{len(axes)} axes for {len(grids)} panels")
    cmap = ListedColormap(["white", FILL, ACCENT])
    for ax, (name, grid) in zip(axes, grids.items()):
        t = grid.shape[0]
        ax.imshow(grid, cmap=cmap, vmin=0, vmax=2)
        ax.set_xticks(np.arange(-0.5, t, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, t, 1), minor=True)
        ax.grid(which="minor", color="#e5e7eb", linewidth=0.5)
        ax.tick_params(which="both", length=0, labelsize=7)
        ticks = range(0, t, max(1, t // 8))
        ax.set_xticks(list(ticks), [str(i + 1) for i in ticks])
        ax.set_yticks(list(ticks), [str(i + 1) for i in ticks])
        ax.set_xlabel("key $s$", fontsize=8)
        ax.set_ylabel("query $t$", fontsize=8)
        ax.set_title(name, fontsize=9)
    axes[-1].legend(handles=[Patch(fc=FILL, ec=INK, label="same document"),
                             Patch(fc=ACCENT, ec=INK, label="across documents")],
                    loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, fontsize=8)
    if title:
        axes[0].figure.suptitle(title, fontsize=10)
    return axes


def plot_effect_matrix(effects: Mapping[str, Mapping[str, bool]], *, true_label: str = "changes",
                       false_label: str = "same", ax: Axes | None = None, title: str | None = None) -> Axes:
    """Rows are interventions, columns observed objects; a cell says whether the object changed (ftip-0015)."""
    ax = flag_grid(effects, yes=CellLook(ACCENT, true_label, "white", bold=True),
                   no=CellLook(PAD_FILL, false_label, MUTED), name="effects", cell=(1.35, 0.55), ax=ax)
    if title:
        ax.set_title(title, pad=24, fontsize=10)
    return ax


# --- laws of documents ----------------------------------------------------------------------------
def plot_shares(categories: Sequence[str], series: Mapping[str, Sequence[float]], *,
                errors: Mapping[str, Sequence[float]] | None = None, ylabel: str = "share", decimals: int = 2,
                ax: Axes | None = None, title: str | None = None) -> Axes:
    """Grouped bars: one colour per law in ``series``, one group per category (ftip-0016, 0070, 0018).

    ``errors[name]`` (optional) gives a half-width per category, drawn as an error bar on that
    series; bar heights are written on top with ``decimals`` decimals.
    """
    if not categories or not series:
        raise ValueError("plot_shares needs at least one category and one series")
    unknown = sorted(set(errors or {}) - set(series))
    if unknown:
        raise ValueError(f"errors name series {unknown} that are not in series {list(series)}")
    arrays = series_arrays(series, len(categories))
    half_widths = {label: as_array(err) for label, err in (errors or {}).items()}
    for label, err in half_widths.items():
        if err.shape != arrays[label].shape or (err < 0).any():
            raise ValueError(f"errors of {label!r} must be {len(categories)} half-widths >= 0")
    ax = axes_or_new(ax, (min(1.3 * len(categories) + 2.5, 10.0), 3.6))
    centres = np.arange(len(categories))
    grouped_bars(ax, centres, arrays, fmt=lambda y: f"{y:.{decimals}f}", fontsize=7, errors=half_widths)
    ax.set_xticks(centres, list(categories))
    ax.set_ylabel(ylabel)
    ax.margins(y=0.15)
    ax.legend(frameon=False, fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def plot_length_cdfs(samples: Mapping[str, Sequence[float]], *, xlabel: str = "document length",
                     logx: bool = True, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Empirical distribution functions ``F(x) = share of samples <= x``, one step line per sample (ftip-0070)."""
    if not samples:
        raise ValueError("plot_length_cdfs needs at least one sample")
    ax = axes_or_new(ax, (6.0, 3.4))
    for i, (label, values) in enumerate(samples.items()):
        xs = np.sort(as_array(values))
        if xs.ndim != 1 or not len(xs):
            raise ValueError(f"sample {label!r} must be a nonempty 1-D sequence")
        if logx and xs[0] <= 0:
            raise ValueError(f"sample {label!r} has values <= 0, which a log axis cannot show; pass logx=False")
        ax.step(xs, np.arange(1, len(xs) + 1) / len(xs), where="post", color=PALETTE[i % len(PALETTE)],
                label=f"{label} (n={len(xs)})", linewidth=1.5)
    if logx:
        ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of documents $\\leq$ length")
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    if title:
        ax.set_title(title, fontsize=10)
    return ax


# --- cleaning ----------------------------------------------------------------------------------------
def draw_kept(labels: Sequence[str], clusters: Sequence[Sequence[int]], kept: Mapping[str, Collection[int]], *,
              ax: Axes | None = None, title: str | None = None) -> Axes:
    """Duplicate clusters and the member each rule keeps (ftip-0071).

    ``labels[i]`` describes document ``i``; ``clusters`` lists groups of indices (each drawn as
    a band, alternately shaded); ``kept[rule]`` is the set of indices that rule keeps, shown as
    a filled mark in that rule's column (removed members get an open one).
    """
    if not clusters or not kept:
        raise ValueError("draw_kept needs at least one cluster and one rule")
    order = [i for c in clusters for i in c]
    if len(set(order)) != len(order) or not all(0 <= i < len(labels) for i in order):
        raise ValueError("clusters must be disjoint lists of indices into labels")
    rules = list(kept)
    ax = axes_or_new(ax, (0.9 * len(rules) + 3.6, 0.22 * len(order) + 1.0))
    y = 0
    for k, cluster in enumerate(clusters):
        if k % 2 == 0:
            ax.add_patch(Rectangle((-0.5, -(y + len(cluster)) + 0.5), len(rules), len(cluster), fc=FILL, ec="none",
                                   alpha=0.5))
        for i in cluster:
            ax.text(-0.7, -y, labels[i], ha="right", va="center", fontsize=8, family="monospace", color=INK)
            for j, rule in enumerate(rules):
                keep = i in kept[rule]
                ax.plot(j, -y, marker="o", markersize=8, color=ACCENT if keep else MUTED,
                        markerfacecolor=ACCENT if keep else "white")
            y += 1
    ax.set_xticks(range(len(rules)), rules)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    ax.set_yticks([])
    ax.set_xlim(-0.5, len(rules) - 0.5)
    ax.set_ylim(-y + 0.5, 0.5)
    for side in ("left", "right", "bottom", "top"):
        ax.spines[side].set_visible(False)
    if title:
        ax.set_title(title, fontsize=10, pad=20)
    return ax


def draw_matched_spans(text: str, spans: Sequence[tuple[int, int]], *, width: int = 64, ax: Axes | None = None,
                       title: str | None = None) -> Axes:
    """``text`` in a monospace grid of ``width`` columns, wrapped at spaces, with the character spans
    ``[start, end)`` shaded (ftip-0072)."""
    if not isinstance(text, str) or not text:
        raise ValueError("text must be a nonempty str")
    if not isinstance(width, int) or width < 8:
        raise ValueError(f"width must be an int >= 8, got {width!r}")
    marked = np.zeros(len(text), dtype=bool)
    for start, end in spans:
        if not 0 <= start < end <= len(text):
            raise ValueError(f"span ({start}, {end}) is not a nonempty range inside the text of length {len(text)}")
        marked[start:end] = True
    cells, row, col = [], 0, 0
    for word in re.finditer(r"[^\s]+|\s", text):
        w = word.group()
        if w == "\n":
            row, col = row + 1, 0
            continue
        if col and col + len(w) > width and not w.isspace():
            row, col = row + 1, 0
        for i, ch in enumerate(w, start=word.start()):
            if col == width:
                row, col = row + 1, 0
            cells.append((row, col, " " if ch.isspace() else ch, marked[i]))
            col += 1
    rows = row + 1
    ax = axes_or_new(ax, (0.085 * width + 0.4, 0.22 * rows + 0.6))
    for r, c, ch, hit in cells:
        if hit:
            ax.add_patch(Rectangle((c - 0.5, -r - 0.5), 1, 1, fc=ACCENT, ec="none", alpha=0.35))
        ax.text(c, -r, ch, ha="center", va="center", fontsize=8.5, family="monospace", color=INK)
    canvas(ax, (-1, width), (-rows + 0.3, 0.7))
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def plot_order_outcomes(sizes: Mapping[str, Sequence[int]], outputs: Mapping[str, str], *,
                        ax: Axes | None = None, title: str | None = None) -> Axes:
    """Corpus size after each pipeline step, one line per order (ftip-0017).

    ``sizes[order] = [size of the input, after step 1, after step 2, ...]``; ``outputs[order]``
    labels the order's final corpus (e.g. a hash prefix), written at the line's end; orders with
    equal labels share a colour.
    """
    if not sizes:
        raise ValueError("plot_order_outcomes needs at least one order")
    if set(outputs) != set(sizes):
        raise ValueError(f"outputs must label exactly the orders {sorted(sizes)}, got {sorted(outputs)}")
    lengths = {len(v) for v in sizes.values()}
    if len(lengths) != 1 or lengths.pop() < 2:
        raise ValueError("every order needs the same number (>= 2) of sizes: the input and one per step")
    classes = list(dict.fromkeys(outputs[o] for o in sizes))
    ax = axes_or_new(ax, (7.0, 3.8))
    n = len(next(iter(sizes.values())))
    for k, (order, values) in enumerate(sizes.items()):
        ys = as_array(values)
        colour = OUTCOME_COLOURS[classes.index(outputs[order]) % len(OUTCOME_COLOURS)]
        jitter = 0.03 * (k - (len(sizes) - 1) / 2)
        ax.plot(np.arange(n) + jitter, ys, marker="o", color=colour, linewidth=1.4, markersize=4)
        ax.text(n - 1 + 0.15, ys[-1], f"{order}  \u2192  {outputs[order]}", va="center", fontsize=8, color=colour,
                family="monospace")
    ax.set_xticks(range(n), ["input"] + [f"after step {i}" for i in range(1, n)])
    ax.set_xlim(-0.3, n - 1 + 1.6)
    ax.set_ylabel("documents")
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def plot_count_laws(laws: Mapping[str, Mapping[int, float]], *, exact: Mapping[str, Mapping[int, float]] | None = None,
                    xlabel: str = "value", ax: Axes | None = None, title: str | None = None) -> Axes:
    """Laws of a small integer quantity as grouped bars, one colour per law (ftip-0019).

    ``laws[name] = {value: probability}`` (measured frequencies); ``exact[name]``, when given,
    adds that law's exact probabilities as open markers over its bars.
    """
    if not laws:
        raise ValueError("plot_count_laws needs at least one law")
    unknown = sorted(set(exact or {}) - set(laws))
    if unknown:
        raise ValueError(f"exact names laws {unknown} that are not in laws {list(laws)}")
    values = sorted({int(v) for law in (*laws.values(), *(exact or {}).values()) for v in law})
    if not values:
        raise ValueError("the laws are empty")
    probs = {name: np.array([float(law.get(v, 0.0)) for v in values]) for name, law in laws.items()}
    for name, ys in probs.items():
        if (ys < 0).any():
            raise ValueError(f"law {name!r} has a negative probability")
    ax = axes_or_new(ax, (min(0.45 * len(values) + 3.0, 11.0), 3.4))
    for name, bars in zip(probs, grouped_bars(ax, values, probs, alpha=0.8)):
        if exact and name in exact:
            ex = np.array([float(exact[name].get(v, 0.0)) for v in values])
            ax.plot(bar_centres(bars), ex, linestyle="none", marker="_", markersize=9, markeredgewidth=2, color=INK)
    if exact:
        ax.plot([], [], linestyle="none", marker="_", markersize=9, markeredgewidth=2, color=INK, label="exact law")
    ax.set_xticks(values, [str(v) for v in values], fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("probability")
    ax.legend(frameon=False, fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    return ax
