"""Finite probability and the token interface (ftip-000A, 000B, 000C, 000G, 000H, 000I, 000J)."""
import math
import random
from fractions import Fraction

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.model import ModelConfig, StopReason, build_model, generate, sequence_logprob
from ftipbook.prob import (
    FiniteKernel,
    FiniteLaw,
    MeasurableKernel,
    NextTokenLaw,
    PrefixTree,
    TableLM,
    enumerate_continuations,
    expectation,
    is_completed,
    is_independent,
    prefix,
    preimage,
    sequence_nll,
    sequence_prob,
    token_probs,
)

F = Fraction
DIE = FiniteLaw.uniform(range(1, 7))


def test_simplex_membership_exact_and_float():
    assert DIE.exact and sum(DIE(x) for x in DIE.outcomes) == 1
    FiniteLaw({"a": 0.1, "b": 0.2, "c": 0.7})  # float round-off within tolerance
    with pytest.raises(ValueError, match="sum to 1"):
        FiniteLaw({"a": F(1, 3), "b": F(1, 3)})
    with pytest.raises(ValueError, match=">= 0"):
        FiniteLaw({"a": F(3, 2), "b": F(-1, 2)})
    with pytest.raises(TypeError, match="Fraction"):
        FiniteLaw({"a": "1"})
    with pytest.raises(ValueError, match="nonempty"):
        FiniteLaw({})
    assert FiniteLaw.from_weights({"x": 1, "y": 3}) == FiniteLaw({"x": F(1, 4), "y": F(3, 4)})
    with pytest.raises(ValueError, match="sum to 0"):
        FiniteLaw.from_weights({"x": 0})


laws = st.lists(st.integers(0, 20), min_size=2, max_size=8).filter(lambda w: sum(w) > 0).map(
    lambda w: FiniteLaw.from_weights(dict(enumerate(w))))


@settings(max_examples=80, deadline=None)
@given(laws, st.sets(st.integers(0, 7)), st.sets(st.integers(0, 7)))
def test_event_identities(p, a, b):
    a, b = a & set(p.outcomes), b & set(p.outcomes)
    assert p.prob(set(p.outcomes)) == 1 and p.prob(set()) == 0
    assert p.prob(a | b) == p.prob(a) + p.prob(b) - p.prob(a & b)
    if p.prob(a) > 0:
        cond = p.condition(a)
        assert sum(v for _, v in cond.items()) == 1
        assert p.conditional_prob(b, a) == p.prob(a & b) / p.prob(a) == cond.prob(b & a)
        if p.prob(b) > 0:  # Bayes
            assert p.conditional_prob(a, b) == p.conditional_prob(b, a) * p.prob(a) / p.prob(b)
    else:
        with pytest.raises(ValueError, match="probability 0"):
            p.condition(a)
    comp = set(p.outcomes) - a  # total probability over the partition {a, comp}
    total = sum(p.conditional_prob(b, part) * p.prob(part) for part in (a, comp) if p.prob(part) > 0)
    assert total == p.prob(b)


def test_expectation_preimage_pushforward():
    assert expectation(DIE, lambda x: x) == F(7, 2)
    assert preimage(lambda x: x % 2, {0}, range(1, 7)) == {2, 4, 6}
    parity = DIE.pushforward(lambda x: x % 2)
    assert parity == FiniteLaw({1: F(1, 2), 0: F(1, 2)})
    assert DIE.prob(lambda x: x > 4) == F(1, 3)
    with pytest.raises(ValueError, match="outside X"):
        DIE.prob({7})


def test_independence_of_two_dice():
    joint = DIE.product(DIE)
    first, second = (lambda xy: xy[0]), (lambda xy: xy[1])
    assert is_independent(joint, first, second)
    # dependent law with the same uniform marginals: the second die copies the first
    copy = FiniteLaw({(x, x): F(1, 6) for x in range(1, 7)})
    assert copy.pushforward(first) == DIE and copy.pushforward(second) == DIE
    assert not is_independent(copy, first, second)
    assert is_independent(joint, lambda xy: xy[0] % 2, lambda xy: xy[1] > 3)


