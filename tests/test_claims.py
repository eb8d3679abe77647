"""Capability claims, resource bounds and the elicitation/acquisition witnesses (ftip-0003, 0005, 0007)."""
import math
from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.claims import (BudgetExceededError, BudgetPhaseError, CapabilityClaim, Component, ConfidenceRule,
                             CostModel, DeploymentBudget, DevelopmentBudget, EvaluationRule, EvaluationSet,
                             FeedbackSource, Measurement, Procedure, Quantity, ResourceBound, StartingArtifact,
                             TransferLeakError, UnitMismatchError, Verdict, acquisition_witness, binomial_tail,
                             elicitation_witness)
from ftipbook.eval.stats import Interval
from ftipbook.prob import FiniteLaw


# ---- an independent binomial tail, exact in rationals ---------------------------------------------
def upper_tail(k: int, n: int, p: F) -> F:
    """P(X >= k) for X ~ Binomial(n, p), summed exactly."""
    return sum((math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1)), F(0))


def brackets(k: int, n: int, level: float, low: float, high: float, delta: float = 1e-7) -> None:
    """The CP ends are where the exact tails cross alpha/2: check the sign change around each end."""
    a = F((1 - level) / 2)
    if k == 0:
        assert low == 0
    else:
        assert upper_tail(k, n, F(max(low - delta, 0))) < a < upper_tail(k, n, F(min(low + delta, 1)))
    if k == n:
        assert high == 1
    else:
        lower = lambda p: 1 - upper_tail(k + 1, n, p)  # P(X <= k)
        assert lower(F(max(high - delta, 0))) > a > lower(F(min(high + delta, 1)))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_clopper_pearson_ends_solve_the_exact_binomial_tails(kn, level):
    k, n = kn
    iv = ConfidenceRule(level).interval(k, n)
    brackets(k, n, level, iv.low, iv.high)
    assert iv.low <= k / n <= iv.high


@pytest.mark.parametrize("n", [1, 7, 72, 500])
def test_clopper_pearson_closed_forms_at_zero_and_all_successes(n):
    rule = ConfidenceRule(0.95)
    assert rule.interval(0, n).high == pytest.approx(1 - 0.025 ** (1 / n), abs=1e-12)
    assert rule.interval(n, n).low == pytest.approx(0.025 ** (1 / n), abs=1e-12)


def test_min_trials_matches_the_closed_form_and_is_minimal():
    rule = ConfidenceRule(0.95)
    # by hand: 1 - 0.025^(1/n) <= 0.05  <=>  n >= log 0.025 / log 0.95 = 71.9...
    assert rule.min_trials(0.05, 0.5) == math.ceil(math.log(0.025) / math.log(0.95)) == 72
    n = rule.min_trials(0.1, 0.99)
    assert n == math.ceil(math.log(0.025) / math.log(0.99))  # the upper threshold binds here
    assert rule.interval(n, n).low >= 0.99 > rule.interval(n - 1, n - 1).low
    with pytest.raises(ValueError, match="never be certified"):
        rule.min_trials(0, 0.5)
    with pytest.raises(ValueError, match="never be certified"):
        rule.min_trials(0.1, 1)


# ---- units and budgets ----------------------------------------------------------------------------
def test_quantities_add_only_in_one_unit():
    assert Quantity(3, "token") + Quantity(F(1, 2), "token") == Quantity(F(7, 2), "token")
    with pytest.raises(UnitMismatchError, match="'token' and 's'"):
        Quantity(3, "token") + Quantity(1, "s")
    with pytest.raises(UnitMismatchError):
        Quantity(3, "token") <= Quantity(4, "s")
    assert isinstance(UnitMismatchError("x"), ValueError)


@pytest.mark.parametrize("amount,unit,err", [(-1, "s", ValueError), (math.nan, "s", ValueError),
                                             (True, "s", TypeError), ("3", "s", TypeError), (1, "", ValueError)])
