"""Figures of the finite-grid chapters draw what they are given and refuse malformed input."""
import pytest

from ftipbook.compare.grid import Band, CostGrid, Crossing
from ftipbook.eval.stats import Interval
from ftipbook.viz import grid_figs
from tests.viz.figure_checks import legend_texts, x_extent

GRID = CostGrid((1.0, 2.0, 4.0), "train_flops", "FLOP")


def band(grid, estimates):
    return Band(grid, estimates, tuple(Interval(e - 0.1, e + 0.2, 0.95, "x") for e in estimates), "declared")


def test_envelopes_draw_points_and_envelope_at_grid_points_only():
    ax = grid_figs.plot_envelopes(GRID, {"a": [0.1, 0.3, 0.2]}, {"a": [0.1, 0.3, 0.3]})
    assert [list(line.get_xdata()) for line in ax.lines] == [[1.0, 2.0, 4.0]] * 2
    assert list(ax.lines[1].get_ydata()) == [0.1, 0.3, 0.3]
    assert legend_texts(ax) == ["a: observed", "a: upper envelope"]
    assert list(ax.get_xticks()) == [1.0, 2.0, 4.0]
    other = CostGrid((1.5, 3.0, 6.0), "train_flops", "FLOP")
    ax = grid_figs.plot_envelopes({"a": GRID, "b": other}, {"a": [0.1, 0.3, 0.2], "b": [0, 1, 2]},
                                  {"a": [0.1, 0.3, 0.3], "b": [0, 1, 2]})
    assert list(ax.get_xticks()) != [1.0, 2.0, 4.0]
    assert list(ax.lines[2].get_xdata()) == [1.5, 3.0, 6.0]
    assert ax.lines[0].get_color() != ax.lines[2].get_color()
    with pytest.raises(ValueError, match="same series"):
        grid_figs.plot_envelopes({"a": GRID}, {"a": [0, 1, 2], "b": [0, 1, 2]}, {"a": [0, 1, 2]})


def test_bands_draw_error_bars_and_refuse_other_costs():
    b = band(GRID, (0.1, 0.2, 0.3))
    ax = grid_figs.plot_bands({"a": b}, target=0.25, logx=False)
    low, high = ax.collections[0].get_segments()[0][:, 1]
    assert (low, high) == pytest.approx((0.0, 0.3))
    assert "target q = 0.25" in legend_texts(ax)
    other = band(CostGrid((1.0, 2.0, 4.0), "wall_time", "s"), (0.1, 0.2, 0.3))
    with pytest.raises(ValueError, match="another cost"):
        grid_figs.plot_bands({"a": b, "b": other})
    with pytest.raises(ValueError, match="at least one"):
        grid_figs.plot_bands({})


def test_crossings_shade_the_interval_between_grid_points():
    c = Crossing(1.0, 4.0, "a", "b", (2.0,))
    ax = grid_figs.plot_crossings(GRID, {"a": [0.3, 0.2, 0.1], "b": [0.1, 0.2, 0.3]}, [c], logx=False)
    assert len(ax.patches) == 1
    x0, x1 = x_extent(ax.patches[0])
    assert (x0, x1) == (1.0, 4.0)
    assert "order changes in here" in legend_texts(ax)
