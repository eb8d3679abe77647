"""Figure helpers of ftipbook.viz.diagrams: what they draw and what they refuse (ftip-000X … ftip-0013)."""
import matplotlib
import numpy as np
import pytest
import torch

from ftipbook.viz import diagrams
from tests.viz.figure_checks import ax_texts, legend_texts


def test_plot_profiles_draws_lines_and_points():
    ax = diagrams.plot_profiles([1, 2, 3], {"formula": [1.0, 2.0, 3.0], "measured": torch.tensor([1.0, 2.1, 2.9])},
                                xlabel="x", ylabel="y", scatter=["measured"], logx=True, logy=True)
    assert len(ax.lines) == 1 and len(ax.collections) == 1
    np.testing.assert_allclose(ax.collections[0].get_offsets()[:, 1], [1.0, 2.1, 2.9])
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert legend_texts(ax) == ["formula", "measured"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(x=[], series={"a": []}), "non-empty"),
    (dict(x=[1, 2], series={}), "at least one"),
    (dict(x=[1, 2], series={"a": [1.0]}), "series 'a' has shape"),
    (dict(x=[1, 2], series={"a": [1.0, 2.0]}, scatter=["b"]), "not series"),
])
def test_plot_profiles_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        diagrams.plot_profiles(xlabel="x", ylabel="y", **kwargs)