def test_sampling_matches_the_law():
    law = FiniteLaw({"a": F(1, 2), "b": F(1, 3), "c": F(1, 6)})
    draws = law.samples(30000, seed=0)
    assert draws == law.samples(30000, seed=0)
    for x in law.outcomes:
        assert abs(draws.count(x) / 30000 - float(law(x))) < 0.01
    with pytest.raises(TypeError, match="random.Random"):
        law.sample(0)


def test_finite_kernel_and_bounded_sequences():
    k = FiniteKernel({"s": {"a": F(1, 2), "b": F(1, 2)}, "t": {"a": 1}})
    start = FiniteLaw({"s": F(1, 3), "t": F(2, 3)})
    assert k.marginal(start) == FiniteLaw({"a": F(5, 6), "b": F(1, 6)})
    assert k.joint(start)(("t", "a")) == F(2, 3)
    with pytest.raises(KeyError, match="no row"):
        k("u")
    # a law on token sequences of length <= 4 over 3 symbols sums to 1 by enumeration
    lm = TableLM(("a", "b", "eos"), {}, default={"a": F(1, 2), "b": F(1, 4), "eos": F(1, 4)})
    leaves = enumerate_continuations(lm, [], eos=2, max_len=4)
    assert sum(c.prob for c in leaves) == 1 and len(leaves) == 1 + 2 + 4 + 8 + 16


def test_measurable_kernel_points_have_probability_zero():
    k = MeasurableKernel(lambda x: torch.distributions.Normal(torch.tensor(float(x), dtype=torch.float64),
                                                              torch.tensor(1.0, dtype=torch.float64)))
    assert k.point_prob(0.0, 0.3) == 0.0
    assert k.prob(0.0, -1.96, 1.96) == pytest.approx(0.95, abs=1e-4)
    assert k.expectation(2.0, lambda y: y, -10, 14) == pytest.approx(2.0, abs=1e-8)  # sum becomes integral
    assert k.expectation(0.0, lambda y: y**2, -12, 12) == pytest.approx(1.0, abs=1e-8)
    with pytest.raises(ValueError, match="low <= high"):
        k.prob(0.0, 1.0, 0.0)


def test_prefix_and_completion_conventions():
    x = ("a", "b", "c")
    assert prefix(x, 1) == () and prefix(x, 3) == ("a", "b") and prefix(x, 4) == x
    with pytest.raises(ValueError, match="one-based"):
        prefix(x, 0)
    assert is_completed([5, 2, 9], 9) and not is_completed([9, 2, 9], 9) and not is_completed([5, 2], 9)
    assert not is_completed([], 9)
    rng = random.Random(0)
    for _ in range(200):
        y = [rng.randrange(4) for _ in range(rng.randint(0, 6))]
        assert is_completed(y, 3) == (len(y) > 0 and y[-1] == 3 and y.count(3) == 1)


def test_generation_stop_reasons_agree_with_completion():
    model = build_model(ModelConfig(vocab_size=12, d_model=16, n_layers=1, n_heads=2, d_ff=32), seed=0).eval()
    g = generate(model, [1, 2], 6)
    eos = int(g.new_tokens[2])
    stopped = generate(model, [1, 2], 6, eos_id=eos)
    assert stopped.stop_reason is StopReason.EOS and is_completed(stopped.new_tokens.tolist(), eos)
    absent = min(set(range(12)) - set(g.new_tokens[:2].tolist()))
    capped = generate(model, [1, 2], 2, eos_id=absent)
    assert capped.stop_reason is StopReason.MAX_LEN and not is_completed(capped.new_tokens.tolist(), absent)


