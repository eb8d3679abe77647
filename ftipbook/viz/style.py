"""Shared look of the book's figures: colours and the two helpers every plotting module uses."""
from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes

INK = "#1f2937"
ACCENT = "#c2410c"
MUTED = "#9ca3af"
FILL = "#dbeafe"


def axes_or_new(ax: Axes | None, size: tuple[float, float]) -> Axes:
    """``ax`` itself, or the axes of a new constrained-layout figure of ``size`` inches."""
    if ax is not None:
        return ax
    _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


def as_array(x: torch.Tensor | np.ndarray | Sequence) -> np.ndarray:
    """``x`` as a float64 NumPy array (tensors are detached and moved to the CPU)."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().double().numpy()
    return np.asarray(x, dtype=float)
