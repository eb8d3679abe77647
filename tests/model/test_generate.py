"""generate / stream_generate / sequence_logprob (ftip-000G, 000I)."""
import math

import pytest
import torch

from ftipbook.model import (
    StopReason,
    continuation_logprobs,
    generate,
    sampling_law,
    sequence_logprob,
    stream_generate,
)


@pytest.fixture
def model(make_model):
    return make_model(n_kv_heads=2)


def test_greedy_is_deterministic_and_follows_argmax(model):
    a = generate(model, [1, 2, 3], 8)
    b = generate(model, [1, 2, 3], 8)
    assert torch.equal(a.tokens, b.tokens) and a.stop_reason is StopReason.MAX_LEN
    seq = [1, 2, 3]
    for _ in range(8):  # uncached reference: argmax of the next-token law of the full prefix
        seq.append(int(model.next_token_law(seq).argmax()))
    assert a.tokens.tolist() == seq and a.new_tokens.tolist() == seq[3:]


def test_logprobs_match_full_forward(model):
    g = generate(model, [5, 9], 6, temperature=1.0, seed=3)
    torch.testing.assert_close(g.logprobs, continuation_logprobs(model, [5, 9], g.new_tokens), rtol=1e-5, atol=1e-5)
    assert sequence_logprob(model, [5, 9], g.new_tokens) == pytest.approx(float(g.logprobs.sum()), abs=1e-4)
    with torch.no_grad():
        logits = model(g.tokens.unsqueeze(0))[0]
    manual = sum(torch.log_softmax(logits[t - 1].double(), -1)[g.tokens[t]] for t in range(2, 8))
    assert sequence_logprob(model, [5, 9], g.new_tokens) == pytest.approx(float(manual), abs=1e-6)


def test_seed_reproducibility(model):
    runs = [generate(model, [4], 10, temperature=1.3, top_k=20, seed=s).new_tokens for s in (0, 0, 1)]
    assert torch.equal(runs[0], runs[1]) and not torch.equal(runs[0], runs[2])


def test_eos_stops_with_reason(model):
    greedy = generate(model, [1, 2, 3], 6)
    eos = int(greedy.new_tokens[2])
    first = greedy.new_tokens.tolist().index(eos)
    g = generate(model, [1, 2, 3], 6, eos_id=eos)
    assert g.stop_reason is StopReason.EOS and g.new_tokens.tolist() == greedy.new_tokens.tolist()[: first + 1]
    assert len(g.logprobs) == len(g.new_tokens)


def test_stream_yields_the_same_tokens(model):
    g = generate(model, [7, 7], 9, temperature=0.8, top_p=0.9, seed=11)
    assert list(stream_generate(model, [7, 7], 9, temperature=0.8, top_p=0.9, seed=11)) == g.new_tokens.tolist()
    eos = g.new_tokens.tolist()[3]
    streamed = list(stream_generate(model, [7, 7], 9, temperature=0.8, top_p=0.9, seed=11, eos_id=eos))
    assert streamed[-1] == eos and eos not in streamed[:-1]


def test_batched_prompts_decode_like_single_ones(model):
    prompts = torch.tensor([[1, 2, 3], [4, 5, 6]])
    batch = generate(model, prompts, 5)
    for row, g in zip(prompts, batch):
        assert torch.equal(g.tokens, generate(model, row, 5).tokens)


def test_top_k_keeps_the_k_most_probable_with_index_ties():
    logits = torch.tensor([1.0, 3.0, 2.0, 3.0, 0.0])
    law = sampling_law(logits, temperature=1.0, top_k=2)
    assert (law > 0).tolist() == [False, True, False, True, False]
    e = math.exp(3.0)
    torch.testing.assert_close(law, torch.tensor([0, e, 0, e, 0]) / (2 * e))
    tie = sampling_law(torch.zeros(4), temperature=1.0, top_k=3)
    assert (tie > 0).tolist() == [True, True, True, False]


def test_top_p_keeps_smallest_set_reaching_p():
    probs = torch.tensor([0.1, 0.5, 0.15, 0.25])
    logits = probs.log()
    assert (sampling_law(logits, temperature=1.0, top_p=0.5) > 0).tolist() == [False, True, False, False]
    assert (sampling_law(logits, temperature=1.0, top_p=0.6) > 0).tolist() == [False, True, False, True]
    law = sampling_law(logits, temperature=1.0, top_p=0.8)
    torch.testing.assert_close(law, torch.tensor([0, 0.5, 0.15, 0.25]) / 0.9)
    torch.testing.assert_close(sampling_law(logits, temperature=1.0, top_p=1.0), probs)


def test_top_p_below_float32_range_keeps_the_most_likely_id():
    """A top_p that rounds to 0 against float32 masses still keeps the argmax (it was a NaN law)."""
    assert sampling_law(torch.tensor([[0.0]]), temperature=1.0, top_p=4.8e-197).tolist() == [[1.0]]
    law = sampling_law(torch.tensor([0.3, 1.7, -0.5]), temperature=1.0, top_p=1e-50)
    assert law.tolist() == [0.0, 1.0, 0.0]
    for top_p in (1e-300, 1e-46, 1e-30):  # below, at and above float32's smallest subnormal
        law = sampling_law(torch.tensor([[0.3, 1.7, -0.5], [2.0, 2.0, 0.1]]), temperature=0.7, top_p=top_p)
        assert law.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]


def test_temperature_zero_is_point_mass_and_temperature_scales():
    logits = torch.tensor([0.0, 2.0, 2.0])
    assert sampling_law(logits, temperature=0).tolist() == [0.0, 1.0, 0.0]
    torch.testing.assert_close(sampling_law(logits, temperature=2.0), torch.softmax(logits / 2, -1))


def test_sampled_tokens_stay_in_the_filtered_support(model):
    g = generate(model, [3], 20, temperature=1.0, top_k=1, seed=0)
    assert torch.equal(g.new_tokens, generate(model, [3], 20).new_tokens)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(temperature=-0.5), r"temperature=-0.5 must be a finite number >= 0"),
        (dict(temperature=float("nan")), r"temperature=nan must be a finite number"),
        (dict(top_p=0.0, temperature=1.0, seed=0), r"top_p=0.0 must lie in \(0, 1\]"),
        (dict(top_p=1.5, temperature=1.0, seed=0), r"top_p=1.5 must lie in \(0, 1\]"),
        (dict(top_k=0, temperature=1.0, seed=0), r"top_k=0 must be an int >= 1"),
        (dict(temperature=1.0), r"needs an int seed"),
        (dict(eos_id=61), r"eos_id=61 must be an int token id in \[0, 61\)"),
        (dict(max_new_tokens=0), r"max_new_tokens=0 must be an int >= 1"),
        (dict(prompt=[]), r"prompt must be a non-empty token sequence"),
        (dict(prompt=[1, 99]), r"prompt: token id 99 at index \(1,\) is outside"),
    ],
)
def test_bad_arguments_are_refused(model, kwargs, message):
    args = dict(prompt=[1, 2], max_new_tokens=3) | kwargs
    with pytest.raises(ValueError, match=message):
        generate(model, args.pop("prompt"), args.pop("max_new_tokens"), **args)


def test_learned_positions_bound_generation(make_model):
    model = make_model(pos="learned", max_seq_len=8)
    with pytest.raises(ValueError, match="needs 9 positions, more than max_seq_len=8"):
        generate(model, [1, 2, 3], 7)
    assert len(generate(model, [1, 2, 3], 6).tokens) == 9
