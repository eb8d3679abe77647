"""Finite cost grids, envelopes, bands, frontier orderings and crossings (ftip-00LI to 00LK, 00LO, 00LP)."""
import itertools
import math
import random

import numpy as np
import pytest

from ftipbook.compare.cost import UNKNOWN, CostVector, Scalarization
from ftipbook.compare.grid import (
    Band,
    BandProcedure,
    CostGrid,
    Crossing,
    GridCurves,
    MissingGridPoint,
    OffGridError,
    bootstrap_band,
    conservative_difference_band,
    crossing_points,
    frontier_ordering,
    order_crossings,
    paired_difference_band,
    pointwise_order,
    threshold_crossing,
    upper_envelope,
)
from ftipbook.eval.stats import Interval

GRID = CostGrid((1.0, 2.0, 4.0, 8.0), "train_flops", "FLOP")


# ------------------------------------------------------------------ CostGrid (ftip-00LI)
def test_grid_points_are_matched_exactly_and_nothing_is_interpolated():
    assert GRID.index(4.0) == 2 and GRID.index(1) == 0 and len(GRID) == 4 and list(GRID) == [1, 2, 4, 8]
    with pytest.raises(OffGridError, match="between grid points 2 and 4"):
        GRID.index(3.0)
    with pytest.raises(OffGridError, match="below the first"):
        GRID.index(0.5)
    with pytest.raises(OffGridError, match="above the last"):
        GRID.index(9.0)
    assert issubclass(OffGridError, ValueError) and issubclass(MissingGridPoint, ValueError)


@pytest.mark.parametrize("points, match", [
    ((), "at least one"),
    ((0.0, 1.0), "must be > 0"),
    ((-1.0, 1.0), "must be > 0"),
    ((1.0, 1.0), "strictly increasing"),
    ((2.0, 1.0), "strictly increasing"),
    ((1.0, math.inf), "finite"),
    ((1.0, math.nan), "finite"),
])
def test_grid_refuses_bad_points(points, match):
    with pytest.raises(ValueError, match=match):
        CostGrid(points, "train_flops", "FLOP")


def test_grid_refuses_bad_types_and_names():
    with pytest.raises(TypeError, match="points"):
        CostGrid("1,2", "c", "u")
    with pytest.raises(TypeError, match="real number"):
        CostGrid((1, "2"), "c", "u")
    with pytest.raises(TypeError, match="real number"):
        CostGrid((True, 2), "c", "u")
    with pytest.raises(ValueError, match="unit"):
        CostGrid((1, 2), "c", " ")
    with pytest.raises(ValueError, match="cost"):
        CostGrid((1, 2), "", "u")


def test_observe_needs_every_architecture_at_every_grid_point():
    curves = GRID.observe({"a": {8.0: 0.9, 1.0: 0.1, 4.0: 0.5, 2.0: 0.3}, "b": dict(zip(GRID, [0.2, 0.2, 0.4, 0.8]))})
    assert curves.curve("a") == (0.1, 0.3, 0.5, 0.9)
    assert curves.at("b", 8.0) == 0.8 and curves.architectures == ("a", "b")
    with pytest.raises(OffGridError):
        curves.at("a", 6.0)
    with pytest.raises(KeyError, match="no architecture 'c'"):
        curves.curve("c")
    with pytest.raises(MissingGridPoint, match=r"'b' was not observed at grid point\(s\) 2, 8"):
        GRID.observe({"a": dict(zip(GRID, [0, 0, 0, 0])), "b": {1.0: 0, 4.0: 0}})
    with pytest.raises(OffGridError, match="cost=3"):
        GRID.observe({"a": {1.0: 0, 2.0: 0, 3.0: 0, 4.0: 0, 8.0: 0}})
    with pytest.raises(ValueError, match="finite"):
        GRID.observe({"a": {1.0: math.nan, 2.0: 0, 4.0: 0, 8.0: 0}})
    with pytest.raises(ValueError, match="at least one architecture"):
        GRID.observe({})
    with pytest.raises(TypeError, match="must map grid costs"):
        GRID.observe({"a": [1, 2, 3, 4]})


def test_grid_curves_refuse_short_curves():
    with pytest.raises(MissingGridPoint, match="3 scores for 4 grid points"):
        GridCurves(GRID, {"a": (1, 2, 3)})
    with pytest.raises(TypeError, match="CostGrid"):
        GridCurves((1, 2), {"a": (1, 2)})


