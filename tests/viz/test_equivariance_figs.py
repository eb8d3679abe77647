"""Figures of the equivariance chapters draw the numbers they are given and refuse malformed input."""
import matplotlib
import numpy as np
import pytest

from ftipbook.viz import equivariance_figs as ve
from ftipbook.viz.optim import LOG_FLOOR
from ftipbook.viz.style import ACCENT, INK


def test_defect_bars_colour_by_the_tolerance_and_floor_zeros():
    ax = ve.plot_defect_bars({"msign": 0.0, "2G": 3e-16, "sign": 0.89}, tol=1e-10)
    bars = ax.patches
    assert [round(b.get_width(), 20) for b in bars] == [LOG_FLOOR, 3e-16, 0.89]
    assert [matplotlib.colors.to_hex(b.get_facecolor()) for b in bars] == [INK, INK, ACCENT]
    top_down = sorted(ax.get_yticklabels(), key=lambda t: -t.get_position()[1])
    assert [t.get_text() for t in top_down] == ["msign", "2G", "sign"]  # first entry on top
    assert ax.get_xscale() == "log"
    assert any("1e-10" in t.get_text() for t in ax.texts)


def test_defect_bars_refuse_bad_input():
    with pytest.raises(ValueError, match="defects is empty"):
        ve.plot_defect_bars({}, tol=1e-10)
    with pytest.raises(ValueError, match="tol must be"):
        ve.plot_defect_bars({"a": 1.0}, tol=0.0)
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        ve.plot_defect_bars({"a": float("nan")}, tol=1e-10)
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        ve.plot_defect_bars({"a": -1.0}, tol=1e-10)


def test_curves_lines_points_and_guides():
    x = np.logspace(-2, 2, 9)
    ax = ve.plot_curves(x, {"defect": 1 / x}, points={"direct": ([0.1, 1.0], [10.0, 1.0])},
                        guides=[("slope -1", -1.0, (1.0, 1.0))], xscale="log", yscale="log",
                        xlabel="eps", ylabel="defect")
    lines = {line.get_label(): line for line in ax.lines}
    assert set(lines) == {"defect", "direct", "slope -1"}
    assert np.allclose(lines["defect"].get_ydata(), 1 / x)
    assert lines["direct"].get_linestyle() == "None" and lines["direct"].get_marker() == "o"
    gx, gy = lines["slope -1"].get_xdata(), lines["slope -1"].get_ydata()
    assert np.allclose(gx, [0.01, 100.0]) and np.allclose(gy, [100.0, 0.01])
    assert ax.get_xscale() == ax.get_yscale() == "log"


def test_guides_do_not_stretch_the_y_axis():
    x = np.logspace(0, 4, 5)
    ax = ve.plot_curves(x, {"flat": np.ones(5)}, guides=[("steep", -3.0, (1e4, 1.0))], xscale="log",
                        yscale="log", xlabel="x", ylabel="y")
    lo, hi = ax.get_ylim()
    assert 1e-2 < lo < 1 < hi < 1e2  # the guide reaches 1e12 at x = 1 but the axis stays near the data


def test_curves_change_line_style_once_colours_repeat():
    x = [0.0, 1.0]
    ax = ve.plot_curves(x, {f"s{i}": [i, i] for i in range(8)}, xlabel="x", ylabel="y")
    styles = [line.get_linestyle() for line in ax.lines]
    assert styles == ["-"] * 6 + ["--"] * 2
    assert ax.lines[0].get_color() == ax.lines[6].get_color()


def test_curves_floor_zeros_on_a_log_axis_only():
    x = [1.0, 2.0, 3.0]
    log_ax = ve.plot_curves(x, {"d": [0.0, 1.0, 2.0]}, xlabel="x", ylabel="y", yscale="log")
    assert log_ax.lines[0].get_ydata()[0] == LOG_FLOOR
    lin_ax = ve.plot_curves(x, {"d": [0.0, 1.0, 2.0]}, xlabel="x", ylabel="y")
    assert lin_ax.lines[0].get_ydata()[0] == 0.0


def test_curves_refuse_bad_input():
    with pytest.raises(ValueError, match="nothing to draw"):
        ve.plot_curves([1.0], {}, xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match="shape"):
        ve.plot_curves([1.0, 2.0], {"a": [1.0]}, xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match="xscale"):
        ve.plot_curves([1.0], {"a": [1.0]}, xlabel="x", ylabel="y", xscale="symlog")
    with pytest.raises(ValueError, match="power laws"):
        ve.plot_curves([1.0], {"a": [1.0]}, xlabel="x", ylabel="y", guides=[("g", 1.0, (1.0, 1.0))])
    with pytest.raises(ValueError, match="positive"):
        ve.plot_curves([1.0, 2.0], {"a": [1.0, 2.0]}, xlabel="x", ylabel="y", xscale="log", yscale="log",
                       guides=[("g", 1.0, (0.0, 1.0))])
    with pytest.raises(ValueError, match="one length"):
        ve.plot_curves([1.0], {}, points={"p": ([1.0, 2.0], [1.0])}, xlabel="x", ylabel="y")
