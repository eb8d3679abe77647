"""Repeated measurements and uncertainty: the rules of ftip-00LA and ftip-00LB.

* :class:`RepeatedMeasurement` is the declared rule of Definition ftip-00LA (warm-up runs,
  repetition count, seeds, aggregation); applying it gives :class:`Measurements` with mean,
  standard deviation, median, minimum and a bootstrap interval of the mean. The aggregation
  may be the mean or the median, never the minimum: a single fastest run does not define a cost.
* :func:`paired_bootstrap` resamples evaluation items jointly, so the interval of the mean paired
  difference uses the correlation between two systems scored on the same items;
  :func:`unpaired_bootstrap` resamples the two score lists independently, as if the items were
  unrelated. :class:`BootstrapProcedure` freezes the choice (paired or not, resamples, level,
  seed) and hashes it, so it can be fixed before the scores are seen (ftip-00LB).
* :func:`clopper_pearson` is the exact binomial interval for a success count.

All resampling uses NumPy's ``PCG64`` generator seeded explicitly; percentile intervals.
"""
from __future__ import annotations

import hashlib
import json
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import torch

from ftipbook import checks

#: Aggregation rules a repeated measurement may declare (ftip-00LA); ``"min"`` is refused on purpose.
AGGREGATIONS = ("mean", "median")
#: The most warm-up and recorded runs a repeated measurement declares.
MAX_RUNS = 10**6


@dataclass(frozen=True)
class Interval:
    """A confidence interval ``[low, high]`` at ``level``, and how it was computed. ``level`` is in
    ``(0, 1]``: 1 marks a band that holds by declaration, such as a tolerance band."""

    low: float
    high: float
    level: float
    method: str

    def __post_init__(self) -> None:
        low, high = float(checks.real("low", self.low)), float(checks.real("high", self.high))
        if not low <= high:
            raise ValueError(f"an interval needs low <= high, got low={low}, high={high}")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "level", float(checks.real("level", self.level, 0, 1, low_open=True)))
        checks.text("method", self.method)

    @property
    def width(self) -> float:
        return self.high - self.low

    def contains(self, x: float) -> bool:
        return self.low <= checks.real("x", x) <= self.high


#: The most bootstrap resamples and scores a bootstrap takes (``n_boot * len(values)`` draws).
MAX_BOOT, MAX_SCORES = 10**6, 10**7


def _level(level: float) -> float:
    """A confidence level strictly between 0 and 1 (e.g. 0.95, ``np.float32(0.95)``, ``Fraction(19, 20)``)."""
    return checks.level("level", level)


def _scores(name: str, values: Sequence[float], at_least: int = 1) -> np.ndarray:
    values = checks.items(name, values, limit=MAX_SCORES, what="numbers")
    for i, v in enumerate(values):
        checks.real(f"{name}[{i}]", v)
    x = np.asarray([float(v) for v in values], dtype=np.float64)
    if len(x) < at_least:
        raise ValueError(f"{name} must be a sequence of at least {at_least} finite numbers, got {len(x)}")
    return x


def _n_boot(n_boot: int) -> int:
    return checks.integer("n_boot", n_boot, 100, MAX_BOOT)


def _percentile(stats: np.ndarray, level: float, method: str) -> Interval:
    tail = (1 - level) / 2
    low, high = np.quantile(stats, [tail, 1 - tail])
    return Interval(float(low), float(high), level, method)


def bootstrap_mean_ci(values: Sequence[float], *, level: float = 0.95, n_boot: int = 2000, seed: int = 0) -> Interval:
    """Percentile bootstrap interval of the mean of ``values`` (resampling the values with replacement)."""
    x, level, _ = _scores("values", values, 2), _level(level), _n_boot(n_boot)
    rng = np.random.Generator(np.random.PCG64(checks.seed("seed", seed)))
    means = x[rng.integers(0, len(x), size=(_n_boot(n_boot), len(x)))].mean(axis=1)
    return _percentile(means, level, "percentile bootstrap of the mean")


