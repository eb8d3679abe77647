"""hitting_time (ftip-00BP): first gradient-flow time at a level, checked against closed forms."""
from __future__ import annotations

import math

import pytest
import torch

from ftipbook.optim import flows as fl
from ftipbook.optim.factored import quadratic_problem

D = torch.float64


def _linear_flow(rate: float):
    """theta' = -rate * theta, so L = theta^2 / 2 decays as exp(-2 rate t) L0."""
    return (lambda th: (rate * th[0],)), (lambda th: 0.5 * float(th[0].square().sum()))


@pytest.mark.parametrize("rate,level", [(1.0, 0.1), (0.5, 1e-3), (3.0, 0.4)])
def test_hitting_time_matches_the_closed_form(rate, level):
    grad, loss = _linear_flow(rate)
    theta0 = (torch.tensor([1.0], dtype=D),)
    exact = math.log(0.5 / level) / (2 * rate)
    got = fl.hitting_time(grad, loss, theta0, level, t_max=2 * exact + 1.0)
    assert got is not None and math.isclose(got, exact, rel_tol=1e-8)


def test_level_not_reached_and_level_already_met():
    grad, loss = _linear_flow(1.0)
    theta0 = (torch.tensor([1.0], dtype=D),)
    assert fl.hitting_time(grad, loss, theta0, 1e-3, t_max=1.0) is None  # needs t = log(500)/2 = 3.1
    assert fl.hitting_time(grad, loss, theta0, 0.5, t_max=1.0) == 0.0


def test_hitting_time_on_a_factored_problem_agrees_with_the_flow():
    target = torch.randn(3, 3, dtype=D, generator=torch.Generator().manual_seed(0))
    problem = quadratic_problem(target, k=3)
    theta0 = problem.init(scale=0.2, seed=1)
    loss = lambda th: float(problem.loss(*th))  # noqa: E731
    level = 0.25 * loss(theta0)
    tau = fl.hitting_time(problem, loss, theta0, level, t_max=20.0)
    assert tau is not None
    at = fl.gradient_flow(problem, theta0, [tau * (1 - 1e-6), tau])
    assert loss(at.theta[0]) > level and math.isclose(loss(at.theta[1]), level, rel_tol=1e-7)


def test_hitting_time_input_errors():
    grad, loss = _linear_flow(1.0)
    theta0 = (torch.tensor([1.0], dtype=D),)
    with pytest.raises(ValueError, match="grid must be an int >= 1"):
        fl.hitting_time(grad, loss, theta0, 0.1, t_max=1.0, grid=0)
    with pytest.raises(ValueError, match="t_max must be a finite number > 0"):
        fl.hitting_time(grad, loss, theta0, 0.1, t_max=math.inf)