def test_quantity_refuses_bad_input(amount, unit, err):
    with pytest.raises(err):
        Quantity(amount, unit)


def test_total_needs_a_cost_model_for_mixed_units():
    dev = DevelopmentBudget({"train_tokens": (1_000, "token"), "wall_clock": (F(3, 2), "s"),
                             "rollouts": (8, "rollout")})
    with pytest.raises(UnitMismatchError):
        dev.total()
    cm = CostModel("FLOP", {"token": 6 * 10**5, "s": 10**9, "rollout": 3 * 10**7})
    assert dev.total(cm) == Quantity(1_000 * 6 * 10**5 + F(3, 2) * 10**9 + 8 * 3 * 10**7, "FLOP")
    with pytest.raises(UnitMismatchError, match="no rate for unit 'rollout'"):
        dev.total(CostModel("FLOP", {"token": 1, "s": 1}))
    assert DeploymentBudget({"a": (2, "sample"), "b": (3, "sample")}).total() == Quantity(5, "sample")


def test_development_and_deployment_budgets_never_mix():
    dev = DevelopmentBudget({"samples": (16, "sample")})
    dep = DeploymentBudget({"samples": (16, "sample")})
    assert dev != dep  # same coordinates, different phase
    for op in (lambda: dev + dep, lambda: dep + dev, lambda: dev.within(dep), lambda: dep.require_within(dev)):
        with pytest.raises(BudgetPhaseError, match="separate"):
            op()
    with pytest.raises(TypeError):
        ResourceBound(development=dep, deployment=dep)
    with pytest.raises(BudgetPhaseError):
        Measurement(1, 2, "B", "exact", "greedy", budget=dev)


def test_budget_sum_and_within_are_coordinatewise():
    a = DeploymentBudget({"samples": (4, "sample"), "tokens": (100, "token")})
    b = DeploymentBudget({"samples": (12, "sample"), "tool_calls": (2, "call")})
    s = a + b
    assert s.coordinates == {"samples": Quantity(16, "sample"), "tokens": Quantity(100, "token"),
                             "tool_calls": Quantity(2, "call")}
    bound = DeploymentBudget({"samples": (16, "sample"), "tokens": (100, "token"), "tool_calls": (1, "call")})
    assert a.within(bound) and not s.within(bound)
    assert s.violations(bound) == ("tool_calls: used 2 call > bound 1 call",)
    with pytest.raises(BudgetExceededError, match="tool_calls"):
        s.require_within(bound)
    undeclared = DeploymentBudget({"wall": (1, "s")})
    assert "declares no such coordinate" in undeclared.violations(bound)[0]
    with pytest.raises(UnitMismatchError):
        DeploymentBudget({"samples": (1, "s")}).within(bound)
    with pytest.raises(KeyError, match="no coordinate"):
        a["wall"]


@given(st.dictionaries(st.sampled_from("abcd"), st.integers(0, 50), max_size=4),
       st.dictionaries(st.sampled_from("abcd"), st.integers(0, 50), max_size=4))
def test_budget_addition_matches_a_dictionary_sum(x, y):
    bx = DevelopmentBudget({k: (v, "token") for k, v in x.items()})
    by = DevelopmentBudget({k: (v, "token") for k, v in y.items()})
    expected = {k: x.get(k, 0) + y.get(k, 0) for k in set(x) | set(y)}
    assert {k: q.amount for k, q in (bx + by).coordinates.items()} == expected
    assert bx.within(bx + by)


# ---- the four objects -----------------------------------------------------------------------------
def _claim(**over):
    start = StartingArtifact("base", artifact=object(), tools=(Component("calculator", "tool"),))
    proc = Procedure("sft", feedback=(FeedbackSource("reference answers", "examples"),))
    ev = EvaluationRule(["1+1", "2+2"], "final checkpoint", "greedy, one sample",
                        utility=lambda x, y: int(y == str(eval(x))))
    bound = ResourceBound(DevelopmentBudget({"train_tokens": (10, "token")}),
                          DeploymentBudget({"samples": (1, "sample")}))
    kw = dict(start=start, procedure=proc, evaluation=ev, bound=bound) | over
    return CapabilityClaim(**kw)


