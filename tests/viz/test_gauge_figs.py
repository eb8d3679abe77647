"""Gauge-chapter figures draw exactly the numbers they are given and refuse malformed input."""
import numpy as np
import pytest
import torch

from ftipbook.viz import gauge_figs as gf
from ftipbook.viz.optim import LOG_FLOOR
from tests.viz.figure_checks import ax_texts, legend_texts


def test_against_condition_draws_each_series_with_zeros_floored():
    conds = [1.0, 10.0, 100.0]
    ax = gf.plot_against_condition(conds, {"W": [0.0, 1e-15, 1e-14], "L": [1e-16, 2e-16, 3e-16]},
                                   ylabel="relative error", reference=("bound", [1e-16, 1e-15, 1e-14]))
    lines = {line.get_label(): line for line in ax.lines}
    assert set(lines) == {"W", "L", "bound"}
    assert np.allclose(lines["W"].get_ydata(), [LOG_FLOOR, 1e-15, 1e-14])
    assert np.allclose(lines["L"].get_xdata(), conds)
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert ax.get_ylabel() == "relative error"


def test_against_condition_sorts_the_reference_line():
    ax = gf.plot_against_condition([100.0, 1.0, 10.0], {"d": [3.0, 1.0, 2.0]}, ylabel="y",
                                   reference=("ref", [30.0, 10.0, 20.0]))
    ref = next(line for line in ax.lines if line.get_label() == "ref")
    assert list(ref.get_xdata()) == [1.0, 10.0, 100.0] and list(ref.get_ydata()) == [10.0, 20.0, 30.0]


@pytest.mark.parametrize("kwargs, match", [
    (dict(conds=[], series={"a": []}), "non-empty"),
    (dict(conds=[1.0], series={}), "series is empty"),
    (dict(conds=[0.5], series={"a": [1.0]}), ">= 1"),
    (dict(conds=[1.0, 2.0], series={"a": [1.0]}), "series 'a' has shape"),
    (dict(conds=[1.0], series={"a": [1.0]}, reference=("r", [1.0, 2.0])), "reference has shape"),
])
def test_against_condition_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gf.plot_against_condition(ylabel="y", **kwargs)


def test_plane_draws_points_curves_and_arrows():
    theta = np.linspace(0, 2 * np.pi, 50)
    circle = np.stack([np.cos(theta), np.sin(theta)], 1)
    ax = gf.plot_plane(curves={"circle": circle}, points={"p": torch.tensor([[2.0, 3.0]])},
                       arrows=[("g", (0.0, 0.0), (4.0, -1.0), "--")], title="t")
    labels = [line.get_label() for line in ax.lines]
    assert {"circle", "p", "g"} <= set(labels)
    assert np.allclose(next(line for line in ax.lines if line.get_label() == "circle").get_xydata(), circle)
    arrows = [p for p in ax.patches if type(p).__name__ == "FancyArrowPatch"]
    assert len(arrows) == 1 and arrows[0].get_linestyle() == "--"
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    assert x0 <= -1 and x1 >= 4 and y0 <= -1 and y1 >= 3  # the arrow's end is inside the view
    assert ax.get_aspect() == 1.0 and ax.get_title() == "t"
    assert legend_texts(ax) == ["circle", "p", "g"]
    # the arrow is drawn above the curve and the points, the coordinate axes beneath everything
    curve_z = max(line.get_zorder() for line in ax.lines if line.get_label() in ("circle", "p"))
    axes_z = max(line.get_zorder() for line in ax.lines if line.get_label().startswith("_"))
    assert arrows[0].get_zorder() > curve_z > axes_z


def test_plane_draws_a_dashed_arrow_above_a_solid_one_along_it():
    ax = gf.plot_plane(arrows=[("long", (0.0, 0.0), (0.0, 2.0), "-"), ("short", (0.0, 0.0), (0.0, 1.0), "--")])
    solid, dashed = [p for p in ax.patches if type(p).__name__ == "FancyArrowPatch"]
    assert dashed.get_linestyle() == "--" and dashed.get_zorder() > solid.get_zorder()
    # thicker than the solid arrow beneath, so its dashes show over the line in the gaps
    assert dashed.get_linewidth() == 2 * solid.get_linewidth()
    legend = {line.get_label(): line.get_linewidth() for line in ax.get_legend().get_lines()}
    assert legend["short"] == 2 * legend["long"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(), "nothing to draw"),
    (dict(points={"p": [1.0, 2.0]}), r"must be an \(n, 2\) array"),
    (dict(arrows=[("a", (0.0,), (1.0, 1.0), "-")]), "2 numbers each"),
    (dict(arrows=[("a", (0.0, 0.0), (1.0, 1.0), "wavy")]), "linestyle must be one of"),
])
def test_plane_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gf.plot_plane(**kwargs)


def test_commuting_squares_one_panel_per_rule_with_its_gap():
    fig = gf.draw_commuting_squares({"SGD": 1e-16, "Adam": 2.5e-2}, title="square")
    assert len(fig.axes) == 2
    texts = [ax_texts(ax) for ax in fig.axes]
    assert any("1.00e-16" in t for t in texts[0]) and any("2.50e-02" in t for t in texts[1])
    assert sum(t == "Adam" for t in texts[1]) == 2  # the rule names both horizontal arrows
    assert [ax.get_title() for ax in fig.axes] == ["SGD", "Adam"]
    with pytest.raises(ValueError, match="gaps is empty"):
        gf.draw_commuting_squares({})
    with pytest.raises(ValueError, match="finite number >= 0"):
        gf.draw_commuting_squares({"x": float("nan")})


def test_along_draws_each_series_and_labelled_levels():
    ax = gf.plot_along([0, 1, 2], {"s1": [3.0, 2.0, 1.0], "s2": [0.0, 0.5, 0.0]}, xlabel="step", ylabel="value",
                       levels={"target": 1.5}, title="t")
    lines = {line.get_label(): line for line in ax.lines}
    assert np.allclose(lines["s1"].get_ydata(), [3.0, 2.0, 1.0]) and np.allclose(lines["s2"].get_xdata(), [0, 1, 2])
    level = [line for line in ax.lines if line.get_label().startswith("_")]
    assert len(level) == 1 and np.allclose(level[0].get_ydata(), [1.5, 1.5]) and level[0].get_linestyle() == "--"
    assert "target" in ax_texts(ax) and legend_texts(ax) == ["s1", "s2"]
    assert ax.get_yscale() == "linear" and ax.get_xlabel() == "step" and ax.get_title() == "t"


def test_along_floors_zeros_on_a_log_axis():
    ax = gf.plot_along([0, 1], {"d": [0.0, 1e-3]}, xlabel="x", ylabel="y", yscale="log")
    assert np.allclose(ax.lines[0].get_ydata(), [LOG_FLOOR, 1e-3]) and ax.get_yscale() == "log"


@pytest.mark.parametrize("kwargs, match", [
    (dict(x=[], series={"a": []}), "non-empty"),
    (dict(x=[0.0], series={}), "series is empty"),
    (dict(x=[0.0, 1.0], series={"a": [1.0]}), "series 'a' has shape"),
    (dict(x=[0.0], series={"a": [-1.0]}, yscale="log"), "negative"),
    (dict(x=[0.0], series={"a": [1.0]}, yscale="symlog"), "yscale"),
    (dict(x=[0.0], series={"a": [1.0]}, levels={"l": float("nan")}), "level 'l'"),
])
def test_along_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gf.plot_along(xlabel="x", ylabel="y", **kwargs)
