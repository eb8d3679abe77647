"""Figures of the pretraining-objective chapters (ftip-001B … ftip-001L).

Each draws what it is given and refuses malformed input.
"""
import numpy as np
import pytest
from matplotlib.patches import Rectangle

from ftipbook.viz import pretraining_figs as pf
from tests.viz.figure_checks import ax_texts, legend_texts

NEG = float("-inf")


def _block_mask():
    docs = ["A", "A", "B"]
    m = np.array([[0.0 if docs[i] == docs[j] and j <= i else NEG for j in range(3)] for i in range(3)])
    return m, docs


def test_plot_document_mask_outlines_one_block_per_document_and_hatches_removed_pairs():
    m, docs = _block_mask()
    removed = np.zeros((3, 3), dtype=bool)
    removed[2, :2] = True
    ax = pf.plot_document_mask(m, docs, removed=removed, token_labels=["a1", "a2", "b1"], title="t")
    texts = ax_texts(ax)
    assert texts.count("0") == 4 and texts.count("−∞") == 5
    assert {"A", "B"} <= set(texts)
    outlines = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_linewidth() == 2.0]
    assert sorted((p.get_xy(), p.get_width()) for p in outlines) == [((-0.5, -0.5), 2), ((1.5, 1.5), 1)]
    hatched = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch() == "///" and p.get_width() == 1]
    assert sorted(p.get_xy() for p in hatched) == [(-0.5, 1.5), (0.5, 1.5)]
    # the labels of the hatched cells are boxed above the hatching; the others are not boxed
    boxed = sorted(t.get_position() for t in ax.texts if t.get_bbox_patch() is not None)
    assert boxed == [(0, 2), (1, 2)]
    assert all(t.get_zorder() > p.get_zorder() for t in ax.texts if t.get_bbox_patch() for p in hatched)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a1", "a2", "b1"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(mask=np.zeros((2, 3)), docs=["A", "A"]), "square"),
    (dict(mask=np.zeros((2, 2)), docs=["A"]), "docs names 1"),
    (dict(mask=np.zeros((2, 2)), docs=["A", "A"], removed=np.zeros((3, 3), dtype=bool)), "removed has shape"),
    (dict(mask=np.zeros((2, 2)), docs=["A", "A"], token_labels=["x"]), "token_labels"),
])
def test_plot_document_mask_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pf.plot_document_mask(**kwargs)


def test_plot_token_losses_draws_every_series_and_marks_unpredicted_positions():
    ax = pf.plot_token_losses({"doc": [0.0, 1.0, 2.0, 0.0], "causal": [0.0, 1.0, 3.0, 0.0]}, [1, 1, 2, 0],
                              predicted=[False, True, True, False], token_labels=list("wxyz"))
    heights = sorted(round(p.get_height(), 6) for p in ax.patches if hasattr(p, "get_height") and p.get_width() < 0.5)
    assert heights == [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 2.0, 3.0]
    marks = [line for line in ax.lines if line.get_marker() == "x"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [0, 3]
    assert {"segment 1", "segment 2"} <= set(ax_texts(ax))
    assert sorted(legend_texts(ax)) == ["causal", "doc", "not predicted ($m_t=0$)"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(losses={}, seg_ids=[1]), "at least one"),
    (dict(losses={"a": [1.0, 2.0]}, seg_ids=[1]), "series 'a'"),
    (dict(losses={"a": [1.0]}, seg_ids=[1], predicted=[True, False]), "predicted has 2"),
    (dict(losses={"a": [1.0]}, seg_ids=[1], token_labels=["x", "y"]), "token_labels has 2"),
])
def test_plot_token_losses_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pf.plot_token_losses(**kwargs)


def test_plot_running_ratio_pairs_each_series_with_its_target_colour():
    ax = pf.plot_running_ratio([1, 2, 4], {"a": [1.0, 0.8, 0.9], "b": [2.0, 1.5, 1.6]}, {"A": 0.85, "B": 1.55})
    lines = {line.get_label(): line for line in ax.lines}
    assert lines["a"].get_color() == lines["A"].get_color() != lines["b"].get_color() == lines["B"].get_color()
    assert list(lines["B"].get_ydata()) == [1.55, 1.55] and ax.get_xscale() == "log"


