"""Targets, measured cost ratios and the frontier value (ftip-00JJ, 00KX, 00L0, 00L2)."""
import math
import random
from fractions import Fraction

import pytest

from ftipbook.compare.cost import UNKNOWN, CostVector
from ftipbook.compare.frontier import (
    CostRatio,
    Intervention,
    InterventionFamily,
    NotReached,
    ScoredCostMeasurement,
    Undefined,
    frontier_value,
    measured_cost_ratio,
    smallest_cost_reaching,
)


def point(cost, score, system="hybrid", protocol="recall-v1", unit="FLOP", label=""):
    return ScoredCostMeasurement(system, cost, score, protocol, unit, label=label)


CURVE = [point(100, 0.20, label="a"), point(200, 0.55, label="b"), point(400, 0.50, label="c"), point(800, 0.70, label="d")]


def test_smallest_cost_reaching_picks_the_cheapest_point_at_or_above_q():
    assert smallest_cost_reaching(0.5, CURVE).label == "b"
    assert smallest_cost_reaching(0.6, CURVE).label == "d"
    assert smallest_cost_reaching(0.2, CURVE).label == "a"
    assert smallest_cost_reaching(-1, CURVE).cost == 100
    # order of the points does not matter
    assert smallest_cost_reaching(0.5, list(reversed(CURVE))).label == "b"


def test_ties_in_cost_go_to_the_higher_score():
    pts = [point(10, 0.6, label="low"), point(10, 0.9, label="high")]
    assert smallest_cost_reaching(0.5, pts).label == "high"


def test_not_reached_is_explicit_and_not_a_number():
    out = smallest_cost_reaching(0.9, CURVE)
    assert isinstance(out, NotReached)
    assert out.best_score == 0.70 and out.n_measurements == 4 and out.system == "hybrid"
    with pytest.raises(TypeError):
        float(out)


def test_smallest_cost_refuses_ratios_and_mixed_protocols():
    with pytest.raises(TypeError, match="not a measured cost"):
        smallest_cost_reaching(0.5, [2.2])
    with pytest.raises(ValueError, match="protocol"):
        smallest_cost_reaching(0.5, [point(1, 1), point(2, 1, protocol="other")])
    with pytest.raises(ValueError, match="system"):
        smallest_cost_reaching(0.5, [point(1, 1), point(2, 1, system="mla")])
    with pytest.raises(ValueError, match="no measurements"):
        smallest_cost_reaching(0.5, [])
    with pytest.raises(ValueError, match="finite"):
        smallest_cost_reaching(math.inf, CURVE)


@pytest.mark.parametrize("kw", [dict(cost=-1.0), dict(cost=math.inf), dict(score=math.nan), dict(system="")])
def test_measurement_validation(kw):
    args = dict(system="s", cost=1.0, score=0.5, protocol="p", cost_unit="s") | kw
    with pytest.raises(ValueError):
        ScoredCostMeasurement(**args)


def test_ratio_on_its_domain():
    r = measured_cost_ratio(3.0, 4.0)
    assert isinstance(r, CostRatio) and r.value == 0.75
    assert measured_cost_ratio(0.0, 4.0).value == 0.0  # c_K = 0 is allowed
    assert measured_cost_ratio(Fraction(1, 3), Fraction(2, 3)).value == pytest.approx(0.5)
    k = point(200, 0.6, system="hybrid")
    t = point(400, 0.65, system="mla")
    r = measured_cost_ratio(k, t)
    assert r.value == 0.5 and r.numerator is k and r.denominator is t  # the measurements travel with the ratio


@pytest.mark.parametrize("c_k, c_t, why", [
    (1.0, 0.0, "denominator must be positive"),
    (math.inf, 1.0, "numerator must be finite"),
    (1.0, math.inf, "denominator must be finite"),
    (UNKNOWN, 1.0, "not measured"),
    (1.0, NotReached(0.9, "mla", 0.5, 3), "did not reach"),
    (0.0, 0.0, "denominator"),  # the 0/0 of ftip-00JP
])
def test_ratio_outside_its_domain_is_undefined_with_a_reason(c_k, c_t, why):
    out = measured_cost_ratio(c_k, c_t)
    assert isinstance(out, Undefined) and why in out.reason
    with pytest.raises(TypeError):
        float(out)
    with pytest.raises(TypeError):
        bool(out)