# ----------------------------------------------------------------------------------------------
# repeated measurement (ftip-00LA)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Measurements:
    """The values one :class:`RepeatedMeasurement` produced (warm-up runs excluded), in run order."""

    rule: "RepeatedMeasurement"
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        checks.instance("rule", self.rule, RepeatedMeasurement)
        values = _scores("values", self.values, 2)
        object.__setattr__(self, "values", tuple(float(v) for v in values))

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def std(self) -> float:
        """Sample standard deviation (``n - 1`` in the denominator)."""
        return statistics.stdev(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def min(self) -> float:
        return min(self.values)

    @property
    def max(self) -> float:
        return max(self.values)

    @property
    def aggregate(self) -> float:
        """The value the rule declares as the measurement (its ``aggregation``: mean or median)."""
        return self.mean if self.rule.aggregation == "mean" else self.median

    def bootstrap_ci(self, *, level: float = 0.95, n_boot: int = 2000, seed: int = 0) -> Interval:
        """Percentile bootstrap interval of the mean."""
        return bootstrap_mean_ci(self.values, level=level, n_boot=n_boot, seed=seed)

    def summary(self, digits: int = 6) -> dict[str, float | int | str]:
        """Rounded ``n, mean, std, median, min, max`` and the unit, for a printed table (``0 <= digits <= 17``)."""
        digits = checks.integer("digits", digits, 0, 17)
        return {"n": len(self.values), "mean": round(self.mean, digits), "std": round(self.std, digits),
                "median": round(self.median, digits), "min": round(self.min, digits),
                "max": round(self.max, digits), "unit": self.rule.unit}


@dataclass(frozen=True)
class RepeatedMeasurement:
    """The repeated-measurement rule of ftip-00LA for one fixed workload and system.

    ``warmup`` runs are made and discarded, then ``reps >= 2`` runs are recorded (two at least,
    so that dispersion exists). ``seeds``, when given, has one seed per recorded run and is passed
    to the measured function (warm-up runs use the first seed). ``aggregation`` is ``"mean"`` or
    ``"median"``; ``unit`` names what is measured (``"s"``, ``"byte"``, ``"score"``, ...).
    """

    warmup: int
    reps: int
    seeds: tuple[int, ...] | None = None
    aggregation: str = "mean"
    unit: str = "s"

    def __post_init__(self) -> None:
        object.__setattr__(self, "warmup", checks.integer("warmup", self.warmup, 0, MAX_RUNS))
        if checks.is_int(self.reps) and self.reps < 2:
            raise ValueError(f"reps={self.reps!r} must be an int >= 2: one run has no dispersion")
        object.__setattr__(self, "reps", checks.integer("reps", self.reps, 2, MAX_RUNS))
        checks.text("unit", self.unit)
        if self.aggregation == "min":
            raise ValueError("aggregation='min' is not allowed: a single fastest run cannot define a cost "
                             f"(ftip-00LA); use one of {AGGREGATIONS}")
        checks.choice("aggregation", self.aggregation, AGGREGATIONS)
        if self.seeds is not None:
            seeds = tuple(checks.seed(f"seeds[{i}]", s) for i, s in enumerate(checks.items("seeds", self.seeds)))
            if len(seeds) != self.reps:
                raise ValueError(f"seeds must hold one int per recorded run (reps={self.reps}), got {len(seeds)}")
            object.__setattr__(self, "seeds", seeds)

    def record(self, values: Sequence[float]) -> Measurements:
        """Wrap ``reps`` values measured elsewhere under this rule (e.g. scores or bytes)."""
        x = _scores("values", values, 1)
        if len(x) != self.reps:
            raise ValueError(f"the rule declares reps={self.reps} recorded runs, got {len(x)} values")
        return Measurements(self, tuple(float(v) for v in x))

    def _calls(self, fn: Callable[..., object]) -> list[Callable[[], object]]:
        if self.seeds is None:
            return [fn] * (self.warmup + self.reps)
        first = self.seeds[0]
        return [lambda: fn(first)] * self.warmup + [lambda s=s: fn(s) for s in self.seeds]

    def run(self, fn: Callable[..., float]) -> Measurements:
        """Call ``fn()`` (or ``fn(seed)``) ``warmup + reps`` times; each call returns the measured value."""
        checks.function("fn", fn)
        values = [checks.real("the value fn returned", call()) for call in self._calls(fn)]
        return self.record(values[self.warmup:])

    def time(self, fn: Callable[..., object], *, device: torch.device | str | None = None) -> Measurements:
        """Wall-clock seconds of each call of ``fn()`` (or ``fn(seed)``), by ``time.perf_counter``.

        On a CUDA ``device`` the device is synchronised before and after each call, so queued kernels
        are counted. Requires ``unit="s"``.
        """
        if self.unit != "s":
            raise ValueError(f"time() records seconds, but this rule declares unit={self.unit!r}")
        checks.function("fn", fn)
        if device is not None:
            try:
                device = torch.device(checks.instance("device", device, (torch.device, str)))
            except RuntimeError as err:
                raise ValueError(f"device={checks.show(device)} is not a torch device: {err}") from None
        sync = torch.cuda.synchronize if device is not None and device.type == "cuda" else (lambda *_: None)
        seconds = []
        for call in self._calls(fn):
            sync(device)
            start = time.perf_counter()
            call()
            sync(device)
            seconds.append(time.perf_counter() - start)
        return self.record(seconds[self.warmup:])


# ----------------------------------------------------------------------------------------------
# paired and unpaired bootstrap (ftip-00LB)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BootstrapResult:
    """Point estimate ``mean(a) - mean(b)`` and its bootstrap interval."""

    estimate: float
    interval: Interval
    n_a: int
    n_b: int
    n_boot: int
    seed: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "estimate", float(checks.real("estimate", self.estimate)))
        checks.instance("interval", self.interval, Interval)
        for name in ("n_a", "n_b"):
            object.__setattr__(self, name, checks.integer(name, getattr(self, name), 1))
        object.__setattr__(self, "n_boot", _n_boot(self.n_boot))
        object.__setattr__(self, "seed", checks.seed("seed", self.seed))


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, n_boot: int = 2000, level: float = 0.95,
                     seed: int = 0) -> BootstrapResult:
    """Interval of the mean paired difference ``mean(a_i - b_i)`` over items scored by both systems.

    Item ``i`` of ``a`` and of ``b`` must be the same evaluation item; resampling draws items, so
    each draw keeps both scores of an item together.
    """
    x, y = _scores("a", a, 2), _scores("b", b, 2)
    if len(x) != len(y):
        raise ValueError(f"paired scores need the same items: len(a)={len(x)} != len(b)={len(y)}")
    _n_boot(n_boot), _level(level), checks.seed("seed", seed)
    d = x - y
    rng = np.random.Generator(np.random.PCG64(seed))
    means = d[rng.integers(0, len(d), size=(_n_boot(n_boot), len(d)))].mean(axis=1)
    return BootstrapResult(float(d.mean()), _percentile(means, _level(level), "paired percentile bootstrap"),
                           len(x), len(y), n_boot, seed)