@pytest.mark.parametrize("kwargs, message", [
    (dict(n=[0, 1], series={"a": [1.0, 1.0]}, targets={"A": 1.0}), "positive counts"),
    (dict(n=[1, 2], series={"a": [1.0, 1.0]}, targets={}), "one target per series"),
    (dict(n=[1, 2], series={"a": [1.0]}, targets={"A": 1.0}), "series 'a'"),
])
def test_plot_running_ratio_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pf.plot_running_ratio(**kwargs)


def test_plot_token_weights_groups_bars_by_record_and_labels_them():
    ax = pf.plot_token_weights(["r1", "r2"], {"token": [0.25, 0.25], "record": [0.5, 0.125]}, fmt="{:.3f}")
    heights = sorted(round(p.get_height(), 6) for p in ax.patches)
    assert heights == [0.125, 0.25, 0.25, 0.5]
    assert {"0.125", "0.250", "0.500"} <= set(ax_texts(ax))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["r1", "r2"] and ax.get_yscale() == "log"


@pytest.mark.parametrize("kwargs, message", [
    (dict(records=[], weights={"a": []}), "at least one"),
    (dict(records=["r"], weights={"a": [1.0, 2.0]}), "normalization 'a' has"),
    (dict(records=["r"], weights={"a": [0.0]}), "non-positive"),
])
def test_plot_token_weights_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pf.plot_token_weights(**kwargs)


def test_plot_estimator_cloud_draws_points_and_a_ring_for_the_first_mark():
    ax = pf.plot_estimator_cloud({"g": [[1.0, 0.5], [2.0, -0.5]]}, {"target": [1.5, 0.0], "mean": [1.5, 0.0]})
    offsets = [c.get_offsets().tolist() for c in ax.collections]
    assert offsets == [[[1.0, 0.5], [2.0, -0.5]], [[1.5, 0.0]], [[1.5, 0.0]]]
    ring, mean = ax.collections[1], ax.collections[2]
    assert len(ring.get_facecolor()) == 0 or ring.get_facecolor()[0][3] == 0  # hollow
    assert mean.get_zorder() > ring.get_zorder()
    assert sorted(legend_texts(ax)) == ["g", "mean", "target"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(points={}, marks={}), "nothing to draw"),
    (dict(points={"g": [1.0, 2.0]}, marks={}), "must be an \\(n, 2\\) array"),
    (dict(points={}, marks={"m": [1.0, 2.0, 3.0]}), "must be 2 numbers"),
])
def test_plot_estimator_cloud_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pf.plot_estimator_cloud(**kwargs)


def test_plot_loss_grid_writes_cells_means_and_summary_lines():
    ax = pf.plot_loss_grid({"r1": [1, 2, 3], "r2": [4]}, [2, 4], {"full": 2.5, "expected": 3})
    texts = ax_texts(ax)
    assert [texts.count(v) for v in ("1", "2", "3", "4", "–")] == [1, 2, 1, 2, 2]  # means 2 and 4 appear again
    assert "full = 2.5" in texts and "expected = 3" in texts
    assert [t.get_text() for t in ax.get_yticklabels()] == ["r1", "r2"]
    assert [f"$j={j}$" in texts for j in (1, 2, 3, 4)] == [True, True, True, False]


def test_plot_loss_grid_heads_columns_by_predicted_position():
    ax = pf.plot_loss_grid({"r1": [1, 2, 3], "r2": [4]}, [2, 4], {"full": 2.5}, first_position=2)
    texts = ax_texts(ax)
    assert [f"position {p}" in texts for p in (1, 2, 3, 4, 5)] == [False, True, True, True, False]
    assert not any(t.startswith("$j=") for t in texts)


@pytest.mark.parametrize("kwargs, message", [
    (dict(rows={}, row_means=[], summary={}), "at least one row"),
    (dict(rows={"r": [1.0]}, row_means=[1.0], summary={}, first_position=0), "first_position must be a positive int"),
    (dict(rows={"r": [1.0]}, row_means=[1.0], summary={}, first_position=2.0), "got 2.0"),
    (dict(rows={"r": [1.0]}, row_means=[1.0, 2.0], summary={}), "2 row means for 1 rows"),
    (dict(rows={"r": []}, row_means=[0.0], summary={}), "every row is empty"),
])
def test_plot_loss_grid_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pf.plot_loss_grid(**kwargs)


