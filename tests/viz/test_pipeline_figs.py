"""Figures of the pretraining-data chapters (ftip-0015 … ftip-006K): they draw what they are given
and refuse malformed input."""
import numpy as np
import pytest
from matplotlib.colors import to_hex
from matplotlib.container import BarContainer

from ftipbook.viz import pipeline_figs as pf
from tests.viz.figure_checks import ax_texts, legend_texts


def test_draw_records_colours_segments_and_writes_the_mask():
    ax = pf.draw_records({"row": (["a", "b c", "eos", "x", "?"], [1, 1, 1, 2, 0], [False, True, True, False, False])})
    cells = [p for p in ax.patches if p.get_width() == 1]
    assert len(cells) == 5
    fills = [to_hex(p.get_facecolor()) for p in cells]
    assert fills[0] == fills[1] == fills[2] == to_hex(pf.SEGMENT_FILLS[0])
    assert fills[3] == to_hex(pf.SEGMENT_FILLS[1]) and fills[4] == to_hex(pf.PAD_FILL)
    texts = ax_texts(ax)
    assert texts.count("1") == 2 and texts.count("0") == 3  # the mask row
    assert f"b{pf.SPACE}c" in texts and "pad" in texts and "row" in texts
    boundaries = [line for line in ax.lines if line.get_linewidth() > 2]
    assert [line.get_xdata()[0] for line in boundaries] == [3, 4]  # segment 1 -> 2 -> padding


def test_draw_records_shortens_long_pieces_and_stacks_rows():
    ax = pf.draw_records({"a": (["abcdefgh"], [1], [False]), "b": (["x"], [1], [False])}, max_chars=3)
    assert "ab\u2026" in ax_texts(ax) and {"a", "b"} <= set(ax_texts(ax))


@pytest.mark.parametrize("rows, message", [
    ({}, "at least one row"),
    ({"r": (["a"], [1])}, "must be"),
    ({"r": (["a", "b"], [1], [True, True])}, "one length"),
    ({"r": (["a"], [-1], [True])}, ">= 0"),
])
def test_draw_records_refuses_bad_rows(rows, message):
    with pytest.raises(ValueError, match=message):
        pf.draw_records(rows)


def test_plot_allowed_marks_cross_document_pairs():
    allowed = np.tril(np.ones((3, 3), dtype=bool))
    axes = pf.plot_allowed({"causal": (allowed, [0, 0, 1]), "doc": (np.eye(3, dtype=bool), [0, 0, 1])})
    grid = axes[0].images[0].get_array()
    assert grid.tolist() == [[1, 0, 0], [1, 1, 0], [2, 2, 1]]  # row 3 (document 1) sees document 0 across
    assert axes[1].images[0].get_array().tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert legend_texts(axes[-1]) == ["same document", "across documents"]
    with pytest.raises(ValueError, match=r"\[T, T\]"):
        pf.plot_allowed({"bad": (np.ones((2, 3)), [0, 0])})
    with pytest.raises(ValueError, match="at least one"):
        pf.plot_allowed({})


def test_plot_effect_matrix_cells_and_refusals():
    ax = pf.plot_effect_matrix({"seed a": {"x": True, "y": False}, "seed b": {"x": False, "y": False}})
    assert ax.images[0].get_array().tolist() == [[1.0, 0.0], [0.0, 0.0]]
    assert ax_texts(ax).count("changes") == 1 and ax_texts(ax).count("same") == 3
    with pytest.raises(ValueError, match="same nonempty columns"):
        pf.plot_effect_matrix({"a": {"x": True}, "b": {"y": True}})
    with pytest.raises(ValueError, match="at least one row"):
        pf.plot_effect_matrix({})


def test_plot_shares_bars_labels_and_error_bars():
    ax = pf.plot_shares(["s1", "s2"], {"p": [0.25, 0.75], "q": [0.5, 0.5]}, errors={"q": [0.1, 0.2]}, decimals=3)
    heights = sorted(round(p.get_height(), 3) for p in ax.patches)
    assert heights == [0.25, 0.5, 0.5, 0.75]
    assert {"0.250", "0.750", "0.500"} <= set(ax_texts(ax))
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert [c.errorbar is not None for c in bars] == [False, True]  # only q has error bars
    segments = bars[1].errorbar.lines[2][0].get_segments()
    assert [round(float(seg[1][1] - seg[0][1]), 6) for seg in segments] == [0.2, 0.4]  # twice the half-widths
    assert [t.get_text() for t in ax.get_xticklabels()] == ["s1", "s2"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(categories=[], series={"p": []}), "at least one"),
    (dict(categories=["a"], series={"p": [1.0, 2.0]}), "series 'p'"),
    (dict(categories=["a"], series={"p": [1.0]}, errors={"q": [0.1]}), "not in series"),
    (dict(categories=["a"], series={"p": [1.0]}, errors={"p": [-0.1]}), "half-widths"),
])
def test_plot_shares_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        pf.plot_shares(**kwargs)