def test_a_claim_needs_all_four_objects_of_the_right_type():
    claim = _claim()
    assert claim.bound.deployment["samples"] == Quantity(1, "sample")
    for arg in ("start", "procedure", "evaluation", "bound"):
        with pytest.raises(TypeError, match=arg):
            _claim(**{arg: None})
    with pytest.raises(TypeError):
        CapabilityClaim(claim.start, claim.procedure, claim.evaluation)  # the bound is missing


def test_external_components_declare_producer_and_acquisition():
    with pytest.raises(ValueError, match="producer"):
        Component("prover", "controller", external=True)
    with pytest.raises(ValueError, match="acquisition"):
        Component("prover", "controller", external=True, producer="lab X")
    c = Component("prover", "controller", external=True, producer="lab X", acquisition="licensed binary")
    start = StartingArtifact("base", object(), controllers=(c,))
    assert start.components == (c,)
    with pytest.raises(ValueError, match="tools may hold only"):
        StartingArtifact("base", object(), tools=(c,))
    with pytest.raises(ValueError, match="kind"):
        Component("x", "weights")
    with pytest.raises(ValueError, match="kind"):
        FeedbackSource("x", "vibes")
    with pytest.raises(TypeError, match="feedback"):
        Procedure("p", feedback="examples")


def test_evaluation_rule_value_by_hand():
    law = FiniteLaw({"1+1": F(1, 4), "2+3": F(3, 4)})
    rule = EvaluationRule(law, "final checkpoint", "greedy", utility=lambda x, y: int(y == str(eval(x))))
    wrong_on_second = {"1+1": "2", "2+3": "6"}
    assert rule.value(wrong_on_second.get) == F(1, 4)
    seq = EvaluationRule(["1+1", "1+1", "2+3"], "final checkpoint", "greedy", utility=rule.utility)
    assert seq.value(wrong_on_second.get) == F(2, 3)  # a repeated instance counts twice
    with pytest.raises(ValueError, match="at least one"):
        EvaluationRule([], "final", "greedy", utility=rule.utility)
    with pytest.raises(TypeError, match="task_law"):
        EvaluationRule("1+1", "final", "greedy", utility=rule.utility)
    with pytest.raises(TypeError, match="utility"):
        EvaluationRule(law, "final", "greedy", utility=3)
    with pytest.raises(ValueError, match="utility at instance"):
        EvaluationRule(law, "final", "greedy", utility=lambda x, y: -1).value(str)


# ---- measurements and witnesses -------------------------------------------------------------------
def M(k, n, event="B", evaluator="exact match", protocol="T=1, one sample", budget=None):
    return Measurement(k, n, event, evaluator, protocol, budget)


@pytest.mark.parametrize("k,n,err", [(3, 2, ValueError), (-1, 2, ValueError), (1, 0, ValueError),
                                     (1.0, 2, ValueError), (True, 2, ValueError), ("1", 2, TypeError)])
def test_measurement_refuses_bad_counts(k, n, err):
    with pytest.raises(err):
        M(k, n)


