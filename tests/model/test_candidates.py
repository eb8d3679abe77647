"""sample_candidates: k candidates per prompt in one batched cached decode, equal to sequential generate."""
import hashlib
from collections import Counter

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ftipbook import zoo
from ftipbook.model import (
    StopReason,
    candidate_seed,
    continuation_logprobs,
    generate,
    sample_candidates,
)

#: Prompts of three lengths; two share a length, so they decode in one batch.
PROMPTS = [[1, 2, 3], [5], [7, 8, 9, 10, 11], [4, 4, 4]]
NEW = 12

VARIANTS = {
    "mha": {},
    "gqa": dict(n_kv_heads=2),
    "mla": dict(layer_pattern="M"),
    "mla-absorbed": dict(layer_pattern="M", mla_absorb=True, q_lora_rank=16),
    "kda-attention": dict(layer_pattern="KA"),
    "kda-mla-nope": dict(layer_pattern="KKKM", n_layers=4, mla_nope=True),
    "moe": dict(ffn="moe", n_experts=4, top_k=2, n_shared_experts=1),
    "alibi": dict(pos="alibi", n_kv_heads=1),
    "learned-layernorm-post": dict(pos="learned", norm="layernorm", mixer_placement="post"),
    "looped-biases": dict(n_loops=2, qkv_bias=True, out_bias=True, unembed_bias=True),
}


def sequential(model, prompts, k, new, seed, **kw):
    """The definition: candidate j of prompt i is generate with seed candidate_seed(seed, i, j)."""
    return [[generate(model, p, new, seed=candidate_seed(seed, i, j), **kw) for j in range(k)]
            for i, p in enumerate(prompts)]


def mid_sequence_eos(model, prompts, k, new, seed, **kw):
    """A token id that the candidates draw at steps 2..new-3: used as eos it stops candidates mid-way."""
    free = sample_candidates(model, prompts, k, new, seed=seed, **kw)
    middle = Counter(t for row in free for g in row for t in g.new_tokens[2:-3].tolist())
    return middle.most_common(1)[0][0]


def assert_same(batched, reference, logprob_tol):
    assert [len(row) for row in batched] == [len(row) for row in reference]
    for row_b, row_r in zip(batched, reference):
        for b, r in zip(row_b, row_r):
            assert torch.equal(b.tokens, r.tokens) and torch.equal(b.new_tokens, r.new_tokens)
            assert b.stop_reason is r.stop_reason
            torch.testing.assert_close(b.logprobs, r.logprobs, rtol=0, atol=logprob_tol)


LAWS = {
    "plain": dict(temperature=1.0),
    "top-k": dict(temperature=0.8, top_k=7),
    "top-p": dict(temperature=1.3, top_p=0.8),
}
#: Every variant under one sampling law (in turn), and plain MHA under all three.
CASES = [(name, list(LAWS)[i % 3]) for i, name in enumerate(VARIANTS)] + [("mha", "top-k"), ("mha", "top-p")]


@pytest.mark.parametrize("name, law", CASES, ids=[f"{n}-{law}" for n, law in CASES])
def test_equals_sequential_generate_in_float64(make_model, name, law):
    model, law = make_model(dtype=torch.float64, **VARIANTS[name]), LAWS[law]
    k, seed = 5, 11
    eos = mid_sequence_eos(model, PROMPTS, k, NEW, seed, **law)
    batched = sample_candidates(model, PROMPTS, k, NEW, seed=seed, eos_id=eos, **law)
    assert_same(batched, sequential(model, PROMPTS, k, NEW, seed, eos_id=eos, **law), logprob_tol=1e-12)
    lengths = Counter((g.stop_reason, len(g.new_tokens)) for row in batched for g in row)
    mid = {m for (reason, m) in lengths if reason is StopReason.EOS and 1 < m < NEW}
    assert len(mid) >= 2, f"the data should stop candidates at several steps, got {lengths}"
    assert (StopReason.MAX_LEN, NEW) in lengths, "some candidates should run to max_new_tokens"


