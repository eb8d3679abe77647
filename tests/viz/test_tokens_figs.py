"""Figures of the token chapters (ftip-000A … ftip-000J) draw what they are given and refuse malformed input."""
from fractions import Fraction as F

import matplotlib
import numpy as np
import pytest

from ftipbook.prob import PrefixTree, TableLM
from ftipbook.viz import tokens_figs as tf
from tests.viz.figure_checks import ax_texts, legend_texts, x_extent


def test_plot_laws_bars_event_shading_and_legend():
    ax = tf.plot_laws(["a", "b", "c"], {"p": [0.5, 0.25, 0.25], "q": [0.0, 0.5, 0.5]}, event={"b", "c"},
                      event_label="A")
    bars = [p for p in ax.patches if x_extent(p)[1] - x_extent(p)[0] < 0.5]
    assert sorted(round(b.get_height(), 3) for b in bars) == [0.0, 0.25, 0.25, 0.5, 0.5, 0.5]
    assert legend_texts(ax) == ["A", "p", "q"]  # the shading is labelled once
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(outcomes=[], laws={"p": []}), "at least one"),
    (dict(outcomes=["a"], laws={"p": [1.0]}, event={"z"}), "not outcomes"),
    (dict(outcomes=["a", "b"], laws={"p": [1.0]}), "law 'p' has"),
])
def test_plot_laws_refuses_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tf.plot_laws(**kwargs)


def test_plot_joint_tables_shares_one_scale_and_writes_the_sums():
    a, b = np.full((2, 2), 2.0), np.array([[3.0, 1.0], [1.0, 3.0]])
    axes = tf.plot_joint_tables({"A": a, "B": b}, row_labels=["1", "2"], col_labels=["1", "2"], fmt="{:.0f}")
    assert len(axes) == 2
    assert axes[0].images[0].get_clim() == axes[1].images[0].get_clim() == (0.0, 3.0)
    assert ax_texts(axes[1]).count("4") == 4  # two row sums and two column sums, all equal to 4
    assert {"2", "4", "sums"} <= set(ax_texts(axes[0]))
    with pytest.raises(ValueError, match="shape"):
        tf.plot_joint_tables({"A": a}, row_labels=["1"], col_labels=["1", "2"])
    with pytest.raises(ValueError, match="at least one"):
        tf.plot_joint_tables({}, row_labels=[], col_labels=[])


def test_plot_limits_pairs_each_family_with_its_limit_colour():
    ax = tf.plot_limits([0.1, 0.2], {"E": [0.3, 0.31], "R": [0.4, 0.41]}, {"E": 0.3, "R": 0.4}, xlabel="w", ylabel="p")
    assert len(ax.collections) == 2 and len(ax.lines) == 2
    for points, line in zip(ax.collections, ax.lines):
        assert matplotlib.colors.same_color(points.get_facecolor()[0], line.get_color())
    assert list(ax.lines[1].get_ydata()) == [0.4, 0.4]
    assert "R: limit 0.4000" in legend_texts(ax)
    with pytest.raises(ValueError, match="same nonempty families"):
        tf.plot_limits([0.1], {"E": [0.3]}, {"R": 0.3}, xlabel="w", ylabel="p")
    with pytest.raises(ValueError, match="estimates for"):
        tf.plot_limits([0.1, 0.2], {"E": [0.3]}, {"E": 0.3}, xlabel="w", ylabel="p")


def test_draw_segmentations_rows_spell_the_same_length():
    ax = tf.draw_segmentations({"bytes": list("a cat"), "merged": ["a", " cat"]})
    boxes = [p for p in ax.patches]
    assert len(boxes) == 7
    ends = {}
    for box in boxes:
        y = round(box.get_y(), 2)
        ends[y] = max(ends.get(y, 0), box.get_x() + box.get_width())
    assert set(ends.values()) == {5}  # both rows cover the five characters
    assert "\u2423cat" in ax_texts(ax) and "5 tokens" in ax_texts(ax) and "2 tokens" in ax_texts(ax)
    with pytest.raises(ValueError, match="nonempty"):
        tf.draw_segmentations({"x": ["a", ""]})
    with pytest.raises(ValueError, match="at least one"):
        tf.draw_segmentations({})


