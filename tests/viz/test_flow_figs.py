"""Clock and intervention figures draw the numbers they are given and refuse malformed input."""
import math

import numpy as np
import pytest
import torch

from ftipbook.viz import flow_figs as ff


def _labels(ax):
    return [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]


def test_clocks_draw_each_curve_and_its_finite_ceiling():
    t = [0.0, 1.0, 2.0]
    ax = ff.plot_clocks(t, {"a=1+t": [0.0, 0.69, 1.1], "a=(1+t)^2": [0.0, 0.5, 0.67]},
                        tau_max={"a=1+t": math.inf, "a=(1+t)^2": 1.0})
    labels = _labels(ax)
    assert len(labels) == 2 and "∞" in labels[0] and "= 1" in labels[1]
    ceilings = [line for line in ax.lines if line.get_label().startswith("_") and line.get_linestyle() == ":"]
    assert len(ceilings) == 1 and np.allclose(ceilings[0].get_ydata(), [1.0, 1.0])
    with pytest.raises(ValueError, match="tau_max names clocks"):
        ff.plot_clocks(t, {"a": [0, 1, 2]}, tau_max={"b": 1.0})
    with pytest.raises(ValueError, match="1-D of one length"):
        ff.plot_clocks(t, {"a": [0, 1]})


def test_hitting_times_mark_hits_and_say_never():
    curves = {"a=1": ([0, 1, 2], [1.0, 0.1, 0.0]), "a=e^t": ([0, 1, 2], [1.0, 0.5, 0.4])}
    ax = ff.plot_hitting_times(curves, level=0.1, hits={"a=1": 1.0, "a=e^t": None})
    labels = _labels(ax)
    assert labels == ["a=1: t = 1.000", "a=e^t: never"]
    assert np.allclose(ax.lines[0].get_ydata(), [1.0, 0.1, ff.LOG_FLOOR])
    markers = [line for line in ax.lines if line.get_marker() == "o"]
    assert len(markers) == 1 and np.allclose(markers[0].get_xdata(), [1.0])
    with pytest.raises(ValueError, match="hits must name exactly"):
        ff.plot_hitting_times(curves, level=0.1, hits={"a=1": 1.0})
    with pytest.raises(ValueError, match="level must be > 0"):
        ff.plot_hitting_times(curves, level=0.0, hits={"a=1": 1.0, "a=e^t": None})


def test_curves_floor_zeros_on_a_log_axis_and_refuse_negatives():
    ax = ff.plot_curves({"gd": ([0, 1, 2], [1.0, 0.0, 1e-3])}, xlabel="step", ylabel="err", level=0.1,
                        level_label="threshold")
    assert _labels(ax) == ["gd"] and np.allclose(ax.lines[0].get_ydata(), [1.0, ff.LOG_FLOOR, 1e-3])
    assert ax.get_yscale() == "log" and any(t.get_text() == "threshold" for t in ax.texts)
    with pytest.raises(ValueError, match="negative values"):
        ff.plot_curves({"x": ([0, 1], [1.0, -1.0])}, xlabel="s", ylabel="y")
    with pytest.raises(ValueError, match="curves is empty"):
        ff.plot_curves({}, xlabel="s", ylabel="y")


def test_curves_on_a_linear_axis_keep_zeros_and_negatives():
    ax = ff.plot_curves({"drift": ([0, 10, 20], [0.0, -0.2, 0.5])}, xlabel="step", ylabel="d", log=False)
    assert ax.get_yscale() == "linear" and np.allclose(ax.lines[0].get_ydata(), [0.0, -0.2, 0.5])


def test_logit_gauge_shares_one_colour_scale():
    a = torch.tensor([[1.0, -2.0], [0.5, 0.0]], dtype=torch.float64)
    fig = ff.plot_logit_gauge({"original": a, "gauged": a.clone(), "broken": 3 * a})
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 3
    assert all(im.get_clim() == (-6.0, 6.0) for im in images)
    assert np.allclose(images[1].get_array(), a.numpy())
    with pytest.raises(ValueError, match="2-D logit matrix"):
        ff.plot_logit_gauge({"bad": torch.zeros(3)})
    with pytest.raises(ValueError, match="panels is empty"):
        ff.plot_logit_gauge({})


def test_step_size_deviation_draws_a_slope_one_reference():
    ax = ff.plot_step_size_deviation([0.1, 0.05, 0.025], [0.2, 0.1, 0.05])
    measured, reference = ax.lines
    assert np.allclose(reference.get_ydata(), [0.2, 0.1, 0.05])
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="must be > 0"):
        ff.plot_step_size_deviation([0.1, 0.05], [0.1, 0.0])
    with pytest.raises(ValueError, match="length >= 2"):
        ff.plot_step_size_deviation([0.1], [0.1])