def test_ratio_refuses_speedups_and_mismatched_accounting():
    class PublishedSpeedup:  # any record that is not a measured cost
        value = 2.2

    with pytest.raises(TypeError, match="published speedup"):
        measured_cost_ratio(PublishedSpeedup(), 1.0)
    with pytest.raises(TypeError):
        measured_cost_ratio("2.2x", 1.0)
    with pytest.raises(ValueError, match="cost in"):
        measured_cost_ratio(-1.0, 1.0)
    with pytest.raises(ValueError, match="protocol"):
        measured_cost_ratio(point(1, 1), point(1, 1, protocol="other"))
    with pytest.raises(ValueError, match="cost_unit"):
        measured_cost_ratio(point(1, 1), point(1, 1, unit="s"))


def test_measurement_keeps_its_cost_vector():
    vec = CostVector.standard(wall_time=2.0)
    p = ScoredCostMeasurement("s", 2.0, 0.5, "p", "s", costs=vec)
    assert p.costs["wall_time"] == 2.0
    with pytest.raises(TypeError):
        ScoredCostMeasurement("s", 2.0, 0.5, "p", "s", costs={"wall_time": 2.0})


# ---- frontier value -------------------------------------------------------------------------
def test_frontier_conventions():
    etas = [Intervention("cheap", 1.0, 0.3), Intervention("mid", 2.0, 0.6), Intervention("never", math.inf, 9.0)]
    assert frontier_value(etas, 0.5).value == -math.inf  # empty feasible set
    v = frontier_value(etas, 1.5)
    assert (v.value, v.attained, v.witness, v.n_feasible) == (0.3, True, "cheap", 1)
    assert frontier_value(etas, 1e300).value == 0.6  # the infinite-cost intervention is never feasible
    unbounded = InterventionFamily("score n at cost 1", 1.0, math.inf, attained=False)
    assert frontier_value(etas + [unbounded], 1.0).value == math.inf
    unattained = InterventionFamily("score 1 - 1/n at cost 1", 1.0, 1.0, attained=False)
    v = frontier_value([unattained], 1.0)
    assert v.value == 1.0 and not v.attained and v.witness is None
    v = frontier_value([unattained, Intervention("exact", 1.0, 1.0)], 1.0)
    assert v.attained and v.witness == "exact"


def test_frontier_is_nondecreasing_in_the_budget_and_grows_with_the_class():
    rng = random.Random(0)
    for _ in range(200):
        etas = [Intervention(f"e{i}", rng.choice([rng.uniform(0, 10), math.inf]), rng.uniform(-1, 1)) for i in range(6)]
        budgets = sorted(rng.uniform(0, 12) for _ in range(5))
        values = [frontier_value(etas, c).value for c in budgets]
        assert values == sorted(values)
        extra = etas + [Intervention("extra", rng.uniform(0, 10), rng.uniform(-1, 1))]
        assert all(frontier_value(extra, c).value >= v for c, v in zip(budgets, values))


def test_frontier_validation():
    with pytest.raises(ValueError):
        frontier_value([], -1.0)
    with pytest.raises(ValueError):
        frontier_value([], math.inf)
    with pytest.raises(TypeError):
        frontier_value([(1.0, 0.5)], 1.0)
    with pytest.raises(ValueError):
        Intervention("bad", -1.0, 0.0)
    with pytest.raises(ValueError):
        InterventionFamily("bad", 1.0, math.inf, attained=True)


@pytest.mark.parametrize("make", [lambda c: Intervention("eta", c, 0.0),
                                  lambda c: InterventionFamily("eta", c, 1.0, attained=False)])
def test_intervention_costs_lie_in_zero_to_infinity(make):
    """Both kinds of intervention take a cost in [0, +inf] (ftip-00JJ): +inf is allowed, negatives and NaN are not."""
    assert make(0).cost == 0.0 and make(math.inf).cost == math.inf and isinstance(make(2).cost, float)
    with pytest.raises(ValueError, match=r"cost=-1.0 of 'eta' must lie in \[0, \+inf\]"):
        make(-1.0)
    with pytest.raises(ValueError, match="cost=nan"):
        make(math.nan)
    with pytest.raises(TypeError):
        make("1")
