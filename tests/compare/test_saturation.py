"""Saturation certificates and verdicts (ftip-00JS, 00LL, 00LM, 00LN)."""
import math
import random

import pytest

from ftipbook.compare.frontier import CostInfimumFamily, Intervention, InterventionFamily, frontier_value
from ftipbook.compare.saturation import (
    JustifiedBound,
    conditional_saturation,
    declared_saturation,
    indistinguishable_frontiers,
    saturation_certificate,
)

U1 = JustifiedBound(1.0, "scores are accuracies in [0, 1]")


def random_set(rng, n=6):
    return [Intervention(f"e{i}", rng.uniform(0, 10), rng.uniform(0, 1)) for i in range(n)]


def test_certificate_holds_on_random_frontiers():
    rng = random.Random(0)
    for _ in range(300):
        etas = random_set(rng)
        w = rng.choice(etas)
        q = w.score - rng.uniform(0, 0.1)
        cert = saturation_certificate(etas, q, w, U1)
        assert cert.cost == w.cost and math.isclose(cert.gap_bound, 1.0 - q)
        for c in (w.cost, w.cost + rng.uniform(0, 10), 1e6):
            iv, v = cert.at(c), frontier_value(etas, c).value
            assert iv.lower <= v <= iv.upper and iv.gap_lower <= 1.0 - v <= iv.gap_upper
            assert (iv.lower, iv.upper, iv.gap_lower, iv.gap_upper) == (q, 1.0, 0.0, 1.0 - q)


def test_certificate_refuses_missing_or_false_premises():
    w = Intervention("w", 2.0, 0.8)
    etas = [w, Intervention("x", 1.0, 0.3)]
    with pytest.raises(ValueError, match="no upper bound U"):
        saturation_certificate(etas, 0.7, w, None)
    with pytest.raises(ValueError, match="no witness"):
        saturation_certificate(etas, 0.7, None, U1)
    with pytest.raises(ValueError, match="does not reach q"):
        saturation_certificate(etas, 0.9, w, U1)
    with pytest.raises(ValueError, match="not in the declared"):
        saturation_certificate(etas, 0.7, Intervention("other", 1.0, 0.8), U1)
    with pytest.raises(ValueError, match="bound is false"):
        saturation_certificate(etas + [InterventionFamily("n", 5.0, math.inf, attained=False)], 0.7, w, U1)
    with pytest.raises(ValueError, match="bound is false"):
        saturation_certificate(etas + [CostInfimumFamily("1/n", 5.0, 1.5)], 0.7, w, U1)
    with pytest.raises(ValueError, match="exceeds U"):
        saturation_certificate(etas, 0.7, w, JustifiedBound(0.6, "wrong"))
    with pytest.raises(ValueError, match="infinite cost"):
        inf = Intervention("inf", math.inf, 0.9)
        saturation_certificate(etas + [inf], 0.7, inf, U1)
    with pytest.raises(ValueError, match="justification"):
        JustifiedBound(1.0, "  ")
    with pytest.raises(TypeError, match="JustifiedBound"):
        saturation_certificate(etas, 0.7, w, 1.0)
    with pytest.raises(TypeError, match="Intervention"):
        saturation_certificate(etas, 0.7, "w", U1)
    cert = saturation_certificate(etas, 0.7, w, U1)
    with pytest.raises(ValueError, match="below the witness cost"):
        cert.at(1.5)
    with pytest.raises(ValueError, match="budget"):
        cert.at(math.inf)


def test_attained_bound_pins_the_frontier():
    w = Intervention("best", 3.0, 1.0)
    cert = saturation_certificate([w, Intervention("x", 1.0, 0.5)], 1.0, w, U1)
    assert (cert.at(3.0).lower, cert.at(3.0).upper) == (1.0, 1.0)


def test_declared_saturation_three_verdicts():
    etas = [Intervention("a", 1.0, 0.5), Intervention("b", 2.0, 0.5625), Intervention("c", 4.0, 0.875)]
    sat = declared_saturation(etas, q=0.5, budget=1.0, delta=1.0, eps=0.1)
    assert sat.status == "saturated" and sat.gain == 0.0625
    edge = declared_saturation(etas, q=0.5, budget=2.0, delta=2.0, eps=0.3125)
    assert edge.status == "saturated" and edge.gain == 0.3125  # gain == eps counts
    no = declared_saturation(etas, q=0.5, budget=2.0, delta=2.0, eps=0.3)
    assert no.status == "not saturated" and no.value == 0.5625 and no.value_after == 0.875
    und = declared_saturation(etas, q=0.5, budget=0.5, delta=1.0, eps=0.1)
    assert und.status == "undefined" and und.gain is None and "-inf" in und.reason
    top = declared_saturation(etas + [InterventionFamily("n", 3.0, math.inf, attained=False)],
                              q=0.5, budget=2.0, delta=1.0, eps=0.1)
    assert top.status == "undefined" and "inf" in top.reason
    for bad in ({"delta": 0.0}, {"eps": 0.0}, {"delta": -1.0}, {"eps": math.inf}):
        kw = {"q": 0.5, "budget": 1.0, "delta": 1.0, "eps": 0.1} | bad
        with pytest.raises(ValueError, match=next(iter(bad))):
            declared_saturation(etas, **kw)
    with pytest.raises(ValueError, match="budget"):
        declared_saturation(etas, q=0.5, budget=-1.0, delta=1.0, eps=0.1)


