"""Inverse cost, iso-quality ratio (ftip-00JP) and scalar order flips (ftip-00JQ, 00JT)."""
import itertools
import math
import random
from fractions import Fraction

import pytest

from ftipbook.compare.cost import UNKNOWN, CostVector, Scalarization, order_flip_weights
from ftipbook.compare.frontier import (
    CostInfimumFamily,
    DeclaredFrontier,
    Intervention,
    InterventionFamily,
    IsoQualityRatio,
    Undefined,
    frontier_value,
    inverse_cost,
    iso_quality_ratio,
)


def frontier(system, items, unit="FLOP", interface="acc", arm="common"):
    return DeclaredFrontier(system, items, unit, interface, arm)


ETAS = [Intervention("a", 1.0, 0.2), Intervention("b", 3.0, 0.6), Intervention("c", 2.0, 0.5),
        Intervention("d", math.inf, 0.9)]


def test_inverse_cost_is_the_smallest_budget_reaching_q():
    assert inverse_cost(ETAS, 0.45).value == inverse_cost(ETAS, 0.5).value  # the frontier is a step
    out = inverse_cost(ETAS, 0.5)
    assert (out.value, out.attained, out.witness) == (2.0, True, "c")
    assert inverse_cost(ETAS, 0.6).value == 3.0
    assert inverse_cost(ETAS, -5).value == 1.0  # the cheapest feasible intervention
    # the infinite-cost intervention is never feasible: q = 0.9 is never reached
    out = inverse_cost(ETAS, 0.9)
    assert (out.value, out.attained, out.witness) == (math.inf, False, None)
    assert inverse_cost([], 0.0).value == math.inf  # inf of the empty set
    assert inverse_cost(iter(ETAS), 0.5).value == 2.0  # any iterable, read once


def test_inverse_cost_matches_a_budget_scan_on_random_sets():
    rng = random.Random(0)
    for _ in range(200):
        etas = [Intervention(f"e{i}", Fraction(rng.randint(0, 8), 2), Fraction(rng.randint(0, 10), 10))
                for i in range(rng.randint(1, 5))]
        grid = [Fraction(k, 2) for k in range(17)]  # every declared cost is on the grid
        for q in (k / 10 for k in range(-1, 12)):
            reach = [c for c in grid if frontier_value(etas, c).value >= q]
            out = inverse_cost(etas, q)
            assert out.value == (min(reach) if reach else math.inf)
            assert out.attained == bool(reach)


def test_the_1_over_n_family_has_zero_inverse_cost_unattained():
    fam = CostInfimumFamily("eta_n", 0.0, 1.0)
    out = inverse_cost([fam], 1.0)
    assert (out.value, out.attained, out.witness) == (0.0, False, None)
    assert frontier_value([fam], 0.0).value == -math.inf  # no member costs 0
    assert frontier_value([fam], 1e-12).value == 1.0
    # every finite truncation has a positive, attained inverse cost
    for n in (1, 10, 1000):
        trunc = [Intervention(f"eta_{k}", 1 / k, 1.0) for k in range(1, n + 1)]
        assert inverse_cost(trunc, 1.0).value == 1 / n and inverse_cost(trunc, 1.0).attained
    # with an attaining member at the infimum the infimum is attained
    assert inverse_cost([fam, Intervention("free", 0.0, 1.0)], 1.0).attained


def test_a_budget_can_reach_q_through_an_unattained_supremum_without_a_witness():
    sup = InterventionFamily("1 - 1/n", 2.0, 1.0, attained=False)
    out = inverse_cost([sup], 1.0)
    assert (out.value, out.attained, out.witness) == (2.0, True, None)
    assert inverse_cost([sup], 0.9).witness == "1 - 1/n"  # some member exceeds 0.9
    assert inverse_cost([InterventionFamily("n", 1.0, math.inf, attained=False)], 1e9).witness == "n"


