"""Factored problems (ftip-00AW) and runs on them."""
from __future__ import annotations

import pytest
import torch

from ftipbook.optim import factored as fa
from ftipbook.optim import hyperparams as hp
from ftipbook.optim.schedules import Cosine

D = torch.float64


def test_chain_rule_gradients_match_autograd_for_several_objectives():
    """grad_U L = grad f(W) V and grad_V L = grad f(W)^T U (ftip-00AW, 00B1) for quadratic, sensing, nonlinear f."""
    gen = torch.Generator().manual_seed(0)
    problems = [
        fa.quadratic_problem(torch.randn(5, 4, generator=gen, dtype=D), k=3),
        fa.matrix_sensing_problem(5, 4, 2, 3, 30, seed=1),
        fa.FactoredProblem(lambda w: torch.log(torch.cosh(w)).sum() + (w[0] ** 3).sum(), 5, 4, 3, name="nonlinear"),
    ]
    for problem in problems:
        u, v = problem.init(seed=2)
        ur, vr = u.clone().requires_grad_(), v.clone().requires_grad_()
        expected = torch.autograd.grad(problem.loss(ur, vr), (ur, vr))
        for got, want in zip(problem.grads(u, v), expected):
            assert torch.allclose(got, want, atol=1e-12), problem.name


def test_matrix_sensing_plants_a_low_rank_target_and_seeds_everything():
    a = fa.matrix_sensing_problem(8, 7, 2, 4, 50, seed=3)
    b = fa.matrix_sensing_problem(8, 7, 2, 4, 50, seed=3)
    assert int(torch.linalg.matrix_rank(a.target)) == 2
    assert torch.equal(a.target, b.target)
    assert float(a.f(a.target)) < 1e-28 and a.recovery_error(a.target) == 0.0
    assert float(a.f(torch.zeros(8, 7, dtype=D))) > 1.0


def test_minibatches_follow_the_seed():
    problem = fa.matrix_sensing_problem(6, 5, 2, 3, 40, seed=0, batch_size=8)
    u, v = problem.init(seed=1)
    g1 = problem.grads(u, v, torch.Generator().manual_seed(5))
    g2 = problem.grads(u, v, torch.Generator().manual_seed(5))
    g3 = problem.grads(u, v, torch.Generator().manual_seed(6))
    full = problem.grads(u, v)
    assert torch.equal(g1[0], g2[0]) and not torch.equal(g1[0], g3[0]) and not torch.equal(g1[0], full[0])


def test_run_factored_records_the_trajectory_and_applies_the_schedule():
    problem = fa.matrix_sensing_problem(6, 5, 2, 3, 60, seed=0)
    u, v = problem.init(scale=0.5, seed=1)
    run = fa.run_factored(problem, "sgd", u, v, 40, config=hp.SGDConfig(lr=0.05))
    assert len(run.factors) == len(run.losses) == len(run.states) == 41 and run.algorithm == "sgd"
    assert run.losses[-1] < 0.5 * run.losses[0]
    assert torch.equal(run.factors[0][0], u)
    scheduled = fa.run_factored(problem, "sgd", u, v, 40, config=hp.SGDConfig(lr=0.05), schedule=Cosine(40))
    assert torch.equal(scheduled.factors[1][0], run.factors[1][0]) and not torch.equal(scheduled.factors[-1][0],
                                                                                         run.factors[-1][0])
    torch_run = fa.run_factored(problem, lambda ps: torch.optim.SGD(ps, lr=0.05), u, v, 40)
    assert torch.allclose(torch_run.factors[-1][0], run.factors[-1][0], atol=1e-14) and torch_run.algorithm is None


def test_factored_input_errors():
    problem = fa.matrix_sensing_problem(6, 5, 2, 3, 30)
    with pytest.raises(ValueError, match=r"U must be \(6, 3\) and V \(5, 3\)"):
        problem.loss(torch.zeros(6, 2, dtype=D), torch.zeros(5, 2, dtype=D))
    with pytest.raises(ValueError, match="rank=4 exceeds"):
        fa.matrix_sensing_problem(3, 5, 4, 2, 10)
    with pytest.raises(ValueError, match="batch_size"):
        fa.matrix_sensing_problem(3, 5, 2, 2, 10, batch_size=11)
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        fa.FactoredProblem(lambda w: w.sum(), 2, 2, 0)
    with pytest.raises(ValueError, match="steps must be an int >= 0"):
        fa.run_factored(problem, "sgd", *problem.init(), -1)
    with pytest.raises(TypeError, match="config applies to registered rules"):
        fa.run_factored(problem, lambda ps: torch.optim.SGD(ps, lr=0.1), *problem.init(), 1, config=hp.SGDConfig())
    with pytest.raises(ValueError, match="no target"):
        fa.FactoredProblem(lambda w: w.sum(), 2, 2, 1).recovery_error(torch.zeros(2, 2))