def test_decoder_and_table_implement_the_next_token_interface():
    model = build_model(ModelConfig(vocab_size=9, d_model=16, n_layers=1, n_heads=2, d_ff=32), seed=0).eval()
    lm = TableLM(("a", "b", "eos"), {("a",): {"b": F(1, 2), "eos": F(1, 2)}}, default={"a": 1})
    assert isinstance(model, NextTokenLaw) and isinstance(lm, NextTokenLaw)
    law = model.next_token_law([3, 1])
    assert law.dtype == torch.float64 and abs(float(law.sum()) - 1) < 1e-12 and (law >= 0).all()
    # continuation probability: token by token equals one teacher-forced pass
    y = [4, 0, 7]
    assert math.log(sequence_prob(model, [3, 1], y)) == pytest.approx(sequence_logprob(model, [3, 1], y), abs=1e-5)
    assert sequence_nll(model, [3, 1], y) == pytest.approx(-sequence_logprob(model, [3, 1], y), abs=1e-5)
    assert lm.next_token_law(lm.ids("a")) == (0, F(1, 2), F(1, 2)) and lm.next_token_law([]) == (1, 0, 0)
    with pytest.raises(KeyError, match="no law"):
        TableLM(("a",), {(): {"a": 1}}).next_token_law([0])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        TableLM(("a",), {("z",): {"a": 1}})
    with pytest.raises(ValueError, match="sum to 1"):
        TableLM(("a", "b"), {(): {"a": F(1, 2)}})


def test_later_tokens_do_not_change_earlier_factors():
    model = build_model(ModelConfig(vocab_size=9, d_model=16, n_layers=1, n_heads=2, d_ff=32), seed=1).eval()
    a = token_probs(model, [2], [1, 5, 3])
    b = token_probs(model, [2], [1, 5, 8])
    assert a[:2] == b[:2] and a[2] != b[2]


def three_symbol_lm(p1, p2, p3):
    """Declared illustrative law for ftip-000J: pi(b|a) = p1, pi(a|ab) = p2, pi(EOS|aba) = p3."""
    rest = lambda p: {"a": (1 - p) / 2, "b": (1 - p) / 2}  # noqa: E731
    return TableLM(("a", "b", "EOS"), {
        ("a",): {"b": p1, **{k: (1 - p1) / 2 for k in ("a", "EOS")}},
        ("a", "b"): {"a": p2, **{k: (1 - p2) / 2 for k in ("b", "EOS")}},
        ("a", "b", "a"): {"EOS": p3, **rest(p3)},
    }, default={"a": F(1, 3), "b": F(1, 3), "EOS": F(1, 3)})


def test_three_symbol_example_of_000J():
    lm = three_symbol_lm(F(1, 2), F(2, 5), F(3, 5))
    y = lm.ids(["b", "a", "EOS"])
    assert sequence_prob(lm, lm.ids("a"), y) == F(3, 25)  # 0.12
    assert round(sequence_nll(lm, lm.ids("a"), y), 4) == 2.1203
    assert sequence_nll(lm, lm.ids("a"), y) == pytest.approx(-(math.log(0.5) + math.log(0.4) + math.log(0.6)))
    tree = PrefixTree(lm, lm.ids("a"), eos=lm.id("EOS"), max_len=3)
    assert tree.mass() == 1 and tree.path_prob(y) == F(3, 25)
    assert tree.mass(StopReason.EOS) + tree.mass(StopReason.MAX_LEN) == 1
    assert all(c.stop_reason is StopReason.EOS or len(c.tokens) == 3 for c in tree.leaves)


def test_length_cap_mass_is_recorded_separately():
    """ftip-0027's illustrative law: pi(EOS | ()) = 0.3, pi(EOS | a) = 0.4, cap 2."""
    lm = TableLM(("a", "EOS"), {(): {"a": F(7, 10), "EOS": F(3, 10)}, ("a",): {"a": F(3, 5), "EOS": F(2, 5)}})
    leaves = {lm.names(c.tokens): (c.prob, c.stop_reason) for c in enumerate_continuations(lm, [], eos=1, max_len=2)}
    assert leaves == {("EOS",): (F(3, 10), StopReason.EOS), ("a", "EOS"): (F(7, 25), StopReason.EOS),
                      ("a", "a"): (F(21, 50), StopReason.MAX_LEN)}
    with pytest.raises(ValueError, match="max_len"):
        PrefixTree(lm, [], eos=1, max_len=0)
