"""DecoderLM: causality, packing, cached decoding, depth reuse, token checks, dtypes (ftip-000S, 0012, 001A)."""
import sys

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.model import DecoderLM, ModelConfig, mixer_class

POSITIONS = ["none", "sinusoidal", "learned", "rope", "alibi"]
VARIANTS = {
    **{f"pos-{p}": dict(pos=p) for p in POSITIONS},
    "gqa": dict(n_kv_heads=2),
    "mqa-bias": dict(n_kv_heads=1, qkv_bias=True, out_bias=True, unembed_bias=True),
    "moe": dict(ffn="moe", n_experts=4, top_k=2, n_shared_experts=1, d_expert=16),
    "post-layernorm-gelu": dict(mixer_placement="post", ffn_placement="post", norm="layernorm", ffn="gelu", final_norm=False),
    "looped": dict(n_layers=1, n_loops=3),
    "tied": dict(tie_embeddings=True, ffn="relu"),
    "hybrid-KA": dict(layer_pattern="KA"),
    "hybrid-MA": dict(layer_pattern="MA"),
    "hybrid-KKKA": dict(layer_pattern="KKKA", n_layers=4),
}
ids, variants = list(VARIANTS), list(VARIANTS.values())


@pytest.mark.parametrize("overrides", variants, ids=ids)
def test_future_tokens_never_change_earlier_logits(make_model, overrides):
    model = make_model(**overrides)

    @settings(max_examples=10, deadline=None)
    @given(st.data())
    def check(data):
        t = data.draw(st.integers(2, 12))
        tokens = torch.tensor([data.draw(st.lists(st.integers(0, 60), min_size=t, max_size=t))])
        cut = data.draw(st.integers(1, t - 1))
        changed = tokens.clone()
        changed[0, cut:] = torch.tensor(data.draw(st.lists(st.integers(0, 60), min_size=t - cut, max_size=t - cut)))
        with torch.no_grad():
            a, b = model(tokens), model(changed)
        torch.testing.assert_close(a[:, :cut], b[:, :cut], rtol=0, atol=1e-5)

    check()


@pytest.mark.parametrize("overrides", variants, ids=ids)
def test_cached_decoding_equals_full_forward(make_model, overrides):
    model = make_model(**overrides)
    tokens = torch.randint(0, 61, (2, 13))
    with torch.no_grad():
        full = model(tokens)
        for max_len in (None, 13):
            cache = model.new_cache(2, max_len=max_len)
            steps = [model(tokens[:, :6], cache=cache), model(tokens[:, 6:9], cache=cache)]
            steps += [model(tokens[:, t:t + 1], cache=cache) for t in range(9, 13)]
            torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-4, atol=1e-5)
            assert cache.length == 13


@pytest.mark.parametrize("overrides", variants, ids=ids)
def test_packed_documents_equal_separate_runs(make_model, overrides):
    model = make_model(**overrides)
    lengths = [5, 3, 6]
    docs = [torch.randint(0, 61, (n,)) for n in lengths]
    seg = torch.cat([torch.full((n,), i + 1) for i, n in enumerate(lengths)])
    packed_tokens = torch.cat(docs + [torch.zeros(2, dtype=torch.long)]).unsqueeze(0)
    seg_ids = torch.cat([seg, torch.zeros(2, dtype=torch.long)]).unsqueeze(0)  # two padding positions
    with torch.no_grad():
        packed = model(packed_tokens, seg_ids=seg_ids)[0]
        separate = torch.cat([model(d.unsqueeze(0))[0] for d in docs])
    assert torch.isfinite(packed).all()
    torch.testing.assert_close(packed[: sum(lengths)], separate, rtol=1e-4, atol=1e-5)


def test_token_ids_outside_vocab_are_refused(make_model):
    model = make_model()
    with pytest.raises(ValueError, match=r"token id 61 at index \(0, 2\) is outside \[0, 61\)"):
        model(torch.tensor([[1, 2, 61, 70]]))
    with pytest.raises(ValueError, match=r"token id -1 at index \(1, 0\)"):
        model(torch.tensor([[1, 2], [-1, 0]]))
    with pytest.raises(ValueError, match="tokens must be a LongTensor"):
        model(torch.tensor([1, 2]))


