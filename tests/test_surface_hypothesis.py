"""Hypothesis strategies for the main objects of the newer modules (issue 25, item 5): finite laws,
intervals, cost vectors, measurement records, confidence rules and Clopper-Pearson intervals.

Each call must end in one of two ways: a ``ValueError``/``TypeError`` naming an argument, or a
result that is valid on its face (a law whose probabilities lie in [0, 1] and sum to 1, an ordered
finite interval, finite non-negative cost coordinates, counts that are ints with
``0 <= successes <= trials``). Numbers meant as numbers may come as ``int``, ``float``,
``Fraction`` or numpy scalars; a finite, in-range one of those must be accepted. Tests listed in
``tests/surface_known.py`` (``KNOWN_HYPOTHESIS``) fail on today's library and are marked
``xfail(strict=True)``: once fixed they XPASS, which fails, so the entry must then be removed.
"""
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.surface_known import KNOWN_HYPOTHESIS

SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
FLOATS = st.floats(allow_nan=True, allow_infinity=True)
#: A number in any of the forms a user may pass, valid or not.
NUMBERS = st.one_of(
    st.integers(-3, 5), st.integers(10**20, 10**400), FLOATS, st.fractions(max_denominator=50),
    FLOATS.map(np.float64), st.floats(-2, 2, width=32).map(np.float32), st.integers(-3, 5).map(np.int64),
    st.booleans(), st.sampled_from(["0.5", "no", None]))
#: Numbers that are real, finite and meant as numbers: these must never be refused for their type.
REAL_TYPES = (int, float, Fraction, np.integer, np.floating)


def known(name):
    return pytest.mark.xfail(strict=True, reason=KNOWN_HYPOTHESIS[name]) if name in KNOWN_HYPOTHESIS else (
        lambda f: f)


def is_real(x) -> bool:
    """A finite real number of a numeric type (huge ints and Fractions beyond floats' range excluded)."""
    if not isinstance(x, REAL_TYPES) or isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (int, np.integer, Fraction)):
        return abs(x) < 10**300
    return math.isfinite(float(x))


def clear(err: Exception, *names: str) -> bool:
    return isinstance(err, (ValueError, TypeError)) and any(n in str(err) for n in names)


@known("finite_law")
@SETTINGS
@given(probs=st.dictionaries(st.sampled_from("abc"), NUMBERS, max_size=3))
def test_a_finite_law_is_refused_by_name_or_is_a_law(probs):
    from ftipbook.prob import FiniteLaw
    try:
        law = FiniteLaw(probs)
    except Exception as err:  # noqa: BLE001
        assert clear(err, "prob", "law", "outcome", "sum"), repr(err)
        return
    values = [law(x) for x in law.outcomes]
    assert all(is_real(v) and 0 <= v <= 1 for v in values), values
    assert math.isclose(float(sum(values)), 1.0, abs_tol=1e-9)


@known("finite_law_samples")
@SETTINGS
@given(n=NUMBERS, seed=NUMBERS)
def test_finite_law_samples_are_refused_by_name_or_reproducible_draws_of_the_support(n, seed):
    from ftipbook.prob import FiniteLaw
    law = FiniteLaw({"a": Fraction(1, 4), "b": Fraction(3, 4)})
    if isinstance(n, int) and n > 10**4:
        return  # the size of the work is bounded elsewhere (tests/test_surface.py)
    try:
        draws = law.samples(n, seed)
    except Exception as err:  # noqa: BLE001
        assert clear(err, "n", "seed"), repr(err)
        return
    assert type(n) in (int, np.int64) and type(seed) in (int, np.int64), (n, seed)
    assert len(draws) == n and set(draws) <= {"a", "b"}
    assert law.samples(n, seed) == draws