def test_draw_roundtrip_marks_a_lost_original_and_a_stable_loop():
    ax = tf.draw_roundtrip("A  B", "a b", ("a", "b"), "a b", ("a", "b"))
    texts = " | ".join(ax_texts(ax))
    assert "A__B" in texts and "(a, b)" in texts and "\u2260" in texts and "stable" in texts
    assert "not stable" not in texts
    ax = tf.draw_roundtrip("a b", "a b", ("a", "b"), "a b", ("b",))
    texts = " | ".join(ax_texts(ax))
    assert "is recovered" in texts and "not stable" in texts
    with pytest.raises(ValueError, match="one character"):
        tf.draw_roundtrip("a", "a", ("a",), "a", ("a",), space="__")
    with pytest.raises(TypeError, match="text must be a str"):
        tf.draw_roundtrip(b"a", "a", ("a",), "a", ("a",))


def test_draw_generations_colours_eos_and_writes_reasons():
    ax = tf.draw_generations([["1", "eos"], ["1", "2", "3"]], ["eos", "max_len"], eos="eos", cap=3)
    assert len(ax.patches) == 5
    filled = [p for p in ax.patches if matplotlib.colors.same_color(p.get_facecolor(), tf.ACCENT)]
    assert len(filled) == 1
    assert {"eos", "max_len"} <= set(ax_texts(ax))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3"]
    with pytest.raises(ValueError, match="one stop reason per row"):
        tf.draw_generations([["1"]], [], eos="eos", cap=3)
    with pytest.raises(ValueError, match="rows must have 1..cap"):
        tf.draw_generations([["1", "2"]], ["max_len"], eos="eos", cap=1)


def test_plot_stop_mass_heights_and_labels():
    ax = tf.plot_stop_mass([0.25, 0.125], 0.625)
    heights = [round(p.get_height(), 6) for p in ax.patches]
    assert heights == [0.25, 0.125, 0.625]
    assert {"0.250", "0.125", "0.625"} <= set(ax_texts(ax))
    with pytest.raises(ValueError, match="nonempty"):
        tf.plot_stop_mass([], 1.0)
    with pytest.raises(ValueError, match=">= 0"):
        tf.plot_stop_mass([0.5], -0.1)


def test_draw_prefix_tree_highlights_the_path_and_marks_leaves():
    lm = TableLM(("a", "b", "EOS"), {}, default={"a": F(1, 2), "b": F(1, 4), "EOS": F(1, 4)})
    tree = PrefixTree(lm, [0], eos=2, max_len=2)
    ax = tf.draw_prefix_tree(tree, lm.vocab, prompt="a", highlight=[1, 2], highlight_labels=["p_1", "p_2"])
    # edges: 3 from the root, 3 from each of the 2 non-eos children
    assert len(ax.lines) == 9
    thick = [line for line in ax.lines if line.get_linewidth() > 2]
    assert len(thick) == 2
    assert "b: p_1=0.25" in ax_texts(ax) and "EOS: p_2=0.25" in ax_texts(ax)
    squares = [c for c in ax.collections if c.get_paths() and len(c.get_offsets()) == 1]
    assert len(squares) == 1 + 3 + 2 * 3  # every node is drawn once: root, 3 children, 6 grandchildren
    assert legend_texts(ax) == ["stopped by eos", "stopped by the length cap"]
    with pytest.raises(ValueError, match="not a path"):
        tf.draw_prefix_tree(tree, lm.vocab, prompt="a", highlight=[2, 0])
    with pytest.raises(ValueError, match="labels"):
        tf.draw_prefix_tree(tree, lm.vocab, prompt="a", highlight=[1, 2], highlight_labels=["p"])
    with pytest.raises(ValueError, match="fewer than the tree uses"):
        tf.draw_prefix_tree(tree, ("a", "b"), prompt="a")