def test_logprobs_are_those_of_the_uncached_model(make_model):
    model = make_model(dtype=torch.float64, layer_pattern="KA", n_kv_heads=2)
    for prompt, row in zip(PROMPTS, sample_candidates(model, PROMPTS, 4, NEW, seed=3, temperature=1.1)):
        for g in row:
            torch.testing.assert_close(g.logprobs, continuation_logprobs(model, prompt, g.new_tokens),
                                       rtol=0, atol=1e-12)
            assert torch.equal(g.tokens, torch.tensor(prompt + g.new_tokens.tolist()))


def test_float32_zoo_model_matches_sequential_generate():
    """float32: the decode step's batched products round differently from generate's matrix-vector
    ones (logits agree to ~1e-7), so a draw may in principle flip; none does on this data (nor in
    the 2368 float32 candidates measured for the module docstring)."""
    model, tok = zoo.load_model("base-mha").eval(), zoo.tokenizer()
    prompts = [tok.encode(text) for text in ("12+34=", "7+58=", "305+417=", "91+9=")]
    law = dict(temperature=1.0, eos_id=tok.eos_id)
    batched = sample_candidates(model, prompts, 8, 16, seed=0, **law)
    reference = sequential(model, prompts, 8, 16, 0, **law)
    assert_same(batched, reference, logprob_tol=1e-5)
    assert any(g.stop_reason is StopReason.EOS for row in batched for g in row)
    texts = {tok.decode(g.new_tokens.tolist()) for g in batched[0]}
    assert len(texts) > 1, "sampled candidates of one prompt should not all coincide"


def test_greedy_candidates_are_generate_bit_for_bit(make_model):
    model = make_model(layer_pattern="KA")
    out = sample_candidates(model, PROMPTS, 3, NEW, temperature=0, eos_id=5)
    for prompt, row in zip(PROMPTS, out):
        g = generate(model, prompt, NEW, eos_id=5)
        for c in row:
            assert torch.equal(c.tokens, g.tokens) and torch.equal(c.logprobs, g.logprobs)
            assert c.stop_reason is g.stop_reason
    assert out[0][0].tokens is not out[0][1].tokens  # independent copies


def test_top_k_one_is_greedy(make_model):
    model = make_model(dtype=torch.float64, n_kv_heads=2)
    for prompt, row in zip(PROMPTS, sample_candidates(model, PROMPTS, 3, NEW, seed=0, top_k=1)):
        greedy = generate(model, prompt, NEW).new_tokens
        assert all(torch.equal(c.new_tokens, greedy) for c in row)


def test_candidates_do_not_depend_on_k_or_on_other_prompts(make_model):
    model = make_model(dtype=torch.float64)
    many = sample_candidates(model, PROMPTS, 6, NEW, seed=4, temperature=0.9)
    few = sample_candidates(model, PROMPTS[:2], 2, NEW, seed=4, temperature=0.9)
    for row_few, row_many in zip(few, many):
        assert all(torch.equal(a.tokens, b.tokens) for a, b in zip(row_few, row_many))
    other_seed = sample_candidates(model, PROMPTS[:1], 6, NEW, seed=5, temperature=0.9)
    assert sum(torch.equal(a.tokens, b.tokens) for a, b in zip(other_seed[0], many[0])) < 6