def test_iso_quality_ratio_on_and_off_the_domain():
    a = frontier("A", [Intervention("x", 2.0, 0.7)])
    b = frontier("B", [Intervention("y", 8.0, 0.7)])
    r = iso_quality_ratio(a, b, 0.7)
    assert isinstance(r, IsoQualityRatio) and r.value == 0.25 and r.q == 0.7
    assert r.numerator.value == 2.0 and r.denominator.value == 8.0
    zero = frontier("Z", [Intervention("free", 0.0, 0.7)])
    assert iso_quality_ratio(zero, b, 0.7).value == 0.0  # zero numerator is allowed
    den0 = iso_quality_ratio(a, zero, 0.7)
    assert isinstance(den0, Undefined) and "denominator must be positive" in den0.reason
    fam = frontier("F", [CostInfimumFamily("eta_n", 0.0, 1.0)])
    zz = iso_quality_ratio(fam, fam, 1.0)
    assert isinstance(zz, Undefined) and "0/0" in zz.reason
    never = iso_quality_ratio(a, b, 0.8)
    assert isinstance(never, Undefined) and "C_A(q) = +inf" in never.reason
    assert "C_B(q) = +inf" in iso_quality_ratio(a, frontier("B", [Intervention("y", 8, 0.1)]), 0.5).reason
    with pytest.raises(TypeError):
        float(zz)


@pytest.mark.parametrize("field, kwargs", [("cost_unit", {"unit": "s"}), ("interface", {"interface": "pass@1"}),
                                           ("arm", {"arm": "equal tuning"})])
def test_iso_quality_ratio_refuses_mismatched_labels(field, kwargs):
    a = frontier("A", [Intervention("x", 2.0, 0.7)])
    b = frontier("B", [Intervention("y", 8.0, 0.7)], **kwargs)
    with pytest.raises(ValueError, match=field):
        iso_quality_ratio(a, b, 0.7)


def test_bad_inputs_are_refused_by_name():
    with pytest.raises(ValueError, match="q"):
        inverse_cost(ETAS, math.nan)
    with pytest.raises(ValueError, match="finite"):
        inverse_cost(ETAS, math.inf)
    with pytest.raises(TypeError, match="q='0.5' must be a real number"):
        inverse_cost(ETAS, "0.5")
    with pytest.raises(TypeError, match="CostInfimumFamily"):
        inverse_cost([(1.0, 0.5)], 0.5)
    with pytest.raises(ValueError, match="infeasible family"):
        CostInfimumFamily("bad", math.inf, 1.0)
    with pytest.raises(ValueError, match=r"\[0, \+inf\]"):
        CostInfimumFamily("bad", -1.0, 1.0)
    with pytest.raises(ValueError, match="arm"):
        frontier("A", ETAS, arm=" ")
    with pytest.raises(TypeError, match="DeclaredFrontier"):
        iso_quality_ratio(ETAS, ETAS, 0.5)


# ----------------------------------------------------------------------------------------------
# scalar order flips (ftip-00JQ, 00JT)
# ----------------------------------------------------------------------------------------------
UNITS = {"train": "FLOP", "memory": "GB"}
C1 = CostVector({"train": 2, "memory": 1}, UNITS)
C2 = CostVector({"train": 1, "memory": 2}, UNITS)


def test_order_flip_of_the_two_coordinate_example():
    flip = order_flip_weights(C1, C2, Scalarization({"train": 2, "memory": 1}, UNITS))
    assert dict(flip.difference) == {"train": 1, "memory": -1}
    assert flip.reference_order == "b" and flip.flips
    # 2 w_t + w_m = w_t + 2 w_m  <=>  w_t = w_m: with w_m = 1 the tie is at w_t = 1, with w_t = 2 at w_m = 2
    assert dict(flip.thresholds) == {"train": 1.0, "memory": 2.0}
    past = flip.with_weight("memory", 3)
    assert past(C1) < past(C2)  # order reversed beyond the threshold
    at = flip.with_weight("memory", 2)
    assert at(C1) == at(C2)
    tie = order_flip_weights(C1, C2, Scalarization({"train": 1, "memory": 1}, UNITS))
    assert tie.reference_order == "tie" and tie.flips