def unpaired_bootstrap(a: Sequence[float], b: Sequence[float], *, n_boot: int = 2000, level: float = 0.95,
                       seed: int = 0) -> BootstrapResult:
    """Interval of ``mean(a) - mean(b)`` resampling ``a`` and ``b`` independently (samples may differ in size)."""
    x, y = _scores("a", a, 2), _scores("b", b, 2)
    n_boot, level, seed = _n_boot(n_boot), _level(level), checks.seed("seed", seed)
    rng = np.random.Generator(np.random.PCG64(seed))
    diff = (x[rng.integers(0, len(x), size=(n_boot, len(x)))].mean(axis=1)
            - y[rng.integers(0, len(y), size=(n_boot, len(y)))].mean(axis=1))
    return BootstrapResult(float(x.mean() - y.mean()),
                           _percentile(diff, level, "unpaired percentile bootstrap"),
                           len(x), len(y), n_boot, seed)


@dataclass(frozen=True)
class BootstrapProcedure:
    """An uncertainty procedure declared before the scores are inspected (ftip-00LB).

    ``paired`` chooses :func:`paired_bootstrap` or :func:`unpaired_bootstrap`; ``n_boot``,
    ``level`` and ``seed`` are fixed here. ``fingerprint()`` is a SHA-256 of these fields, to be
    recorded before the scores are loaded; ``apply(a, b)`` runs exactly this procedure.
    """

    paired: bool = True
    n_boot: int = 2000
    level: float = 0.95
    seed: int = 0
    statistic: str = "mean difference"

    def __post_init__(self) -> None:
        object.__setattr__(self, "paired", checks.boolean("paired", self.paired))
        object.__setattr__(self, "n_boot", _n_boot(self.n_boot))
        object.__setattr__(self, "level", _level(self.level))
        object.__setattr__(self, "seed", checks.seed("seed", self.seed))
        if self.statistic != "mean difference":
            raise ValueError(f"statistic={self.statistic!r}: only 'mean difference' is implemented")

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()

    def apply(self, a: Sequence[float], b: Sequence[float]) -> BootstrapResult:
        run = paired_bootstrap if self.paired else unpaired_bootstrap
        return run(a, b, n_boot=self.n_boot, level=self.level, seed=self.seed)


