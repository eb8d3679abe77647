"""The closed-form response surface and its use as an arm runner (ftip-00JO, 00LV, 00LW)."""
from fractions import Fraction

import pytest

from ftipbook.compare.arms import CommonRecipeArm
from ftipbook.compare.toy_surface import ToyResponseSurface, example_surface, member_recipe, recipe_grid

P = dict(ceiling=1.0, best_log2_lr=-8, curvature=0.125, budget_scale=16, sample_gain=0.5, flops_per_step=4e9,
         flops_per_sample=8e10)
Q = dict(P, ceiling=1.125, best_log2_lr=-6, curvature=0.0625, sample_gain=0.0625, flops_per_step=3e9)
S = ToyResponseSurface({"A": P, "B": Q}, item_offsets=(0.25, -0.125, -0.125))


def test_score_and_cost_by_hand():
    r = {"log2_lr": -7, "steps": 50, "samples": 4}
    exact = Fraction(9, 8) - Fraction(1, 16) * 1 - Fraction(16, 50) + Fraction(1, 16) * Fraction(3, 4)
    assert S.score("B", r) == pytest.approx(float(exact), abs=1e-15)
    c = S.cost("B", r)
    assert (c["train_flops"], c["inference_flops"]) == (1.5e11, 3.2e11)
    assert S.score("A", {"log2_lr": -8, "steps": 16}) == 0.0


def test_runner_outcome_pairs_items_and_records_the_recipe():
    out = S.runner("A", {}, {"log2_lr": -8, "steps": 100}, 2)
    assert out.item_scores == pytest.approx(tuple(out.score + d for d in (0.25, -0.125, -0.125)))
    assert sum(out.item_scores) / 3 == pytest.approx(out.score)
    assert out.record == {"log2_lr": -8, "steps": 100, "seed": 2}
    res = CommonRecipeArm({"log2_lr": -8, "steps": 100}, {"A": {"f": 1}, "B": {"f": 2}}).run(S.runner, [0, 1])
    assert res.common and res.difference("A", "B").estimate == pytest.approx(0.125)


def test_bad_inputs_are_refused_by_name():
    with pytest.raises(ValueError, match="exactly"):
        ToyResponseSurface({"A": {"ceiling": 1.0}})
    with pytest.raises(ValueError, match="curvature"):
        ToyResponseSurface({"A": dict(P, curvature=-1)})
    with pytest.raises(ValueError, match="flops_per_step"):
        ToyResponseSurface({"A": dict(P, flops_per_step=0)})
    with pytest.raises(ValueError, match="sum to zero"):
        ToyResponseSurface({"A": P}, item_offsets=(0.1,))
    with pytest.raises(ValueError, match="not on this surface"):
        S.score("C", {"log2_lr": 0, "steps": 1})
    with pytest.raises(ValueError, match="steps"):
        S.score("A", {"log2_lr": 0})
    with pytest.raises(ValueError, match="samples"):
        S.score("A", {"log2_lr": 0, "steps": 1, "samples": 0})
    with pytest.raises(TypeError, match="seed"):
        S.runner("A", {}, {"log2_lr": 0, "steps": 1}, "0")


def test_member_recipes_and_the_example_surface():
    grid = recipe_grid([-8, -7], [50, 100], [1, 4])
    assert list(grid) == ["lr-8/s50/k1", "lr-8/s50/k4", "lr-8/s100/k1", "lr-8/s100/k4", "lr-7/s50/k1",
                          "lr-7/s50/k4", "lr-7/s100/k1", "lr-7/s100/k4"]
    r = grid["lr-7/s100/k4"]
    assert (r["log2_lr"], r["steps"], r["samples"], r["inference"]) == (-7, 100, 4, "best of 4 draws")
    assert member_recipe(-8, 50)["inference"] == "greedy"
    ex = example_surface()
    assert set(ex.packages) == {"A", "B"} and sum(ex.item_offsets) == 0
    # A is best at 2^-8, B at 2^-6; B's step is cheaper
    assert max(range(-10, -3), key=lambda lr: ex.score("A", {"log2_lr": lr, "steps": 100})) == -8
    assert max(range(-10, -3), key=lambda lr: ex.score("B", {"log2_lr": lr, "steps": 100})) == -6
    assert ex.cost("B", r)["train_flops"] < ex.cost("A", r)["train_flops"]
