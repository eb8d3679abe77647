"""Figures of the decoder-only Transformer chapters added with the page form (ftip-000V).

Each helper draws on a given ``Axes`` (or makes a figure) and returns the ``Axes``; nothing here
computes the mathematics it draws.
"""
from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

from ftipbook.viz.style import ACCENT, FILL, HIGHLIGHT, INK, MUTED, axes_or_new


def draw_head_groups(n_heads: int, n_kv_heads: int, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Query heads (top row) joined to the key/value head they read (bottom row) (ftip-000V).

    Query head ``h`` (numbered from one) reads key/value head ``(h - 1) // (n_heads / n_kv_heads) + 1``:
    ``n_kv_heads = n_heads`` is MHA, a proper divisor GQA, ``1`` MQA.
    """
    for name, value in (("n_heads", n_heads), ("n_kv_heads", n_kv_heads)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if n_heads % n_kv_heads:
        raise ValueError(f"n_kv_heads={n_kv_heads} must divide n_heads={n_heads}")
    ax = axes_or_new(ax, (0.55 * n_heads + 1.0, 1.6))
    per_group = n_heads // n_kv_heads
    kv_x = [(g * per_group + (per_group - 1) / 2) for g in range(n_kv_heads)]
    for h in range(n_heads):
        g = h // per_group
        ax.plot([h, kv_x[g]], [1.0, 0.0], color=MUTED, linewidth=1.0, zorder=1)
        ax.add_patch(Rectangle((h - 0.35, 0.85), 0.7, 0.3, facecolor=FILL, edgecolor=INK, zorder=2))
        ax.text(h, 1.0, f"q{h + 1}", ha="center", va="center", fontsize=8, color=INK, zorder=3)
    for g, x in enumerate(kv_x):
        ax.add_patch(Rectangle((x - 0.45, -0.15), 0.9, 0.3, facecolor=HIGHLIGHT, edgecolor=ACCENT, zorder=2))
        ax.text(x, 0.0, f"kv{g + 1}", ha="center", va="center", fontsize=8, color=INK, zorder=3)
    ax.set_xlim(-0.7, n_heads - 0.3)
    ax.set_ylim(-0.35, 1.35)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return ax