def test_elicitation_three_verdicts_by_intervals_not_estimates():
    # established: p0 clearly above eps, p1 clearly above p0
    w = elicitation_witness(M(30, 2000), M(800, 2000), eps=0.005)
    assert w.verdict is Verdict.ESTABLISHED and w.established
    # point estimates say p1 > p0 (4/100 > 3/100) but the intervals overlap: undecided
    w = elicitation_witness(M(3, 100), M(4, 100), eps=0.001)
    assert F(4, 100) > F(3, 100) and w.verdict is Verdict.UNDECIDED
    # point estimate p0 = 0.006 >= eps = 0.005 but its lower bound is not: undecided
    w = elicitation_witness(M(3, 500), M(400, 500), eps=0.005)
    assert F(3, 500) >= F(5, 1000) and w.verdict is Verdict.UNDECIDED
    # refuted: p0 certified below eps
    assert elicitation_witness(M(3, 2000), M(800, 2000), eps=0.05).verdict is Verdict.REFUTED
    # refuted: p1 certified below p0
    assert elicitation_witness(M(800, 2000), M(30, 2000), eps=0.005).verdict is Verdict.REFUTED
    with pytest.raises(ValueError, match="eps must be > 0"):
        elicitation_witness(M(3, 10), M(4, 10), eps=0)
    with pytest.raises(ValueError, match="same evaluator"):
        elicitation_witness(M(3, 10), M(4, 10, evaluator="judge model"), eps=0.1)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 60), st.integers(1, 60), st.data(), st.sampled_from([0.01, 0.05, 0.2]))
def test_elicitation_verdict_agrees_with_independent_intervals(n0, n1, data, eps):
    k0, k1 = data.draw(st.integers(0, n0)), data.draw(st.integers(0, n1))
    w = elicitation_witness(M(k0, n0), M(k1, n1), eps=eps, rule=ConfidenceRule(0.9))
    brackets(k0, n0, 0.9, w.before.low, w.before.high)
    brackets(k1, n1, 0.9, w.after.low, w.after.high)
    l0, h0, l1, h1 = w.before.low, w.before.high, w.after.low, w.after.high
    if w.verdict is Verdict.ESTABLISHED:
        assert l0 >= eps and l1 > h0
    elif w.verdict is Verdict.REFUTED:
        assert h0 < eps or h1 <= l0
    else:
        assert not (l0 >= eps and l1 > h0) and not (h0 < eps or h1 <= l0)


def _transfer():
    return EvaluationSet("E+", ids=("a", "b", "c"), contents=("100+1=101", "200+2=202", "300+3=303"))


def test_acquisition_three_verdicts():
    e = _transfer()
    proc = Procedure("sft", feedback=(FeedbackSource("answers", "examples"),))
    kw = dict(eps0=0.05, eps1=0.8, transfer=e, procedure=proc)
    assert acquisition_witness(M(0, 500, "E+"), M(486, 500, "E+"), **kw).verdict is Verdict.ESTABLISHED
    # 0 of 50 points at u0 = 0, but its upper bound is above 0.05: undecided
    w = acquisition_witness(M(0, 50, "E+"), M(50, 50, "E+"), **kw)
    assert w.verdict is Verdict.UNDECIDED and w.before.high > 0.05
    assert acquisition_witness(M(0, 500, "E+"), M(2, 500, "E+"), **kw).verdict is Verdict.REFUTED
    assert acquisition_witness(M(100, 500, "E+"), M(490, 500, "E+"), **kw).verdict is Verdict.REFUTED
    with pytest.raises(ValueError, match="eps0 < eps1"):
        acquisition_witness(M(0, 5, "E+"), M(5, 5, "E+"), **(kw | dict(eps0=0.8, eps1=0.8)))
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        acquisition_witness(M(0, 5, "E+"), M(5, 5, "E+"), **(kw | dict(eps1=1.5)))
    with pytest.raises(ValueError, match="same protocol"):
        acquisition_witness(M(0, 5, "E+"), M(5, 5, "E+", protocol="best of 16"), **kw)
    b1, b16 = (DeploymentBudget({"samples": (s, "sample")}) for s in (1, 16))
    with pytest.raises(ValueError, match="same budget"):
        acquisition_witness(M(0, 5, "E+", budget=b1), M(5, 5, "E+", budget=b16), **kw)
    with pytest.raises(ValueError, match="not of the transfer evaluation"):
        acquisition_witness(M(0, 5, "other"), M(5, 5, "other"), **kw)