def test_plot_matrix_annotates_every_cell():
    m = np.array([[0.0, 0.25], [1.5, 0.75]])
    ax = diagrams.plot_matrix(m, row_labels=["r1", "r2"], col_labels=["c1", "c2"], fmt="{:.2f}", colorbar="v")
    assert ax_texts(ax) == ["0.00", "0.25", "1.50", "0.75"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["c1", "c2"]
    with pytest.raises(ValueError, match="2 row labels and 3 column labels"):
        diagrams.plot_matrix(m, row_labels=["a", "b"], col_labels=["a", "b", "c"])
    with pytest.raises(ValueError, match="2-D"):
        diagrams.plot_matrix(np.zeros(3), row_labels=["a"], col_labels=["b"])


def test_plot_grouped_bars_heights_and_labels():
    ax = diagrams.plot_grouped_bars(["total", "active"], {"dense": [10, 10], "MoE": [40, 12]}, ylabel="params")
    heights = sorted(p.get_height() for p in ax.patches)
    assert heights == [10, 10, 12, 40]
    assert {"10", "12", "40"} <= set(ax_texts(ax))
    with pytest.raises(ValueError, match="series 'MoE' has"):
        diagrams.plot_grouped_bars(["total", "active"], {"MoE": [1, 2, 3]}, ylabel="p")
    with pytest.raises(ValueError, match="at least one category"):
        diagrams.plot_grouped_bars([], {"a": []}, ylabel="p")


@pytest.mark.parametrize("placement, order", [("pre", ["$N$", "$F$", "$+$"]), ("post", ["$F$", "$+$", "$N$"])])
def test_draw_placement_orders_norm_sublayer_and_sum(placement, order):
    ax = diagrams.draw_placement(placement)
    boxes = [t for t in ax.texts if t.get_text() in ("$N$", "$F$", "$+$")]
    assert [t.get_text() for t in sorted(boxes, key=lambda t: t.get_position()[1])] == order
    formula = "$X+F(N(X))$" if placement == "pre" else "$N(X+F(X))$"
    assert formula in ax_texts(ax) and f"{placement}-normalization" in ax_texts(ax)
    with pytest.raises(ValueError, match="'pre' or 'post'"):
        diagrams.draw_placement("middle")


def test_draw_routing_highlights_selected_experts_and_counts_the_rest():
    scores = torch.tensor([0.1, 2.0, -1.0, 1.5, 0.0])
    bars, flow = diagrams.draw_routing(scores, [1, 3], [0.6, 0.4], n_shared=1)
    accent = matplotlib.colors.to_rgba(diagrams.ACCENT)
    highlighted = [i for i, p in enumerate(bars.patches) if p.get_facecolor() == accent]
    assert highlighted == [1, 3]
    assert [p.get_height() for p in bars.patches] == pytest.approx(scores.tolist())
    texts = ax_texts(flow)
    assert "$F_{2}(z)$" in texts and "$F_{4}(z)$" in texts and "$F_{1}(z)$" not in texts
    assert "3 others: not evaluated" in texts and "shared: every token" in texts
    assert "$\\alpha=0.60$" in texts and "$\\alpha=0.40$" in texts


def test_draw_routing_without_shared_expert_and_custom_note():
    bars, flow = diagrams.draw_routing([1.0, 0.0], [0], [1.0], score_note="illustrative scores")
    assert bars.get_title() == "illustrative scores"
    assert not any("shared" in t for t in ax_texts(flow))


@pytest.mark.parametrize("experts, weights, message", [
    ([0, 0], [0.5, 0.5], "distinct indices"),
    ([5], [1.0], "distinct indices"),
    ([0, 1], [1.0], "one entry per selected expert"),
])
def test_draw_routing_refuses_bad_selection(experts, weights, message):
    with pytest.raises(ValueError, match=message):
        diagrams.draw_routing([0.0, 1.0, 2.0], experts, weights)


def _stages():
    S = diagrams.Stage
    return [S("ids", "(2, 3)", "vocabulary: not identified", "not identified"), S("embed", "(2, 3, 4)", "d = 4096"),
            S("norm"), S("attention", record="64 heads per KV head", status="derived"), S("+ residual"), S("logits")]


def test_draw_dataflow_draws_every_stage_overlay_and_legend():
    ax = diagrams.draw_dataflow(_stages(), repeat=(2, 4), repeat_label="× L", skips=[(2, 4)],
                                detail_title="shapes", record_title="record")
    texts = ax_texts(ax)
    for name in ("ids", "embed", "norm", "attention", "+ residual", "logits", "(2, 3)", "× L", "shapes", "record"):
        assert name in texts
    fills = {t: None for t in ("vocabulary: not identified", "d = 4096", "64 heads per KV head")}
    for patch in ax.patches:
        for text in ax.texts:
            if text.get_text() in fills and patch.contains_point(ax.transData.transform(text.get_position())):
                fills[text.get_text()] = patch.get_facecolor()
    to_rgba = matplotlib.colors.to_rgba
    assert fills == {"vocabulary: not identified": to_rgba(diagrams.UNKNOWN), "d = 4096": to_rgba(diagrams.FILL),
                     "64 heads per KV head": to_rgba(diagrams.HIGHLIGHT)}
    legend = legend_texts(ax)
    assert legend == ["stated by the source", "derived from stated fields", "not identified"]


def test_draw_dataflow_without_overlay_has_no_legend():
    ax = diagrams.draw_dataflow([diagrams.Stage("a"), diagrams.Stage("b")])
    assert ax.get_legend() is None and {"a", "b"} <= set(ax_texts(ax))


@pytest.mark.parametrize("kwargs, message", [
    (dict(repeat=(4, 2)), "repeat=.4, 2. must be"),
    (dict(repeat=(0, 6)), "repeat=.0, 6. must be"),
    (dict(skips=[(3, 3)]), "skip .3, 3. must satisfy"),
])
def test_draw_dataflow_refuses_bad_ranges(kwargs, message):
    with pytest.raises(ValueError, match=message):
        diagrams.draw_dataflow(_stages(), **kwargs)


def test_stage_refuses_unknown_status_and_empty_pipeline():
    with pytest.raises(ValueError, match="status='guessed' must be one of"):
        diagrams.Stage("x", record="r", status="guessed")
    with pytest.raises(ValueError, match="at least one stage"):
        diagrams.draw_dataflow([])
