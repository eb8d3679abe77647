"""Flows and clocks (ftip-00BL to 00BP): closed forms, inversion, and the reparameterization theorem."""
from __future__ import annotations

import math

import pytest
import torch

from ftipbook.optim import flows as fl
from ftipbook.optim import gauge as g
from ftipbook.optim.factored import quadratic_problem

D = torch.float64


def _problem():
    target = torch.randn(4, 3, dtype=D, generator=torch.Generator().manual_seed(0))
    problem = quadratic_problem(target, k=2)
    return problem, problem.init(scale=0.3, seed=1)


def test_integrator_is_fifth_order_accurate_on_a_linear_system():
    """y' = A y with a rotation-plus-decay A: the tolerance controls the error against expm(t A)."""
    a = torch.tensor([[-0.1, 1.0], [-1.0, -0.1]], dtype=D)
    y0 = torch.tensor([1.0, 0.0], dtype=D)
    exact = [torch.linalg.matrix_exp(t * a) @ y0 for t in (1.0, 5.0, 10.0)]
    errors = []
    for rtol in (1e-6, 1e-9, 1e-12):
        ys, _ = fl.integrate(lambda t, y: a @ y, y0, [1.0, 5.0, 10.0], tol=fl.Tolerance(rtol, rtol * 1e-2))
        errors.append(max(float((y - e).abs().max()) for y, e in zip(ys, exact)))
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-10 and errors[0] < 1e-4


@pytest.mark.parametrize("a,closed,tau_max", [
    (lambda t: 1 + t, lambda t: math.log1p(t), math.inf),
    (lambda t: (1 + t) ** 2, lambda t: t / (1 + t), 1.0),
    (lambda t: math.exp(t), lambda t: 1 - math.exp(-t), 1.0),
])
def test_effective_clock_closed_forms_and_inverse(a, closed, tau_max):
    """ftip-00BM: tau(t) = int_0^t du / a(u), strictly increasing; t(tau) inverts it below tau_max."""
    times = [0.5, 1.0, 2.0, 6.0]
    taus = fl.effective_clock(a, times)
    assert all(math.isclose(x, closed(t), rel_tol=1e-9) for x, t in zip(taus, times))
    assert all(b > x for x, b in zip(taus, taus[1:])) and taus[-1] < tau_max
    back = fl.invert_clock(a, taus)
    assert all(math.isclose(x, t, rel_tol=1e-8) for x, t in zip(back, times))


def test_clock_cannot_be_inverted_at_or_beyond_tau_max():
    """ftip-00BM, 00BP: with a = (1 + t)^2 the clock never reaches tau = 1."""
    with pytest.raises(ValueError, match="not below tau_max"):
        fl.invert_clock(lambda t: (1 + t) ** 2, [1.0])
    with pytest.raises(ValueError, match="positive and finite"):
        fl.effective_clock(lambda t: -1.0, [1.0])


def test_common_scalar_flow_is_reparameterized_gradient_flow():
    """ftip-00BN: theta(t(tau)) equals the gradient flow at tau, for a time-only and for a gauge-invariant,
    state-dependent a; the gap shrinks with the tolerance, so it is integration error, not a real difference."""
    problem, theta0 = _problem()

    def invariant(t, theta):
        return 1 + 0.5 * t + float(sum(x.square().sum() for x in problem.grads(*theta)))

    for a in (lambda t, theta: 1 + t, invariant):
        gaps = [fl.reparameterization_gap(problem, theta0, a, [0.5, 1.0, 3.0], tol=fl.Tolerance(r, r * 1e-2)).gap
                for r in (1e-6, 1e-9, 1e-12)]
        assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-10


def test_clock_slows_but_does_not_bend_the_path():
    """Against physical time the flows differ (rates do not transfer, ftip-00BP); against tau they coincide."""
    problem, theta0 = _problem()
    check = fl.reparameterization_gap(problem, theta0, lambda t, th: math.exp(t), [0.5, 1.0, 2.0])
    csf, gf_same_t = check.scalar_flow, fl.gradient_flow(problem, theta0, [0.5, 1.0, 2.0])
    assert max(abs(a - b) for a, b in zip(csf.clock, (1 - math.exp(-t) for t in csf.t))) < 1e-9
    loss = lambda th: float(problem.loss(*th))  # noqa: E731
    assert loss(csf.theta[-1]) > loss(gf_same_t.theta[-1]) + 1e-3
    assert check.gap < 1e-9


def test_gauge_invariant_clock_is_common_to_the_orbit():
    """ftip-00BL: a scalar built from gauge-invariant statistics gives both orbit points the same clock."""
    problem, (u, v) = _problem()

    def a(t, theta):
        return 1 + float(sum(x.square().sum() for x in problem.grads(*theta)))

    q = g.random_orthogonal(2, seed=3)
    one = fl.common_scalar_flow(problem, (u, v), a, [0.5, 2.0])
    two = fl.common_scalar_flow(problem, g.orth_action(u, v, q), a, [0.5, 2.0])
    assert all(math.isclose(x, y, rel_tol=1e-9) for x, y in zip(one.clock, two.clock))
    assert all(torch.allclose(x[0] @ q, y[0], atol=1e-9) for x, y in zip(one.theta, two.theta))


def test_bounded_scalar_reaches_the_gradient_flow_limit():
    """ftip-00BO: a bounded a (tau_max = inf) reaches the same limit; a = (1+t)^2 stops at the tau = 1 point."""
    problem, theta0 = _problem()
    gf = fl.gradient_flow(problem, theta0, [1.0, 40.0])
    bounded = fl.common_scalar_flow(problem, theta0, lambda t, th: 1 + math.sin(t) ** 2, [80.0])
    limit = problem.represented(*gf.theta[-1])
    assert torch.allclose(problem.represented(*bounded.theta[-1]), limit, atol=1e-8)
    stopped = fl.common_scalar_flow(problem, theta0, lambda t, th: (1 + t) ** 2, [200.0])
    assert stopped.clock[0] < 1.0
    assert float((problem.represented(*stopped.theta[0]) - limit).abs().max()) > 1e-3
    at_clock = fl.gradient_flow(problem, theta0, [stopped.clock[0]])
    assert torch.allclose(problem.represented(*stopped.theta[0]), problem.represented(*at_clock.theta[0]), atol=1e-8)


def test_distance_to_path():
    path = [torch.tensor([0.0, 0.0], dtype=D), torch.tensor([1.0, 0.0], dtype=D), torch.tensor([1.0, 1.0], dtype=D)]
    points = [torch.tensor([0.5, 0.2], dtype=D), torch.tensor([2.0, 0.5], dtype=D), torch.tensor([1.0, 0.3], dtype=D)]
    assert [round(x, 12) for x in fl.distance_to_path(points, path)] == [0.2, 1.0, 0.0]
    with pytest.raises(ValueError, match="at least two points"):
        fl.distance_to_path(points, path[:1])


def test_integrator_input_errors():
    with pytest.raises(ValueError, match="strictly increasing"):
        fl.integrate(lambda t, y: y, torch.ones(1, dtype=D), [1.0, 0.5])
    with pytest.raises(ValueError, match="rtol and atol must be > 0"):
        fl.Tolerance(rtol=0.0)
    with pytest.raises(ValueError, match="more than 10 steps"):
        fl.integrate(lambda t, y: -50 * y, torch.ones(1, dtype=D), [10.0], tol=fl.Tolerance(max_steps=10))
    with pytest.raises(TypeError, match="FactoredProblem or a callable"):
        fl.gradient_flow(3, (torch.ones(1, dtype=D),), [1.0])
