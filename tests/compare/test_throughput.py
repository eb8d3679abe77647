"""Attempt-throughput model (ftip-00L3, 00LD, 00LF): the note's numbers, properties, refusals."""
from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.compare import throughput as T
from ftipbook.compare.frontier import Undefined
from ftipbook.eval.metrics import discovery_probability

shares = st.floats(0, 1, allow_nan=False)
speeds = st.floats(1e-3, 1e3, allow_nan=False)
probs = st.floats(0, 1, allow_nan=False)


def test_the_notes_example_00L3():
    r = T.compare_attempts(f=0.8, s=2.2, p_m=0.10, p_k=0.08, budget=10.0)
    assert round(r.throughput, 3) == 1.774
    assert (r.n_m, r.n_k) == (10, 17)
    assert round(r.discovery_m, 3) == 0.651 and round(r.discovery_k, 3) == 0.758
    assert round(r.break_even, 4) == 0.0601
    assert r.hybrid_at_least_as_good is True
    # by hand, independently of the module
    assert r.cost_ratio == pytest.approx(0.2 + 0.8 / 2.2, rel=1e-15)
    assert r.discovery_m == pytest.approx(1 - 0.9**10, abs=1e-15)
    assert r.discovery_k == pytest.approx(1 - 0.92**17, abs=1e-15)
    assert r.n_k == math.floor(10 / (0.2 + 0.8 / 2.2))


def test_the_notes_table_00LF_and_range_00LD():
    assert [round(T.throughput_factor(f, 2.2), 3) for f in (0.2, 0.5, 0.8, 1.0)] == [1.122, 1.375, 1.774, 2.200]
    rng = T.sensitivity_range(0.8, 2.2, 2.3)
    assert (round(rng.lo, 4), round(rng.hi, 4)) == (1.7742, 1.8254)
    assert T.throughput_factor(0.8, 2.25) in rng and 1.9 not in rng


def test_cost_and_factor_agree():
    for f, s, c in [(0.8, 2.2, 3.0), (0.0, 5.0, 1.0), (1.0, 0.5, 2.0)]:
        assert T.attempt_cost(c, f, s) == pytest.approx(c * (1 - f + f / s), rel=1e-15)
        assert T.throughput_factor(f, s) == pytest.approx(c / T.attempt_cost(c, f, s), rel=1e-15)
    assert T.throughput_factor(0.0, 7.0) == 1.0 and T.throughput_factor(1.0, 7.0) == 7.0


def test_attempt_counts_are_exact_floors():
    assert T.attempts_under_budget(0.3, 0.1) == 3  # float division gives 2.9999999999999996
    assert T.attempts_under_budget(0.0, 1.0) == 0
    assert T.attempts_under_budget(1.0, 0.25) == 4 and T.attempts_under_budget(0.99, 0.25) == 3
    assert T.compare_attempts(f=0.5, s=2.0, p_m=0.1, p_k=0.1, budget=3.0).n_k == 4  # 3 / 0.75 = 4 exactly


def test_zero_attempts_are_undefined_not_numbers():
    r = T.compare_attempts(f=0.8, s=2.2, p_m=0.1, p_k=0.08, budget=0.5)
    assert (r.n_m, r.n_k) == (0, 0)
    assert isinstance(r.break_even, Undefined) and "N_M >= 1" in r.break_even.reason
    assert isinstance(r.hybrid_at_least_as_good, Undefined)
    with pytest.raises(TypeError):
        float(r.break_even)
    # the hybrid affords one attempt, the baseline none
    r = T.compare_attempts(f=0.8, s=2.2, p_m=0.1, p_k=0.08, budget=0.6)
    assert (r.n_m, r.n_k) == (0, 1) and isinstance(r.break_even, Undefined)
    assert isinstance(T.break_even_success(0.1, 3, 0), Undefined)


def test_no_attempt_or_no_success_discovers_with_positive_zero():
    """Discovery with no attempt, or with p = 0, is +0.0 (eval.metrics.discovery_probability), not -0.0."""
    for p_m, p_k, budget in ((0.1, 0.08, 0.5), (0.0, 0.0, 10.0), (-0.0, 0.0, 10.0)):
        r = T.compare_attempts(f=0.8, s=2.2, p_m=p_m, p_k=p_k, budget=budget)
        assert [math.copysign(1.0, d) for d in (r.discovery_m, r.discovery_k)] == [1.0, 1.0]
        assert T.discovery_probability is discovery_probability  # one formula, re-exported