def test_conditional_saturation_on_random_frontiers_and_without_the_upper_premise():
    rng = random.Random(2)
    gains_over_eps = 0
    for _ in range(300):
        etas = random_set(rng)
        c, delta = rng.uniform(0, 8), rng.uniform(0, 4)
        v, v2 = frontier_value(etas, c).value, frontier_value(etas, c + delta).value
        if not math.isfinite(v):
            continue
        upper = JustifiedBound(v2 + rng.uniform(0, 0.1), "computed V(C + delta) plus slack")
        eps = upper.value - v + rng.uniform(0, 0.1)
        lower = JustifiedBound(upper.value - eps, "computed V(C) minus slack")
        cert = conditional_saturation(budget=c, delta=delta, eps=eps, upper=upper, lower=lower)
        lo, hi = cert.value_interval
        assert lo - 1e-12 <= v <= v2 <= hi and cert.gain_interval == (0.0, eps)
        assert 0 <= v2 - v <= eps + 1e-12
        # a false upper premise (the best score seen at C, "no improvement observed") breaks the conclusion
        fake = conditional_saturation(budget=c, delta=delta, eps=0.05, upper=JustifiedBound(v, "none observed"),
                                      lower=JustifiedBound(v, "computed V(C)"))
        gains_over_eps += v2 - v > fake.gain_interval[1]
    assert gains_over_eps > 10


def test_conditional_saturation_refusals_and_witness_lower_bound():
    w = Intervention("w", 2.0, 0.9)
    cert = conditional_saturation(budget=2.0, delta=1.0, eps=0.1, upper=U1, lower=w)
    assert cert.lower.value == 0.9 and cert.value_interval == (0.9, 1.0)
    with pytest.raises(ValueError, match="no upper bound"):
        conditional_saturation(budget=2.0, delta=1.0, eps=0.1, upper=None, lower=w)
    with pytest.raises(ValueError, match="no lower bound"):
        conditional_saturation(budget=2.0, delta=1.0, eps=0.1, upper=U1, lower=None)
    with pytest.raises(ValueError, match="below U - eps"):
        conditional_saturation(budget=2.0, delta=1.0, eps=0.05, upper=U1, lower=w)
    with pytest.raises(ValueError, match="does not bound V_A"):
        conditional_saturation(budget=1.0, delta=1.0, eps=0.1, upper=U1, lower=w)
    with pytest.raises(ValueError, match="eps"):
        conditional_saturation(budget=2.0, delta=1.0, eps=-0.1, upper=U1, lower=w)
    with pytest.raises(TypeError, match="upper"):
        conditional_saturation(budget=2.0, delta=1.0, eps=0.1, upper=1.0, lower=w)
    with pytest.raises(TypeError, match="lower"):
        conditional_saturation(budget=2.0, delta=1.0, eps=0.1, upper=U1, lower=0.9)
    # delta = 0 and eps = 0 are allowed here (unlike ftip-00LL)
    assert conditional_saturation(budget=0.0, delta=0.0, eps=0.0, upper=U1,
                                  lower=JustifiedBound(1.0, "witness")).gain_interval == (0.0, 0.0)


def test_indistinguishable_frontiers():
    ind = indistinguishable_frontiers([0.0, 1.0, 2.0], 3.0)
    for c in (0.0, 1.0, 2.0, 2.999):
        assert ind.frontier(0, c) == ind.frontier(1, c) == 0.0
    assert (ind.frontier(0, 3.0), ind.frontier(1, 3.0)) == (0.0, 1.0)
    assert ind.frontier(1, 100.0) == 1.0
    assert indistinguishable_frontiers([], 0.5).c0 == 0.5
    with pytest.raises(ValueError, match="exceed every measured cost"):
        indistinguishable_frontiers([0.0, 3.0], 3.0)
    with pytest.raises(ValueError, match="c0"):
        indistinguishable_frontiers([], 0.0)
    with pytest.raises(ValueError, match="measured cost"):
        indistinguishable_frontiers([-1.0], 3.0)
    with pytest.raises(ValueError, match="theta"):
        ind.frontier(2, 1.0)
