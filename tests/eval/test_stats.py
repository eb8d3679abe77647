"""Repeated measurements, paired/unpaired bootstrap, Clopper-Pearson (ftip-00LA, ftip-00LB)."""
import math
from fractions import Fraction

import numpy as np
import pytest

from ftipbook.eval.stats import (
    BootstrapProcedure,
    Interval,
    RepeatedMeasurement,
    binomial_cdf,
    bootstrap_mean_ci,
    clopper_pearson,
    paired_bootstrap,
    unpaired_bootstrap,
)


# ---- repeated measurement ---------------------------------------------------------------------
def test_rule_runs_warmups_then_records_reps_with_their_seeds():
    calls = []
    rule = RepeatedMeasurement(warmup=2, reps=3, seeds=(10, 11, 12), unit="score")
    m = rule.run(lambda s: calls.append(s) or float(s))
    assert calls == [10, 10, 10, 11, 12]  # two warm-ups (first seed), then one call per seed
    assert m.values == (10.0, 11.0, 12.0)
    assert (m.mean, m.median, m.min, m.max) == (11.0, 11.0, 10.0, 12.0)
    assert m.std == pytest.approx(1.0)
    assert m.summary()["unit"] == "score"


def test_aggregation_is_mean_or_median_never_min():
    with pytest.raises(ValueError, match="single fastest run"):
        RepeatedMeasurement(warmup=0, reps=3, aggregation="min")
    m = RepeatedMeasurement(0, 3, aggregation="median").record([1.0, 2.0, 9.0])
    assert m.aggregate == 2.0
    assert RepeatedMeasurement(0, 3).record([1.0, 2.0, 9.0]).aggregate == 4.0


@pytest.mark.parametrize("kw", [dict(warmup=-1, reps=3), dict(warmup=0, reps=1), dict(warmup=0, reps=3, seeds=(1, 2)),
                                dict(warmup=0, reps=2, aggregation="mode"), dict(warmup=0.5, reps=3)])
def test_rule_validation(kw):
    with pytest.raises(ValueError):
        RepeatedMeasurement(**kw)


def test_record_refuses_wrong_count_and_nan():
    rule = RepeatedMeasurement(0, 3)
    with pytest.raises(ValueError, match="reps=3"):
        rule.record([1.0, 2.0])
    with pytest.raises(ValueError, match="non-finite"):
        rule.record([1.0, math.nan, 2.0])


def test_time_measures_wall_seconds():
    import time

    m = RepeatedMeasurement(warmup=1, reps=3).time(lambda: time.sleep(0.01))
    assert len(m.values) == 3 and all(v >= 0.009 for v in m.values)
    with pytest.raises(ValueError, match="seconds"):
        RepeatedMeasurement(0, 2, unit="byte").time(lambda: None)


# ---- bootstrap --------------------------------------------------------------------------------
def test_bootstrap_is_deterministic_given_its_seed():
    x = np.random.default_rng(0).normal(size=40)
    assert bootstrap_mean_ci(x, seed=3) == bootstrap_mean_ci(x, seed=3)
    assert bootstrap_mean_ci(x, seed=3) != bootstrap_mean_ci(x, seed=4)


def test_mean_ci_coverage_is_near_nominal():
    rng = np.random.default_rng(1)
    hits = sum(bootstrap_mean_ci(rng.exponential(size=80) + 1.0, n_boot=500, seed=i).contains(2.0) for i in range(400))
    assert 0.90 <= hits / 400 <= 0.98, hits / 400


def test_paired_coverage_on_correlated_bernoulli_pairs_is_near_95_percent():
    # items have a latent difficulty shared by both systems; true mean difference 0.1
    rng = np.random.default_rng(2)
    hits = 0
    for rep in range(400):
        difficulty = rng.uniform(0.2, 0.8, size=120)
        u = rng.uniform(size=120)  # one shared uniform per item makes the two scores correlated
        a = (u < difficulty + 0.1).astype(float)
        b = (u < difficulty).astype(float)
        hits += paired_bootstrap(a, b, n_boot=500, seed=rep).interval.contains(0.1)
    assert 0.91 <= hits / 400 <= 0.98, hits / 400


