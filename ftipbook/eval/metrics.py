"""Success over repeated attempts: discovery probability, pass@k, best-of-k and majority vote.

Used by the attempt-throughput example (ftip-00L3, discovery ``1 - (1 - p)^N`` under independent
attempts), by Remark ftip-00L2 (best-of-k decoding as an added intervention), and by the
evaluation chapters. Two kinds of quantity are kept apart:

* *population values* computed from declared success probabilities
  (:func:`discovery_probability`, :func:`pass_at_k`); with :class:`fractions.Fraction` inputs the
  result is exact;
* *estimates* from observed samples (:func:`pass_at_k_unbiased`, :func:`best_of_k`,
  :func:`majority_vote`), computed by exact counting over subsets, not by resampling.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from fractions import Fraction
from numbers import Real

from numpy import bool_ as np_bool

from ftipbook import checks

Probability = float | Fraction
#: The most samples per item (``n``) and attempts (``k``) the estimators count over.
MAX_COUNT = 10**7


def _probability(name: str, p: object) -> Probability:
    p = checks.probability(name, p)
    return p if isinstance(p, Fraction) else float(p)


def _count(name: str, n: object, low: int = 0) -> int:
    return checks.integer(name, n, low, MAX_COUNT)


def discovery_probability(p: Probability | Sequence[Probability], n: int | None = None) -> Probability:
    """Probability that at least one of independent attempts succeeds (ftip-00L3, ftip-0004).

    ``discovery_probability(p, n) = 1 - (1 - p)^n`` for ``n >= 0`` attempts of success probability
    ``p``; ``discovery_probability([p_1, ..., p_n]) = 1 - prod_i (1 - p_i)`` for attempts with
    different probabilities. Independence is an assumption of this formula, not something it
    checks: correlated attempts can have a lower discovery probability at the same marginal ``p``.
    Fractions in, Fraction out (exact); floats use ``-expm1(n log1p(-p))`` for accuracy at tiny ``p``
    (and never return ``-0.0``).
    """
    if isinstance(p, str) or (not checks.is_real(p) and not isinstance(p, Sequence)):
        raise TypeError(f"p must be a probability or a sequence of probabilities, got {checks.show(p)}")
    if isinstance(p, Sequence):
        if n is not None and n != len(p):
            raise ValueError(f"got {len(p)} probabilities but n={n}; pass one or the other")
        probs = [_probability(f"p[{i}]", x) for i, x in enumerate(p)]
        if all(isinstance(x, Fraction) for x in probs):
            return 1 - math.prod((1 - x for x in probs), start=Fraction(1))
        return 0.0 - math.expm1(math.fsum(math.log1p(-float(x)) if x < 1 else -math.inf for x in probs))
    if n is None:
        raise ValueError("give the number of attempts n (or a sequence of per-attempt probabilities)")
    p = _probability("p", p)
    n = _count("n", n)
    if isinstance(p, Fraction):
        return 1 - (1 - p) ** n
    if p == 1:
        return 1.0 if n > 0 else 0.0
    return 0.0 - math.expm1(n * math.log1p(-p))  # 0.0 - x: no -0.0 when p = 0


def pass_at_k(item_probs: Probability | Sequence[Probability], k: int) -> Probability:
    """Population pass@k: the mean over items of ``1 - (1 - p_i)^k``, with ``p_i`` the per-item success
    probability of one attempt and the ``k`` attempts independent (ftip-0004)."""
    k = _count("k", k, 1)
    probs = [item_probs] if isinstance(item_probs, Real) else checks.items("item_probs", item_probs)
    if not probs:
        raise ValueError("item_probs is empty: pass_at_k needs at least one item probability")
    values = [discovery_probability(_probability(f"item_probs[{i}]", p), k) for i, p in enumerate(probs)]
    return sum(values, start=Fraction(0)) / len(values) if all(isinstance(v, Fraction) for v in values) \
        else math.fsum(values) / len(values)


def _unbiased_one(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def pass_at_k_unbiased(n: int, c: int | Sequence[int], k: int) -> float:
    """Unbiased pass@k estimate from ``n`` samples per item of which ``c`` passed: ``1 - C(n-c, k) / C(n, k)``.

    This is the probability that a uniformly random ``k``-subset of the ``n`` samples contains a
    passing one (the estimator of Chen et al., 2021); its expectation under ``c ~ Binomial(n, p)``
    is exactly ``1 - (1 - p)^k``. ``c`` may be a sequence (one count per item): the result is the
    mean over items. Computed with exact integers, returned as a float.
    """
    n = _count("n", n, 1)
    k = _count("k", k, 1)
    if k > n:
        raise ValueError(f"k={k} exceeds the n={n} samples per item")
    counts = [c] if checks.is_real(c) or isinstance(c, np_bool) else checks.items("c", c, what="counts")
    if not counts:
        raise ValueError("pass_at_k_unbiased needs at least one item count c")
    counts = [checks.integer(f"c[{i}]", ci, 0, n) for i, ci in enumerate(counts)]
    return float(sum((_unbiased_one(n, ci, k) for ci in counts), start=Fraction(0)) / len(counts))


def best_of_k(scores: Sequence[float] | Sequence[Sequence[float]], k: int) -> float:
    """Expected best score of ``k`` attempts drawn without replacement from the observed ones (ftip-00L2).

    For one item with ``n`` observed scores sorted ``s_(1) <= ... <= s_(n)``, the maximum of a
    uniformly random ``k``-subset has expectation ``sum_i s_(i) C(i-1, k-1) / C(n, k)``; with 0/1
    scores this is :func:`pass_at_k_unbiased`. A sequence of per-item score lists gives the mean
    over items. ``k = 1`` is the mean score, ``k = n`` the observed maximum.
    """
    k = _count("k", k, 1)
    scores = checks.items("scores", scores, nonempty=True, limit=MAX_COUNT)
    items = [scores] if checks.is_real(scores[0]) else scores
    means = []
    for j, item in enumerate(items):
        item = checks.items(f"scores[{j}]", item, nonempty=True, limit=MAX_COUNT)
        values = sorted(float(checks.real(f"scores[{j}][{i}]", s)) for i, s in enumerate(item))
        n = len(values)
        if k > n:
            raise ValueError(f"k={k} exceeds the {n} scores observed for item {j}")
        total = math.comb(n, k)
        means.append(math.fsum(v * math.comb(i, k - 1) / total for i, v in enumerate(values)))
    return math.fsum(means) / len(means)


def majority_vote(answers: Sequence[Hashable]) -> Hashable:
    """The most frequent answer; a tie goes to the tied answer that appeared first (a declared rule)."""
    answers = checks.items("answers", answers, nonempty=True, what="answers")
    for i, a in enumerate(answers):
        checks.hashable(f"answers[{i}]", a)
    counts = Counter(answers)
    top = max(counts.values())
    return next(a for a in answers if counts[a] == top)