# ------------------------------------------------------------------ upper envelope (ftip-00LJ)
def test_upper_envelope_is_the_running_maximum():
    assert upper_envelope([0.1, 0.5, 0.3, 0.4, 0.7]) == (0.1, 0.5, 0.5, 0.5, 0.7)
    assert upper_envelope([3]) == (3.0,)
    assert upper_envelope([-1, -2, -0.5]) == (-1.0, -1.0, -0.5)
    rng = random.Random(0)
    for _ in range(200):
        s = [rng.uniform(-1, 1) for _ in range(rng.randint(1, 9))]
        u = upper_envelope(s)
        assert all(u[i] == max(s[: i + 1]) for i in range(len(s)))
        assert all(x <= y for x, y in zip(u, u[1:])) and all(x >= y for x, y in zip(u, s))


@pytest.mark.parametrize("bad, err", [([], ValueError), ([1, math.nan], ValueError), ([1, math.inf], ValueError),
                                      ("12", TypeError), ([1, None], TypeError), (5, TypeError)])
def test_upper_envelope_refuses_bad_input(bad, err):
    with pytest.raises(err):
        upper_envelope(bad)


# ------------------------------------------------------------------ bands (ftip-00LK)
PROC = BandProcedure("evaluation document", n_boot=500, level=0.9, seed=3)


def hand_bootstrap(x, n_boot, level, seed):
    rng = np.random.Generator(np.random.PCG64(seed))
    idx = rng.integers(0, len(x), size=(n_boot, len(x)))
    means = np.asarray(x)[idx].mean(axis=1)
    return np.quantile(means, [(1 - level) / 2, (1 + level) / 2])


def test_bootstrap_band_matches_a_hand_rolled_bootstrap():
    samples = [[0.1, 0.4, 0.2], [0.3, 0.9, 0.5, 0.6], [1.0, 0.2], [0.5, 0.5, 0.7]]
    band = bootstrap_band(GRID, samples, PROC)
    for x, est, iv in zip(samples, band.estimates, band.intervals):
        assert est == pytest.approx(np.mean(x), abs=1e-15)
        assert (iv.low, iv.high) == tuple(hand_bootstrap(x, 500, 0.9, 3))
        assert iv.level == 0.9
    assert "evaluation documents, 500 resamples, level 0.9, seed 3" in band.procedure
    assert band.procedure.endswith(f"(procedure {PROC.fingerprint()[:12]})")
    assert band.lows == tuple(iv.low for iv in band.intervals)


def test_paired_difference_band_uses_per_unit_differences():
    rng = np.random.default_rng(1)
    base = [rng.normal(size=12) for _ in GRID]
    a = [x + 0.3 + 0.01 * rng.normal(size=12) for x in base]
    band = paired_difference_band(GRID, a, base, PROC)
    for x, y, est, iv in zip(a, base, band.estimates, band.intervals):
        assert est == pytest.approx(np.mean(x - y))
        assert (iv.low, iv.high) == tuple(hand_bootstrap(x - y, 500, 0.9, 3))
    # shared item difficulty cancels: the paired band is far narrower than endpoint subtraction
    cons = conservative_difference_band(bootstrap_band(GRID, a, PROC), bootstrap_band(GRID, base, PROC))
    assert all(p.width < 0.2 * c.width for p, c in zip(band.intervals, cons.intervals))
    assert band.order() == (1, 1, 1, 1) and cons.order() == (0, 0, 0, 0)
    assert cons.procedure.startswith("conservative")
    ia, ib = bootstrap_band(GRID, a, PROC).intervals[0], bootstrap_band(GRID, base, PROC).intervals[0]
    assert (cons.intervals[0].low, cons.intervals[0].high) == (ia.low - ib.high, ia.high - ib.low)


