"""Measured contrasts and conditional predictions (ftip-00LE, 00LC, 00L3)."""
import math

import numpy as np
import pytest

from ftipbook.compare.reports import (
    ConditionalPrediction,
    MeanTest,
    MeasuredContrast,
    ModelInput,
    ProportionTest,
    direction_summary,
    format_table,
)
from ftipbook.eval.metrics import discovery_probability
from ftipbook.eval.stats import BootstrapProcedure, paired_bootstrap


def contrast(a, b, quantity="score", **kw):
    return MeasuredContrast(quantity, "points", "kimi", "mla", a, b, "Table 4 protocol", **kw)


def test_differences_are_exact_in_decimal_and_directions_follow_the_sign():
    c = contrast(67.4, 65.7)
    assert c.difference == 1.7 and c.favours == "kimi"
    assert contrast(45.2, 45.7).difference == -0.5 and contrast(45.2, 45.7).favours == "mla"
    assert contrast(1.0, 1.0).favours is None
    # lower is better: a smaller value favours system a
    assert contrast(1.84, 11.48, higher_is_better=False).favours == "kimi"


def test_direction_summary():
    assert direction_summary([contrast(67.4, 65.7), contrast(45.2, 45.7), contrast(61.0, 62.6)]) == "mixed: task-dependent"
    assert direction_summary([contrast(2, 1), contrast(3, 1)]) == "kimi on all"
    assert direction_summary([contrast(1, 1)]) == "ties on all"
    other = MeasuredContrast("x", "u", "kimi", "mha", 1, 2, "p")
    with pytest.raises(ValueError, match="same two systems"):
        direction_summary([contrast(1, 2), other])
    with pytest.raises(ValueError):
        direction_summary([])


def test_contrast_is_confirmatory_only_with_a_predeclared_procedure():
    assert not contrast(1, 2).confirmatory
    proc = BootstrapProcedure(seed=1)
    a, b = [1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]
    c = contrast(np.mean(a), np.mean(b), uncertainty=proc.apply(a, b), procedure_fingerprint=proc.fingerprint())
    assert c.confirmatory and c.uncertainty == paired_bootstrap(a, b, seed=1)


@pytest.mark.parametrize("kw, err", [(dict(value_a=math.nan), ValueError), (dict(value_a="67.4"), TypeError),
                                     (dict(system_b="kimi"), ValueError), (dict(uncertainty=0.5), TypeError),
                                     (dict(protocol=""), ValueError)])
def test_contrast_validation(kw, err):
    args = dict(quantity="q", unit="u", system_a="kimi", system_b="mla", value_a=1.0, value_b=2.0, protocol="p") | kw
    with pytest.raises(err):
        MeasuredContrast(**args)


# ---- conditional prediction --------------------------------------------------------------------
INPUTS = [ModelInput("p", 0.08, "assumed", "illustrative (ftip-00L3)"), ModelInput("n", 17, "measured", "budget / cost")]


def predicted():
    return ConditionalPrediction.derive("hybrid discovery", "1 - (1 - p)^n, independent attempts",
                                        lambda p, n: discovery_probability(p, int(n)), INPUTS)


def test_prediction_is_derived_from_its_inputs_and_lists_the_assumptions():
    pred = predicted()
    assert round(pred.value, 3) == 0.758
    assert pred.unmeasured == ("p",)
    assert pred.input_values() == {"p": 0.08, "n": 17.0}


def test_prediction_validation():
    with pytest.raises(ValueError, match="status"):
        ModelInput("p", 0.1, "guessed", "x")
    with pytest.raises(ValueError, match="source"):
        ModelInput("p", 0.1, "assumed", "")
    with pytest.raises(ValueError, match="distinct"):
        ConditionalPrediction.derive("q", "m", lambda p: p, [INPUTS[0], INPUTS[0]])
    with pytest.raises(ValueError, match="finite"):
        ConditionalPrediction.derive("q", "m", lambda p, n: math.inf, INPUTS)


def test_matched_measurement_agrees_when_the_model_holds_and_not_when_attempts_are_correlated():
    rng = np.random.default_rng(0)
    pred, test = predicted(), ProportionTest(0.95)
    budgets = 2000
    independent = int((rng.random((budgets, 17)) < 0.08).any(axis=1).sum())
    check = pred.check(test, (independent, budgets))
    assert check.agrees and abs(check.observed - pred.value) < 0.03
    # same marginal success rate 0.08, but all 17 attempts on a problem share its difficulty
    theta = rng.beta(0.08 * 4, 0.92 * 4, size=budgets)
    correlated = int((rng.random((budgets, 17)) < theta[:, None]).any(axis=1).sum())
    bad = pred.check(test, (correlated, budgets))
    assert not bad.agrees and bad.observed < bad.interval.high < pred.value


def test_mean_test():
    pred = ConditionalPrediction.derive("mean", "m", lambda mu: mu, [ModelInput("mu", 1.0, "assumed", "x")])
    rng = np.random.default_rng(1)
    assert pred.check(MeanTest(seed=0), rng.normal(1.0, 0.1, 200)).agrees
    assert not pred.check(MeanTest(seed=0), rng.normal(1.2, 0.1, 200)).agrees


def test_format_table():
    out = format_table(["a", "bb"], [[1.23456, "x"], [2, "yy"]], digits=2)
    assert out.splitlines() == ["   a  bb", "----  --", "1.23   x", "   2  yy"]
    with pytest.raises(ValueError):
        format_table(["a"], [[1, 2]])


def test_tolerance_test():
    from ftipbook.compare.reports import ToleranceTest

    pred = ConditionalPrediction.derive("share", "m", lambda f: f, [ModelInput("f", 0.8, "assumed", "x")])
    assert pred.check(ToleranceTest(abs_tol=0.05), 0.78).agrees
    assert not pred.check(ToleranceTest(abs_tol=0.05), 0.2).agrees
    assert pred.check(ToleranceTest(rel_tol=0.1), 0.75).agrees  # band 0.75 +- 0.075
    with pytest.raises(ValueError):
        ToleranceTest()
    with pytest.raises(ValueError):
        ToleranceTest(abs_tol=-1.0)
