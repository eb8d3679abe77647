"""The restricted-envelope arm: allowed classes, envelopes, finite searches (ftip-00JX, 00LX)."""
import math
import random

import pytest

from ftipbook.compare.arms import Outcome
from ftipbook.compare.cost import UNKNOWN, CostVector, Scalarization
from ftipbook.compare.frontier import InterventionFamily, Undefined
from ftipbook.compare.restricted import (
    AllowedClass,
    RestrictedEnvelopeArm,
    UpperBound,
    envelope_difference,
    interventions_from_outcomes,
)

ACC = Scalarization({"train_flops": 1.0}, {"train_flops": "FLOP"}, "FLOP")
TABLE = {"a": (3.0, 0.5), "b": (5.0, 0.9), "c": (9.0, 2.0), "d": (4.0, 0.7)}  # name -> (cost, score)


def member(name):
    return {"training": name, "post_training": "none", "inference": "greedy"}


def runner(arch, package, recipe, seed):
    cost, score = TABLE[recipe["training"]]
    return Outcome(score + 0.1 * seed, CostVector.standard(train_flops=cost))


def allowed(names, budget=10, patience=None, families=()):
    return AllowedClass("A", {}, {n: member(n) for n in names}, {"x": "not declared"}, budget, (0, 1), patience,
                        families)


def arm(cls, cap=6.0):
    return RestrictedEnvelopeArm({"A": cls}, cap, ACC, "toy law")


def test_envelope_is_the_best_feasible_mean_score():
    env = arm(allowed("abcd")).envelope(runner, "A")
    assert env.certified and env.frontier.witness == "b"
    assert env.value == pytest.approx((0.9 + 1.0) / 2)
    assert [e.cost for e in env.evaluated] == [3.0, 5.0, 9.0, 4.0]


def test_extended_real_conventions():
    assert arm(allowed("c"), cap=1.0).envelope(runner, "A").value == -math.inf
    up = InterventionFamily("longer", 2.0, math.inf, False)
    assert arm(allowed("a", families=(up,))).envelope(runner, "A").value == math.inf
    sup = InterventionFamily("limit", 2.0, 1.5, False)
    env = arm(allowed("a", families=(sup,))).envelope(runner, "A")
    assert env.value == 1.5 and not env.frontier.attained


def test_enlarging_never_lowers_the_envelope():
    rng = random.Random(0)
    for _ in range(50):
        names = rng.sample("abcd", rng.randint(1, 3))
        small = allowed(names)
        extra = [n for n in "abcd" if n not in names]
        big = small.enlarged({n: member(n) for n in rng.sample(extra, rng.randint(1, len(extra)))})
        assert big.contains(small) and not small.contains(big)
        cap = rng.uniform(0, 10)
        assert arm(big, cap).envelope(runner, "A").value >= arm(small, cap).envelope(runner, "A").value


def test_search_is_a_lower_bound_until_covered_or_bounded():
    a = arm(allowed("abcd", budget=2))
    low = a.search(runner, "A", order=["a", "d", "b", "c"])
    assert not low.certified and low.value == pytest.approx(0.75) and low.unsearched == ("b", "c")
    assert isinstance(envelope_difference(low, low), Undefined)
    bound = a.search(runner, "A", order=["b", "a"], upper_bound=UpperBound(0.95, "closed form"))
    assert bound.certified and "closed form" in bound.reason
    with pytest.raises(ValueError, match="below the score"):
        a.search(runner, "A", order=["b"], upper_bound=UpperBound(0.5, "wrong"))
    full = arm(allowed("abcd", budget=4)).search(runner, "A")
    assert full.certified and full.value == pytest.approx(0.95)


def test_patience_stops_the_search():
    s = arm(allowed("abcd", budget=4, patience=1)).search(runner, "A", order=["b", "a", "d", "c"])
    assert [e.name for e in s.evaluated] == ["b", "a"]


