"""Finite cost grids, observed envelopes, uncertainty bands and crossings (ftip-00LI to 00LK, 00LO, 00LP).

A finite matched study measures each architecture at a few declared values of one cost. This
module keeps what such a study can say apart from what it cannot:

* :class:`CostGrid` is the declared grid ``0 < C_1 < ... < C_m`` of one cost coordinate with its
  unit, and :class:`GridCurves` holds one observed score per architecture and grid point
  (ftip-00LI). A value between grid points is not an observation: asking for one raises
  :class:`OffGridError`; an architecture missing a grid point is refused with
  :class:`MissingGridPoint`;
* :func:`upper_envelope` is the running maximum ``U(C_i) = max_{j <= i} s(C_j)``, a descriptive
  monotone summary of the measured points (ftip-00LJ);
* :class:`Band` attaches a predeclared interval to each grid point (:class:`BandProcedure`, a
  percentile bootstrap of the mean over seeds or evaluation items), :func:`paired_difference_band`
  carries bands through score differences from paired per-unit differences,
  :func:`conservative_difference_band` is the declared endpoint-subtraction alternative, and
  :func:`threshold_crossing` turns a band into an interval for the first grid point reaching a
  target (ftip-00LK);
* :func:`frontier_ordering` ranks architectures by their measured frontier under one declared
  :class:`~ftipbook.compare.cost.Scalarization` of their cost vectors (ftip-00LO);
* :func:`pointwise_order` and :func:`crossing_points` report which of two curves is ahead at each
  grid point and where that order changes, with ties handled explicitly; :func:`order_crossings`
  does the same for any per-point order, such as the one a paired difference band resolves
  (:meth:`Band.order`) (ftip-00LP).
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from types import MappingProxyType

import numpy as np

from ftipbook.compare.checks import real as _real
from ftipbook.compare.cost import CostVector, Scalarization, Unknown
from ftipbook.compare.frontier import Intervention, frontier_value
from ftipbook.eval.stats import Interval, bootstrap_mean_ci, paired_bootstrap


class OffGridError(ValueError):
    """A value was asked for at a cost that is not a declared grid point (ftip-00LI): no interpolation."""


class MissingGridPoint(ValueError):
    """An architecture was not observed at some declared grid point (ftip-00LI)."""



def _name(what: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string, got {value!r}")
    return value


# ----------------------------------------------------------------------------------------------
# the finite cost grid (ftip-00LI)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CostGrid:
    """A declared finite grid ``0 < C_1 < ... < C_m`` of one cost, with its unit (ftip-00LI).

    ``points`` are finite, positive and strictly increasing; ``cost`` names the cost coordinate
    (for example ``"train_flops"``) and ``unit`` its unit (``"FLOP"``). Grid points are matched
    exactly: :meth:`index` of a cost that is not a grid point raises :class:`OffGridError`.
    """

    points: tuple[float, ...]
    cost: str
    unit: str

    def __post_init__(self) -> None:
        if isinstance(self.points, (str, bytes)) or not isinstance(self.points, Sequence):
            raise TypeError(f"points must be a sequence of costs, got {type(self.points).__name__}")
        points = tuple(_real(f"points[{i}]", c) for i, c in enumerate(self.points))
        if not points:
            raise ValueError("a cost grid needs at least one point")
        if points[0] <= 0:
            raise ValueError(f"points[0]={points[0]!r}: grid costs must be > 0 (0 < C_1 < ... < C_m)")
        for i in range(1, len(points)):
            if points[i] <= points[i - 1]:
                raise ValueError(f"points must be strictly increasing: points[{i - 1}]={points[i - 1]!r} >= "
                                 f"points[{i}]={points[i]!r}")
        object.__setattr__(self, "points", points)
        _name("cost", self.cost)
        _name("unit", self.unit)

    def __len__(self) -> int:
        return len(self.points)

    def __iter__(self) -> Iterator[float]:
        return iter(self.points)

    def index(self, cost: float) -> int:
        """The position ``i`` (from 0) of grid point ``cost``; :class:`OffGridError` for any other cost."""
        c = _real("cost", cost)
        for i, point in enumerate(self.points):
            if c == point:
                return i
        below = [p for p in self.points if p < c]
        above = [p for p in self.points if p > c]
        where = (f"between grid points {below[-1]:g} and {above[0]:g}" if below and above
                 else f"below the first grid point {self.points[0]:g}" if above
                 else f"above the last grid point {self.points[-1]:g}")
        raise OffGridError(f"cost={c:g} {self.unit} is not a point of the {self.cost} grid ({where}); "
                           f"observations exist only at the grid points, nothing is interpolated")

    def observe(self, observations: Mapping[str, Mapping[float, float]]) -> "GridCurves":
        """Scores per architecture from ``{architecture: {grid cost: score}}`` (ftip-00LI).

        Every architecture must have a score at every grid point (:class:`MissingGridPoint`
        otherwise, naming the architecture and the points) and only there (a cost that is not a
        grid point raises :class:`OffGridError`).
        """
        if not isinstance(observations, Mapping) or not observations:
            raise ValueError("observations must map at least one architecture to {grid cost: score}")
        scores = {}
        for arch, points in observations.items():
            _name("architecture", arch)
            if not isinstance(points, Mapping):
                raise TypeError(f"observations[{arch!r}] must map grid costs to scores, got {type(points).__name__}")
            seen: dict[int, float] = {}
            for cost, score in points.items():
                seen[self.index(cost)] = _real(f"score of {arch!r} at {cost!r}", score)
            missing = [self.points[i] for i in range(len(self)) if i not in seen]
            if missing:
                raise MissingGridPoint(f"architecture {arch!r} was not observed at grid point(s) "
                                       f"{', '.join(f'{c:g}' for c in missing)} {self.unit}; every architecture "
                                       f"must be evaluated at every declared grid point")
            scores[arch] = tuple(seen[i] for i in range(len(self)))
        return GridCurves(self, scores)


@dataclass(frozen=True)
class GridCurves:
    """One observed score per architecture at every point of one :class:`CostGrid` (ftip-00LI).

    ``scores[architecture][i]`` is the score at ``grid.points[i]``. Build it with
    :meth:`CostGrid.observe`, or directly from score tuples in grid order.
    """

    grid: CostGrid
    scores: Mapping[str, tuple[float, ...]]

    def __post_init__(self) -> None:
        if not isinstance(self.grid, CostGrid):
            raise TypeError(f"grid must be a CostGrid, got {type(self.grid).__name__}")
        if not isinstance(self.scores, Mapping) or not self.scores:
            raise ValueError("scores must map at least one architecture to its scores in grid order")
        checked = {}
        for arch, values in self.scores.items():
            _name("architecture", arch)
            values = tuple(_real(f"scores[{arch!r}][{i}]", v) for i, v in enumerate(values))
            if len(values) != len(self.grid):
                raise MissingGridPoint(f"architecture {arch!r} has {len(values)} scores for {len(self.grid)} grid "
                                       f"points; every architecture must be observed at every grid point")
            checked[arch] = values
        object.__setattr__(self, "scores", MappingProxyType(checked))

    @property
    def architectures(self) -> tuple[str, ...]:
        return tuple(self.scores)

    def curve(self, architecture: str) -> tuple[float, ...]:
        """The observed scores of ``architecture`` in grid order."""
        if architecture not in self.scores:
            raise KeyError(f"no architecture {architecture!r}; observed are {list(self.scores)}")
        return self.scores[architecture]

    def at(self, architecture: str, cost: float) -> float:
        """The observed score of ``architecture`` at grid point ``cost`` (:class:`OffGridError` off the grid)."""
        return self.curve(architecture)[self.grid.index(cost)]


# ----------------------------------------------------------------------------------------------
# the observed upper envelope (ftip-00LJ)
# ----------------------------------------------------------------------------------------------
def upper_envelope(scores: Sequence[float]) -> tuple[float, ...]:
    """``U(C_i) = max_{j <= i} s(C_j)`` over scores given in grid order (ftip-00LJ).

    A descriptive, nondecreasing summary of the measured points: it says nothing about costs
    between or beyond the grid points.
    """
    if isinstance(scores, (str, bytes)) or not isinstance(scores, Sequence):
        raise TypeError(f"scores must be a sequence of observed scores in grid order, got {type(scores).__name__}")
    values = [_real(f"scores[{i}]", s) for i, s in enumerate(scores)]
    if not values:
        raise ValueError("scores is empty: the envelope needs at least one observed grid point")
    out = []
    best = -math.inf
    for s in values:
        best = max(best, s)
        out.append(best)
    return tuple(out)


# ----------------------------------------------------------------------------------------------
# uncertainty bands (ftip-00LK)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BandProcedure:
    """A band procedure declared before the scores are seen (ftip-00LK).

    ``unit`` names what is resampled (``"seed"`` or ``"evaluation document"``, say); intervals are
    percentile bootstraps of the mean with ``n_boot`` resamples at ``level``, the generator seeded
    with ``seed`` at every grid point. ``fingerprint()`` is a SHA-256 of these fields.
    """

    unit: str
    n_boot: int = 2000
    level: float = 0.95
    seed: int = 0

    def __post_init__(self) -> None:
        _name("unit", self.unit)
        if isinstance(self.n_boot, bool) or not isinstance(self.n_boot, int) or self.n_boot < 100:
            raise ValueError(f"n_boot={self.n_boot!r} must be an int >= 100 (bootstrap resamples)")
        if isinstance(self.level, bool) or not isinstance(self.level, (int, float)) or not 0 < self.level < 1:
            raise ValueError(f"level={self.level!r} must lie strictly between 0 and 1 (e.g. 0.95)")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed={self.seed!r} must be an int >= 0")

    def describe(self) -> str:
        """The procedure in words, ending with the first 12 hex digits of its fingerprint."""
        return (f"percentile bootstrap of the mean over {self.unit}s, {self.n_boot} resamples, "
                f"level {self.level:g}, seed {self.seed} (procedure {self.fingerprint()[:12]})")

    def fingerprint(self) -> str:
        """SHA-256 (hex) of the declared fields, to be recorded before any score is read."""
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Band:
    """A point estimate and an interval at every point of a grid, and how they were made (ftip-00LK).

    ``procedure`` is the declared rule in words (it is printed beside every band).
    """

    grid: CostGrid
    estimates: tuple[float, ...]
    intervals: tuple[Interval, ...]
    procedure: str

    def __post_init__(self) -> None:
        if not isinstance(self.grid, CostGrid):
            raise TypeError(f"grid must be a CostGrid, got {type(self.grid).__name__}")
        if len(self.estimates) != len(self.grid) or len(self.intervals) != len(self.grid):
            raise MissingGridPoint(f"a band needs one estimate and one interval per grid point ({len(self.grid)}), "
                                   f"got {len(self.estimates)} and {len(self.intervals)}")
        object.__setattr__(self, "estimates",
                           tuple(_real(f"estimates[{i}]", e) for i, e in enumerate(self.estimates)))
        object.__setattr__(self, "intervals", tuple(self.intervals))
        for i, iv in enumerate(self.intervals):
            if not isinstance(iv, Interval) or not iv.low <= iv.high:
                raise ValueError(f"intervals[{i}]={iv!r} must be an Interval with low <= high")
        _name("procedure", self.procedure)

    @property
    def lows(self) -> tuple[float, ...]:
        return tuple(iv.low for iv in self.intervals)

    @property
    def highs(self) -> tuple[float, ...]:
        return tuple(iv.high for iv in self.intervals)

    def order(self) -> tuple[int, ...]:
        """The order this band resolves, read as a band of a difference ``a - b`` (ftip-00LP).

        +1 where the interval lies above 0, -1 where it lies below, 0 where it contains 0.
        """
        return tuple(1 if iv.low > 0 else -1 if iv.high < 0 else 0 for iv in self.intervals)


def _per_point(grid: CostGrid, name: str, samples: Sequence[Sequence[float]]) -> list[np.ndarray]:
    if not isinstance(grid, CostGrid):
        raise TypeError(f"grid must be a CostGrid, got {type(grid).__name__}")
    if isinstance(samples, (str, bytes)) or not isinstance(samples, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must hold one sequence of scores per grid point, got {type(samples).__name__}")
    if len(samples) != len(grid):
        raise MissingGridPoint(f"{name} must hold one sample per grid point ({len(grid)}), got {len(samples)}")
    out = []
    for i, sample in enumerate(samples):
        try:
            x = np.asarray(sample, dtype=np.float64)
        except (TypeError, ValueError):
            x = np.asarray([np.nan])
        if x.ndim != 1 or len(x) < 2 or not np.isfinite(x).all():
            raise ValueError(f"{name}[{i}] (grid point {grid.points[i]:g}) must be a 1-D sequence of at least 2 "
                             f"finite scores, got shape {x.shape} with {int((~np.isfinite(x)).sum())} non-finite")
        out.append(x)
    return out


def bootstrap_band(grid: CostGrid, samples: Sequence[Sequence[float]], procedure: BandProcedure) -> Band:
    """A band of the mean score at every grid point (ftip-00LK).

    ``samples[i]`` holds the scores at ``grid.points[i]``, one per resampled unit (seed or
    evaluation item); the estimate is their mean and the interval
    :func:`~ftipbook.eval.stats.bootstrap_mean_ci` under ``procedure``.
    """
    if not isinstance(procedure, BandProcedure):
        raise TypeError(f"procedure must be a BandProcedure, got {type(procedure).__name__}")
    points = _per_point(grid, "samples", samples)
    intervals = tuple(bootstrap_mean_ci(x, level=procedure.level, n_boot=procedure.n_boot, seed=procedure.seed)
                      for x in points)
    return Band(grid, tuple(float(x.mean()) for x in points), intervals, procedure.describe())


def paired_difference_band(grid: CostGrid, a: Sequence[Sequence[float]], b: Sequence[Sequence[float]],
                           procedure: BandProcedure) -> Band:
    """A band of the mean paired difference ``a - b`` at every grid point (ftip-00LK).

    ``a[i][k]`` and ``b[i][k]`` are two architectures' scores on the same unit ``k`` (item or seed)
    at grid point ``i``; the interval is :func:`~ftipbook.eval.stats.paired_bootstrap` of the
    per-unit differences, so it uses their correlation instead of subtracting interval endpoints.
    """
    if not isinstance(procedure, BandProcedure):
        raise TypeError(f"procedure must be a BandProcedure, got {type(procedure).__name__}")
    xs, ys = _per_point(grid, "a", a), _per_point(grid, "b", b)
    estimates, intervals = [], []
    for i, (x, y) in enumerate(zip(xs, ys)):
        if len(x) != len(y):
            raise ValueError(f"at grid point {grid.points[i]:g} a has {len(x)} and b has {len(y)} {procedure.unit}s; "
                             f"a paired difference needs the same units in the same order")
        r = paired_bootstrap(x, y, n_boot=procedure.n_boot, level=procedure.level, seed=procedure.seed)
        estimates.append(r.estimate)
        intervals.append(r.interval)
    return Band(grid, tuple(estimates), tuple(intervals), f"paired differences; {procedure.describe()}")


def conservative_difference_band(a: Band, b: Band) -> Band:
    """The declared conservative band of ``a - b``: ``[low_a - high_b, high_a - low_b]`` at each grid point (ftip-00LK).

    It ignores the pairing, so it is wider than a paired band whenever the two scores move together.
    """
    if not isinstance(a, Band) or not isinstance(b, Band):
        raise TypeError("conservative_difference_band takes two Bands")
    if a.grid != b.grid:
        raise ValueError("the two bands are on different grids; a difference needs the same grid points")
    level = min(iv.level for iv in a.intervals + b.intervals)
    intervals = tuple(Interval(ia.low - ib.high, ia.high - ib.low, level, "conservative endpoint subtraction")
                      for ia, ib in zip(a.intervals, b.intervals))
    estimates = tuple(x - y for x, y in zip(a.estimates, b.estimates))
    return Band(a.grid, estimates, intervals,
                f"conservative: endpoints subtracted (a: {a.procedure}; b: {b.procedure})")


@dataclass(frozen=True)
class CrossingInterval:
    """Where a banded curve first reaches a target ``q`` on the grid (ftip-00LK).

    ``by_upper`` is the first grid cost whose *upper* bound reaches ``q`` (at no earlier grid point
    does the band allow ``q``), ``by_lower`` the first whose *lower* bound does (the first point the
    band places at or above ``q``), ``by_estimate`` the first whose point estimate does. The
    crossing is located in ``[by_upper, by_lower]``. ``None`` means no grid point qualifies.
    """

    target: float
    by_upper: float | None
    by_estimate: float | None
    by_lower: float | None
    unit: str

    def describe(self) -> str:
        def fmt(c: float | None) -> str:
            return "beyond the grid" if c is None else f"{c:.4g}"
        return (f"q = {self.target:g}: first reached between {fmt(self.by_upper)} and {fmt(self.by_lower)} "
                f"{self.unit} (point estimate {fmt(self.by_estimate)})")


def threshold_crossing(band: Band, q: float) -> CrossingInterval:
    """The interval for the first grid point reaching ``q``: first ``high >= q`` to first ``low >= q`` (ftip-00LK)."""
    if not isinstance(band, Band):
        raise TypeError(f"band must be a Band, got {type(band).__name__}")
    q = _real("q", q)

    def first(values: Sequence[float]) -> float | None:
        return next((c for c, v in zip(band.grid.points, values) if v >= q), None)

    return CrossingInterval(q, first(band.highs), first(band.estimates), first(band.lows), band.grid.unit)


# ----------------------------------------------------------------------------------------------
# one declared scalarization, one frontier ordering (ftip-00LO)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FrontierRanking:
    """Architectures ranked by their measured frontier value at one scalar budget (ftip-00LO).

    ``values[a]`` is ``V_a(budget)`` over a's measured points whose scalarized cost is at most
    the budget (``-inf`` when none is); ``ranking`` lists groups of tied architectures, best first.
    """

    budget: float
    values: Mapping[str, float]
    ranking: tuple[tuple[str, ...], ...]


def frontier_ordering(points: Mapping[str, Sequence[tuple[CostVector, float]]], scalarization: Scalarization,
                      budgets: Sequence[float]) -> tuple[FrontierRanking, ...]:
    """Rank architectures by measured frontier value under one declared scalarization (ftip-00LO).

    ``points[a]`` lists a's measured ``(cost vector, score)`` pairs. Each cost vector is reduced
    to ``C = scalarization(cost)``; a point whose scalar cost is unknown is refused, never dropped.
    At each budget, ``V_a(budget)`` is :func:`~ftipbook.compare.frontier.frontier_value` over a's
    points with ``C <= budget``, and architectures are ranked by it (equal values tie).
    """
    if not isinstance(scalarization, Scalarization):
        raise TypeError(f"scalarization must be a Scalarization, got {type(scalarization).__name__}")
    if not isinstance(points, Mapping) or not points:
        raise ValueError("points must map at least one architecture to its (cost vector, score) pairs")
    if isinstance(budgets, (str, bytes)) or not isinstance(budgets, Sequence) or not budgets:
        raise ValueError(f"budgets must be a non-empty sequence of scalar costs, got {budgets!r}")
    interventions = {}
    for arch, pairs in points.items():
        _name("architecture", arch)
        if not pairs:
            raise ValueError(f"architecture {arch!r} has no measured points")
        interventions[arch] = []
        for k, pair in enumerate(pairs):
            if not isinstance(pair, tuple) or len(pair) != 2 or not isinstance(pair[0], CostVector):
                raise TypeError(f"points[{arch!r}][{k}] must be a (CostVector, score) pair, got {pair!r}")
            c = scalarization(pair[0])
            if isinstance(c, Unknown):
                raise ValueError(f"points[{arch!r}][{k}] has no scalar cost under this scalarization: {c.reason}")
            interventions[arch].append(Intervention(f"{arch}[{k}]", c, _real(f"score of {arch!r}[{k}]", pair[1])))
    out = []
    for j, budget in enumerate(budgets):
        b = _real(f"budgets[{j}]", budget)
        if b < 0:
            raise ValueError(f"budgets[{j}]={b!r} must be >= 0")
        values = {arch: frontier_value(etas, b).value for arch, etas in interventions.items()}
        levels = sorted(set(values.values()), reverse=True)
        ranking = tuple(tuple(a for a in values if values[a] == v) for v in levels)
        out.append(FrontierRanking(b, MappingProxyType(values), ranking))
    return tuple(out)


# ----------------------------------------------------------------------------------------------
# crossing frontiers (ftip-00LP)
# ----------------------------------------------------------------------------------------------
def pointwise_order(curves: GridCurves, a: str, b: str, *, tolerance: float = 0.0) -> tuple[int, ...]:
    """The order of ``a`` and ``b`` at each grid point (ftip-00LP).

    +1 where ``a`` scores higher than ``b`` by more than ``tolerance``, -1 where ``b`` does, and 0
    (a tie) otherwise.
    """
    if not isinstance(curves, GridCurves):
        raise TypeError(f"curves must be GridCurves, got {type(curves).__name__}")
    if a == b:
        raise ValueError(f"a and b are both {a!r}; name two different architectures")
    tol = _real("tolerance", tolerance)
    if tol < 0:
        raise ValueError(f"tolerance={tol!r} must be >= 0")
    out = []
    for x, y in zip(curves.curve(a), curves.curve(b)):
        out.append(1 if x - y > tol else -1 if y - x > tol else 0)
    return tuple(out)


@dataclass(frozen=True)
class Crossing:
    """The leader changes between grid points ``before`` and ``after`` (ftip-00LP).

    ``leader_before`` led at ``before`` and ``leader_after`` leads at ``after``; ``ties`` lists
    the grid points in between where neither led. The crossing itself lies somewhere in
    ``(before, after]``: the grid does not locate it more finely.
    """

    before: float
    after: float
    leader_before: str
    leader_after: str
    ties: tuple[float, ...]


def order_crossings(grid: CostGrid, order: Sequence[int], a: str, b: str) -> tuple[Crossing, ...]:
    """Crossings in a per-grid-point order (+1: ``a`` ahead, -1: ``b`` ahead, 0: tie or unresolved) (ftip-00LP).

    A change of leader is a crossing, also across tied points in between; a tie followed by the
    same leader is not. Leading or trailing ties start or end no crossing.
    """
    if not isinstance(grid, CostGrid):
        raise TypeError(f"grid must be a CostGrid, got {type(grid).__name__}")
    order = tuple(order)
    if len(order) != len(grid) or any(o not in (-1, 0, 1) or isinstance(o, bool) for o in order):
        raise ValueError(f"order must hold one of -1, 0, 1 per grid point ({len(grid)}), got {order!r}")
    names = {1: a, -1: b}
    out = []
    last = None
    for i, o in enumerate(order):
        if o == 0:
            continue
        if last is not None and order[last] != o:
            ties = tuple(grid.points[last + 1:i])
            out.append(Crossing(grid.points[last], grid.points[i], names[order[last]], names[o], ties))
        last = i
    return tuple(out)


def crossing_points(curves: GridCurves, a: str, b: str, *, tolerance: float = 0.0) -> tuple[Crossing, ...]:
    """Where the observed curves of ``a`` and ``b`` change order on their grid (ftip-00LP).

    Scores within ``tolerance`` of each other are ties (:func:`pointwise_order`); see
    :func:`order_crossings` for how ties are handled.
    """
    order = pointwise_order(curves, a, b, tolerance=tolerance)
    return order_crossings(curves.grid, order, a, b)


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