def test_no_flip_under_pareto_dominance_and_thresholds_solve_the_tie():
    rng = random.Random(1)
    names = ["x", "y", "z"]
    units = {n: "u" for n in names}
    for _ in range(300):
        a = CostVector({n: rng.randint(0, 5) for n in names}, units)
        b = CostVector({n: rng.randint(0, 5) for n in names}, units)
        w = {n: rng.randint(0, 3) for n in names}
        if not any(w.values()):
            continue
        flip = order_flip_weights(a, b, Scalarization(w, units))
        d = {n: a[n] - b[n] for n in names}
        total = sum(w[n] * d[n] for n in names)
        assert flip.reference_order == ("a" if total < 0 else "b" if total > 0 else "tie")
        both_signs = any(x > 0 for x in d.values()) and any(x < 0 for x in d.values())
        if flip.reference_order == "tie":
            assert flip.flips == both_signs
        else:
            other = -1 if total > 0 else 1
            assert flip.flips == any(x * other > 0 for x in d.values())
        for n, t in flip.thresholds.items():
            if t is not None:
                assert t >= 0 and math.isclose(sum((t if m == n else w[m]) * d[m] for m in names), 0, abs_tol=1e-9)
            else:  # no nonnegative weight on n alone ties them
                assert d[n] == 0 or w[n] - total / d[n] < 0
        # brute force over a weight grid: a strictly opposite order exists iff flips (up to the grid)
        grid_orders = {(lambda s: "a" if s < 0 else "b" if s > 0 else "tie")(sum(g[i] * d[n] for i, n in enumerate(names)))
                       for g in itertools.product(range(4), repeat=3) if any(g)}
        if flip.flips:
            assert len(grid_orders - {"tie"}) == 2


def test_order_flip_refuses_unknown_infinite_mismatched_and_negative():
    s = Scalarization({"train": 1, "memory": 1}, UNITS)
    with pytest.raises(ValueError, match="unknown coordinate"):
        order_flip_weights(CostVector({"train": 1, "memory": UNKNOWN}, UNITS), C2, s)
    with pytest.raises(ValueError, match="infinite"):
        order_flip_weights(CostVector({"train": math.inf, "memory": 1}, UNITS), C2, s)
    with pytest.raises(ValueError, match="unit mismatch on 'memory'"):
        order_flip_weights(CostVector({"train": 1, "memory": 1}, {"train": "FLOP", "memory": "MB"}), C2, s)
    with pytest.raises(ValueError, match="weight of 'memory' is -1"):
        order_flip_weights(C1, C2, s).with_weight("memory", -1)
    with pytest.raises(TypeError, match="Scalarization"):
        order_flip_weights(C1, C2, {"train": 1})
    with pytest.raises(TypeError, match="CostVector"):
        order_flip_weights(C1, (1, 2), s)
    with pytest.raises(KeyError, match="energy"):
        order_flip_weights(C1, C2, s).with_weight("energy", 1)


def test_checkpoint_cost_vector_counts_and_refusals():
    from ftipbook import zoo
    from ftipbook.compare.cost import checkpoint_cost_vector
    from ftipbook.model import ModelConfig, flops_per_token
    from ftipbook.model.accounting import cache_bytes

    rec = zoo.verify("full-mla@100")
    vec = checkpoint_cost_vector(rec, 32)
    cfg = ModelConfig(**rec["model"])
    tokens = 100 * rec["train"]["batch_size"] * rec["train"]["seq_len"]
    assert vec["train_flops"] == 3 * flops_per_token(cfg, rec["train"]["seq_len"], "prefill") * tokens
    assert vec["inference_flops"] == flops_per_token(cfg, 32, "decode") < flops_per_token(cfg, 64, "decode")
    assert vec["memory"] == cache_bytes(cfg, 32) and vec["context_length"] == 32
    assert vec.unknown() == ("wall_time", "energy")
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="context"):
            checkpoint_cost_vector(rec, bad)
    with pytest.raises(ValueError, match=r"\['step'\]"):
        checkpoint_cost_vector({k: v for k, v in rec.items() if k != "step"}, 64)
