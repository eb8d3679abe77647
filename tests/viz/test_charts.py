"""The shared drawing pieces of ftipbook.viz.charts draw what they are given and refuse malformed input."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import same_color, to_hex
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ftipbook.viz import charts
from ftipbook.viz.style import ACCENT, BLANK, FILL, INK, MUTED, PALETTE
from tests.viz.figure_checks import ax_texts, legend_texts


def _ax():
    return plt.subplots()[1]


def test_series_arrays_converts_and_names_a_wrong_length():
    arrays = charts.series_arrays({"a": [1, 2], "b": (3.0, 4.0)}, 2)
    assert list(arrays) == ["a", "b"] and arrays["b"].dtype == float and arrays["a"].tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match=r"law 'p' has \(1,\) weights for 2 outcomes"):
        charts.series_arrays({"p": [1.0]}, 2, kind="law", unit="weights", of="outcomes")


def test_grouped_bars_place_colour_and_label_each_series():
    ax = _ax()
    containers = charts.grouped_bars(ax, [0, 1, 2], {"x": np.array([1.0, 2.0, 3.0]), "y": np.array([4.0, 5.0, 6.0])},
                                     fmt="{:.1f}".format)
    assert [c.get_label() for c in containers] == ["x", "y"]
    # two series share 0.8 of a unit: bars 0.4 wide, centred 0.2 left and right of each position
    assert np.allclose(charts.bar_centres(containers[0]), [-0.2, 0.8, 1.8])
    assert np.allclose(charts.bar_centres(containers[1]), [0.2, 1.2, 2.2])
    assert all(np.isclose(b.get_width(), 0.4) for c in containers for b in c)
    assert [to_hex(c[0].get_facecolor()[:3]) for c in containers] == [PALETTE[0], PALETTE[1]]
    assert ax_texts(ax) == ["1.0", "2.0", "3.0", "4.0", "5.0", "6.0"]


def test_grouped_bars_error_bars_only_where_given():
    ax = _ax()
    containers = charts.grouped_bars(ax, [0, 1], {"p": np.array([1.0, 2.0]), "q": np.array([3.0, 4.0])},
                                     errors={"q": np.array([0.5, 0.25])})
    assert containers[0].errorbar is None and containers[1].errorbar is not None
    segments = containers[1].errorbar.lines[2][0].get_segments()
    assert [tuple(s[:, 1]) for s in segments] == [(2.5, 3.5), (3.75, 4.25)]
    assert ax_texts(ax) == []  # no fmt: no labels


def test_box_arrow_and_canvas():
    ax = _ax()
    charts.box(ax, 0.5, 0.4, "node", w=0.2, h=0.1, fc=BLANK, linestyle="--", family="monospace")
    patch = ax.patches[0]
    assert isinstance(patch, FancyBboxPatch) and np.allclose([patch.get_x(), patch.get_y()], [0.4, 0.35])
    assert same_color(patch.get_facecolor(), BLANK) and patch.get_linestyle() == "--"
    assert ax_texts(ax) == ["node"] and ax.texts[0].get_position() == (0.5, 0.4)
    assert ax.texts[0].get_fontfamily() == ["monospace"]
    charts.arrow(ax, (0, 0), (1, 1), colour=ACCENT, rad=0.3)
    arrow = ax.patches[1]
    assert isinstance(arrow, FancyArrowPatch) and same_color(arrow.get_edgecolor(), ACCENT)
    assert arrow.get_connectionstyle().rad == 0.3
    charts.arrow(ax, (0, 0), (1, 0), zorder=4)
    assert ax.patches[2].get_zorder() == 4 and ax.patches[2].get_zorder() > arrow.get_zorder()
    charts.canvas(ax, (-1, 2), (0, 3))
    assert ax.get_xlim() == (-1, 2) and ax.get_ylim() == (0, 3) and not ax.axison


def test_status_patches_follow_the_fill_order_and_dash_one_status():
    fills = {"given": FILL, "derived": ACCENT, "unknown": BLANK}
    labels = {"given": "G", "derived": "D", "unknown": "U"}
    handles = charts.status_patches(fills, labels, {"unknown", "given"}, dashed="unknown")
    assert [h.get_label() for h in handles] == ["G", "U"]  # the order of fills, only the present statuses
    assert handles[0].get_linestyle() == "-" and same_color(handles[0].get_edgecolor(), INK)
    assert handles[1].get_linestyle() == "--" and same_color(handles[1].get_edgecolor(), MUTED)
    assert charts.outline(True) == {"ec": MUTED, "linestyle": "--"}


def test_cell_values_write_dark_cells_in_white():
    ax = _ax()
    m = np.array([[0.1, 0.9], [0.6, 0.7]])
    charts.cell_values(ax, m, "{:.1f}", top=1.0)
    assert ax_texts(ax) == ["0.1", "0.9", "0.6", "0.7"]
    whites = [t.get_text() for t in ax.texts if same_color(t.get_color(), "white")]
    assert whites == ["0.9", "0.7"]  # above 0.6 of the top; 0.6 itself is not
    assert ax.texts[1].get_position() == (1, 0)  # (column, row)


def test_flag_grid_draws_each_cell_with_its_look_and_refuses_ragged_tables():
    yes, no = charts.CellLook(ACCENT, "yes", "white", bold=True), charts.CellLook(FILL, "no", INK)
    ax = charts.flag_grid({"r1": {"a": True, "b": False}, "r2": {"a": False, "b": False}}, yes=yes, no=no,
                          name="flags", cell=(1.0, 0.5))
    assert ax.images[0].get_array().tolist() == [[1.0, 0.0], [0.0, 0.0]]
    assert ax_texts(ax) == ["yes", "no", "no", "no"] and ax.texts[0].get_fontweight() == "bold"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]
    with pytest.raises(ValueError, match="flags must name at least one row"):
        charts.flag_grid({}, yes=yes, no=no, name="flags", cell=(1, 1))
    with pytest.raises(ValueError, match="every row of flags must name the same nonempty columns"):
        charts.flag_grid({"r1": {"a": True}, "r2": {"b": True}}, yes=yes, no=no, name="flags", cell=(1, 1))
    with pytest.raises(ValueError, match="nonempty columns"):
        charts.flag_grid({"r1": {}}, yes=yes, no=no, name="flags", cell=(1, 1))


def test_status_legend_in_a_figure():
    ax = _ax()
    handles = charts.status_patches({"a": FILL, "b": BLANK}, {"a": "first", "b": "second"}, {"a", "b"}, dashed="b")
    ax.legend(handles=handles)
    assert legend_texts(ax) == ["first", "second"]
