"""Ceiling layers, difference grids and the answer-probability functional (ftip-00JL, 00JM, 00JK)."""
import math
from fractions import Fraction

import pytest
import torch

from ftipbook.compare.ceilings import (
    CeilingLayers,
    GridCeiling,
    ReachableSet,
    answer_probability,
    ceiling_layers,
    difference_grid,
    optimizer_reachable,
    representational_ceiling,
)
from ftipbook.model import ModelConfig, build_model
from ftipbook.model.generate import sequence_logprob

X = [0.0, 1.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
Y = [1, 1, 1, 1, 0, 0, 0, 1]


def accuracy(w, b):
    return Fraction(sum((w * x + b > 0) == bool(y) for x, y in zip(X, Y)), len(X))


def loss(theta):
    x = torch.tensor(X, dtype=torch.float64)
    y = torch.tensor(Y, dtype=torch.float64)
    return torch.nn.functional.binary_cross_entropy_with_logits(theta[0] * x + theta[1], y)


def score(theta):
    return float(accuracy(float(theta[0]), float(theta[1])))


def sgd(params):
    return torch.optim.SGD(params, lr=0.2)


def test_representational_ceiling_is_the_grid_maximum_first_in_order():
    got = representational_ceiling(lambda w, b: float(accuracy(w, b)), {"w": [-1.0, 1.0], "b": [0.0, 4.5, -4.5]})
    by_hand = max((float(accuracy(w, b)), -i) for i, (w, b) in enumerate((w, b) for w in (-1.0, 1.0)
                                                                         for b in (0.0, 4.5, -4.5)))
    assert got.value == by_hand[0] == 7 / 8
    assert dict(got.argmax) == {"w": -1.0, "b": 4.5} and got.n_points == 6


@pytest.mark.parametrize("grid, match", [({}, "non-empty"), ({"w": []}, "empty"), ({"w": [float("nan")]}, "finite")])
def test_representational_ceiling_refuses_bad_grids(grid, match):
    with pytest.raises(ValueError, match=match):
        representational_ceiling(lambda w: 0.0, grid)


def test_representational_ceiling_refuses_a_nonfinite_score():
    with pytest.raises(ValueError, match="score"):
        representational_ceiling(lambda w: math.inf, {"w": [1.0]})


def test_optimizer_reachable_matches_a_hand_sgd_loop_and_charges_cost_per_step():
    reach = optimizer_reachable(loss, score, sgd, [(0.0, 0.0), (0.5, -1.0)], [0, 3, 10], cost_per_step=8.0,
                                optimizer="SGD(lr=0.2)")
    assert [(p.init, p.horizon, p.cost) for p in reach.points] == [
        (0, 0, 0.0), (0, 3, 24.0), (0, 10, 80.0), (1, 0, 0.0), (1, 3, 24.0), (1, 10, 80.0)]
    theta = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    for _ in range(10):  # plain gradient descent by hand
        g, = torch.autograd.grad(loss(theta), theta)
        theta = (theta - 0.2 * g).detach().requires_grad_()
    assert reach.points[-1].params == pytest.approx(tuple(theta.tolist()), abs=1e-14)
    assert reach.ceiling.score == max(p.score for p in reach.points)
    assert reach.feasible(23.0).value == max(p.score for p in reach.points if p.cost <= 23.0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(horizons=[3, 3]), "strictly increasing"), (dict(horizons=[]), "non-empty"), (dict(horizons=[-1]), ">= 0"),
    (dict(inits=[]), "at least one"), (dict(cost_per_step=-1.0), ">= 0"), (dict(optimizer=" "), "name"),
])
def test_optimizer_reachable_refuses_bad_declarations(kwargs, match):
    args = dict(inits=[(0.0, 0.0)], horizons=[0, 1], cost_per_step=1.0, optimizer="SGD")
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        optimizer_reachable(loss, score, sgd, args.pop("inits"), args.pop("horizons"), **args)


def test_optimizer_reachable_refuses_a_non_optimizer():
    with pytest.raises(TypeError, match="torch.optim.Optimizer"):
        optimizer_reachable(loss, score, lambda p: object(), [(0.0, 0.0)], [0, 1], cost_per_step=1.0, optimizer="x")