# ----------------------------------------------------------------------------------------------
# exact binomial interval
# ----------------------------------------------------------------------------------------------
#: The most trials :func:`clopper_pearson` and :func:`binomial_cdf` take: beyond, a float cannot hold ``k / n``
#: to the interval's precision, and the continued fraction needs more than ~10**4 terms.
MAX_TRIALS = 10**9
#: Tails whose shorter side has at most this many terms are summed term by term (the exact small-``n``
#: computation); longer ones use the regularized incomplete beta function.
_SUM_TERMS = 2000


def binomial_cdf(k: int, n: int, p: float) -> float:
    """``P(X <= k)`` for ``X ~ Binomial(n, p)``: summed in log space over the shorter side of the
    distribution when it has at most 2000 terms, else ``I_{1-p}(n - k, k + 1)`` (regularized incomplete beta)."""
    k = checks.integer("k", k)
    n = checks.integer("n", n, 0, MAX_TRIALS)
    p = float(checks.probability("p", p))
    if k < 0:
        return 0.0
    if k >= n or p == 0:
        return 1.0
    if p == 1:
        return 0.0
    if min(k + 1, n - k) > _SUM_TERMS:
        return min(1.0, max(0.0, _betainc(n - k, k + 1, 1 - p)))
    lp, lq = math.log(p), math.log1p(-p)
    lgn = math.lgamma(n + 1)

    def mass(js: range) -> float:
        return math.fsum(math.exp(lgn - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lp + (n - j) * lq) for j in js)

    # sum the shorter side of the distribution
    cdf = mass(range(k + 1)) if k < n / 2 else 1 - mass(range(k + 1, n + 1))
    return min(1.0, max(0.0, cdf))