def test_tensor_batch_of_prompts_equals_list(make_model):
    model = make_model(dtype=torch.float64)
    batch = torch.tensor([[1, 2, 3], [4, 4, 4]])
    a = sample_candidates(model, batch, 3, 6, seed=2)
    b = sample_candidates(model, batch.tolist(), 3, 6, seed=2)
    assert all(torch.equal(x.tokens, y.tokens) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def test_one_batched_forward_per_step_and_finished_rows_leave(make_model):
    model = make_model(dtype=torch.float64, n_kv_heads=2)
    k, seed = 4, 1
    eos = mid_sequence_eos(model, PROMPTS, k, NEW, seed)
    calls = []  # (batch, tokens) of every forward through the first block
    hook = model.blocks[0].register_forward_hook(lambda mod, args, out: calls.append(tuple(out.shape[:2])))
    try:
        sample_candidates(model, PROMPTS, k, NEW, seed=seed, eos_id=eos)
    finally:
        hook.remove()
    # the two length-3 prompts are prefilled once each, then decode together: 2 k rows per step
    assert calls[:3] == [(1, 3), (1, 3), (2 * k, 1)]
    assert sorted(c for c in calls if c[1] > 1) == [(1, 3), (1, 3), (1, 5)]
    assert len(calls) <= len(PROMPTS) + 3 * (NEW - 1)  # sequential generate makes N k NEW of them
    group = [b for b, t in calls[2:] if t == 1]
    group = group[: next((i for i, b in enumerate(group) if b == 1), len(group))]  # up to the next prefill
    assert all(b <= a for a, b in zip(group, group[1:])) and group[-1] < 2 * k, "finished rows leave the batch"


def test_candidate_seed():
    seeds = {candidate_seed(s, i, j) for s in range(3) for i in range(4) for j in range(5)}
    assert len(seeds) == 60 and all(0 <= x < 2**63 for x in seeds)
    assert candidate_seed(7, 1, 2) == candidate_seed(7, 1, 2) != candidate_seed(7, 2, 1)
    assert candidate_seed(-1, 0, 0) != candidate_seed(1, 0, 0)
    digest = hashlib.blake2b(b"5,2,9", digest_size=8).digest()  # the documented definition
    assert candidate_seed(5, 2, 9) == int.from_bytes(digest, "big") // 2
    with pytest.raises(TypeError, match="candidate_index=1.0 must be an int"):
        candidate_seed(0, 0, 1.0)
    with pytest.raises(TypeError, match="seed=True must be an int"):
        candidate_seed(True, 0, 0)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lengths=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    k=st.integers(1, 4),
    temperature=st.sampled_from([0.0, 0.5, 1.0, 2.0]),
    top_k=st.sampled_from([None, 1, 5]),
    top_p=st.sampled_from([None, 0.5, 0.95]),
    eos=st.sampled_from([None, 0, 17]),
    seed=st.integers(-(2**40), 2**40),
)
def test_property_equals_sequential_generate(make_model, lengths, k, temperature, top_k, top_p, eos, seed):
    model = make_model(dtype=torch.float64, n_kv_heads=2)
    rng = torch.Generator().manual_seed(abs(seed))
    prompts = [torch.randint(0, 61, (n,), generator=rng).tolist() for n in lengths]
    law = dict(temperature=temperature, top_k=top_k, top_p=top_p, eos_id=eos)
    batched = sample_candidates(model, prompts, k, 7, seed=seed, **law)
    assert_same(batched, sequential(model, prompts, k, 7, seed, **law), logprob_tol=1e-12)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(k=0), ValueError, r"k=0 must be an int in \[1, 65536\]"),
        (dict(k=10**8), ValueError, r"k=100000000 must be an int in \[1, 65536\]"),
        (dict(k=2.0), TypeError, r"k=2.0 must be an int in \[1, 65536\], got float"),
        (dict(k=True), TypeError, r"k=True must be an int in \[1, 65536\], got bool"),
        (dict(max_new_tokens=0), ValueError, r"max_new_tokens=0 must be an int in \[1, 65536\]"),
        (dict(max_new_tokens=10**12), ValueError, r"max_new_tokens=1000000000000 must be an int in \[1, 65536\]"),
        (dict(k=2**12, max_new_tokens=2**15), ValueError, r"2 prompts x k=4096 x max_new_tokens=32768 .* MAX_SAMPLED_TOKENS"),
        (dict(max_new_tokens="4"), TypeError, r"max_new_tokens='4' must be an int"),
        (dict(prompts=[]), ValueError, r"prompts must hold at least one prompt"),
        (dict(prompts=[1, 2, 3]), TypeError, r"prompts\[0\]=1 must be a token sequence .* pass \[prompt\]"),
        (dict(prompts="12+3="), TypeError, r"prompts must be a sequence of token sequences, got str"),
        (dict(prompts=torch.tensor([1, 2])), ValueError, r"prompts as a tensor must be a batch \[N, T\]"),
        (dict(prompts=[[1, 2], []]), ValueError, r"prompts\[1\] must be a non-empty 1-D token sequence"),
        (dict(prompts=[[1, 2], [3, 61]]), ValueError, r"prompts\[1\]\[1\] = 61 is outside the vocabulary \[0, 61\)"),
        (dict(prompts=[[1, -2]]), ValueError, r"prompts\[0\]\[1\] = -2 is outside the vocabulary"),
        (dict(prompts=[[1.5, 2.0]]), ValueError, r"prompts\[0\]: .*integer"),
        (dict(seed=None), ValueError, r"temperature=1.0 needs an int seed, got seed=None"),
        (dict(seed=1.5), TypeError, r"seed=1.5 must be an int, got float"),
        (dict(seed="0"), TypeError, r"seed='0' must be an int"),
        (dict(temperature=float("nan")), ValueError, r"temperature=nan must be a finite real number"),
        (dict(temperature="1"), TypeError, r"temperature='1' must be a real number"),
        (dict(temperature=-1.0), ValueError, r"temperature=-1.0 must be a real number >= 0"),
        (dict(top_p=0.0), ValueError, r"top_p=0.0 must be a real number in \(0.0, 1.0\]"),
        (dict(top_k=0), ValueError, r"top_k=0 must be an int >= 1"),
        (dict(eos_id=61), ValueError, r"eos_id=61 must be an int in \[0, 60\]"),
        (dict(eos_id=2.0), TypeError, r"eos_id=2.0 must be an int in \[0, 60\], got float"),
        (dict(model="lm"), TypeError, r"model must be a DecoderLM, got str"),
    ],
)
def test_bad_arguments_are_refused(make_model, kwargs, error, message):
    args = dict(model=make_model(), prompts=[[1, 2], [3]], k=2, max_new_tokens=3, seed=0) | kwargs
    with pytest.raises(error, match=message):
        sample_candidates(args.pop("model"), args.pop("prompts"), args.pop("k"), args.pop("max_new_tokens"), **args)