@known("published_interval")
@SETTINGS
@given(lo=NUMBERS, hi=NUMBERS)
def test_a_published_interval_is_refused_by_name_or_ordered_and_finite(lo, hi):
    from ftipbook.compare.published import Interval
    try:
        interval = Interval(lo, hi)
    except Exception as err:  # noqa: BLE001
        assert clear(err, "lo", "hi", "interval"), repr(err)
        return
    assert is_real(interval.lo) and is_real(interval.hi) and interval.lo <= interval.hi
    assert interval.width >= 0


@known("stats_interval")
@SETTINGS
@given(low=NUMBERS, high=NUMBERS, level=NUMBERS)
def test_a_confidence_interval_is_refused_by_name_or_ordered_with_a_level_in_0_1(low, high, level):
    from ftipbook.eval.stats import Interval
    try:
        interval = Interval(low, high, level, "given")
    except Exception as err:  # noqa: BLE001
        assert clear(err, "low", "high", "level"), repr(err)
        return
    assert is_real(interval.low) and is_real(interval.high) and interval.low <= interval.high
    assert is_real(interval.level) and 0 < interval.level < 1


@known("cost_vector")
@SETTINGS
@given(values=st.dictionaries(st.sampled_from(["t", "energy"]), NUMBERS, min_size=1, max_size=2))
def test_a_cost_vector_is_refused_by_name_or_holds_non_negative_costs(values):
    from ftipbook.compare.cost import CostVector
    units = {k: "s" for k in values}
    accepted_by_rule = all(is_real(v) and v >= 0 for v in values.values())
    try:
        cost = CostVector(values, units)
    except Exception as err:  # noqa: BLE001
        assert not accepted_by_rule, f"a valid cost vector was refused: {values!r}: {err!r}"
        assert clear(err, "cost", "coordinate", *values), repr(err)
        return
    for name, v in cost.values.items():
        assert isinstance(v, (int, float, Fraction)) and not isinstance(v, bool) and v >= 0 and not math.isnan(v)


@known("measurement")
@SETTINGS
@given(successes=NUMBERS, trials=NUMBERS)
def test_a_measurement_is_refused_by_name_or_counts_successes_among_trials(successes, trials):
    from ftipbook.claims import Measurement
    try:
        m = Measurement(successes, trials, "B", "exact", "greedy")
    except Exception as err:  # noqa: BLE001
        assert clear(err, "successes", "trials"), repr(err)
        return
    assert isinstance(m.successes, (int, np.integer)) and not isinstance(m.successes, bool)
    assert isinstance(m.trials, (int, np.integer)) and not isinstance(m.trials, bool)
    assert 0 <= m.successes <= m.trials and m.trials >= 1


@known("confidence_rule")
@SETTINGS
@given(level=NUMBERS)
def test_a_confidence_rule_accepts_every_real_level_in_0_1_and_refuses_the_rest_by_name(level):
    from ftipbook.claims import ConfidenceRule
    try:
        rule = ConfidenceRule(level=level)
    except Exception as err:  # noqa: BLE001
        assert not (is_real(level) and 0 < level < 1), f"a valid level was refused: {level!r}: {err!r}"
        assert clear(err, "level"), repr(err)
        return
    assert is_real(level) and 0 < level < 1 and float(rule.level) == float(level)


@known("clopper_pearson")
@SETTINGS
@given(k=NUMBERS, n=st.one_of(NUMBERS, st.integers(1, 2000)), level=NUMBERS)
def test_clopper_pearson_is_refused_by_name_or_an_interval_around_the_estimate(k, n, level):
    from ftipbook.eval.stats import clopper_pearson
    if isinstance(n, int) and n > 10**4:
        return  # bounded work is checked by tests/test_surface.py
    try:
        interval = clopper_pearson(k, n, level)
    except Exception as err:  # noqa: BLE001
        assert not (type(k) is int and type(n) is int and 0 <= k <= n and n >= 1 and is_real(level)
                    and 0 < level < 1 and not isinstance(level, str)) or isinstance(level, (np.floating, Fraction)), \
            f"valid arguments refused: {err!r}"
        assert clear(err, "k", "n", "level"), repr(err)
        return
    assert 0 <= interval.low <= k / n <= interval.high <= 1