def test_plot_paths_draws_paths_marks_and_contours():
    xs = np.linspace(-1, 1, 5)
    gx, gy = np.meshgrid(xs, xs)
    ax = pf.plot_paths({"a": [[0, 0], [1, 1]], "b": [[0, 0], [1, -1], [2, 0]]}, marks={"start": [0, 0]},
                       contours=(gx, gy, gx**2 + gy**2))
    lines = {line.get_label(): line for line in ax.lines}
    assert list(lines["b"].get_xdata()) == [0, 1, 2] and list(lines["a"].get_ydata()) == [0, 1]
    assert [c.get_offsets().tolist() for c in ax.collections if c.get_label() == "start"] == [[[0.0, 0.0]]]
    assert len(ax.collections) >= 2  # the contour set and the mark
    # coinciding paths stay distinguishable: own marker and style, the later one thinner on top
    a, b = lines["a"], lines["b"]
    assert a.get_marker() != b.get_marker()
    assert b.get_linewidth() < a.get_linewidth() and b.get_markersize() < a.get_markersize()
    assert b.get_zorder() > a.get_zorder()


@pytest.mark.parametrize("kwargs, message", [
    (dict(paths={}), "at least one path"),
    (dict(paths={"a": [1.0, 2.0]}), "non-empty \\(n, 2\\)"),
    (dict(paths={"a": [[0, 0]]}, marks={"m": [1.0]}), "must be 2 numbers"),
    (dict(paths={"a": [[0, 0]]}, contours=(np.zeros((2, 2)), np.zeros((2, 2)))), "triple"),
    (dict(paths={"a": [[0, 0]]}, contours=(np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((3, 2)))), "one shape"),
])
def test_plot_paths_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pf.plot_paths(**kwargs)


def test_plot_run_spread_one_column_per_group_and_a_reference_line():
    ax = pf.plot_run_spread({"a": [1.0, 1.0, 2.0], "b": [3.0]}, reference=1.5, reference_label="ref")
    cols = [c.get_offsets() for c in ax.collections]
    assert [len(c) for c in cols] == [3, 1]
    assert len({round(x, 9) for x, _ in cols[0]}) == 3 and all(abs(x) < 0.5 for x, _ in cols[0])  # equal values stay apart
    assert cols[1].tolist() == [[1.0, 3.0]]
    assert [list(line.get_ydata()) for line in ax.lines] == [[1.5, 1.5]] and "ref" in ax_texts(ax)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]


@pytest.mark.parametrize("groups, message", [({}, "at least one group"), ({"a": []}, "non-empty")])
def test_plot_run_spread_refuses_bad_input(groups, message):
    with pytest.raises(ValueError, match=message):
        pf.plot_run_spread(groups)


def test_draw_artifact_manifest_separates_runtime_from_provenance_and_marks_undisclosed():
    ax = pf.draw_artifact_manifest({"tokenizer": "BPE", "cfg": "2 layers\nd=64"}, {"optimizer": "Muon", "mixture": ""},
                                   undisclosed=["mixture"], law_label="law", title="t")
    texts = ax_texts(ax)
    assert {"tokenizer", "cfg", "optimizer", "mixture", "BPE", "2 layers\nd=64", "Muon", "UNDISCLOSED", "law"} <= set(texts)
    assert {"runtime: determines the law", "provenance: evidence, not an input"} <= set(texts)
    boxes = [p for p in ax.patches if p.get_linestyle() in ("--", "dashed")]
    assert len(boxes) == 1  # only the undisclosed field is dashed
    assert not ax.axison
    ax = pf.draw_artifact_manifest({"tokenizer": "not in the record", "cfg": "x"}, {}, undisclosed=["tokenizer"])
    assert len([p for p in ax.patches if p.get_linestyle() in ("--", "dashed")]) == 1  # runtime fields too
    assert "not in the record" in ax_texts(ax)


@pytest.mark.parametrize("kwargs, message", [
    (dict(runtime={}, provenance={}), "at least one runtime field"),
    (dict(runtime={"cfg": "x"}, provenance={"data": "y"}, undisclosed=["seed"]), "which are not fields"),
])
def test_draw_artifact_manifest_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pf.draw_artifact_manifest(**kwargs)
