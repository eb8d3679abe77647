"""Source mixtures and temperature weights (ftip-0016)."""
from collections import Counter
from fractions import Fraction

import pytest

from ftipbook.data.corpus import ArithmeticSource, BenchmarkSource, ModularAdditionSource, ProseSource, TemplateSource
from ftipbook.data.mixture import TOY_WEIGHTS, SourceMixture, temperature_weights, toy_mixture


def test_source_frequencies_follow_alpha_but_bytes_do_not():
    mix = toy_mixture()
    docs = mix.documents(20000, seed=0)
    counts = Counter(d.source for d in docs)
    chi2 = sum((counts[n] - 20000 * float(w)) ** 2 / (20000 * float(w)) for n, w in mix.alpha.items())
    assert chi2 < 18.47  # chi-square, 4 degrees of freedom, p = 0.001
    total_bytes = sum(len(d.text) for d in docs)
    byte_share = {n: sum(len(d.text) for d in docs if d.source == n) / total_bytes for n in mix.names}
    assert byte_share["prose"] > 0.6 > float(mix.alpha["prose"]) and byte_share["add2"] < 0.05 < float(mix.alpha["add2"])
    assert mix.documents(50, seed=3) == mix.documents(50, seed=3)


def test_exact_mixture_law_matches_definition_and_sampling():
    a, m = ArithmeticSource(1), ModularAdditionSource(5)
    mix = SourceMixture((a, m), (Fraction(1, 3), Fraction(2, 3)))
    event = lambda d: d.answer == "3"  # noqa: E731
    assert a.probability(event) == Fraction(2, 81) and m.probability(event) == Fraction(1, 5)
    assert mix.probability(event) == Fraction(1, 3) * Fraction(2, 81) + Fraction(2, 3) * Fraction(1, 5)
    freq = sum(event(d) for d in mix.documents(30000, seed=1)) / 30000
    assert abs(freq - float(mix.probability(event))) < 0.01
    with pytest.raises(TypeError, match="enumerable support"):
        SourceMixture((a, TemplateSource()), (0.5, 0.5)).probability(event)


def test_temperature_weights():
    counts = [100, 10, 1]
    assert temperature_weights(counts, 1) == pytest.approx([100 / 111, 10 / 111, 1 / 111])
    hot = temperature_weights(counts, 1000)
    assert max(hot) - min(hot) < 0.01
    w2 = temperature_weights(counts, 2)
    assert w2 == pytest.approx([x**0.5 / (10 + 10**0.5 + 1) for x in counts])
    mix = SourceMixture.with_temperature((ArithmeticSource(1), ArithmeticSource(2), ProseSource()), counts, 2)
    assert mix.rule == "temperature(tau=2, counts=[100, 10, 1])" and mix.to_dict()["rule"] == mix.rule
    with pytest.raises(ValueError, match="tau"):
        temperature_weights(counts, 0)
    with pytest.raises(ValueError, match="positive"):
        temperature_weights([1, 0], 1)


def test_mixture_validation():
    a = ArithmeticSource(1)
    with pytest.raises(ValueError, match="sum to 1"):
        SourceMixture((a, ArithmeticSource(2)), (Fraction(1, 2), Fraction(1, 3)))
    with pytest.raises(ValueError, match=">= 0"):
        SourceMixture((a, ArithmeticSource(2)), (1.5, -0.5))
    with pytest.raises(ValueError, match="unique"):
        SourceMixture((a, a), (0.5, 0.5))
    with pytest.raises(ValueError, match="weights"):
        SourceMixture((a,), (0.5, 0.5))
    bench = BenchmarkSource.from_source("b", a, 5, seed=0)
    with pytest.raises(ValueError, match="protected evaluation collection"):
        SourceMixture((a, bench), (0.5, 0.5))
    assert sum(TOY_WEIGHTS) == 1 and toy_mixture().to_dict()["weights"][0] == "1/5"


def test_zero_weight_source_is_never_drawn():
    mix = SourceMixture((ArithmeticSource(1), ArithmeticSource(2)), (1.0, 0.0))
    assert {d.source for d in mix.documents(500, seed=0)} == {"add1"}
