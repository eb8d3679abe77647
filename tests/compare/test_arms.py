"""Tests of ftipbook.compare.arms (ftip-00JV, ftip-00JW, ftip-00K0) with a tiny analytic runner."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ftipbook.compare.arms import (ArmResult, CommonRecipeArm, EqualTuningArm, MatchedDifference, Outcome,
                                   TuningResult, matched_difference, recipe_label)
from ftipbook.compare.cost import UNKNOWN, CostVector, Scalarization, Unknown

RECIPE = {"data": "toy", "optimizer": {"name": "adamw", "lr": 0.01}, "steps": 10}
PACKAGES = {"wide": {"d_model": 8}, "deep": {"d_model": 4}}
ACCOUNTING = Scalarization({"train_flops": 1.0, "wall_time": 0.0}, {"train_flops": "FLOP", "wall_time": "s"})


def analytic(name, package, recipe, seed, *, lr_override=None, drop=None):
    """Score = d_model/10 - (log10 lr + 2)^2 + seed/100, item scores around it; cost = d_model * steps."""
    lr = recipe["optimizer"]["lr"] if lr_override is None else lr_override
    score = package["d_model"] / 10 - (math.log10(lr) + 2) ** 2 + seed / 100
    record = {"data": recipe["data"], "optimizer": {"name": recipe["optimizer"]["name"], "lr": lr},
              "steps": recipe["steps"], "tuning_data": recipe.get("tuning_data"),
              "stopping_rule": recipe.get("stopping_rule")}
    if drop:
        del record[drop]
    items = (score - 0.5, score, score + 0.5)
    cost = CostVector.standard(train_flops=float(package["d_model"] * recipe["steps"]), wall_time=0.1)
    return Outcome(score, cost, items, record)


def test_common_recipe_difference_by_hand():
    res = CommonRecipeArm(RECIPE, PACKAGES).run(analytic, [0, 1, 2])
    assert isinstance(res, ArmResult) and res.common and res.scores("wide") == pytest.approx((0.8, 0.81, 0.82))
    d = res.difference("wide", "deep")
    assert isinstance(d, MatchedDifference)
    assert d.estimate == pytest.approx(0.4) and d.n == 3 and "under this recipe" in d.label
    items = res.difference("wide", "deep", over="items", n_boot=200)
    assert items.n == 3 and items.estimate == pytest.approx(0.4)


def test_deviation_is_a_separate_coordinate():
    def runner(name, package, recipe, seed):
        return analytic(name, package, recipe, seed, lr_override=0.001 if (name, seed) == ("deep", 1) else None)
    res = CommonRecipeArm(RECIPE, PACKAGES).run(runner, [0, 1])
    assert not res.common and len(res.deviations) == 1
    dev = res.deviations[0]
    assert (dev.package, dev.seed, dev.arm.coordinate, dev.arm.status) == ("deep", 1, "optimizer.lr", "differs")
    assert dev.arm.a == 0.01 and dev.arm.b == 0.001
    assert dict(res.coordinates) == {"optimizer.lr": (("deep", 1),)}
    with pytest.raises(ValueError, match="optimizer.lr"):
        res.difference("wide", "deep")


def test_unrecorded_coordinate_is_reported():
    res = CommonRecipeArm(RECIPE, PACKAGES).run(lambda *a: analytic(*a, drop="steps"), [0])
    assert {(d.arm.coordinate, d.arm.status) for d in res.deviations} == {("steps", "unrecorded")}


def test_package_record_checked_against_declaration():
    def runner(name, package, recipe, seed):
        out = analytic(name, package, recipe, seed)
        return Outcome(out.score, out.cost, None, {**RECIPE, "package": {"d_model": 5}})
    res = CommonRecipeArm(RECIPE, PACKAGES).run(runner, [0])
    assert {d.arm.coordinate for d in res.deviations} == {"package.d_model"}


def test_common_arm_bad_input():
    with pytest.raises(ValueError, match="at least two"):
        CommonRecipeArm(RECIPE, {"wide": {"d_model": 8}})
    with pytest.raises(ValueError, match="recipe is empty"):
        CommonRecipeArm({}, PACKAGES)
    with pytest.raises(TypeError, match="recipe"):
        CommonRecipeArm([1, 2], PACKAGES)
    arm = CommonRecipeArm(RECIPE, PACKAGES)
    with pytest.raises(ValueError, match="repeats a seed"):
        arm.run(analytic, [0, 0])
    with pytest.raises(ValueError, match="seeds is empty"):
        arm.run(analytic, [])
    with pytest.raises(TypeError, match="must return an Outcome"):
        arm.run(lambda *a: 1.0, [0])
    res = arm.run(analytic, [0, 1])
    with pytest.raises(ValueError, match="not declared"):
        res.difference("wide", "tall")
    with pytest.raises(ValueError, match="over="):
        res.difference("wide", "deep", over="tokens")


def test_outcome_validation_and_roundtrip():
    cost = CostVector.standard(train_flops=1.0)
    with pytest.raises(ValueError, match="Outcome.score"):
        Outcome(float("nan"), cost)
    with pytest.raises(ValueError, match=r"item_scores\[1\]"):
        Outcome(1.0, cost, [1.0, float("inf")])
    with pytest.raises(TypeError, match="CostVector"):
        Outcome(1.0, {"train_flops": 1.0})
    out = Outcome(1.5, cost, [1.0, 2.0], {"a": (1, 2)})
    back = Outcome.from_dict(out.to_dict())
    assert back.score == 1.5 and back.item_scores == (1.0, 2.0) and isinstance(back.cost["energy"], Unknown)
    assert back.record["a"] == (1, 2)


def tuning_arm(trials=None):
    trials = trials or {"wide": [{**RECIPE, "optimizer": {"name": "adamw", "lr": lr}} for lr in (0.1, 0.01, 0.001)],
                        "deep": [{**RECIPE, "optimizer": {"name": "adamw", "lr": lr}} for lr in (0.3, 0.03, 0.003)]}
    return EqualTuningArm(trials, "tuning split A", "max_score", "fixed horizon", ACCOUNTING,
                          packages=PACKAGES)


def test_equal_tuning_selection_and_cost():
    res = tuning_arm().run(analytic, 0)
    assert isinstance(res, TuningResult) and not res.deviations
    # wide: lr 0.01 sits on the optimum; deep: |log10 lr + 2| is 0.477 for 0.03 and 0.523 for 0.003
    assert res.selected_recipe("wide")["optimizer"]["lr"] == 0.01
    assert res.selected_recipe("deep")["optimizer"]["lr"] == 0.03
    assert res.tuning_cost["wide"] == 3 * 8 * 10 and res.tuning_cost["deep"] == 3 * 4 * 10
    assert res.selected_recipe("wide")["tuning_data"] == "tuning split A"
    back = TuningResult.from_dict(res.to_dict())
    assert back.selected == res.selected and back.tuning_cost == res.tuning_cost
    assert back.selected_outcome("deep").score == res.selected_outcome("deep").score


def test_tuning_ties_go_to_first_trial_and_unknown_cost():
    def runner(name, package, recipe, seed):
        out = analytic(name, package, recipe, seed)
        cost = CostVector.standard(train_flops=UNKNOWN, wall_time=0.1) if name == "deep" else out.cost
        return Outcome(1.0, cost, None, out.record)
    res = tuning_arm().run(runner, 0)
    assert res.selected == {"wide": 0, "deep": 0}
    assert isinstance(res.tuning_cost["deep"], Unknown) and res.tuning_cost["wide"] == 240


def test_equal_tuning_refusals():
    trials = {"wide": [RECIPE, RECIPE], "deep": [RECIPE]}
    with pytest.raises(ValueError, match="trial counts differ"):
        EqualTuningArm(trials, "t", "max_score", "fixed", ACCOUNTING)
    with pytest.raises(ValueError, match="selection_rule"):
        EqualTuningArm({"a": [RECIPE], "b": [RECIPE]}, "t", "best_on_test", "fixed", ACCOUNTING)
    with pytest.raises(TypeError, match="accounting"):
        EqualTuningArm({"a": [RECIPE], "b": [RECIPE]}, "t", "max_score", "fixed", {"train_flops": 1})
    with pytest.raises(ValueError, match="tuning_data"):
        EqualTuningArm({"a": [{**RECIPE, "tuning_data": "other"}], "b": [RECIPE]}, "t", "max_score", "fixed",
                       ACCOUNTING)
    with pytest.raises(ValueError, match="tuning_data"):
        EqualTuningArm({"a": [RECIPE], "b": [RECIPE]}, "", "max_score", "fixed", ACCOUNTING)


def test_tuning_deviation_recorded():
    def runner(name, package, recipe, seed):
        out = analytic(name, package, recipe, seed)
        return Outcome(out.score, out.cost, None, {**out.record, "tuning_data": "eval split"})
    res = tuning_arm().run(runner, 0)
    assert {d.arm.coordinate for d in res.deviations} == {"tuning_data"} and len(res.deviations) == 6


def test_matched_difference_against_hand_bootstrap():
    a, b = [0.3, 0.1, 0.7, 0.2, 0.9], [0.1, 0.2, 0.4, 0.2, 0.5]
    d = matched_difference(a, b, n_boot=500, seed=3, level=0.9)
    assert d.estimate == pytest.approx((2.2 - 1.4) / 5)
    diff = np.array(a) - np.array(b)
    rng = np.random.Generator(np.random.PCG64(3))
    means = diff[rng.integers(0, 5, size=(500, 5))].mean(axis=1)
    lo, hi = np.quantile(means, [0.05, 0.95])
    assert d.interval.low == pytest.approx(lo) and d.interval.high == pytest.approx(hi)
    # exact enumeration of all 5^5 resamples brackets the same interval
    exact = sorted(sum(diff[list(idx)]) / 5 for idx in itertools.product(range(5), repeat=5))
    assert exact[0] <= d.interval.low <= d.interval.high <= exact[-1]


def test_matched_difference_single_draw_and_refusals():
    d = matched_difference([1.0], [0.25])
    assert d.estimate == 0.75 and d.interval is None
    with pytest.raises(ValueError, match="len"):
        matched_difference([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="empty"):
        matched_difference([], [])
    with pytest.raises(ValueError, match=r"b\[1\]"):
        matched_difference([1.0, 2.0], [1.0, float("nan")])
    with pytest.raises(TypeError, match=r"a\[0\]"):
        matched_difference(["x"], [1.0])


def test_recipe_label():
    assert recipe_label({"lr": 0.01, "data": "toy"}) == "data=toy, lr=0.01"