@settings(max_examples=200, deadline=None)
@given(f=shares, s1=speeds, s2=speeds)
def test_throughput_is_nondecreasing_in_s(f, s1, s2):
    lo, hi = sorted((s1, s2))
    assert T.throughput_factor(f, lo) <= T.throughput_factor(f, hi) * (1 + 1e-12)
    rng = T.sensitivity_range(f, lo, hi)
    assert rng.lo <= rng.hi * (1 + 1e-12)
    # S lies between 1 and s
    s_val = T.throughput_factor(f, hi)
    assert min(1, hi) * (1 - 1e-12) <= s_val <= max(1, hi) * (1 + 1e-12)


@settings(max_examples=300, deadline=None)
@given(p_m=probs, p_k=probs, n_m=st.integers(1, 60), n_k=st.integers(1, 60))
def test_break_even_is_the_exact_threshold(p_m, p_k, n_m, n_k):
    star = T.break_even_success(p_m, n_m, n_k)
    d_m, d_k = T.discovery_probability(p_m, n_m), T.discovery_probability(p_k, n_k)
    if abs(p_k - star) > 1e-9 and abs(d_k - d_m) > 1e-12:  # away from ties, where float rounding decides
        assert (p_k >= star) == (d_k >= d_m)
    assert T.discovery_probability(star, n_k) == pytest.approx(d_m, abs=1e-12)


def test_discovery_by_enumeration():
    # 1 - (1-p)^n equals the probability of at least one success, summed over all 2^n outcomes
    p, n = 0.3, 6
    at_least_one = sum(
        math.prod(p if x else 1 - p for x in outcome) for outcome in itertools.product((0, 1), repeat=n) if any(outcome)
    )
    assert T.discovery_probability(p, n) == pytest.approx(at_least_one, abs=1e-15)
    assert T.discovery_probability(0.5, 0) == 0.0 and T.discovery_probability(1.0, 3) == 1.0
    assert T.discovery_probability(1e-12, 10) == pytest.approx(1e-11, rel=1e-9)  # no cancellation


def test_correlated_attempts_discover_less():
    p, n = 0.1, 10
    indep = T.discovery_probability(p, n)
    assert T.discovery_probability_correlated(p, n, 0.0) == indep
    assert T.discovery_probability_correlated(p, n, 1.0) == p
    values = [T.discovery_probability_correlated(p, n, rho) for rho in (0.01, 0.1, 0.3, 0.6, 0.9)]
    assert all(a > b for a, b in zip([indep] + values, values))  # strictly decreasing in rho
    assert T.discovery_probability_correlated(p, 1, 0.5) == pytest.approx(p)  # the marginal is kept


def test_correlated_formula_by_simulation():
    # draw theta ~ Beta(a, b), then n Bernoulli(theta): the empirical discovery rate matches
    p, n, rho, reps = 0.1, 10, 0.2, 40_000
    a, b = p * (1 - rho) / rho, (1 - p) * (1 - rho) / rho
    rnd = random.Random(0)
    hits = marg = 0
    for _ in range(reps):
        theta = rnd.betavariate(a, b)
        draws = [rnd.random() < theta for _ in range(n)]
        hits += any(draws)
        marg += draws[0]
    exact = T.discovery_probability_correlated(p, n, rho)
    se = math.sqrt(exact * (1 - exact) / reps)
    assert abs(hits / reps - exact) < 4 * se
    assert abs(marg / reps - p) < 4 * math.sqrt(p * (1 - p) / reps)


@pytest.mark.parametrize(
    "call",
    [
        lambda: T.throughput_factor(1.5, 2.0),
        lambda: T.throughput_factor(-0.1, 2.0),
        lambda: T.throughput_factor(0.5, 0.0),
        lambda: T.throughput_factor(0.5, float("inf")),
        lambda: T.throughput_factor(float("nan"), 2.0),
        lambda: T.attempt_cost(0.0, 0.5, 2.0),
        lambda: T.attempts_under_budget(-1.0, 1.0),
        lambda: T.attempts_under_budget(1.0, 0.0),
        lambda: T.discovery_probability(1.2, 3),
        lambda: T.discovery_probability(0.5, -1),
        lambda: T.discovery_probability(0.5, 2.0),
        lambda: T.discovery_probability_correlated(0.5, 3, 1.5),
        lambda: T.break_even_success(0.1, 3, -1),
        lambda: T.sensitivity_range(0.8, 2.3, 2.2),
        lambda: T.compare_attempts(f=0.8, s=2.2, p_m=0.1, p_k=0.08, budget=-1.0),
    ],
)
def test_bad_inputs_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_non_numbers_raise_type_error():
    with pytest.raises(TypeError):
        T.throughput_factor("0.8", 2.2)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        T.throughput_factor(True, 2.2)  # type: ignore[arg-type]