def test_ceiling_layers_are_ordered_with_gaps_and_a_coarse_grid_is_refused():
    reach = optimizer_reachable(loss, score, sgd, [(0.0, 0.0)], [0, 5, 50], cost_per_step=1.0, optimizer="SGD")
    rep = representational_ceiling(lambda w, b: float(accuracy(w, b)), {"w": [-1.0], "b": [4.5]})
    layers = ceiling_layers(rep, reach, 4.0)
    assert layers.representational >= layers.reachable >= layers.feasible
    assert layers.gaps == (layers.representational - layers.reachable, layers.reachable - layers.feasible)
    coarse = GridCeiling(0.0, {}, 1)
    with pytest.raises(ValueError, match="lower bound"):
        ceiling_layers(coarse, reach, 4.0)
    with pytest.raises(ValueError, match="feasible frontier"):
        CeilingLayers(1.0, 0.5, 0.75, 1.0)
    assert ceiling_layers(rep, reach, 0.0).feasible == reach.points[0].score
    with pytest.raises(TypeError):
        ceiling_layers(rep, "reach", 1.0)


def test_reachable_set_infeasible_budget_is_minus_infinity():
    pts = ReachableSet("SGD", 1.0, ())
    assert pts.feasible(5.0).value == -math.inf


def test_difference_grid_reports_every_cell_and_sign_changes():
    table = {("a", 1, "x"): 3.0, ("b", 1, "x"): 1.0, ("a", 2, "x"): 0.0, ("b", 2, "x"): 2.0,
             ("a", 1, "y"): 5.0, ("b", 1, "y"): 5.0, ("a", 2, "y"): 1.5, ("b", 2, "y"): 1.0}
    grid = difference_grid(lambda s, t, d: table[(s, t, d)], ("a", "b"), {"t": [1, 2], "d": ["x", "y"]})
    assert grid.differences == (2.0, 0.0, -2.0, 0.5)
    assert grid.signs == {-1, 0, 1} and grid.changes_sign
    assert grid.cell(t=2, d="x").difference == -2.0
    assert [c.difference for c in grid.varied({"d": "y"})] == [0.0, 0.5]
    same = difference_grid(lambda s, t: 1.0 + (s == "a"), ("a", "b"), {"t": [1, 2]})
    assert not same.changes_sign and same.signs == {1}
    with pytest.raises(ValueError, match="every axis"):
        grid.cell(t=1)
    with pytest.raises(ValueError, match="unknown axes"):
        grid.varied({"z": 1})


@pytest.mark.parametrize("systems, axes, match", [
    (("a", "a"), {"t": [1]}, "two different"), (("a", "b"), {}, "non-empty"), (("a", "b"), {"t": []}, "empty")])
def test_difference_grid_refuses_bad_declarations(systems, axes, match):
    with pytest.raises(ValueError, match=match):
        difference_grid(lambda s, **kw: 0.0, systems, axes)


def test_difference_grid_refuses_a_nan_score():
    with pytest.raises(ValueError, match="finite"):
        difference_grid(lambda s, t: math.nan, ("a", "b"), {"t": [1]})


class _Tok:
    eos_id = 9

    def encode(self, text):
        return [int(c) for c in text]


class _Doc:
    def __init__(self, prompt, answer):
        self.prompt, self.answer, self.doc_id = prompt, answer, prompt


def test_answer_probability_equals_exp_sequence_logprob_mean():
    cfg = ModelConfig(vocab_size=10, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=16)
    model = build_model(cfg, seed=0).eval()
    docs = [_Doc("12", "3"), _Doc("45", "6"), _Doc("123", "45"), _Doc("7", "80")]
    tok = _Tok()
    by_hand = sum(math.exp(sequence_logprob(model, tok.encode(d.prompt), tok.encode(d.answer) + [9]))
                  for d in docs) / len(docs)
    assert answer_probability(model, tok, docs) == pytest.approx(by_hand, rel=1e-6)
    with pytest.raises(ValueError, match="at least one"):
        answer_probability(model, tok, [])
    with pytest.raises(ValueError, match="reference answer"):
        answer_probability(model, tok, [_Doc("1", None)])
    tok_no_eos = _Tok()
    tok_no_eos.eos_id = None
    with pytest.raises(ValueError, match="eos"):
        answer_probability(model, tok_no_eos, docs)


def test_callables_are_checked_before_any_work():
    with pytest.raises(TypeError, match="score must be callable"):
        representational_ceiling(1.0, {"w": [1.0]})
    with pytest.raises(TypeError, match="make_optimizer must be callable"):
        optimizer_reachable(loss, score, None, [(0.0, 0.0)], [0], cost_per_step=1.0, optimizer="SGD")
    with pytest.raises(TypeError, match="score must be callable"):
        difference_grid("table", ("a", "b"), {"t": [1]})
