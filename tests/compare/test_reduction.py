"""Records with one output law give equal functionals; bad inputs are refused (ftip-00KC)."""
import itertools
import math
from fractions import Fraction

import pytest
import torch

from ftipbook.compare.reduction import (DeclaredTask, FunctionalPair, answer_probabilities, expected_nll,
                                        expected_reward, exact_pass_at_k, gqa_as_mha, greedy_exact_match,
                                        kl_to_reference, next_law, output_law_distance, same_law_values,
                                        standard_functionals, task_prefixes, with_mla_absorb)
from ftipbook.model import ModelConfig, build_model
from ftipbook.model.accounting import measured_param_count
from ftipbook.prob import TableLM

V = 5
GQA = ModelConfig(vocab_size=V, d_model=16, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=32, max_seq_len=8,
                  init_std=0.3, qkv_bias=True)
MLA = ModelConfig(vocab_size=V, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=8, init_std=0.3,
                  layer_pattern="M", kv_lora_rank=4, rope_head_dim=4)
PREFIXES = [x for n in (1, 2) for x in itertools.product(range(V), repeat=n)]
TASK = DeclaredTask(((1,), (2, 3), (4,)), ((3, 0), (1,), (2,)), V)


def model(cfg, seed=0):
    return build_model(cfg, seed=seed, dtype=torch.float64).eval()


def table(probs):
    """A TableLM on V tokens whose law does not depend on the prefix."""
    names = tuple("abcde")
    return TableLM(names, {}, default=dict(zip(names, probs)))


class Bad:
    """A next-token law that does not sum to 1."""

    def next_token_law(self, prefix):
        return [0.5, 0.5, 0.5, 0.0, 0.0]


def test_gqa_expansion_is_mha_with_the_same_law_and_more_parameters():
    gqa = model(GQA)
    mha = gqa_as_mha(gqa)
    assert mha.cfg.kv_heads == 4 and gqa.cfg.kv_heads == 2
    assert measured_param_count(mha) - measured_param_count(gqa) == 2 * 2 * (2 * 4 * (16 + 1))
    assert output_law_distance(gqa, mha, PREFIXES, V) < 1e-13
    # tiling the heads (h % G instead of h // (H / G)) is a different function
    state = gqa.state_dict()
    w = state["blocks.0.mixer.fn.qkv.weight"]
    q, k, v = w.split([16, 8, 8])
    tiled = mha.state_dict()
    tiled["blocks.0.mixer.fn.qkv.weight"] = torch.cat([q, k.repeat(2, 1), v.repeat(2, 1)])
    wrong = model(mha.cfg)
    wrong.load_state_dict(tiled)
    assert output_law_distance(gqa, wrong, PREFIXES, V) > 1e-3


def test_mla_paths_share_weights_and_law():
    explicit = model(MLA)
    absorbed = with_mla_absorb(explicit, True)
    assert absorbed.cfg.mla_absorb and not explicit.cfg.mla_absorb
    assert output_law_distance(explicit, absorbed, PREFIXES, V) < 1e-12
    back = with_mla_absorb(absorbed, False)
    assert output_law_distance(explicit, back, PREFIXES, V) == 0.0


def test_conversions_refuse_what_they_cannot_convert():
    with pytest.raises(TypeError, match="DecoderLM"):
        gqa_as_mha(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="already MHA"):
        gqa_as_mha(model(ModelConfig(vocab_size=V, d_model=16, n_layers=1, n_heads=2, d_ff=16)))
    with pytest.raises(ValueError, match="no softmax attention"):
        gqa_as_mha(model(MLA))
    with pytest.raises(ValueError, match="no MLA layer"):
        with_mla_absorb(model(GQA), True)
    with pytest.raises(ValueError, match="already runs"):
        with_mla_absorb(model(MLA), False)
    with pytest.raises(TypeError, match="absorb"):
        with_mla_absorb(model(MLA), 1)