def test_paired_interval_is_narrower_than_unpaired_under_item_correlation():
    rng = np.random.default_rng(3)
    difficulty = rng.normal(size=200)
    a = difficulty + 0.2 + 0.1 * rng.normal(size=200)
    b = difficulty + 0.1 * rng.normal(size=200)
    paired, unpaired = paired_bootstrap(a, b, seed=0), unpaired_bootstrap(a, b, seed=0)
    assert paired.estimate == pytest.approx(unpaired.estimate)  # same point estimate
    assert paired.interval.width < 0.3 * unpaired.interval.width
    assert not paired.interval.contains(0.0) and unpaired.interval.contains(0.0)  # only pairing resolves the 0.2 gap


def test_bootstrap_validation():
    with pytest.raises(ValueError, match="same items"):
        paired_bootstrap([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="level"):
        paired_bootstrap([1.0, 2.0], [1.0, 2.0], level=1.5)
    with pytest.raises(ValueError, match="n_boot"):
        unpaired_bootstrap([1.0, 2.0], [1.0, 2.0], n_boot=10)
    with pytest.raises(ValueError, match="non-finite"):
        bootstrap_mean_ci([1.0, math.inf])


def test_procedure_is_frozen_hashed_and_reproducible():
    proc = BootstrapProcedure(paired=True, n_boot=1000, level=0.9, seed=7)
    same = BootstrapProcedure(paired=True, n_boot=1000, level=0.9, seed=7)
    assert proc.fingerprint() == same.fingerprint() and len(proc.fingerprint()) == 64
    assert proc.fingerprint() != BootstrapProcedure(paired=False, n_boot=1000, level=0.9, seed=7).fingerprint()
    with pytest.raises(Exception):
        proc.seed = 8  # frozen
    a, b = [1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0]
    assert proc.apply(a, b) == paired_bootstrap(a, b, n_boot=1000, level=0.9, seed=7)


# ---- Clopper-Pearson --------------------------------------------------------------------------
def exact_tail_le(k, n, p):
    p = Fraction(p)
    return float(sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k + 1)))


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (7, 40), (25, 60)])
def test_clopper_pearson_ends_solve_the_exact_binomial_tails(k, n):
    ci = clopper_pearson(k, n, 0.95)
    if k > 0:
        assert 1 - exact_tail_le(k - 1, n, ci.low) == pytest.approx(0.025, abs=1e-9)
    else:
        assert ci.low == 0.0
    if k < n:
        assert exact_tail_le(k, n, ci.high) == pytest.approx(0.025, abs=1e-9)
    else:
        assert ci.high == 1.0


def test_clopper_pearson_closed_forms_at_the_edges():
    n = 1000
    assert clopper_pearson(0, n).high == pytest.approx(1 - 0.025 ** (1 / n), rel=1e-9)
    assert clopper_pearson(n, n).low == pytest.approx(0.025 ** (1 / n), rel=1e-9)
    # one-sided 95% upper bound after 0 successes in 1000 trials ("rule of three" neighbourhood)
    upper = clopper_pearson(0, n, side="upper")
    assert (upper.low, round(upper.high, 6)) == (0.0, round(1 - 0.05 ** (1 / n), 6))


def test_clopper_pearson_coverage_is_at_least_nominal():
    n = 30
    for p in (0.03, 0.2, 0.5, 0.77):
        intervals = [clopper_pearson(k, n) for k in range(n + 1)]
        coverage = sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1) if intervals[k].contains(p))
        assert coverage >= 0.95 - 1e-12


def test_binomial_cdf_against_exact_fractions():
    for k, n, p in [(3, 10, 0.3), (8, 10, 0.3), (50, 120, 0.41)]:
        assert binomial_cdf(k, n, p) == pytest.approx(exact_tail_le(k, n, p), abs=1e-12)


def test_clopper_pearson_validation():
    with pytest.raises(ValueError):
        clopper_pearson(5, 4)
    with pytest.raises(ValueError):
        clopper_pearson(1, 0)
    with pytest.raises(ValueError):
        clopper_pearson(1, 4, side="both")
    assert isinstance(clopper_pearson(1, 4), Interval)
