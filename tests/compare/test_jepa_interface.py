"""The JEPA comparability interface, its refusals and the evaluation laws (ftip-00KA, 00KE)."""
import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from ftipbook.compare.cost import UNKNOWN
from ftipbook.compare.jepa_interface import (JEPAInterface, NextTokenNLL, ParameterCountMatch, check_comparable,
                                             compare_through_interface, interface_log_loss)
from ftipbook.data.corpus import Document
from ftipbook.prob import TableLM
from ftipbook.tokenizer import ByteLevelBPE


@pytest.fixture(scope="module")
def tok():
    return ByteLevelBPE.train(["abc abd abe", "bca cab"], 4)


def docs():
    return (Document("d0", "abc", "t"), Document("d1", "abd ab", "t"), Document("d2", "cab", "t"))


def full(law="L"):
    return JEPAInterface("p", "t", "d", "o", "i", law)


def test_missing_fields_are_named():
    partial = JEPAInterface("p", "t", UNKNOWN, "o", UNKNOWN, "L")
    with pytest.raises(ValueError, match="first is missing decoder, inference"):
        check_comparable(partial, full())
    with pytest.raises(ValueError, match="second is missing predictor, target_representation"):
        check_comparable(full(), JEPAInterface(decoder="d", objective="o", inference="i", evaluation_law="L"))
    check_comparable(full(), full())
    with pytest.raises(ValueError, match="different evaluation laws"):
        check_comparable(full("L"), full("M"))
    with pytest.raises(ValueError, match="non-empty string"):
        JEPAInterface(predictor="  ")


def test_parameter_count_match_is_refused():
    match = ParameterCountMatch(1000, 1050)
    assert match.matched and not ParameterCountMatch(1000, 1200).matched
    with pytest.raises(TypeError, match="parameter-count match alone"):
        check_comparable(match, full())
    with pytest.raises(TypeError, match="parameter count"):
        check_comparable(full(), 1000)
    with pytest.raises(TypeError, match="JEPAInterface"):
        check_comparable(full(), "model")
    with pytest.raises(ValueError, match="first"):
        ParameterCountMatch(0, 3)
    with pytest.raises(ValueError, match="rel_tol"):
        ParameterCountMatch(1, 3, rel_tol=1.5)


def test_next_token_nll_by_hand(tok):
    law = NextTokenNLL(docs(), tok, seq_len=3, batch_size=2)
    gen = torch.Generator().manual_seed(0)
    table = torch.randn(tok.vocab_size, tok.vocab_size, generator=gen)
    bigram = lambda tokens: table[tokens]  # noqa: E731
    expected = []
    for row in law.rows():
        terms = []
        for t in range(len(row) - 1):
            logits = table[row[t]].double()
            terms.append(-(logits[row[t + 1]] - torch.logsumexp(logits, 0)).item())
        expected.append(sum(terms) / len(terms))
    assert all(len(r) <= 4 for r in law.rows())
    np.testing.assert_allclose(law.item_nlls(bigram), expected, rtol=1e-6)
    assert law(bigram) == pytest.approx(np.mean(expected), rel=1e-6)
    uniform = lambda tokens: torch.zeros(*tokens.shape, tok.vocab_size)  # noqa: E731
    assert law(uniform) == pytest.approx(math.log(tok.vocab_size))


def test_next_token_nll_bad_input(tok):
    with pytest.raises(ValueError, match="non-empty"):
        NextTokenNLL((), tok)
    with pytest.raises(ValueError, match="seq_len"):
        NextTokenNLL(docs(), tok, seq_len=0)
    with pytest.raises(TypeError, match="tokenizer"):
        NextTokenNLL(docs(), object())
    law = NextTokenNLL(docs(), tok)
    with pytest.raises(ValueError, match="logits"):
        law(lambda tokens: torch.zeros(*tokens.shape, 3))
    with pytest.raises(TypeError, match="law_map"):
        law.item_nlls(3)


def test_compare_through_interface(tok):
    law = NextTokenNLL(docs(), tok, seq_len=3)
    uniform = lambda tokens: torch.zeros(*tokens.shape, tok.vocab_size)  # noqa: E731
    peaked = lambda tokens: torch.nn.functional.one_hot(tokens, tok.vocab_size).float() * 2  # noqa: E731
    sys = {"a": (full(law.description), uniform), "b": (full(law.description), peaked)}
    out = compare_through_interface(sys, law)
    assert out.values["a"] == pytest.approx(math.log(tok.vocab_size))
    assert out.difference == pytest.approx(out.values["a"] - law(peaked))
    with pytest.raises(ValueError, match="missing decoder"):
        compare_through_interface({"a": (JEPAInterface("p", "t", UNKNOWN, "o", "i", law.description), uniform),
                                   "b": sys["b"]}, law)
    with pytest.raises(ValueError, match="not this one"):
        compare_through_interface({"a": (full(), uniform), "b": (full(), peaked)}, law)
    with pytest.raises(ValueError, match="exactly two"):
        compare_through_interface({"a": sys["a"]}, law)
    with pytest.raises(TypeError, match="NextTokenNLL"):
        compare_through_interface(sys, "nll")


def test_interface_log_loss_exact():
    lm = TableLM(("a", "b"), {("a",): {"a": Fraction(1, 4), "b": Fraction(3, 4)}},
                 default={"a": Fraction(1, 2), "b": Fraction(1, 2)})
    task = [([0], 1), ([1], 0), ([0], 0)]
    assert interface_log_loss(lm, task) == pytest.approx((-math.log(0.75) + math.log(2) + math.log(4)) / 3)
    zero = TableLM(("a", "b"), {}, default={"a": 1, "b": 0})
    assert interface_log_loss(zero, [([0], 1)]) == math.inf
    with pytest.raises(TypeError, match="next_token_law"):
        interface_log_loss(object(), task)
    with pytest.raises(ValueError, match="non-empty"):
        interface_log_loss(lm, [])
    with pytest.raises(ValueError, match="outside"):
        interface_log_loss(lm, [([0], 5)])
    with pytest.raises(ValueError, match="prefix"):
        interface_log_loss(lm, [([], 0)])