def test_bands_refuse_bad_input():
    with pytest.raises(MissingGridPoint, match="one sample per grid point"):
        bootstrap_band(GRID, [[1, 2]] * 3, PROC)
    with pytest.raises(ValueError, match=r"samples\[1\] \(grid point 2\)"):
        bootstrap_band(GRID, [[1, 2], [1], [1, 2], [1, 2]], PROC)
    with pytest.raises(ValueError, match="finite"):
        bootstrap_band(GRID, [[1, 2], [1, math.nan], [1, 2], [1, 2]], PROC)
    with pytest.raises(TypeError, match="BandProcedure"):
        bootstrap_band(GRID, [[1, 2]] * 4, "bootstrap")
    with pytest.raises(ValueError, match="same units"):
        paired_difference_band(GRID, [[1, 2, 3]] * 4, [[1, 2]] * 4, PROC)
    other = CostGrid((1, 2, 4, 9), "train_flops", "FLOP")
    with pytest.raises(ValueError, match="different grids"):
        conservative_difference_band(bootstrap_band(GRID, [[1, 2]] * 4, PROC),
                                     bootstrap_band(other, [[1, 2]] * 4, PROC))
    for kw, match in [({"n_boot": 10}, "n_boot"), ({"level": 1.0}, "level"), ({"seed": -1}, "seed"),
                      ({"unit": ""}, "unit")]:
        with pytest.raises(ValueError, match=match):
            BandProcedure(**{"unit": "seed", **kw})
    with pytest.raises(ValueError, match="low <= high"):
        Band(GRID, (0,) * 4, (Interval(1, 0, 0.9, "x"),) * 4, "p")
    with pytest.raises(ValueError, match=r"estimates\[2\]"):
        Band(GRID, (0, 0, math.nan, 0), (Interval(0, 1, 0.9, "x"),) * 4, "p")
    with pytest.raises(TypeError, match="samples=.1234. must be a sequence"):
        bootstrap_band(GRID, "1234", PROC)
    with pytest.raises(ValueError, match=r"samples\[0\].*shape \(2, 2\)"):
        bootstrap_band(GRID, [[[1, 2], [3, 4]]] * 4, PROC)
    with pytest.raises(ValueError, match=r"samples\[3\]"):
        bootstrap_band(GRID, [[1, 2]] * 3 + [["a", "b"]], PROC)


def test_bands_accept_a_2d_array_one_row_per_grid_point():
    x = np.arange(12, dtype=float).reshape(4, 3)
    band = bootstrap_band(GRID, x, PROC)
    assert band.estimates == (1.0, 4.0, 7.0, 10.0)


def test_procedure_fingerprint_changes_with_every_field():
    base = BandProcedure("seed")
    prints = {BandProcedure(**kw).fingerprint() for kw in
              [{"unit": "seed"}, {"unit": "item"}, {"unit": "seed", "n_boot": 101}, {"unit": "seed", "level": 0.9},
               {"unit": "seed", "seed": 1}]}
    assert len(prints) == 5 and base.fingerprint() in prints


def test_threshold_crossing_interval():
    ivs = tuple(Interval(lo, hi, 0.9, "x") for lo, hi in [(0.0, 0.2), (0.1, 0.45), (0.35, 0.6), (0.5, 0.9)])
    band = Band(GRID, (0.1, 0.3, 0.5, 0.7), ivs, "declared")
    c = threshold_crossing(band, 0.4)
    assert (c.by_upper, c.by_estimate, c.by_lower) == (2.0, 4.0, 8.0)
    c = threshold_crossing(band, 0.45)  # the upper bound reaching q exactly counts
    assert (c.by_upper, c.by_estimate, c.by_lower) == (2.0, 4.0, 8.0)
    c = threshold_crossing(band, 0.95)
    assert (c.by_upper, c.by_estimate, c.by_lower) == (None, None, None)
    assert "beyond the grid" in c.describe()
    c = threshold_crossing(band, -1.0)
    assert (c.by_upper, c.by_lower) == (1.0, 1.0)
    with pytest.raises(ValueError, match="finite"):
        threshold_crossing(band, math.nan)
    with pytest.raises(TypeError, match="Band"):
        threshold_crossing([0.1], 0.4)


# ------------------------------------------------------------------ frontier ordering (ftip-00LO)
def vec(flops, seconds):
    return CostVector({"train_flops": flops, "wall_time": seconds}, {"train_flops": "FLOP", "wall_time": "s"})


POINTS = {"fast": [(vec(1, 10), 0.2), (vec(2, 20), 0.5)], "lean": [(vec(2, 5), 0.4), (vec(4, 8), 0.6)]}
BY_FLOPS = Scalarization({"train_flops": 1.0}, {"train_flops": "FLOP"}, "FLOP")
BY_TIME = Scalarization({"wall_time": 1.0}, {"wall_time": "s"}, "s")


