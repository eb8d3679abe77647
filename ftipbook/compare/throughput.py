"""Attempt throughput under a budget: the cost model of ftip-00L3, 00LD and 00LF.

One baseline attempt costs ``c > 0``, of which a share ``f`` in ``[0, 1]`` is generation. If
generation becomes ``s > 0`` times as fast and nothing else changes, an attempt costs

    c_K = c (1 - f + f / s),        S = c / c_K = 1 / (1 - f + f / s)

(:func:`attempt_cost`, :func:`throughput_factor`). A budget ``B >= 0`` buys ``floor(B / c)``
baseline and ``floor(B / c_K)`` hybrid attempts (:func:`attempts_under_budget`). With
independent verified successes of probability ``p``, ``N`` attempts find at least one with
probability ``1 - (1 - p)^N`` (:func:`ftipbook.eval.metrics.discovery_probability`, re-exported
here), and the hybrid matches the baseline
exactly when ``p_K >= 1 - (1 - p_M)^(N_M / N_K)`` (:func:`break_even_success`).
:func:`compare_attempts` bundles the whole example; :func:`sensitivity_range` maps an interval of
``s`` to an interval of ``S`` (ftip-00LD); :func:`discovery_probability_correlated` drops the
independence assumption (exchangeable beta-binomial attempts).

Inputs are validated; where the note's assumptions fail (``N_M = 0`` or ``N_K = 0``) the result
is an explicit :class:`~ftipbook.compare.frontier.Undefined` carrying the reason. Attempt counts
are floors of exact rationals: inputs are read as the decimals they print as, so a budget of
``0.3`` buys 3 attempts of cost ``0.1`` (floating-point division would give 2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ftipbook.compare.frontier import Undefined
from ftipbook.eval.metrics import discovery_probability  # 1 - (1 - p)^N, written once (ftip-0004, 00L3)


def _real(name: str, x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, Fraction)):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    if not math.isfinite(x):
        raise ValueError(f"{name}={x!r} must be finite")
    return x  # type: ignore[return-value]


def _share(name: str, x: object) -> float:
    x = _real(name, x)
    if not 0 <= x <= 1:
        raise ValueError(f"{name}={x!r} must lie in [0, 1]")
    return x


def _positive(name: str, x: object) -> float:
    x = _real(name, x)
    if not x > 0:
        raise ValueError(f"{name}={x!r} must be > 0")
    return x


def _count(name: str, n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"{name}={n!r} must be an int >= 0")
    return n


def _exact(x: float | Fraction) -> Fraction:
    """``x`` as the decimal it prints as (floats), or itself (ints, Fractions)."""
    return Fraction(repr(float(x))) if isinstance(x, float) else Fraction(x)


def _cost_ratio_exact(f: float, s: float) -> Fraction:
    f_q = _exact(_share("f", f))
    return 1 - f_q + f_q / _exact(_positive("s", s))


def cost_ratio(f: float, s: float) -> float:
    """``c_K / c = 1 - f + f / s``: the hybrid's cost per attempt relative to the baseline's (ftip-00L3)."""
    return float(_cost_ratio_exact(f, s))


def attempt_cost(c: float, f: float, s: float) -> float:
    """``c_K = c (1 - f + f / s)`` for baseline cost ``c > 0``, generation share ``f``, speed factor ``s`` (ftip-00L3)."""
    return float(_exact(_positive("c", c)) * _cost_ratio_exact(f, s))


def throughput_factor(f: float, s: float) -> float:
    """``S = 1 / (1 - f + f / s)``: attempts per unit cost, hybrid over baseline (ftip-00L3, 00LF).

    Equal to 1 at ``f = 0`` (nothing sped up) and to ``s`` at ``f = 1`` (everything is generation).
    """
    return float(1 / _cost_ratio_exact(f, s))


def _floor_div(budget: Fraction, cost: Fraction) -> int:
    return math.floor(budget / cost)


def attempts_under_budget(budget: float, cost: float) -> int:
    """``floor(B / cost)``: whole attempts a budget ``B >= 0`` pays for at ``cost > 0`` each (ftip-00L3)."""
    budget = _real("budget", budget)
    if budget < 0:
        raise ValueError(f"budget={budget!r} must be >= 0")
    return _floor_div(_exact(budget), _exact(_positive("cost", cost)))


def discovery_probability_correlated(p: float, n: int, rho: float) -> float:
    """Discovery probability of ``n`` exchangeable attempts with marginal ``p`` and correlation ``rho``.

    The success indicators are beta-binomial: given ``theta ~ Beta(a, b)`` with ``a = p (1 - rho) / rho``
    and ``b = (1 - p)(1 - rho) / rho`` they are independent with probability ``theta``, so each has
    probability ``p`` and any two have correlation ``rho``. Then
    ``P(no success) = E[(1 - theta)^n] = prod_{k<n} (b + k) / (a + b + k)``. ``rho = 0`` is the
    independent case; ``rho = 1`` (all attempts share one outcome) gives ``p`` for every ``n >= 1``.
    For ``0 < p < 1``, ``n >= 2`` and ``rho > 0`` the result is below :func:`~ftipbook.eval.metrics.discovery_probability`:
    correlation wastes attempts (the counterexample of ftip-00L3 to dropping independence).
    """
    p, n, rho = _share("p", p), _count("n", n), _share("rho", rho)
    if n == 0:
        return 0.0
    if rho == 0 or p in (0, 1):
        return discovery_probability(p, n)
    if rho == 1:
        return float(p)
    a, b = p * (1 - rho) / rho, (1 - p) * (1 - rho) / rho
    return 1 - math.prod((b + k) / (a + b + k) for k in range(n))


def break_even_success(p_m: float, n_m: int, n_k: int) -> float | Undefined:
    """``p_K* = 1 - (1 - p_M)^(N_M / N_K)``, the least hybrid success rate matching baseline discovery.

    ``discovery(p_K, N_K) >= discovery(p_M, N_M)`` exactly when ``p_K >= p_K*`` (compare the failure
    probabilities and take the ``N_K``-th root, ftip-00L3). Undefined unless ``N_M, N_K >= 1``,
    the note's assumption.
    """
    p_m, n_m, n_k = _share("p_m", p_m), _count("n_m", n_m), _count("n_k", n_k)
    if n_m == 0 or n_k == 0:
        return Undefined(f"break-even needs N_M >= 1 and N_K >= 1 attempts, got N_M={n_m}, N_K={n_k}")
    return 1 - (1 - float(p_m)) ** (n_m / n_k)


@dataclass(frozen=True)
class AttemptComparison:
    """The baseline (M) and hybrid (K) under one budget, as in Example ftip-00L3.

    ``hybrid_at_least_as_good`` compares the two discovery probabilities; it and ``break_even``
    are :class:`~ftipbook.compare.frontier.Undefined` when either arm affords no attempt.
    """

    budget: float
    c: float
    f: float
    s: float
    p_m: float
    p_k: float
    cost_ratio: float
    throughput: float
    n_m: int
    n_k: int
    discovery_m: float
    discovery_k: float
    break_even: float | Undefined
    hybrid_at_least_as_good: bool | Undefined


def compare_attempts(*, f: float, s: float, p_m: float, p_k: float, budget: float, c: float = 1.0) -> AttemptComparison:
    """Attempts, discovery probabilities and break-even for budget ``B`` (ftip-00L3).

    The note's example: ``f = 0.8, s = 2.2, B = 10 c, p_M = 0.10, p_K = 0.08`` gives
    ``S = 1.774``, 10 vs 17 attempts, discovery 0.651 vs 0.758 and break-even 0.0601.
    """
    budget = _real("budget", budget)
    if budget < 0:
        raise ValueError(f"budget={budget!r} must be >= 0")
    ratio = _cost_ratio_exact(f, s)
    c_q = _exact(_positive("c", c))
    p_m, p_k = _share("p_m", p_m), _share("p_k", p_k)
    n_m, n_k = _floor_div(_exact(budget), c_q), _floor_div(_exact(budget), c_q * ratio)
    d_m, d_k = discovery_probability(p_m, n_m), discovery_probability(p_k, n_k)
    even = break_even_success(p_m, n_m, n_k)
    verdict: bool | Undefined = even if isinstance(even, Undefined) else d_k >= d_m
    return AttemptComparison(budget, c, f, s, p_m, p_k, float(ratio), float(1 / ratio), n_m, n_k, d_m, d_k, even, verdict)


@dataclass(frozen=True)
class SensitivityRange:
    """``S`` over ``s`` in ``[s_lo, s_hi]`` at fixed ``f``: ``[S(s_lo), S(s_hi)]`` (ftip-00LD).

    A range under a chosen assumption interval, not a confidence interval.
    """

    f: float
    s_lo: float
    s_hi: float
    lo: float
    hi: float

    def __contains__(self, x: float) -> bool:
        return self.lo <= x <= self.hi


def sensitivity_range(f: float, s_lo: float, s_hi: float) -> SensitivityRange:
    """Image of ``[s_lo, s_hi]`` (``0 < s_lo <= s_hi``) under ``S(s) = 1 / (1 - f + f / s)`` (ftip-00LD).

    ``S`` is nondecreasing in ``s`` (``dS/ds = f / (s^2 (1 - f + f/s)^2) >= 0``), so the end points
    map to the end points. The note's figure and prose speedups, ``s`` in ``[2.2, 2.3]`` at
    ``f = 0.8``, give ``[1.7742, 1.8254]``.
    """
    _share("f", f)
    s_lo, s_hi = _positive("s_lo", s_lo), _positive("s_hi", s_hi)
    if s_lo > s_hi:
        raise ValueError(f"need s_lo <= s_hi, got s_lo={s_lo!r} > s_hi={s_hi!r}")
    return SensitivityRange(f, s_lo, s_hi, throughput_factor(f, s_lo), throughput_factor(f, s_hi))


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
