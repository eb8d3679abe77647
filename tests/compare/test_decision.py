"""Tests of ftipbook.compare.decision (ftip-00K8)."""
import math

import pytest

from ftipbook.compare.cost import UNKNOWN, CostVector
from ftipbook.compare.decision import (INVERSE_FRONTIER, WITNESS, Decision, ThresholdCostClaim,
                                       decision_rule)
from ftipbook.compare.frontier import (CostInfimumFamily, CostRatio, DeclaredFrontier, Intervention,
                                       IsoQualityRatio, NotReached, ScoredCostMeasurement, Undefined)

P = "protocol-1"
COSTS = CostVector.standard(train_flops=10.0, inference_flops=2.0, memory=5.0, context_length=64)


def witness(system, cost, score=1.0, protocol=P, q=0.5, ci="bootstrap 95%", stop="fixed budget", costs=COSTS):
    m = ScoredCostMeasurement(system, cost, score, protocol, "FLOP")
    return ThresholdCostClaim(system, q, WITNESS, m, protocol, ci, stop, costs)


def frontier(system, interventions, q=0.5, protocol=P):
    f = DeclaredFrontier(system, tuple(interventions), "FLOP", protocol, "common recipe")
    return ThresholdCostClaim(system, q, INVERSE_FRONTIER, f, protocol, "bootstrap 95%", "fixed budget", COSTS)


def test_witnesses_under_one_protocol():
    d = decision_rule(witness("A", 2.0), witness("B", 8.0), ["train_flops"])
    assert isinstance(d, Decision) and d.verdict == "more cost-efficient" and d.kind == WITNESS
    assert isinstance(d.ratio, CostRatio) and d.ratio.value == 0.25
    assert "does not identify the infimum" in d.reason
    d = decision_rule(witness("A", 8.0), witness("B", 2.0), ["train_flops"])
    assert d.verdict == "descriptive" and d.ratio.value == 4.0


def test_inverse_frontier_values():
    a = frontier("A", [Intervention("a1", 3.0, 0.6), Intervention("a2", 1.0, 0.4)])
    b = frontier("B", [Intervention("b1", 6.0, 0.7)])
    d = decision_rule(a, b, ["train_flops"])
    assert d.verdict == "more cost-efficient" and isinstance(d.ratio, IsoQualityRatio) and d.ratio.value == 0.5
    assert "inverse-frontier" in d.reason and a.cost == 3.0


def test_unknown_cases():
    assert "protocols" in decision_rule(witness("A", 1.0), witness("B", 2.0, protocol="p2"), ["memory"]).reason
    d = decision_rule(witness("A", 1.0, ci=UNKNOWN), witness("B", 2.0), ["memory"])
    assert d.verdict == "unknown" and "confidence procedure of A" in d.reason and d.ratio is None
    assert "stopping rules differ" in decision_rule(witness("A", 1.0), witness("B", 2.0, stop="other"),
                                                    ["memory"]).reason
    d = decision_rule(witness("A", 1.0), witness("B", 2.0), ["memory", "energy"])
    assert d.verdict == "unknown" and "energy" in d.reason
    d = decision_rule(witness("A", 1.0), witness("B", 2.0), ["latency"])
    assert d.verdict == "unknown" and "latency" in d.reason
    assert "different targets" in decision_rule(witness("A", 1.0, q=0.4), witness("B", 2.0), ["memory"]).reason


def test_zero_denominator_and_not_reached():
    d = decision_rule(witness("A", 0.0), witness("B", 0.0), ["memory"])
    assert d.verdict == "descriptive" and isinstance(d.ratio, Undefined) and "denominator" in d.ratio.reason
    a = frontier("A", [CostInfimumFamily("eta_n", 0.0, 1.0)])
    b = frontier("B", [CostInfimumFamily("eta_m", 0.0, 1.0)])
    d = decision_rule(a, b, ["memory"])
    assert isinstance(d.ratio, Undefined) and "0/0" in d.ratio.reason and d.verdict == "descriptive"
    miss = ThresholdCostClaim("B", 0.5, WITNESS, NotReached(0.5, "B", 0.3, 4), P, "bootstrap 95%",
                              "fixed budget", COSTS)
    d = decision_rule(witness("A", 5.0), miss, ["memory"])
    assert d.verdict == "more cost-efficient" and isinstance(d.ratio, Undefined) and math.isinf(miss.cost)
    miss_a = ThresholdCostClaim("A", 0.5, WITNESS, NotReached(0.5, "A", 0.3, 4), P, "bootstrap 95%",
                                "fixed budget", COSTS)
    assert decision_rule(miss_a, miss, ["memory"]).verdict == "unknown"


def test_mixed_kinds_are_descriptive():
    b = frontier("B", [Intervention("b1", 6.0, 0.7)])
    d = decision_rule(witness("A", 1.0), b, ["memory"])
    assert d.verdict == "descriptive" and d.ratio is None and d.kind is None


def test_bad_input():
    m = ScoredCostMeasurement("A", 1.0, 0.9, P, "FLOP")
    with pytest.raises(ValueError, match="kind"):
        ThresholdCostClaim("A", 0.5, "guess", m, P, "ci", "stop", COSTS)
    with pytest.raises(ValueError, match="no witness"):
        ThresholdCostClaim("A", 0.95, WITNESS, m, P, "ci", "stop", COSTS)
    with pytest.raises(ValueError, match="declared"):
        ThresholdCostClaim("A", 0.5, WITNESS, m, "p2", "ci", "stop", COSTS)
    with pytest.raises(TypeError, match="DeclaredFrontier"):
        ThresholdCostClaim("A", 0.5, INVERSE_FRONTIER, m, P, "ci", "stop", COSTS)
    with pytest.raises(TypeError, match="ScoredCostMeasurement"):
        ThresholdCostClaim("A", 0.5, WITNESS, 3.0, P, "ci", "stop", COSTS)
    with pytest.raises(ValueError, match="confidence_procedure"):
        ThresholdCostClaim("A", 0.5, WITNESS, m, P, "", "stop", COSTS)
    with pytest.raises(TypeError, match="CostVector"):
        ThresholdCostClaim("A", 0.5, WITNESS, m, P, "ci", "stop", {"memory": 1.0})
    with pytest.raises(ValueError, match="q"):
        ThresholdCostClaim("A", math.nan, WITNESS, m, P, "ci", "stop", COSTS)
    with pytest.raises(ValueError, match="NotReached is for"):
        ThresholdCostClaim("A", 0.5, WITNESS, NotReached(0.6, "A", 0.1, 1), P, "ci", "stop", COSTS)
    with pytest.raises(TypeError, match="ThresholdCostClaim"):
        decision_rule(1.0, witness("B", 1.0), ["memory"])
    with pytest.raises(TypeError, match="needs"):
        decision_rule(witness("A", 1.0), witness("B", 1.0), "memory")
    with pytest.raises(ValueError, match="needs is empty"):
        decision_rule(witness("A", 1.0), witness("B", 1.0), [])