def test_learned_positions_bound_the_length(make_model):
    model = make_model(pos="learned")  # max_seq_len = 48
    sample_candidates(model, [[1] * 40], 2, 9, seed=0)  # 40 + 9 - 1 = 48 positions: allowed
    with pytest.raises(ValueError, match=r"prompts\[1\] has length 41; with max_new_tokens=9 it needs 49 positions"):
        sample_candidates(model, [[1] * 3, [1] * 41], 2, 9, seed=0)


def test_numpy_scalars_are_numbers(make_model):
    """np.int64 / np.float32 arguments (as a loop over np.arange gives) act as the Python numbers."""
    model = make_model()
    plain = sample_candidates(model, [[1, 2]], 2, 3, temperature=0.5, seed=7, eos_id=4)
    numpy = sample_candidates(model, [[1, 2]], np.int64(2), np.int64(3), temperature=np.float32(0.5),
                              seed=np.int64(7), eos_id=np.int64(4))
    assert [[g.tokens.tolist() for g in row] for row in numpy] == [[g.tokens.tolist() for g in row] for row in plain]
    assert candidate_seed(np.int64(7), np.int64(0), np.int64(1)) == candidate_seed(7, 0, 1)
    with pytest.raises(TypeError, match="candidate_index=True must be an int"):
        candidate_seed(7, 0, True)