@pytest.mark.parametrize("use", ["training-data", "reward", "checkpoint"])
def test_acquisition_refuses_a_transfer_set_used_for_selection(use):
    e = _transfer()
    clean = Procedure("sft", feedback=(FeedbackSource("answers", "examples"),))
    leaky = clean.touch(e, use, ["b"])
    assert clean.touched(e) == frozenset() and leaky.touched(e) == {"b"}
    args = (M(0, 500, "E+"), M(486, 500, "E+"))
    with pytest.raises(TransferLeakError, match=f"1 of the 3 items .* for {use}"):
        acquisition_witness(*args, eps0=0.05, eps1=0.8, transfer=e, procedure=leaky)
    assert isinstance(TransferLeakError("x"), ValueError)
    claim = _claim(procedure=leaky)
    with pytest.raises(TransferLeakError):
        claim.acquisition_witness(*args, eps0=0.05, eps1=0.8, transfer=e)


def test_touches_by_content_and_on_other_sets():
    e = _transfer()
    proc = Procedure("sft", feedback=())
    trained = proc.touch_by_content(e, ["200+2=202", "999+1=1000"], "training-data")
    assert trained.touched(e) == {"b"}
    assert proc.touch_by_content(e, ["999+1=1000"], "training-data") is proc  # nothing matched
    other = EvaluationSet("E-other", ("a",), ("100+1=101",))
    assert proc.touch(other, "checkpoint").touched(e) == frozenset()  # another set's ids do not leak
    with pytest.raises(ValueError, match="not items"):
        proc.touch(e, "reward", ["z"])
    with pytest.raises(ValueError, match="use="):
        proc.touch(e, "reading")
    with pytest.raises(ValueError, match="twice"):
        EvaluationSet("E", ("a", "a"), ("x", "y"))
    with pytest.raises(ValueError, match="one content per item"):
        EvaluationSet("E", ("a", "b"), ("x",))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 80), st.data())
def test_acquisition_verdict_agrees_with_independent_intervals(n, data):
    k0, k1 = data.draw(st.integers(0, n)), data.draw(st.integers(0, n))
    e = _transfer()
    w = acquisition_witness(M(k0, n, "E+"), M(k1, n, "E+"), eps0=0.1, eps1=0.7, transfer=e,
                            procedure=Procedure("p", ()), rule=ConfidenceRule(0.9))
    brackets(k0, n, 0.9, w.before.low, w.before.high)
    brackets(k1, n, 0.9, w.after.low, w.after.high)
    ok = w.before.high <= 0.1 and w.after.low >= 0.7
    bad = w.before.low > 0.1 or w.after.high < 0.7
    assert w.verdict is (Verdict.REFUTED if bad else Verdict.ESTABLISHED if ok else Verdict.UNDECIDED)


def test_confidence_rule_refuses_bad_settings():
    with pytest.raises(ValueError, match="level"):
        ConfidenceRule(1.0)
    with pytest.raises(ValueError, match="clopper-pearson"):
        ConfidenceRule(0.95, "wald")
    with pytest.raises(TypeError, match="rule"):
        elicitation_witness(M(1, 2), M(2, 2), eps=0.1, rule=0.95)


# ---- the exact tail and the interval check ---------------------------------------------------------
@settings(max_examples=80, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(st.integers(0, n + 1), st.just(n))),
       st.fractions(min_value=0, max_value=1, max_denominator=50))
def test_binomial_tail_matches_the_direct_sum(sn, p):
    s, n = sn
    assert binomial_tail(s, n, p) == upper_tail(s, n, F(p))


def test_binomial_tail_refuses_bad_input():
    with pytest.raises(ValueError, match="p="):
        binomial_tail(1, 3, 0.5)  # floats are refused: the tail is exact
    with pytest.raises(ValueError, match="p="):
        binomial_tail(1, 3, F(3, 2))
    with pytest.raises(ValueError, match="trials"):
        binomial_tail(1, 0, F(1, 2))