def test_functionals_match_hand_values_on_an_exact_table():
    lm = table([Fraction(1, 2), Fraction(1, 4), Fraction(1, 8), Fraction(1, 16), Fraction(1, 16)])
    ref = table([Fraction(1, 5)] * 5)
    task = DeclaredTask(((1,), (2, 3)), ((0, 1), (2,)), V)
    assert task_prefixes(task) == ((1,), (1, 0), (2, 3))
    assert answer_probabilities(lm, task) == (1 / 8, 1 / 8)
    assert expected_nll(lm, task) == pytest.approx(math.log(8))
    assert greedy_exact_match(lm, task) == 0.0  # greedy decodes 0, 0 and 0
    assert greedy_exact_match(lm, DeclaredTask(((1,),), ((0, 0),), V)) == 1.0
    assert exact_pass_at_k(lm, task, 2) == pytest.approx(1 - (7 / 8) ** 2)
    assert expected_reward(lm, task, lambda p, y: float(y == len(p))) == pytest.approx((1 / 4 + 1 / 8) / 2)
    probs = [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 16]
    assert kl_to_reference(lm, task, ref) == pytest.approx(sum(p * math.log(5 * p) for p in probs))
    assert kl_to_reference(lm, task, table([1, 0, 0, 0, 0])) == math.inf
    assert output_law_distance(lm, ref, [(0,)], V) == pytest.approx(0.5 * sum(abs(p - 0.2) for p in probs))


def test_same_law_values_pairs_every_functional_and_a_control_differs():
    gqa = model(GQA)
    fs = standard_functionals(TASK, k=3, reward=lambda p, y: y / 4, reference=model(GQA, seed=1))
    pairs = same_law_values(gqa, gqa_as_mha(gqa), fs)
    assert [p.name for p in pairs] == list(fs) and all(p.gap < 1e-12 for p in pairs)
    bumped = gqa_as_mha(gqa)
    with torch.no_grad():
        bumped.unembed.weight[3, 0] += 0.5
    control = same_law_values(gqa, bumped, fs)
    assert {p.name for p in control if p.gap > 1e-6} >= {"expected NLL", "pass@3", "expected reward", "KL to reference"}
    assert FunctionalPair("x", math.inf, math.inf).gap == 0.0


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="one answer per prompt"):
        DeclaredTask(((1,),), ((1,), (2,)), V)
    with pytest.raises(ValueError, match=r"answers\[0\]"):
        DeclaredTask(((1,),), ((V,),), V)
    with pytest.raises(ValueError, match="empty"):
        DeclaredTask(((),), ((1,),), V)
    with pytest.raises(TypeError, match="sequence of token ids"):
        DeclaredTask(("ab",), ((1,),), V)
    with pytest.raises(ValueError, match="vocab_size"):
        DeclaredTask(((1,),), ((1,),), 1)
    gqa = model(GQA)
    other = build_model(ModelConfig(vocab_size=V + 1, d_model=16, n_layers=1, n_heads=2, d_ff=16), seed=0)
    with pytest.raises(ValueError, match="vocabulary has 5 ids"):
        output_law_distance(gqa, other, [(1,)], V)
    with pytest.raises(ValueError, match="prefixes is empty"):
        output_law_distance(gqa, gqa, [], V)
    with pytest.raises(TypeError, match="next_token_law"):
        next_law(object(), (1,), V)
    with pytest.raises(ValueError, match="not a probability vector"):
        next_law(Bad(), (1,), V)
    with pytest.raises(ValueError, match="is not a finite real"):
        expected_reward(gqa, TASK, lambda p, y: math.nan)
    with pytest.raises(ValueError, match="k=0"):
        standard_functionals(TASK, k=0, reward=lambda p, y: 0.0, reference=gqa)
    with pytest.raises(TypeError, match="reference"):
        standard_functionals(TASK, k=1, reward=lambda p, y: 0.0, reference="gqa")
    with pytest.raises(ValueError, match="non-empty mapping"):
        same_law_values(gqa, gqa, {})
    with pytest.raises(TypeError, match="DeclaredTask"):
        expected_nll(gqa, ((1,), (2,)))
