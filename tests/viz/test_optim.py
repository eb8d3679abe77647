"""Optimizer-geometry figures draw the numbers they are given and refuse malformed input."""
import math

import numpy as np
import pytest
import torch

from ftipbook.optim import flows as fl
from ftipbook.optim import gauge as g
from ftipbook.optim.factored import quadratic_problem
from ftipbook.viz import optim as vo
from tests.viz.figure_checks import ax_texts


def _report(name, values, equivariant):
    zeros = (0.0,) * len(values)
    return g.GaugeReport(name, tuple(values), zeros if equivariant else tuple(values), zeros, True)


def test_gauge_reports_one_line_each_with_zeros_floored():
    reports = {"sgd": _report("sgd", [0.0, 1e-16, 2e-16], True), "adam": _report("adam", [0.0, 1e-2, 3e-2], False)}
    ax = vo.plot_gauge_reports(reports, tol=1e-10)
    lines = {line.get_label(): line for line in ax.lines if not line.get_label().startswith("_")}
    assert set(lines) == {"sgd", "adam"}
    assert np.allclose(lines["adam"].get_ydata(), [vo.LOG_FLOOR, 1e-2, 3e-2])
    assert lines["sgd"].get_linestyle() == "-" and lines["adam"].get_linestyle() == "--"
    assert ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="reports is empty"):
        vo.plot_gauge_reports({})


def test_commuting_square_prints_the_measured_gap():
    ax = vo.draw_commuting_square(gap=3.2e-3)
    texts = ax_texts(ax)
    assert any("3.20e-03" in t for t in texts) and "$(U_0, V_0)$" in texts and len(ax.patches) >= 8
    assert not any("gap" in t.get_text() for t in vo.draw_commuting_square().texts)


def test_witness_products_figure():
    lrs = np.linspace(0.0, 1.5, 151)
    w1, w1t = zip(*(g.witness_products(float(x), 1e-8) for x in lrs))
    ax = vo.plot_witness_products(lrs, w1, w1t, certified=2**-0.5 + 1e-8, crossing=g.witness_crossing(1e-8))
    assert len([line for line in ax.lines if len(line.get_xdata()) == 151]) == 2
    assert any("0.8284" in t.get_text() for t in ax.texts)
    with pytest.raises(ValueError, match="one length"):
        vo.plot_witness_products([0.1, 0.2], [1.0], [1.0, 2.0], certified=0.7, crossing=0.8)


def test_reparameterization_panels_overlay_on_the_clock_axis():
    problem = quadratic_problem(torch.eye(3, 2, dtype=torch.float64), k=2)
    theta0 = problem.init(scale=0.3, seed=0)
    check = fl.reparameterization_gap(problem, theta0, lambda t, th: 1 + t, [0.5, 1.0, 2.0])
    fig = vo.plot_reparameterization(check, lambda th: float(problem.loss(*th)), label="loss")
    left, right = fig.axes
    csf_on_tau, gf_on_tau = right.lines[0], right.lines[1]
    assert np.allclose(csf_on_tau.get_xdata(), check.scalar_flow.clock)
    assert np.allclose(csf_on_tau.get_ydata(), gf_on_tau.get_ydata(), atol=1e-9)
    # against physical time the common-scalar flow reaches the same values later: t_i > tau(t_i)
    assert np.all(left.lines[0].get_xdata() > left.lines[1].get_xdata())


def test_quadrant_places_entries_in_their_cells():
    entries = [("ScaledGD control", True, False, "source"), ("long-anneal sign", False, True, "source"),
               ("GD", True, True, "ftipbook")]
    ax = vo.draw_quadrant(entries)
    placed = {t.get_text(): t.get_position() for t in ax.texts}
    x, y = placed["ScaledGD control (source)"]
    assert x > 1 and y < 1
    x, y = placed["long-anneal sign (source)"]
    assert x < 1 and y > 1
    assert placed["GD (ftipbook)"][0] > 1 and placed["GD (ftipbook)"][1] > 1


def test_loss_quotient_figure():
    fig = vo.draw_loss_quotient({"Adam from (U0, V0)": [1.0, 0.81], "Adam from (U0 Q, V0 Q)": [1.0, 0.737]},
                                w0=1.0, l0=0.5)
    schematic, lines = fig.axes
    assert any("L_0 = 0.5" in t.get_text() for t in schematic.texts)
    assert [list(line.get_ydata()) for line in lines.lines] == [[1.0, 0.81], [1.0, 0.737]]
    with pytest.raises(ValueError, match="trajectories is empty"):
        vo.draw_loss_quotient({}, w0=1.0, l0=0.5)
    assert math.isfinite(float(lines.get_ylim()[0]))
