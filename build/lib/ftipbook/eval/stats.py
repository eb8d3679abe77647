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

#: Aggregation rules a repeated measurement may declare (ftip-00LA); ``"min"`` is refused on purpose.
AGGREGATIONS = ("mean", "median")


@dataclass(frozen=True)
class Interval:
    """A confidence interval ``[low, high]`` at ``level``, and how it was computed."""

    low: float
    high: float
    level: float
    method: str

    @property
    def width(self) -> float:
        return self.high - self.low

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high


def _level(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise ValueError(f"level={level!r} must lie strictly between 0 and 1 (e.g. 0.95)")
    return float(level)


def _scores(name: str, values: Sequence[float], at_least: int = 1) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or len(x) < at_least:
        raise ValueError(f"{name} must be a 1-D sequence of at least {at_least} numbers, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} contains a non-finite value; every measurement must be a finite number")
    return x


def _n_boot(n_boot: int) -> int:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 100:
        raise ValueError(f"n_boot={n_boot!r} must be an int >= 100 (bootstrap resamples)")
    return n_boot


def _percentile(stats: np.ndarray, level: float, method: str) -> Interval:
    tail = (1 - level) / 2
    low, high = np.quantile(stats, [tail, 1 - tail])
    return Interval(float(low), float(high), level, method)


def bootstrap_mean_ci(values: Sequence[float], *, level: float = 0.95, n_boot: int = 2000, seed: int = 0) -> Interval:
    """Percentile bootstrap interval of the mean of ``values`` (resampling the values with replacement)."""
    x = _scores("values", values, 2)
    rng = np.random.Generator(np.random.PCG64(seed))
    means = x[rng.integers(0, len(x), size=(_n_boot(n_boot), len(x)))].mean(axis=1)
    return _percentile(means, _level(level), "percentile bootstrap of the mean")


# ----------------------------------------------------------------------------------------------
# repeated measurement (ftip-00LA)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Measurements:
    """The values one :class:`RepeatedMeasurement` produced (warm-up runs excluded), in run order."""

    rule: "RepeatedMeasurement"
    values: tuple[float, ...]

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
        """Rounded ``n, mean, std, median, min, max`` and the unit, for a printed table."""
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
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, int) or self.warmup < 0:
            raise ValueError(f"warmup={self.warmup!r} must be an int >= 0")
        if isinstance(self.reps, bool) or not isinstance(self.reps, int) or self.reps < 2:
            raise ValueError(f"reps={self.reps!r} must be an int >= 2: one run has no dispersion")
        if self.aggregation == "min":
            raise ValueError("aggregation='min' is not allowed: a single fastest run cannot define a cost "
                             f"(ftip-00LA); use one of {AGGREGATIONS}")
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation={self.aggregation!r} must be one of {AGGREGATIONS}")
        if self.seeds is not None:
            seeds = tuple(self.seeds)
            if len(seeds) != self.reps or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
                raise ValueError(f"seeds must hold one int per recorded run (reps={self.reps}), got {self.seeds!r}")
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
        values = [float(call()) for call in self._calls(fn)]
        return self.record(values[self.warmup:])

    def time(self, fn: Callable[..., object], *, device: torch.device | str | None = None) -> Measurements:
        """Wall-clock seconds of each call of ``fn()`` (or ``fn(seed)``), by ``time.perf_counter``.

        On a CUDA ``device`` the device is synchronised before and after each call, so queued kernels
        are counted. Requires ``unit="s"``.
        """
        if self.unit != "s":
            raise ValueError(f"time() records seconds, but this rule declares unit={self.unit!r}")
        device = torch.device(device) if device is not None else None
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


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, n_boot: int = 2000, level: float = 0.95,
                     seed: int = 0) -> BootstrapResult:
    """Interval of the mean paired difference ``mean(a_i - b_i)`` over items scored by both systems.

    Item ``i`` of ``a`` and of ``b`` must be the same evaluation item; resampling draws items, so
    each draw keeps both scores of an item together.
    """
    x, y = _scores("a", a, 2), _scores("b", b, 2)
    if len(x) != len(y):
        raise ValueError(f"paired scores need the same items: len(a)={len(x)} != len(b)={len(y)}")
    d = x - y
    rng = np.random.Generator(np.random.PCG64(seed))
    means = d[rng.integers(0, len(d), size=(_n_boot(n_boot), len(d)))].mean(axis=1)
    return BootstrapResult(float(d.mean()), _percentile(means, _level(level), "paired percentile bootstrap"),
                           len(x), len(y), n_boot, seed)


def unpaired_bootstrap(a: Sequence[float], b: Sequence[float], *, n_boot: int = 2000, level: float = 0.95,
                       seed: int = 0) -> BootstrapResult:
    """Interval of ``mean(a) - mean(b)`` resampling ``a`` and ``b`` independently (samples may differ in size)."""
    x, y = _scores("a", a, 2), _scores("b", b, 2)
    rng = np.random.Generator(np.random.PCG64(seed))
    n_boot = _n_boot(n_boot)
    diff = (x[rng.integers(0, len(x), size=(n_boot, len(x)))].mean(axis=1)
            - y[rng.integers(0, len(y), size=(n_boot, len(y)))].mean(axis=1))
    return BootstrapResult(float(x.mean() - y.mean()),
                           _percentile(diff, _level(level), "unpaired percentile bootstrap"),
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
        _n_boot(self.n_boot)
        _level(self.level)
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
def binomial_cdf(k: int, n: int, p: float) -> float:
    """``P(X <= k)`` for ``X ~ Binomial(n, p)``, summed in log space."""
    if k < 0:
        return 0.0
    if k >= n or p == 0:
        return 1.0
    if p == 1:
        return 0.0
    lp, lq = math.log(p), math.log1p(-p)
    lgn = math.lgamma(n + 1)

    def mass(js: range) -> float:
        return math.fsum(math.exp(lgn - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * lp + (n - j) * lq) for j in js)

    # sum the shorter side of the distribution
    cdf = mass(range(k + 1)) if k < n / 2 else 1 - mass(range(k + 1, n + 1))
    return min(1.0, max(0.0, cdf))


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
    Its coverage is at least ``level`` for every true ``p``.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n={n!r} must be an int >= 1 (number of trials)")
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= n:
        raise ValueError(f"k={k!r} must be an int in [0, n={n}] (number of successes)")
    level = _level(level)
    if side not in ("two-sided", "upper", "lower"):
        raise ValueError(f"side={side!r} must be 'two-sided', 'upper' or 'lower'")
    tail = (1 - level) / 2 if side == "two-sided" else 1 - level
    low, high = 0.0, 1.0
    if side != "upper" and k > 0:
        low = _solve(lambda p: 1 - binomial_cdf(k - 1, n, p), tail)
    if side != "lower" and k < n:
        high = _solve(lambda p: binomial_cdf(k, n, p), tail)
    return Interval(low, high, level, f"Clopper-Pearson ({side})")
