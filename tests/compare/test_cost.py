"""Cost vectors, declared scalarizations and Pareto dominance (ftip-00JQ, ftip-00L9)."""
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ftipbook.compare.cost import STANDARD_UNITS, UNKNOWN, CostVector, Scalarization, Unknown, pareto_dominates

UNITS = {"train": "FLOP", "memory": "GB"}


def vec(train, memory):
    return CostVector({"train": train, "memory": memory}, UNITS)


def test_standard_vector_marks_omitted_coordinates_unknown():
    c = CostVector.standard(train_flops=3e12, wall_time=0.5)
    assert c.names == tuple(STANDARD_UNITS)
    assert set(c.unknown()) == {"inference_flops", "memory", "energy", "context_length"}
    assert c["wall_time"] == 0.5 and c.units["wall_time"] == "s"
    assert ("energy", "UNKNOWN", "J") in c.rows()
    with pytest.raises(ValueError, match="unknown coordinate"):
        CostVector.standard(speed=2.0)


@pytest.mark.parametrize("bad, err", [(-1.0, ValueError), (math.nan, ValueError), ("3", TypeError), (True, TypeError)])
def test_cost_vector_refuses_bad_values(bad, err):
    with pytest.raises(err):
        vec(bad, 1.0)


def test_cost_vector_needs_units_for_every_coordinate():
    with pytest.raises(ValueError, match="unit"):
        CostVector({"train": 1.0}, {"memory": "GB"})
    with pytest.raises(ValueError, match="no unit"):
        CostVector({"train": 1.0}, {"train": " "})
    with pytest.raises(KeyError, match="no coordinate"):
        vec(1.0, 2.0)["energy"]


def test_infinite_cost_is_allowed_but_frozen():
    c = vec(math.inf, 1.0)
    assert c["train"] == math.inf
    with pytest.raises(TypeError):
        c.values["train"] = 0.0  # read-only mapping


def test_scalarization_reproduces_the_order_flip_of_ftip_00jt():
    # c1 = (train 2, memory 1), c2 = (train 1, memory 2): equal under w = (1, 1), flipped by the others
    c1, c2 = vec(2.0, 1.0), vec(1.0, 2.0)
    equal = Scalarization({"train": 1, "memory": 1}, UNITS)
    train_heavy = Scalarization({"train": 2, "memory": 1}, UNITS)
    memory_heavy = Scalarization({"train": 1, "memory": 2}, UNITS)
    assert equal(c1) == equal(c2) == 3
    assert (train_heavy(c1), train_heavy(c2)) == (5, 4)
    assert (memory_heavy(c1), memory_heavy(c2)) == (4, 5)


def test_scalarization_refuses_negative_weights_and_unit_mismatch():
    with pytest.raises(ValueError, match=">= 0"):
        Scalarization({"train": -1.0, "memory": 1.0}, UNITS)
    with pytest.raises(ValueError, match="all weights are zero"):
        Scalarization({"train": 0.0}, {"train": "FLOP"})
    with pytest.raises(ValueError, match="unit"):
        Scalarization({"train": 1.0}, {"memory": "GB"})
    seconds = Scalarization({"wall": 1.0}, {"wall": "s"})
    with pytest.raises(ValueError, match="unit mismatch"):
        seconds(CostVector({"wall": 1500.0}, {"wall": "ms"}))
    with pytest.raises(ValueError, match="no coordinate"):
        seconds(vec(1.0, 1.0))
    with pytest.raises(TypeError):
        seconds({"wall": 1.0})


def test_unknown_with_positive_weight_gives_unknown_and_zero_weight_ignores_it():
    c = vec(2.0, UNKNOWN)
    out = Scalarization({"train": 1.0, "memory": 0.5}, UNITS)(c)
    assert isinstance(out, Unknown) and "memory" in out.reason
    assert Scalarization({"train": 1.0, "memory": 0.0}, UNITS)(c) == 2.0
    # zero weight on an infinite coordinate contributes nothing (no 0 * inf = nan)
    assert Scalarization({"train": 1.0, "memory": 0.0}, UNITS)(vec(2.0, math.inf)) == 2.0


def test_unknown_is_not_a_number():
    with pytest.raises(TypeError):
        float(UNKNOWN)
    with pytest.raises(TypeError):
        bool(UNKNOWN)
    with pytest.raises(TypeError):
        UNKNOWN + 1


def test_pareto_dominance_three_valued():
    assert pareto_dominates(vec(1.0, 1.0), vec(1.0, 2.0)) is True
    assert pareto_dominates(vec(1.0, 2.0), vec(1.0, 2.0)) is False  # equal: not strictly better anywhere
    assert pareto_dominates(vec(2.0, 1.0), vec(1.0, 2.0)) is False
    assert isinstance(pareto_dominates(vec(1.0, UNKNOWN), vec(2.0, 2.0)), Unknown)
    assert pareto_dominates(vec(3.0, UNKNOWN), vec(2.0, 2.0)) is False  # already worse on a known coordinate
    with pytest.raises(ValueError, match="unit"):
        pareto_dominates(vec(1.0, 1.0), CostVector({"train": 1.0, "memory": 1.0}, {"train": "FLOP", "memory": "MB"}))


costs = st.floats(min_value=0, max_value=1e6, allow_nan=False)
weights = st.floats(min_value=0, max_value=10, allow_nan=False)


@given(costs, costs, costs, costs, weights, weights)
def test_dominance_implies_no_larger_scalar_cost_for_any_weights(a1, a2, b1, b2, w1, w2):
    a, b = vec(a1, a2), vec(b1, b2)
    if w1 + w2 == 0:
        return
    s = Scalarization({"train": w1, "memory": w2}, UNITS)
    if pareto_dominates(a, b) is True:
        assert s(a) <= s(b)


def test_training_flops_is_three_forward_passes_per_token():
    from ftipbook.compare.cost import training_flops
    from ftipbook.model import ModelConfig, flops_per_token

    cfg = ModelConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_seq_len=64)
    assert training_flops(cfg, 1000, 64) == 3 * 1000 * flops_per_token(cfg, 64, "prefill")
    assert training_flops(cfg, 0, 64) == 0
    with pytest.raises(ValueError):
        training_flops(cfg, -1, 64)
