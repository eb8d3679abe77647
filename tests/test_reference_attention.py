"""Bad input to the ftip-000Q reference, the causal mask of ftip-000S, and the figure helpers."""
import matplotlib

matplotlib.use("agg")  # tests draw off-screen; chapters keep the inline backend

import numpy as np
import pytest
import torch

from ftipbook import viz
from ftipbook.model.attention import sdpa_reference
from ftipbook.model.masks import NEG_INF, allowed, causal_mask


def test_causal_mask_rule_and_offsets():
    m = causal_mask(2, 5)
    assert allowed(m).tolist() == [[True, True, True, True, False], [True, True, True, True, True]]
    assert causal_mask(3)[0, 1].item() == NEG_INF
    with pytest.raises(ValueError, match="t_k >= t_q"):
        causal_mask(4, 2)
    with pytest.raises(ValueError, match=">= 1"):
        causal_mask(0)


def test_reference_rejects_bad_shapes_and_empty_rows():
    q, k, v = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)
    with pytest.raises(ValueError, match="d_h"):
        sdpa_reference(q, torch.randn(5, 3), v)
    with pytest.raises(ValueError, match="must match"):
        sdpa_reference(q, k, torch.randn(4, 2))
    with pytest.raises(ValueError, match="mask shape"):
        sdpa_reference(q, k, v, causal_mask(3))
    with pytest.raises(ValueError, match="every key masked"):
        sdpa_reference(q, k, v, torch.full((3, 5), NEG_INF))


def test_convex_hull_and_figure_helpers():
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]])
    assert {tuple(p) for p in viz.attention._convex_hull(square)} == {(0, 0), (1, 0), (1, 1), (0, 1)}
    assert viz.plot_mask(causal_mask(4), highlight_row=3) is not None
    with pytest.raises(ValueError, match="highlight_row"):
        viz.plot_mask(causal_mask(4), highlight_row=5)
    with pytest.raises(ValueError, match="equal length"):
        viz.draw_weighted_average([1, 2], [1.0], 1.0)
    with pytest.raises(ValueError, match=r"\[n, 2\]"):
        viz.plot_convex_combination(np.zeros((3, 3)), np.zeros((1, 2)))