@pytest.mark.parametrize("k,n", [(0, 10), (10, 10), (22, 2000), (850, 2000), (1, 1)])
def test_is_exact_accepts_the_intervals_and_rejects_shifted_ones(k, n):
    rule = ConfidenceRule(0.95)
    iv = rule.interval(k, n)
    assert rule.is_exact(k, n, iv)
    for shift in (1e-5, -1e-5):
        moved = Interval(min(max(iv.low + shift, 0), 1), min(max(iv.high + shift, 0), 1), iv.level, iv.method)
        assert not rule.is_exact(k, n, moved)
    assert not ConfidenceRule(0.9).is_exact(k, n, iv)  # another level, other ends


@pytest.mark.parametrize("n", [1, 5, 17, 40, 72, 90])
@pytest.mark.parametrize("eps0,eps1", [(0.05, 0.8), (0.2, 0.5), (0.01, 0.99)])
def test_certifying_counts_and_probability_by_brute_force(n, eps0, eps1):
    rule = ConfidenceRule(0.95)
    ivs = [rule.interval(x, n) for x in range(n + 1)]
    ok0 = [x for x in range(n + 1) if ivs[x].high <= eps0]
    ok1 = [x for x in range(n + 1) if ivs[x].low >= eps1]
    a, b = rule.certifying_counts(n, eps0, eps1)
    assert ok0 == list(range(a + 1)) and ok1 == list(range(b, n + 1))
    u0, u1 = F(1, 50), F(9, 10)
    pmf = lambda x, u: math.comb(n, x) * u**x * (1 - u) ** (n - x)
    expected = sum(pmf(x, u0) for x in ok0) * sum(pmf(x, u1) for x in ok1)
    assert rule.certification_probability(n, u0, u1, eps0, eps1) == expected
    with pytest.raises(ValueError, match="u1="):
        rule.certification_probability(n, u0, 0.9, eps0, eps1)


def test_touch_records_are_validated():
    from ftipbook.claims import Touch
    with pytest.raises(TypeError, match="item_ids"):
        Touch("E+", {"a"}, "reward")  # a plain set is mutable
    with pytest.raises(ValueError, match="use="):
        Touch("E+", frozenset({"a"}), "inspection")
    with pytest.raises(TypeError, match="touches"):
        Procedure("p", (), touches=("E+",))


def test_measurement_from_outcomes_counts_bools_only():
    m = Measurement.from_outcomes([True, False, True], "B", "exact", "greedy")
    assert (m.successes, m.trials, m.estimate) == (2, 3, F(2, 3))
    with pytest.raises(TypeError, match="bool"):
        Measurement.from_outcomes([1, 0, 1], "B", "exact", "greedy")
    with pytest.raises(ValueError, match="trials"):
        Measurement.from_outcomes([], "B", "exact", "greedy")
    with pytest.raises(ValueError, match="event"):
        Measurement(1, 2, "", "exact", "greedy")


def test_evaluation_set_from_documents_and_cost_model_validation():
    from ftipbook.data.corpus import ArithmeticSource
    docs = [ArithmeticSource(digits=2).document(a, b) for a, b in ((12, 30), (45, 55))]
    e = EvaluationSet.from_documents("E", docs)
    assert e.ids == ("add2:12+30", "add2:45+55") and e.matching(["45+55=100"]) == {"add2:45+55"}
    with pytest.raises(TypeError, match="rates"):
        CostModel("FLOP", {})
    with pytest.raises(ValueError, match="rates\\['token'\\]"):
        CostModel("FLOP", {"token": -1})
    with pytest.raises(TypeError, match="quantity"):
        CostModel("FLOP", {"token": 1}).convert(3)
    assert CostModel("FLOP", {"token": 2}).convert(Quantity(5, "FLOP")) == Quantity(5, "FLOP")