def test_frontier_ordering_depends_on_the_scalarization():
    f = frontier_ordering(POINTS, BY_FLOPS, [1, 2, 4])
    assert [r.ranking for r in f] == [(("fast",), ("lean",)), (("fast",), ("lean",)), (("lean",), ("fast",))]
    assert f[0].values["lean"] == -math.inf and f[2].values == {"fast": 0.5, "lean": 0.6}
    t = frontier_ordering(POINTS, BY_TIME, [5, 10, 20])
    assert [r.ranking for r in t] == [(("lean",), ("fast",))] * 3
    tie = frontier_ordering({"x": [(vec(1, 1), 0.3)], "y": [(vec(1, 1), 0.3)], "z": [(vec(1, 1), 0.1)]},
                            BY_FLOPS, [1])
    assert tie[0].ranking == (("x", "y"), ("z",))


def test_frontier_ordering_refuses_unknown_costs_and_bad_input():
    unknown = {"a": [(CostVector({"train_flops": UNKNOWN}, {"train_flops": "FLOP"}), 0.1)]}
    with pytest.raises(ValueError, match="no scalar cost"):
        frontier_ordering(unknown, BY_FLOPS, [1])
    with pytest.raises(TypeError, match="Scalarization"):
        frontier_ordering(POINTS, {"train_flops": 1}, [1])
    with pytest.raises(ValueError, match="budgets"):
        frontier_ordering(POINTS, BY_FLOPS, [])
    with pytest.raises(ValueError, match=">= 0"):
        frontier_ordering(POINTS, BY_FLOPS, [-1])
    with pytest.raises(TypeError, match="pair"):
        frontier_ordering({"a": [(1, 0.1)]}, BY_FLOPS, [1])
    with pytest.raises(ValueError, match="no measured points"):
        frontier_ordering({"a": []}, BY_FLOPS, [1])


# ------------------------------------------------------------------ crossings (ftip-00LP)
def curves(a, b):
    return GridCurves(GRID, {"a": a, "b": b})


def test_pointwise_order_and_crossings():
    c = curves((0.5, 0.4, 0.3, 0.2), (0.1, 0.4, 0.6, 0.1))
    assert pointwise_order(c, "a", "b") == (1, 0, -1, 1)
    assert crossing_points(c, "a", "b") == (Crossing(1.0, 4.0, "a", "b", (2.0,)), Crossing(4.0, 8.0, "b", "a", ()))
    # a tie between the same leader is a touch, not a crossing
    assert crossing_points(curves((0.5, 0.4, 0.5, 0.5), (0.1, 0.4, 0.1, 0.1)), "a", "b") == ()
    # leading and trailing ties start and end no crossing
    assert crossing_points(curves((0.1, 0.5, 0.1, 0.1), (0.1, 0.2, 0.3, 0.1)), "a", "b") == (
        Crossing(2.0, 4.0, "a", "b", ()),)
    # a tolerance turns near-ties into ties
    near = curves((0.50, 0.41, 0.30, 0.2), (0.1, 0.40, 0.31, 0.1))
    assert pointwise_order(near, "a", "b", tolerance=0.02) == (1, 0, 0, 1)
    assert crossing_points(near, "a", "b", tolerance=0.02) == ()
    assert len(crossing_points(near, "a", "b")) == 2
    assert crossing_points(near, "b", "a")[0].leader_before == "a"


def test_crossings_by_brute_force():
    rng = random.Random(2)
    for _ in range(300):
        order = [rng.choice((-1, 0, 1)) for _ in GRID]
        got = order_crossings(GRID, order, "a", "b")
        strict = [(i, o) for i, o in enumerate(order) if o]
        expect = [(GRID.points[i], GRID.points[j]) for (i, o), (j, p) in itertools.pairwise(strict) if o != p]
        assert [(c.before, c.after) for c in got] == expect


def test_crossings_refuse_bad_input():
    c = curves((1, 2, 3, 4), (1, 2, 3, 4))
    with pytest.raises(ValueError, match="two different"):
        pointwise_order(c, "a", "a")
    with pytest.raises(ValueError, match="tolerance"):
        pointwise_order(c, "a", "b", tolerance=-0.1)
    with pytest.raises(KeyError):
        pointwise_order(c, "a", "c")
    with pytest.raises(ValueError, match="one of -1, 0, 1"):
        order_crossings(GRID, (1, 2, 0, 0), "a", "b")
    with pytest.raises(ValueError, match="per grid point"):
        order_crossings(GRID, (1, 0), "a", "b")
    with pytest.raises(TypeError, match="GridCurves"):
        crossing_points({"a": (1,)}, "a", "b")