def test_plot_length_cdfs_steps_end_at_one():
    ax = pf.plot_length_cdfs({"a": [3, 1, 2], "b": [10, 10]})
    a, b = ax.lines[:2]
    assert list(a.get_xdata()) == [1, 2, 3] and list(a.get_ydata()) == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert list(b.get_ydata()) == [0.5, 1.0]
    assert ax.get_xscale() == "log"
    with pytest.raises(ValueError, match="log axis"):
        pf.plot_length_cdfs({"a": [0, 1]})
    with pytest.raises(ValueError, match="nonempty"):
        pf.plot_length_cdfs({"a": []}, logx=False)


def test_draw_kept_marks_the_kept_member_per_rule():
    ax = pf.draw_kept(["d0", "d1", "d2"], [[0, 2], [1]], {"first": {0, 1}, "longest": {2, 1}})
    marks = [(line.get_xdata()[0], line.get_ydata()[0], to_hex(line.get_markerfacecolor())) for line in ax.lines]
    filled = {(x, y) for x, y, fc in marks if fc == to_hex(pf.ACCENT)}
    # rows: d0 at y=0, d2 at y=-1, d1 at y=-2; columns: first at x=0, longest at x=1
    assert filled == {(0, 0), (0, -2), (1, -1), (1, -2)}
    assert [t.get_text() for t in ax.get_xticklabels()] == ["first", "longest"]
    with pytest.raises(ValueError, match="disjoint"):
        pf.draw_kept(["d0"], [[0, 0]], {"r": {0}})


def test_draw_matched_spans_shades_exactly_the_spans_and_wraps():
    text = "abc def ghi"
    ax = pf.draw_matched_spans(text, [(4, 7)], width=8)
    shaded = [p for p in ax.patches]
    assert len(shaded) == 3
    assert "".join(t.get_text() for t in ax.texts).replace(" ", "") == "abcdefghi"
    rows = {round(t.get_position()[1]) for t in ax.texts}
    assert rows == {0, -1}  # "ghi" does not fit after "abc def " and wraps
    with pytest.raises(ValueError, match="nonempty range"):
        pf.draw_matched_spans(text, [(5, 5)])
    with pytest.raises(ValueError, match="width"):
        pf.draw_matched_spans(text, [], width=3)


def test_plot_order_outcomes_colours_equal_outputs_alike():
    sizes = {"AB": [5, 4, 3], "BA": [5, 5, 3], "AC": [5, 4, 4]}
    ax = pf.plot_order_outcomes(sizes, {"AB": "h1", "BA": "h1", "AC": "h2"})
    colours = [to_hex(line.get_color()) for line in ax.lines]
    assert colours[0] == colours[1] != colours[2]
    assert any("AB" in t and "h1" in t for t in ax_texts(ax))
    with pytest.raises(ValueError, match="label exactly"):
        pf.plot_order_outcomes({"AB": [1, 2]}, {"BA": "h"})
    with pytest.raises(ValueError, match="same number"):
        pf.plot_order_outcomes({"AB": [1, 2], "BA": [1]}, {"AB": "h", "BA": "h"})


def test_plot_count_laws_bars_and_exact_markers():
    ax = pf.plot_count_laws({"p": {1: 0.5, 3: 0.5}, "q": {2: 1.0}}, exact={"p": {1: 0.4, 3: 0.6}})
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3"]
    heights = sorted(round(p.get_height(), 2) for p in ax.patches)
    assert heights == [0.0, 0.0, 0.0, 0.5, 0.5, 1.0]
    marker = ax.lines[0]
    assert list(marker.get_ydata()) == [0.4, 0.0, 0.6]
    with pytest.raises(ValueError, match="not in laws"):
        pf.plot_count_laws({"p": {1: 1.0}}, exact={"q": {1: 1.0}})
    with pytest.raises(ValueError, match="negative"):
        pf.plot_count_laws({"p": {1: -0.5}})