def _log_beta_density_factor(a: float, b: float, x: float) -> float:
    """``log(x^a (1 - x)^b / B(a, b))``."""
    return math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz), converging in
    ``O(sqrt(max(a, b)))`` terms for ``x < (a + 1) / (a + b + 2)``."""
    tiny, eps = 1e-300, 1e-16
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 200_000):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1 + aa * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < eps:
            return h
    raise ArithmeticError(f"the incomplete beta fraction did not converge (a={a}, b={b}, x={x})")


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)``, ``a, b > 0``."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(_log_beta_density_factor(a, b, x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1 - front * _beta_fraction(b, a, 1 - x) / b


def _beta_quantile(a: float, b: float, target: float) -> float:
    """The ``x`` with ``I_x(a, b) = target``: Newton steps on the incomplete beta function (its derivative is
    the beta density), kept inside a bracket that bisection shrinks whenever a step leaves it."""
    lo, hi = 0.0, 1.0
    mean, sd = a / (a + b), math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    x = min(max(mean + sd * _normal_quantile(target), mean / 16), 1 - (1 - mean) / 16)
    for _ in range(300):
        f = _betainc(a, b, x) - target
        if f == 0:
            return x
        lo, hi = (x, hi) if f < 0 else (lo, x)
        density = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + (a - 1) * math.log(x)
                           + (b - 1) * math.log1p(-x))
        step = x - f / density if density > 0 else None
        x_new = step if step is not None and lo < step < hi else (lo + hi) / 2
        if abs(x_new - x) <= 2e-16 * max(x, 1e-300) or x_new in (lo, hi):
            return x_new
        x = x_new
    return x


def _normal_quantile(q: float) -> float:
    """The standard normal quantile, for the starting point of :func:`_beta_quantile`."""
    q = min(max(q, 1e-300), 1 - 1e-16)
    return statistics.NormalDist().inv_cdf(q)


def _solve(f: Callable[[float], float], target: float) -> float:
    """The ``p`` in ``[0, 1]`` where the monotone ``f`` crosses ``target`` (bisection to machine precision)."""
    lo, hi = 0.0, 1.0
    increasing = f(1.0) > f(0.0)
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if (f(mid) < target) == increasing:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(k: int, n: int, level: float = 0.95, side: str = "two-sided") -> Interval:
    """Exact (Clopper-Pearson) interval for a success probability after ``k`` successes in ``n`` trials.

    Two-sided: the lower end solves ``P(X >= k; p) = (1 - level) / 2`` (0 when ``k = 0``) and the
    upper end ``P(X <= k; p) = (1 - level) / 2`` (1 when ``k = n``). ``side="upper"`` gives the
    one-sided upper bound ``[0, p_U]`` with tail ``1 - level``; ``side="lower"`` gives ``[p_L, 1]``.
    Its coverage is at least ``level`` for every true ``p``. Up to :data:`MAX_TRIALS` trials: tails of at
    most 2000 terms are summed and solved by bisection; longer ones are the beta quantiles
    ``p_L = B^{-1}(tail; k, n - k + 1)`` and ``p_U = 1 - B^{-1}(tail; n - k, k + 1)``, in milliseconds.
    """
    n = checks.integer("n", n, 1, MAX_TRIALS)
    if not checks.is_int(k) or not 0 <= k <= n:
        raise (ValueError if checks.is_int(k) else TypeError)(
            f"k={checks.show(k)} must be an int in [0, n={n}] (number of successes)")
    k = int(k)
    level = _level(level)
    side = checks.choice("side", side, ("two-sided", "upper", "lower"))
    tail = (1 - level) / 2 if side == "two-sided" else 1 - level
    low, high = 0.0, 1.0
    if side != "upper" and k > 0:
        low = _solve(lambda p: 1 - binomial_cdf(k - 1, n, p), tail) if min(k, n - k + 1) <= _SUM_TERMS \
            else _beta_quantile(k, n - k + 1, tail)
    if side != "lower" and k < n:
        high = _solve(lambda p: binomial_cdf(k, n, p), tail) if min(k + 1, n - k) <= _SUM_TERMS \
            else 1 - _beta_quantile(n - k, k + 1, tail)
    return Interval(low, high, level, f"Clopper-Pearson ({side})")
