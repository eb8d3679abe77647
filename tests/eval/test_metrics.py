"""Discovery probability, pass@k (population and unbiased), best-of-k, majority vote."""
import itertools
import math
import random
from fractions import Fraction

import pytest

from ftipbook.eval.metrics import best_of_k, discovery_probability, majority_vote, pass_at_k, pass_at_k_unbiased


def test_discovery_reproduces_the_note_values_of_ftip_00l3():
    assert round(discovery_probability(0.10, 10), 3) == 0.651
    assert round(discovery_probability(0.08, 17), 3) == 0.758
    assert discovery_probability(Fraction(1, 10), 10) == 1 - Fraction(9, 10) ** 10  # exact with Fractions


def test_discovery_matches_exhaustive_enumeration():
    # enumerate every success/failure pattern of n independent attempts and add up the probabilities
    for p in (Fraction(1, 3), Fraction(3, 10)):
        for n in range(0, 6):
            at_least_one = sum(
                math.prod((p if s else 1 - p) for s in pattern) for pattern in itertools.product([0, 1], repeat=n) if any(pattern)
            )
            assert discovery_probability(p, n) == at_least_one


def test_discovery_heterogeneous_and_edge_cases():
    assert discovery_probability([0.5, 0.5]) == pytest.approx(0.75)
    assert discovery_probability([Fraction(1, 2), Fraction(1, 3)]) == Fraction(2, 3)
    assert discovery_probability([0.2, 1.0]) == 1.0
    assert discovery_probability(0.3, 0) == 0.0
    assert discovery_probability(1.0, 3) == 1.0
    # accurate for tiny p, where 1 - (1 - p)**n loses every digit
    assert discovery_probability(1e-18, 10) == pytest.approx(1e-17, rel=1e-12)


@pytest.mark.parametrize("p", [0.0, -0.0, [0.0], [0.0, 0.0], [-0.0, 0.0]])
@pytest.mark.parametrize("n", [0, 1, 5])
def test_discovery_with_zero_success_is_positive_zero(p, n):
    """No success probability gives discovery +0.0, never -0.0 (which prints as '-0.0')."""
    d = discovery_probability(p, n) if not isinstance(p, list) else discovery_probability(p * n)
    assert d == 0 and math.copysign(1.0, d) == 1.0


@pytest.mark.parametrize("args, err", [((1.2, 3), ValueError), ((math.nan, 3), ValueError), ((0.5, -1), ValueError),
                                       ((0.5, 2.0), ValueError), (("0.5", 2), TypeError), ((0.5, None), ValueError),
                                       (([0.5, 0.5], 3), ValueError)])
def test_discovery_refuses_bad_input(args, err):
    with pytest.raises(err):
        discovery_probability(*args)


def test_pass_at_k_population_is_the_item_mean():
    assert pass_at_k([Fraction(1, 2), Fraction(0)], 2) == Fraction(3, 8)
    assert pass_at_k(0.1, 10) == pytest.approx(discovery_probability(0.1, 10))
    with pytest.raises(ValueError):
        pass_at_k([0.5], 0)
    with pytest.raises(ValueError):
        pass_at_k([], 1)


def test_unbiased_estimator_has_the_right_expectation_exactly():
    # E_{c ~ Binomial(n, p)} [1 - C(n-c, k)/C(n, k)] = 1 - (1-p)^k, checked with exact fractions
    for n, k, p in [(5, 1, Fraction(1, 3)), (6, 3, Fraction(2, 7)), (10, 4, Fraction(1, 10))]:
        expectation = sum(
            math.comb(n, c) * p**c * (1 - p) ** (n - c) * (1 - Fraction(math.comb(n - c, k), math.comb(n, k)))
            for c in range(n + 1)
        )
        assert expectation == 1 - (1 - p) ** k
        assert pass_at_k_unbiased(n, list(range(n + 1)), k) == pytest.approx(
            float(sum(1 - Fraction(math.comb(n - c, k), math.comb(n, k)) for c in range(n + 1)) / (n + 1)))


def test_unbiased_estimator_edge_cases():
    assert pass_at_k_unbiased(10, 0, 3) == 0.0
    assert pass_at_k_unbiased(10, 8, 3) == 1.0  # fewer than k failures: every k-subset has a pass
    assert pass_at_k_unbiased(10, 3, 1) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="exceeds"):
        pass_at_k_unbiased(3, 1, 4)
    with pytest.raises(ValueError):
        pass_at_k_unbiased(3, 4, 1)


def test_best_of_k_equals_the_mean_max_over_all_subsets():
    rng = random.Random(1)
    for _ in range(30):
        scores = [rng.uniform(0, 1) for _ in range(rng.randint(1, 7))]
        for k in range(1, len(scores) + 1):
            brute = sum(max(s) for s in itertools.combinations(scores, k)) / math.comb(len(scores), k)
            assert best_of_k(scores, k) == pytest.approx(brute, abs=1e-12)
    assert best_of_k([0.2, 0.9, 0.4], 1) == pytest.approx(0.5)
    assert best_of_k([0.2, 0.9, 0.4], 3) == 0.9


def test_best_of_k_on_binary_scores_is_unbiased_pass_at_k_and_averages_items():
    for c in range(6):
        scores = [1.0] * c + [0.0] * (5 - c)
        assert best_of_k(scores, 2) == pytest.approx(pass_at_k_unbiased(5, c, 2))
    assert best_of_k([[0.0, 1.0], [1.0, 1.0]], 1) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        best_of_k([0.1, 0.2], 3)
    with pytest.raises(ValueError):
        best_of_k([0.1, math.inf], 1)


def test_majority_vote_and_its_tie_rule():
    assert majority_vote(["7", "8", "7"]) == "7"
    assert majority_vote(["b", "a", "a", "b"]) == "b"  # tie: the answer that appeared first
    assert majority_vote([3]) == 3
    with pytest.raises(ValueError):
        majority_vote([])
