"""The decoder-architecture figures draw, and refuse input they cannot draw (ftipbook.viz.architecture)."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from ftipbook.model.config import POSITION_STAGE
from ftipbook.viz import architecture as archviz
from tests.viz.figure_checks import ax_texts


def test_shape_flow_draws_every_stage_and_the_repeat_bracket():
    stages = [("ids", "(B, T)"), ("embedding", "(B, T, d)"), ("block", "(B, T, d)"), ("logits", "(B, T, V)")]
    ax = archviz.draw_shape_flow(stages, repeat=(2, 2, "x L"))
    texts = ax_texts(ax)
    assert all(name in texts and shape in texts for name, shape in stages) and "x L" in texts
    with pytest.raises(ValueError, match="at least two"):
        archviz.draw_shape_flow([("ids", "(B, T)")])
    with pytest.raises(ValueError, match="first <= last"):
        archviz.draw_shape_flow(stages, repeat=(3, 1, "bad"))


def test_embedding_lookup_draws_three_panels_and_checks_shapes():
    e = torch.randn(6, 4)
    tokens = [2, 5, 2]
    oh = torch.nn.functional.one_hot(torch.tensor(tokens), 6).float()
    axes = archviz.plot_embedding_lookup(oh, e, oh @ e, tokens=tokens)
    assert len(axes) == 3 and np.array_equal(axes[2].images[0].get_array(), (oh @ e).numpy())
    with pytest.raises(ValueError, match="one_hot"):
        archviz.plot_embedding_lookup(oh, e, e)


def test_position_table_and_score_matrix():
    ax = archviz.plot_position_table(np.ones((5, 4)), title="p")
    assert ax.get_title() == "p" and ax.images[0].get_array().shape == (5, 4)
    scores = np.array([[0.0, -np.inf], [1.0, 2.0]])
    ax = archviz.plot_score_matrix(scores)
    assert np.ma.getmaskarray(ax.images[0].get_array())[0, 1]  # -inf is left blank
    for bad in (np.ones(3), np.ones((2, 2, 2))):
        with pytest.raises(ValueError, match="2-D|\\[T, d\\]"):
            archviz.plot_position_table(bad)
        with pytest.raises(ValueError, match="2-D"):
            archviz.plot_score_matrix(bad)


def test_defects_label_exact_zeros_and_refuse_negative_values():
    ax = archviz.plot_defects(["exact", "small", "large"], [0.0, 1e-15, 0.3], tolerance=1e-10)
    texts = ax_texts(ax)
    assert "0 (exact)" in texts and "3.0e-01" in texts and len(ax.patches) == 3
    with pytest.raises(ValueError, match="nonnegative"):
        archviz.plot_defects(["a"], [-1.0])
    with pytest.raises(ValueError, match="one label per value"):
        archviz.plot_defects(["a", "b"], [1.0])


def test_position_stages_follow_the_config_record():
    ax = archviz.draw_position_stages(POSITION_STAGE)
    texts = " ".join(ax_texts(ax))
    for scheme in POSITION_STAGE:
        assert scheme in texts
    with pytest.raises(ValueError, match="stage_of"):
        archviz.draw_position_stages({"rope": "values"})
    with pytest.raises(ValueError, match="stage_of"):
        archviz.draw_position_stages({})


def test_fused_projection_blocks_must_cover_the_columns():
    w = np.random.default_rng(0).normal(size=(4, 6))
    ax = archviz.plot_fused_projection(w, [("$W^Q_1$", 2), ("$W^K_1$", 2), ("$W^V_1$", 2)])
    assert {"$W^Q_1$", "$W^K_1$", "$W^V_1$"} <= set(ax_texts(ax))
    with pytest.raises(ValueError, match="add up"):
        archviz.plot_fused_projection(w, [("a", 5)])
    with pytest.raises(ValueError, match="2-D"):
        archviz.plot_fused_projection(np.ones(3), [("a", 3)])


def test_future_invariance_draws_one_line_per_model():
    ax = archviz.plot_future_invariance({"A": [0, 0, 0.5, 0.2], "K": [0, 0, 0.1, 0.3]}, first_changed=3)
    assert len(ax.lines) == 2 and ax.get_legend() is not None
    with pytest.raises(ValueError, match="first_changed"):
        archviz.plot_future_invariance({"A": [0, 1]}, first_changed=3)
    with pytest.raises(ValueError, match="common length"):
        archviz.plot_future_invariance({"A": [0, 1], "B": [0, 1, 2]}, first_changed=1)
    with pytest.raises(ValueError, match="nonnegative"):
        archviz.plot_future_invariance({"A": [0, -1]}, first_changed=1)


def test_head_weights_one_panel_per_head():
    w = torch.softmax(torch.randn(3, 4, 4), dim=-1)
    axes = archviz.plot_head_weights(w, title="heads")
    assert [ax.get_title() for ax in axes] == ["head 1", "head 2", "head 3"]
    with pytest.raises(ValueError, match="H, T_q, T_k"):
        archviz.plot_head_weights(w[0])
    fig, two = plt.subplots(1, 2)
    with pytest.raises(ValueError, match="one axes per head"):
        archviz.plot_head_weights(w, axes=two)


def test_cache_bytes_bars_and_labels():
    ax = archviz.plot_cache_bytes(["MHA", "MQA"], [256, 32], params=[1000, 600])
    assert [round(p.get_height()) for p in ax.patches] == [256, 32]
    assert "1,000 params" in ax.get_xticklabels()[0].get_text()
    with pytest.raises(ValueError, match="positive"):
        archviz.plot_cache_bytes(["MHA"], [0])
    with pytest.raises(ValueError, match="one count per variant"):
        archviz.plot_cache_bytes(["MHA", "MQA"], [2, 1], params=[1])


def test_activations_curves_share_the_grid():
    x = np.linspace(-2, 2, 9)
    ax = archviz.plot_activations(x, {"relu": np.maximum(x, 0), "id": x})
    assert len(ax.lines) == 4  # two curves and the two axis lines
    with pytest.raises(ValueError, match="shape"):
        archviz.plot_activations(x, {"bad": x[:3]})
    with pytest.raises(ValueError, match="at least one curve"):
        archviz.plot_activations(x, {})


def test_growth_draws_curves_and_slope_guides():
    c = np.logspace(-1, 1, 5)
    ax = archviz.plot_growth(c, {"relu": c, "swiglu": c ** 2})
    assert len(ax.lines) == 4 and ax.get_xscale() == "log"
    with pytest.raises(ValueError, match="positive scales"):
        archviz.plot_growth(-c, {"relu": c})
    with pytest.raises(ValueError, match="one positive norm per scale"):
        archviz.plot_growth(c, {"relu": np.zeros(5)})