def test_difference_conventions():
    a = arm(allowed("ab")).envelope(runner, "A")
    e = arm(allowed("a")).envelope(runner, "A")
    assert envelope_difference(a, e) == pytest.approx(0.95 - 0.55)
    inf = arm(allowed("a", families=(InterventionFamily("up", 1.0, math.inf, False),))).envelope(runner, "A")
    assert isinstance(envelope_difference(inf, inf), Undefined)
    with pytest.raises(ValueError, match="caps"):
        envelope_difference(a, arm(allowed("a"), cap=7.0).envelope(runner, "A"))


def test_bad_inputs_are_refused_by_name():
    with pytest.raises(ValueError, match="post_training"):
        AllowedClass("A", {}, {"m": {"training": 1, "inference": 1}}, {}, 1, (0,))
    with pytest.raises(ValueError, match="both a member and an exclusion"):
        AllowedClass("A", {}, {"m": member("a")}, {"m": "no"}, 1, (0,))
    with pytest.raises(ValueError, match="search_budget"):
        allowed("a", budget=0)
    with pytest.raises(ValueError, match="seeds"):
        AllowedClass("A", {}, {"m": member("a")}, {}, 1, (0, 0))
    with pytest.raises(ValueError, match="empty"):
        AllowedClass("A", {}, {}, {}, 1, (0,))
    with pytest.raises(ValueError, match="cap"):
        arm(allowed("a"), cap=math.inf)
    with pytest.raises(ValueError, match="declares architecture"):
        RestrictedEnvelopeArm({"B": allowed("a")}, 1.0, ACC, "law")
    with pytest.raises(ValueError, match="no declared class"):
        arm(allowed("a")).envelope(runner, "B")
    with pytest.raises(ValueError, match="distinct members"):
        arm(allowed("ab")).search(runner, "A", order=["a", "z"])
    with pytest.raises(ValueError, match="unknown weighted cost"):
        interventions_from_outcomes({"m": [Outcome(1.0, CostVector.standard(train_flops=UNKNOWN))]}, ACC)
    with pytest.raises(ValueError, match="already in the class"):
        allowed("ab").enlarged({"a": member("a")})


def test_declarations_in_view_and_more_bad_inputs():
    cls = allowed("ab", budget=3, patience=2)
    assert "2 evaluation(s) in a row" in cls.stopping_rule and "3" in cls.stopping_rule
    assert "until 10" in allowed("a").stopping_rule
    assert dict(cls.exclusions) == {"x": "not declared"} and cls.seeds == (0, 1)
    assert "x" not in allowed("a").enlarged({"x": member("a")}).exclusions  # an enlargement lifts an exclusion
    with pytest.raises(TypeError, match="AllowedClass"):
        cls.contains({"a": 1})
    with pytest.raises(ValueError, match="argument"):
        UpperBound(1.0, "")
    with pytest.raises(ValueError, match="value"):
        UpperBound(math.nan, "x")
    with pytest.raises(TypeError, match="Envelope"):
        envelope_difference(1.0, 2.0)
    with pytest.raises(TypeError, match="Scalarization"):
        RestrictedEnvelopeArm({"A": cls}, 1.0, {"train_flops": 1.0}, "law")
    with pytest.raises(ValueError, match="evaluation_law"):
        RestrictedEnvelopeArm({"A": cls}, 1.0, ACC, " ")
    with pytest.raises(TypeError, match="runner"):
        arm(cls).envelope(None, "A")
    with pytest.raises(TypeError, match=".score and .cost"):
        arm(cls).envelope(lambda *a: 1.0, "A")


def test_seeds_average_the_score_and_take_the_largest_cost():
    def noisy(arch, package, recipe, seed):
        return Outcome(1.0 + seed, CostVector.standard(train_flops=2.0 + 3.0 * seed))

    (eta,) = interventions_from_outcomes({"m": [noisy("A", {}, {}, s) for s in (0, 1, 2)]}, ACC)
    assert (eta.name, eta.score, eta.cost) == ("m", 2.0, 8.0)
    env = arm(allowed("a"), cap=7.0).envelope(noisy, "A")  # seeds (0, 1): costs 2 and 5
    assert env.value == 1.5 and env.evaluated[0].cost == 5.0
    assert arm(allowed("a"), cap=4.0).envelope(noisy, "A").value == -math.inf