def test_seg_ids_and_cache_cannot_combine(make_model):
    model = make_model()
    with pytest.raises(ValueError, match="seg_ids .* and cache cannot be combined"):
        model(torch.zeros(1, 3, dtype=torch.long), seg_ids=torch.ones(1, 3, dtype=torch.long), cache=model.new_cache(1))


def test_next_token_law_is_softmax_of_last_logits(make_model):
    model = make_model()
    prefix = [3, 1, 4, 1, 5]
    law = model.next_token_law(prefix)
    assert law.shape == (61,) and law.dtype == torch.float64
    assert abs(float(law.sum()) - 1) < 1e-12
    with torch.no_grad():
        logits = model(torch.tensor([prefix]))[0, -1]
    torch.testing.assert_close(law, torch.softmax(logits.double(), -1))
    assert model.next_token_law(torch.tensor([prefix, prefix])).shape == (2, 61)
    with pytest.raises(ValueError, match="non-empty prefix"):
        model.next_token_law([])


def test_looped_model_reuses_one_block(make_model):
    looped = make_model(n_layers=1, n_loops=3)
    single = make_model(n_layers=1)
    assert sum(p.numel() for p in looped.parameters()) == sum(p.numel() for p in single.parameters())
    tokens = torch.randint(0, 61, (1, 7))
    positions = torch.arange(7).unsqueeze(0)
    with torch.no_grad():
        x = looped.embed(tokens)
        for _ in range(3):
            x = looped.blocks[0](x, positions=positions)
        torch.testing.assert_close(looped(tokens), looped.unembed(looped.norm(x)))


def test_tied_unembedding_is_the_embedding(make_model):
    model = make_model(tie_embeddings=True)
    assert model.unembed.weight is model.embed.weight


def test_hidden_states_have_shape_b_t_d(make_model):
    model = make_model(n_layers=3)
    shapes = []
    for block in model.blocks:
        for branch in (block.mixer, block.ffn):
            branch.register_forward_hook(lambda m, args, out: shapes.append(tuple(out.shape)))
    model(torch.randint(0, 61, (2, 9)))
    assert shapes == [(2, 9, 32)] * 6


@pytest.mark.parametrize("overrides", [dict(), dict(pos="alibi", ffn="moe"), dict(pos="learned", norm="layernorm")])
def test_bf16_forward_and_decode_run(make_model, overrides):
    model = make_model(dtype=torch.bfloat16, **overrides)
    ref = make_model(**overrides)
    tokens = torch.randint(0, 61, (2, 10))
    with torch.no_grad():
        logits = model(tokens)
        cache = model.new_cache(2)
        model(tokens[:, :9], cache=cache)
        step = model(tokens[:, 9:], cache=cache)
        full32 = ref(tokens)
    assert logits.dtype == torch.bfloat16 and torch.isfinite(logits).all()
    torch.testing.assert_close(step.float(), logits[:, 9:].float(), rtol=0.05, atol=0.05)
    torch.testing.assert_close(logits.float(), full32, rtol=0.05, atol=0.05)


def test_build_model_is_seeded_and_leaves_global_rng_alone(make_cfg):
    from ftipbook.model import build_model

    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    a, b = build_model(make_cfg(), seed=7), build_model(make_cfg(), seed=7)
    assert torch.equal(torch.random.get_rng_state(), before)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize("letter, module", [("K", "ftipbook.model.kda"), ("M", "ftipbook.model.mla")])
def test_missing_mixer_module_raises_not_implemented(monkeypatch, letter, module):
    monkeypatch.setitem(sys.modules, module, None)  # as if the module did not exist
    with pytest.raises(NotImplementedError, match=f"requires {module}"):
        mixer_class(letter)
    with pytest.raises(NotImplementedError, match=f"requires {module}"):
        DecoderLM(ModelConfig(layer_pattern=letter + "A"))
